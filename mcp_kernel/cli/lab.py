"""``mcp2repl lab [ARGS…]``: JupyterLab, with this folder's running sessions as its kernels.

A named session is an ordinary kernel whose connection file is in ``.mcp2repl/sessions/kernels/``
(a folder holding connection files only, registry.py). Jupyter Server (2.10 and later) lists the
kernels of such a folder as running kernels when ``ServerApp.allow_external_kernels`` is on and
``ServerApp.external_connection_dir`` names it; a person then opens a console or a notebook on an
agent's kernel, sees its globals and steps in, with nothing copied. Their cells run in the
kernel's own queue, one at a time with the agent's steps (which also hold the session's lock).

JupyterLab is started as ``python -m jupyterlab`` of this interpreter (the process is replaced: its
signals and exit status are JupyterLab's own); ARGS go to it unchanged.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..client import registry
from ..client.registry import FOLDER, KERNELS, SessionError
from . import render

INSTALL = "pip install 'mcp2repl[lab]'"


def command(argv: list[str], cwd: Path | None = None) -> list[str]:
    """The JupyterLab command line for this folder's sessions (``argv`` after ours, so it may override them)."""
    kernels = (cwd or Path.cwd()).absolute() / FOLDER / KERNELS
    return [
        sys.executable,
        "-m",
        "jupyterlab",
        "--ServerApp.allow_external_kernels=True",
        f"--ServerApp.external_connection_dir={kernels}",
        *argv,
    ]


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(
            "usage: mcp2repl lab [JUPYTERLAB ARGS…]\n\n"
            "Start JupyterLab with this folder's sessions (.mcp2repl/sessions/) as running kernels: open a console or a\n"
            "notebook on a session's kernel to see and continue what an agent did. Arguments go to jupyter lab,\n"
            "e.g. mcp2repl lab --no-browser --ServerApp.port=8899"
        )
        return render.OK
    try:
        import jupyterlab  # noqa: F401 - only whether it is there: it runs in the process that replaces this one
    except ImportError:
        return render.usage(f"JupyterLab is not installed in this environment ({sys.executable}): {INSTALL}", False)
    cwd = Path.cwd().absolute()
    notices: list[str] = []
    try:
        registry.secure_folders(cwd, notices, create=True)
    except SessionError as exc:
        return render.usage(str(exc), False)
    running, dead = [], []
    for name in registry.names(cwd):
        state = registry.SessionFiles(name, cwd).state()
        (running if state == "running" else dead if state in ("dead", "untrusted") else []).append(name)
    for line in notices:
        render.notice(line, False)
    listed = ", ".join(running) if running else "none yet: sessions started later appear too"
    render.notice(f"JupyterLab with this folder's sessions as running kernels ({listed})", False)
    for name in dead:
        render.notice(f"session {name!r} is not usable and may show as a kernel that does not answer: mcp2repl --stop {name}", False)
    sys.stdout.flush()
    sys.stderr.flush()
    cmd = command(argv, cwd)
    os.execv(cmd[0], cmd)
    return render.OK  # not reached: the process is JupyterLab now
