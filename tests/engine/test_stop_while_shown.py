"""An interrupt or a time limit that lands while a cell's value is being shown ends the cell as stopped.

Showing a value runs the runtime's formatter, which has no injected interrupt checks and catches
every error a value throws at it (a Proxy's trap, say): an interrupt landing there was swallowed,
or landed while the formatter went on, and the cell was reported as a success.
"""

from __future__ import annotations

from pathlib import Path

from conftest import CellOutput, Interrupter, SessionHarness

#: A value whose inspection runs the cell's own code, which spins.
SPINNING_PROXY = "new Proxy({}, { ownKeys() { for (;;) {} } })"


def test_an_interrupt_in_a_trap_the_formatter_runs_stops_the_cell(tmp_path: Path) -> None:
    s = SessionHarness(tmp_path, {"mcpServers": {}})
    try:
        s.run("const kept = 'kept'")
        for code in (SPINNING_PROXY, f"console.log({SPINNING_PROXY}); 'logged'", f"[{{ p: {SPINNING_PROXY} }}]"):
            # again every 0.5 s: a busy machine may start the cell late, and an interrupt before it is ignored
            stopper = Interrupter(s.session.interrupt, 0.3)
            result, _ = s.run(code)
            stopper.stop()
            assert result.error is not None and result.error.name == "InterruptError", (code, result.data)
        result = s.call(s.session.execute(SPINNING_PROXY, CellOutput(), progress="off", time_limit=0.5), 60)
        assert result.error is not None and result.error.name == "TimeoutError", result.data
        assert s.session.engine.rebuilds == 0
        assert s.value("kept") == "'kept'"
    finally:
        s.close()


def test_an_interrupt_that_lands_while_the_value_is_shown_is_no_success(tmp_path: Path) -> None:
    # The value's own display method calls a slow builtin (no injected check runs in it), so the
    # interrupt lands while V8 is busy, and the method then returns a bundle as if nothing happened.
    # With a long grace the engine waits for V8 rather than rebuilding it: the cell must still end
    # as interrupted, its globals kept.
    s = SessionHarness(tmp_path, {"mcpServers": {}})
    try:
        s.session.engine.interrupt_grace = 120
        s.run("const kept = 'kept'")
        slow = "({ [Symbol.for('Jupyter.display')]() { /(a+)+b/.test('a'.repeat(25)); return { 'text/plain': 'shown' } } })"
        stopper = Interrupter(s.session.interrupt, 0.3)
        result, _ = s.run(slow, timeout=240)
        stopper.stop()
        assert result.error is not None, result.data
        assert (result.error.name, result.error.message) == ("InterruptError", "Execution interrupted")
        assert s.session.engine.rebuilds == 0
        assert s.value("kept") == "'kept'"
    finally:
        s.close()
