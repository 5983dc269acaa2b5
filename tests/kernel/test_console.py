"""`jupyter console --kernel mcp2repl` driven through a real pseudo-terminal (pexpect).

The console runs with its normal prompt_toolkit interface, as users have it, not with
--simple-prompt. Two things make that drivable under pexpect:

* prompt_toolkit paints with colour and cursor-movement escapes and repaints the input line,
  so the transcript is read with the escapes stripped and searched with regular expressions
  from a moving position, instead of pexpect's raw `expect`.
* prompt_toolkit asks the terminal for the cursor position (CPR) and, when no answer comes,
  prints a warning after a delay. A real terminal answers; pexpect does not, so
  PROMPT_TOOLKIT_NO_CPR=1 tells it not to ask. Nothing else about the console changes.

One console session is shared by the tests of this module, in order.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from mcp_kernel import __version__

ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\x1b[=>]|\r")


class Console:
    def __init__(self, *options: str) -> None:
        env = dict(os.environ, PROMPT_TOOLKIT_NO_CPR="1")
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "jupyter_console", "--kernel", "mcp2repl", *options],
            env=env,
            encoding="utf-8",
            dimensions=(50, 160),
            timeout=30,
        )
        self.raw = ""
        self.pos = 0

    @property
    def text(self) -> str:
        return ESCAPES.sub("", self.raw)

    def _read(self, wait: float) -> None:
        try:
            self.raw += self.child.read_nonblocking(100_000, timeout=wait)
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            time.sleep(wait)  # the console exited: the transcript is complete

    def expect(self, pattern: str, timeout: float = 20) -> re.Match[str]:
        """Wait for `pattern` in the escape-free transcript after the last match; move past it."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            found = regex.search(self.text, self.pos)
            if found:
                self.pos = found.end()
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} did not appear; after the last match:\n{self.text[self.pos :]}")
            self._read(0.1)

    def settle(self, quiet: float = 0.5, timeout: float = 10) -> None:
        """Read until nothing new arrives for `quiet` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            size = len(self.raw)
            self._read(quiet)
            if len(self.raw) == size:
                return

    def prompt(self, n: int) -> str:
        """Wait for `In [n]: ` and return what was printed since the previous match."""
        start = self.pos
        found = self.expect(rf"In \[{n}\]: ")
        return self.text[start : found.start()]

    def run(self, line: str, next_prompt: int) -> str:
        """Type one complete line, Enter; return what appears before the next prompt."""
        self.child.sendline(line)
        self.expect(re.escape(line) + r"\n")
        return self.prompt(next_prompt)

    def children(self) -> set[int]:
        found = set()
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.child.pid:
                found.add(int(stat.parent.name))
        return found


@pytest.fixture(scope="module")
def console() -> Iterator[Console]:
    con = Console()
    yield con
    if con.child.isalive():
        con.child.terminate(force=True)


def test_banner(console: Console) -> None:
    before_prompt = console.prompt(1)
    assert "Jupyter console " in before_prompt
    banner = re.search(r"mcp2repl (\S+): JavaScript \(V8 (\d+(?:\.\d+)+)\) in one persistent context\.\n", before_prompt)
    assert banner is not None, before_prompt
    assert banner.group(1) == __version__
    assert "Cells are async: top-level await works, the last expression is the result.\n" in before_prompt
    # The kernel process shares the terminal and may still write to it just after the first
    # prompt (debugpy, imported by ipykernel, warns about frozen modules); let that pass first.
    console.settle()


def test_multiline_function_typed_line_by_line(console: Console) -> None:
    # After each incomplete line the kernel's is_complete reply ("incomplete", indent "  ")
    # makes the console show a continuation prompt, already indented by two spaces.
    console.child.sendline("function add(a, b) {")
    console.expect(r"In \[1\]: function add\(a, b\) \{\n {3}\.\.\.:")
    console.child.sendline("return a + b")
    console.expect(r" {3}\.\.\.: {3}return a \+ b\n {3}\.\.\.:")
    # The closing brace completes the declaration: it runs at once, no extra empty line is
    # needed, and a declaration has no Out.
    console.child.sendline("}")
    console.expect(r"\.\.\.: {3}\}\n")
    assert console.prompt(2) == "\n"


def test_result_is_shown_as_out(console: Console) -> None:
    assert console.run("add(2, 3)", 3) == "Out[2]: 5\n\n"
    assert console.run("[add(1, 2), 'x', {k: null}]", 4) == "Out[3]: [ 3, 'x', { k: null } ]\n\n"


def test_console_log_and_error_streams(console: Console) -> None:
    assert console.run("console.log('hello', add(20, 22))", 5) == "hello 42\n\n"
    assert console.run("console.error('careful')", 6) == "careful\n\n"


def test_top_level_await(console: Console) -> None:
    assert console.run("await sleep(50); 'slept'", 7) == "Out[6]: 'slept'\n\n"


def test_error_prints_the_traceback(console: Console) -> None:
    shown = console.run("add(null.x, 1)", 8)
    assert shown == (
        "TypeError: Cannot read properties of null (reading 'x')\n  at cell[7] line 1, col 10\n    add(null.x, 1)\n             ^\n\n"
    )


def test_ctrl_c_interrupts_and_keeps_globals(console: Console) -> None:
    console.child.sendline("while (true) {}")
    console.expect(r"while \(true\) \{\}\n")
    start = console.pos
    # An interrupt that reaches the kernel before the cell starts is ignored (there is nothing
    # to stop yet), so press Ctrl-C again, as a user would, until the loop is stopped.
    for _ in range(5):
        time.sleep(0.5)
        console.child.sendintr()
        try:
            console.expect(r"In \[9\]: ", timeout=3)
            break
        except AssertionError:
            continue
    shown = console.text[start : console.pos - len("In [9]: ")]
    assert shown.endswith(
        "InterruptError: Execution interrupted\n  at cell[8] line 1, col 15\n    while (true) {}\n                  ^\n\n"
    ), shown
    assert console.run("add(1, 1)", 10) == "Out[9]: 2\n\n"


SLOW_CALL = "const inv = await mcp.demo.slow_inventory_check({seconds: 0.6, steps: 3}); [inv.steps, inv.books_checked]"
PROGRESS_LINES = (
    "[demo.slow_inventory_check] 33% Checked shelf 1/3 (13 books)\n"
    "[demo.slow_inventory_check] 67% Checked shelf 2/3 (26 books)\n"
    "[demo.slow_inventory_check] 100% Checked shelf 3/3 (40 books)\n"
)


def test_tool_progress_arrives_as_lines(console: Console) -> None:
    """A terminal ignores display updates: progress comes as stderr lines instead."""
    assert console.run(SLOW_CALL, 11) == PROGRESS_LINES + "Out[10]: [ 3, 40 ]\n\n"


def test_tool_progress_under_simple_prompt() -> None:
    """Regression: with --simple-prompt (no start-up history request) progress lines were missing."""
    con = Console("--simple-prompt")
    try:
        con.prompt(1)
        con.settle()
        assert con.run(SLOW_CALL, 2) == PROGRESS_LINES + "Out[1]: [ 3, 40 ]\n\n"
    finally:
        con.child.sendline("exit")
        con.child.expect(pexpect.EOF, timeout=20)


def test_ctrl_d_exits_and_shuts_the_kernel_down(console: Console) -> None:
    kernels = console.children()
    assert len(kernels) == 1
    console.child.sendeof()
    console.expect(r"Do you really want to exit \(\[y\]/n\)\? ")
    console.child.sendline("y")
    console.child.expect(pexpect.EOF, timeout=20)
    console.raw += console.child.before
    console.expect(r"Shutting down kernel\n")
    console.child.close()
    assert console.child.exitstatus == 0
    deadline = time.monotonic() + 60  # generous: a loaded machine
    while any(Path(f"/proc/{pid}").exists() for pid in kernels) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(Path(f"/proc/{pid}").exists() for pid in kernels), "the kernel outlived the console"
