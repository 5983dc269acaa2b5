"""Every example in README.md and skills/mcp2repl/SKILL.md runs, and shows what the doc says (issue 23, item 13).

The skill's first example returned `[undefined, undefined, undefined]` for months: it looked for
`declare` lines the docs it read do not have. Here each fenced `js`/`javascript`/`ts` block runs as
one cell in a real Session against the servers it names (the demo bookshop; the echo fixture for
`get-weather.v2`; mcp-server-time for `api.connect("time", …)`, its `uvx` run from the test's own
install), and a `// → X` comment on a block's last line is the cell's `text/plain`. The skill's
`bash` steps run through the real `mcp2repl` command in a session, each `# → X` comment the
step's JSON value. Blocks not meant to run say so in their info string (`js no-run`) and are listed in
:data:`NOT_RUN`, so that marking one is a visible decision. The api.guide text is read the same way
(it has no fenced block today: its inline snippets are templates such as `mcp.<server>.<tool>(…)`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ECHO, OWN_VARS, ROOT, SessionHarness
from markdown_it import MarkdownIt

DOCS = ("README.md", "skills/mcp2repl/SKILL.md", "api.guide")
RUN = {"js", "javascript", "ts", "typescript"}
#: Blocks that are examples of something other than a cell to run here (first line of each).
NOT_RUN: set[tuple[str, str]] = {
    ("README.md", "async function pageTitle(url) {"),  # needs Chromium: tests/api/test_chrome_devtools.py runs it as written
}
EXPECTED = re.compile(r"//[^→]*→\s*(.+?)\s*$")  # `// → X` or `// what it is → X` ends the block's last line


def text_of(doc: str) -> str:
    if doc == "api.guide":
        from mcp_kernel.api import guide

        return guide._GUIDE
    return (ROOT / doc).read_text(encoding="utf-8")


def blocks(doc: str) -> list[tuple[str, str, int]]:
    """(info string, code, line) of every fenced block of ``doc``."""
    tokens = MarkdownIt().parse(text_of(doc))
    return [(t.info.strip(), t.content, (t.map or [0])[0] + 1) for t in tokens if t.type == "fence"]


def runnable() -> list[tuple[str, int, str]]:
    return [(doc, line, code) for doc in DOCS for info, code, line in blocks(doc) if info.split()[:1] and info.split()[0] in RUN and "no-run" not in info.split()]


def test_blocks_not_run_are_marked_and_listed() -> None:
    marked = {(doc, code.splitlines()[0]) for doc in DOCS for info, code, _ in blocks(doc) if "no-run" in info.split()}
    assert marked == NOT_RUN
    assert len(runnable()) >= 3  # the README's cells, TypeScript and tool-call examples at least


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    home = Path(tmp_path_factory.mktemp("docs"))
    shim = home / "bin"
    shim.mkdir()
    # `uvx mcp-server-time` as the README writes it, without a network: the installed one runs
    time_server = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
    assert time_server, "mcp-server-time (a test dependency) is not installed beside this Python"
    (shim / "uvx").write_text(f'#!/bin/sh\n[ "$1" = mcp-server-time ] && shift && exec {time_server} "$@"\nexit 127\n')
    (shim / "uvx").chmod(0o755)
    old_path = os.environ["PATH"]
    os.environ["PATH"] = f"{shim}{os.pathsep}{old_path}"
    config = {
        "mcpServers": {
            "demo": {"command": sys.executable, "args": ["-m", "mcp_kernel.demo.server"]},
            "echo": {"command": sys.executable, "args": [ECHO]},
        },
        "allow_connect": "any",
    }
    harness = SessionHarness(home, config)
    try:
        harness.value("await api.servers({ wait: true }); 1")
        yield harness
    finally:
        harness.close()
        os.environ["PATH"] = old_path


@pytest.mark.parametrize(("doc", "line", "code"), runnable(), ids=lambda v: str(v) if isinstance(v, int) else None)
def test_each_example_runs_and_shows_what_the_doc_says(s: SessionHarness, doc: str, line: int, code: str) -> None:
    result, out = s.run(code, timeout=120)
    assert result.error is None, f"{doc}:{line}:\n" + "\n".join(result.error.traceback)
    last = code.rstrip().splitlines()[-1]
    if (expected := EXPECTED.search(last)) is not None:
        shown = (result.data or {}).get("text/plain", "")
        assert " ".join(shown.split()) == expected.group(1), f"{doc}:{line}: the doc says {expected.group(1)!r}"


def test_the_skills_steps_run_through_the_command_as_written(tmp_path: Path) -> None:
    """Each `mcp2repl` line of the skill's first block is one step (MCP2REPL_JSON=1, as the skill
    says to set): one envelope each, in order; a `# → X` on the line is that step's JSON value."""
    [(_, script, line)] = [b for b in blocks("skills/mcp2repl/SKILL.md") if b[0] == "bash" and "mcp2repl -e" in b[1]][:1]
    steps = [text for text in script.splitlines() if text.startswith("mcp2repl ")]
    env = {k: v for k, v in os.environ.items() if k not in OWN_VARS}
    env.update(MCP2REPL_SESSION=f"skill{os.getpid()}", MCP2REPL_JSON="1", PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")
    try:
        done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    finally:
        subprocess.run([str(Path(sys.executable).parent / "mcp2repl"), "--stop", env["MCP2REPL_SESSION"]], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, f"SKILL.md:{line}: {done.stdout}{done.stderr}"
    envelopes = [json.loads(text) for text in done.stdout.splitlines()]
    assert len(envelopes) == len(steps) and all(e["ok"] for e in envelopes), done.stdout
    checked = 0
    for step, envelope in zip(steps, envelopes, strict=True):
        if (expected := re.search(r"#\s*→\s*(.+?)\s*$", step)) is not None:
            assert envelope["value"] == json.loads(expected.group(1)), f"SKILL.md:{line}: {step}"
            checked += 1
    assert checked >= 2, f"SKILL.md:{line}: the steps say what they return (`# → …`)"
