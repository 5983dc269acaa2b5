"""Shared fixtures: a real engine on a private asyncio loop, and real kernels via jupyter_client."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis  # noqa: F401 - imported now: see EngineHarness.close
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


class Recorder:
    """An engine Sink that keeps what JS printed and displayed, per cell."""

    def __init__(self) -> None:
        self.streams: list[tuple[str, str, str]] = []
        self.displays: list[tuple[str, dict[str, Any], str | None, bool]] = []

    def stream(self, cell: str, name: str, text: str) -> None:
        self.streams.append((cell, name, text))

    def display(self, cell: str, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        self.displays.append((cell, data, display_id, update))

    def clear_output(self, cell: str, wait: bool) -> None:
        self.streams.append((cell, "clear_output", str(wait)))

    def text(self, name: str = "stdout", cell: str | None = None) -> str:
        return "".join(t for c, n, t in self.streams if n == name and (cell is None or c == cell))


class EngineHarness:
    """Drives a real Engine on a background event loop so tests can stay synchronous."""

    def __init__(self, **options: Any) -> None:
        from mcp_kernel.engine import Engine

        self.sink = Recorder()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.engine = Engine(self.sink, **options)
        self.call(self.engine.start())
        self.count = 0

    def call(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def run(self, code: str, timeout: float | None = None):
        self.count += 1
        return self.call(self.engine.run_cell(code, f"cell[{self.count}]", timeout))

    def value(self, code: str) -> str | None:
        """The text/plain of a cell that must succeed."""
        out = self.run(code)
        assert out.error is None, "\n".join(out.error.traceback)
        return None if out.data is None else out.data["text/plain"]

    def error(self, code: str, timeout: float | None = None):
        out = self.run(code, timeout)
        assert out.error is not None, f"expected an error, got {out.data}"
        return out.error

    def interrupt_after(self, seconds: float) -> threading.Timer:
        timer = threading.Timer(seconds, self.engine.interrupt)
        timer.start()
        return timer

    def close(self) -> None:
        self.call(self.engine.close())

        async def collect() -> None:
            # Free V8 contexts here, on the loop thread. Left to a later GC they can be
            # finalized in the middle of a compile() on the main thread, and mini-racer's
            # teardown callbacks then trip CPython 3.11's AST recursion check
            # ("AST constructor recursion depth mismatch") in pytest's own imports.
            gc.collect()

        self.call(collect())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def js() -> Iterator[EngineHarness]:
    harness = EngineHarness()
    yield harness
    harness.close()


@pytest.fixture(scope="session", autouse=True)
def _isolated_jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Kernels started by tests use a private history file and find the kernelspec of this checkout."""
    home = tmp_path_factory.mktemp("jupyter")
    os.environ["MCP2REPL_HISTORY"] = str(home / "history.sqlite")
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    from mcp_kernel.install import install

    data = home / "data"
    install(prefix=str(data))
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(data / "share" / "jupyter"), os.environ.get("JUPYTER_PATH")]))
    yield
