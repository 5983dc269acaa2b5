"""``mcp2repl lab``'s command line and its one error, in-process (the real server: test_lab.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_kernel.cli import lab


def test_the_command_points_jupyterlab_at_the_sessions_connection_files(tmp_path: Path) -> None:
    assert lab.command(["--no-browser", "--ServerApp.port=8899"], tmp_path) == [
        sys.executable,
        "-m",
        "jupyterlab",
        "--ServerApp.allow_external_kernels=True",
        f"--ServerApp.external_connection_dir={tmp_path}/.mcp2repl/sessions/kernels",
        "--no-browser",
        "--ServerApp.port=8899",
    ]


def test_without_jupyterlab_it_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "jupyterlab", None)  # import jupyterlab now raises ImportError
    monkeypatch.chdir(tmp_path)
    assert lab.main([]) == 2
    assert capsys.readouterr() == ("", f"mcp2repl: error: JupyterLab is not installed in this environment ({sys.executable}): pip install 'mcp2repl[lab]'\n")
    assert not (tmp_path / ".mcp2repl").exists()
