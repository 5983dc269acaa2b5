"""npm ts-blank-space, the reference type stripper, run in Node (tests/fixtures/node/ts_blank_space.mjs).

Shared by the stripper's own tests (output byte for byte) and the kernel's (the reference's output
run as JavaScript must give what the TypeScript cell gives).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

NODE_DIR = Path(__file__).resolve().parent / "fixtures" / "node"
TSC = NODE_DIR / "node_modules" / ".bin" / "tsc"


def require_node_package(name: str) -> None:
    """Skip the test when Node or the npm package ``name`` (scripts/bootstrap.sh --test) is missing."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (NODE_DIR / "node_modules" / name).is_dir():
        pytest.skip(f"npm {name} is not installed: run scripts/bootstrap.sh --test")


def ts_blank_space(sources: list[str], *flags: str) -> list[Any]:
    """What ts-blank-space makes of each source (``--errors``: the TypeScript syntax kinds it refused)."""
    require_node_package("ts-blank-space")
    proc = subprocess.run(
        ["node", "ts_blank_space.mjs", *flags], input=json.dumps(sources), capture_output=True, text=True, cwd=NODE_DIR, check=True
    )
    return json.loads(proc.stdout)
