"""Register the kernelspec: ``python -m mcp_kernel install [--user|--sys-prefix|--prefix DIR]``.

kernel.json is written at install time so ``argv`` names the interpreter the package was
installed into; a bare ``python`` would start whatever is first on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from ..client.registry import KERNEL_ARGS

KERNEL_NAME = "mcp2repl"
DISPLAY_NAME = "JavaScript (mcp2repl)"
LOGOS = ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg")


def kernel_json(display_name: str = DISPLAY_NAME, env: dict[str, str] | None = None) -> dict[str, object]:
    spec: dict[str, object] = {
        "argv": [sys.executable, *KERNEL_ARGS, "-f", "{connection_file}"],
        "display_name": display_name,
        "language": "javascript",
        "interrupt_mode": "message",
        "metadata": {"debugger": False},
    }
    if env:
        spec["env"] = env
    return spec


def _assets() -> Path:
    """The logos: packaged in the wheel, or the repository's kernelspec/ in a checkout."""
    packaged = Path(str(resources.files("mcp_kernel"))) / "kernelspec"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "kernelspec"


def install(
    user: bool = False,
    prefix: str | None = None,
    name: str = KERNEL_NAME,
    display_name: str = DISPLAY_NAME,
    env: dict[str, str] | None = None,
) -> str:
    """Install the spec; returns the directory it landed in."""
    with tempfile.TemporaryDirectory() as td:
        os.chmod(td, 0o755)  # starts as 0700; Jupyter must be able to read it
        target = Path(td)
        (target / "kernel.json").write_text(json.dumps(kernel_json(display_name, env), indent=2) + "\n")
        assets = _assets()
        for logo in LOGOS:
            shutil.copy(assets / logo, target / logo)
        return KernelSpecManager().install_kernel_spec(str(target), kernel_name=name, user=user, prefix=prefix)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_kernel install", description="Register the mcp2repl Jupyter kernel.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for the current user (default unless root)")
    where.add_argument("--sys-prefix", action="store_true", help=f"install into this environment ({sys.prefix})")
    where.add_argument("--prefix", help="install under PREFIX/share/jupyter/kernels")
    parser.add_argument("--name", default=KERNEL_NAME, help=f"kernel name (default {KERNEL_NAME})")
    parser.add_argument("--display-name", default=DISPLAY_NAME, help=f"name shown in menus (default {DISPLAY_NAME!r})")
    parser.add_argument("--env", nargs=2, action="append", metavar=("NAME", "VALUE"), help="environment variable for the kernel")
    args = parser.parse_args(argv)
    prefix = sys.prefix if args.sys_prefix else args.prefix
    # like ipykernel: user install unless told otherwise, and sys-prefix when running as root
    user = args.user or (prefix is None and os.geteuid() != 0)
    if prefix is None and not user:
        prefix = sys.prefix
    path = install(user=user, prefix=prefix, name=args.name, display_name=args.display_name, env=dict(args.env or []))
    print(f"Installed kernelspec {args.name} in {path}")
    return 0
