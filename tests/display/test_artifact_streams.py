"""Big values saved as artifacts a piece at a time: the same file as one piece, never a whole string in V8."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SessionHarness

from mcp_kernel.display import artifact_streams
from mcp_kernel.display.artifact_streams import ArtifactStreams
from mcp_kernel.display.artifacts import ArtifactError, ArtifactStore


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    harness = SessionHarness(tmp_path_factory.mktemp("streams"), {"mcpServers": {}})
    yield harness
    harness.close()


def files(root: Path) -> list[str]:
    """Every file under ``root``, hidden temp files included."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def temps(root: Path) -> list[Path]:
    return list(root.rglob(".tmp-*.part"))


# values whose JSON has every rule of JSON.stringify in it, near the top (where pieces are cut) and below
TRICKY = """[
  { a: 1, u: undefined, f() {}, s: Symbol("x"), n: null, d: new Date(0), b: 10n, nan: NaN, neg: -0, e: "é\\u2028\\"" },
  [undefined, () => 1, Symbol("y"), 1n, { toJSON(k) { return "own " + typeof k; } }],
  Object.assign(Object.create(null), { z: [1, [2, [3]]], "": "" }),
  Array.from({ length: 1500 }, (_, i) => (i % 7 ? { i, w: "w" + i, deep: [[i]] } : i % 2 ? undefined : [i, "x"])),
  { long: Array.from({ length: 600 }, (_, i) => [i, { k: [i] }]), after: { x: new Map([[1, 2]]), y: [] } },
  [], {}, "text", 3, null, true,
  [[Array.from({ length: 700 }, (_, i) => i)]],
  new (class Point { constructor() { this.x = 1; } })(),
]"""


@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 22])
def test_pieces_join_into_exactly_what_json_stringify_gives(s: SessionHarness, piece: int) -> None:
    check = f"""
      const values = {TRICKY};
      const ns = globalThis.__mcp2repl;
      const bad = [];
      for (const v of [...values, values]) {{
        const pieces = [...ns.jsonPieces(v, false, {piece})];
        if (pieces.join("") !== ns.jsonText(v)) bad.push(ns.jsonText(v).slice(0, 80));
      }}
      const lines = [...ns.jsonPieces(values, true, {piece})].join("");
      const expected = values.map((v) => ns.jsonText([v]).slice(1, -1) + "\\n").join("");
      [bad, lines === expected]
    """
    assert s.value(check) == "[ [], true ]"


def test_a_cycle_anywhere_is_the_error_json_stringify_gives(s: SessionHarness) -> None:
    err = "(() => { try { [...globalThis.__mcp2repl.jsonPieces(v, false, 10)]; return 'no error'; } catch (e) { return e.name + ': ' + e.message.split('\\n')[0]; } })()"
    assert s.value(f"let v = {{ a: [1, 2] }}; v.a.push(v); {err}") == "'TypeError: Converting circular structure to JSON'"
    assert s.value(f"v = Array.from({{ length: 600 }}, () => ({{}})); v[599].back = v; {err}") == "'TypeError: Converting circular structure to JSON'"


def test_a_big_value_is_saved_in_pieces_and_reads_back(s: SessionHarness) -> None:
    make = "globalThis.rows = Array.from({ length: 250000 }, (_, i) => ({ index: i, word: `item-${i}`, tags: ['a', 'é'] }))"
    s.value(make + "; 1")
    writes: list[int] = []
    engine = s.session.engine
    handler = engine.bridge.handlers["artifacts.write"]

    async def counting(args: dict, ctx: object) -> object:
        writes.append(len(args["data"]))
        return await handler(args, ctx)

    engine.bridge.handlers["artifacts.write"] = counting
    try:
        handle = s.json("await api.saveArtifact('big', { kb: 1, rows, pad: '' })")
        lines = s.json("await api.saveArtifact('big-lines', rows, { format: 'ndjson' })")
    finally:
        engine.bridge.handlers["artifacts.write"] = handler
    root = s.session.artifacts.root
    text = (root / "big.json").read_text()
    assert (handle["name"], handle["bytes"], handle["format"]) == ("big.json", len(text.encode()), "json")
    assert json.loads(text) == {"kb": 1, "rows": [{"index": i, "word": f"item-{i}", "tags": ["a", "é"]} for i in range(250000)], "pad": ""}
    assert "\n" not in text  # big: compact, as before
    assert len(writes) >= 4 and max(writes) < (4 << 20) + 100_000  # pieces of 4 M characters and one run, never the whole
    ndjson = (root / "big-lines.ndjson").read_text().splitlines()
    assert (lines["format"], len(ndjson), json.loads(ndjson[-1])) == ("ndjson", 250000, {"index": 249999, "word": "item-249999", "tags": ["a", "é"]})
    assert s.value("(await api.readArtifact('big')).rows.length") == "250000"
    assert temps(root) == []


def test_a_failure_while_streaming_leaves_no_artifact_and_no_temp_file(s: SessionHarness) -> None:
    root = s.session.artifacts.root
    before = files(root)
    cell = "const v = Array.from({ length: 300000 }, (_, i) => ({ i, w: 'x'.repeat(30) })); v[299999].self = v[299999]; await api.saveArtifact('broken', v)"
    result, _ = s.run(cell)
    assert result.error is not None and (result.error.name, result.error.message.split("\n")[0]) == (
        "TypeError",
        "Converting circular structure to JSON",
    )
    deadline = time.monotonic() + 60  # generous: the abort runs on a loaded machine too
    while files(root) != before and time.monotonic() < deadline:  # the abort is not awaited by the cell
        time.sleep(0.05)
    assert files(root) == before


# ---- the Python side, alone -------------------------------------------------------------------------


def test_streams_open_write_close_and_abort(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path)
    streams = ArtifactStreams(store)
    one = streams.open("a", "json", "cell[1]", False)
    two = streams.open("", "ndjson", "cell[2]", True)
    streams.write(one, '{"x": ')
    streams.write(one, '"é"}')
    streams.write(two, "1\n")
    assert len(files(tmp_path)) == len(temps(tmp_path)) == 2  # nothing shows before close
    handle, _ = streams.close(one)
    streams.abort(two)
    assert (handle.name, files(tmp_path), (tmp_path / "a.json").read_text()) == ("a.json", ["a.json"], '{"x": "é"}')
    with pytest.raises(ArtifactError, match=r"no artifact is being written as stream 1 \(it was closed, aborted or left idle for 120 s\)"):
        streams.write(one, "more")
    with pytest.raises(ArtifactError, match="format 'bytes' cannot be written in pieces"):
        streams.open("b", "bytes", "cell[3]", False)
    with pytest.raises(ArtifactError, match=r"starts with '\.'"):
        streams.open(".hidden", "json", "cell[3]", False)


def test_abandoned_streams_are_dropped_and_open_ones_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ArtifactStore(tmp_path)
    streams = ArtifactStreams(store)
    for n in range(artifact_streams.MAX_OPEN):
        streams.write(streams.open(f"s{n}", "json", "cell[1]", False), "[1]")
    with pytest.raises(ArtifactError, match=r"16 artifacts are being written at once already; await each api\.saveArtifact"):
        streams.open("one-more", "json", "cell[1]", False)
    monkeypatch.setattr(artifact_streams, "IDLE", 0.2)  # an interrupted cell never closes its streams
    time.sleep(0.3)
    streams.close(streams.open("fresh", "json", "cell[2]", False))
    assert files(tmp_path) == ["fresh.json"]


def test_closing_the_store_drops_files_still_being_written(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path)
    streams = ArtifactStreams(store)
    streams.write(streams.open("half", "json", "cell[1]", False), "[1,")
    store.save("whole", "{}", "json")
    store.close()  # the session ends while a big value is being saved
    assert files(tmp_path) == ["whole.json"]


def test_an_interrupt_while_streaming_leaves_no_temp_file(tmp_path: Path) -> None:
    from mcp_kernel.session import Session, SessionOptions

    async def main() -> tuple[str, list[Path], str]:
        session = Session(SessionOptions(cwd=tmp_path, config=None, profile=None, server=None, artifact_dir=tmp_path / "a"))
        await session.start()
        await session.execute("globalThis.v = Array.from({ length: 800000 }, (_, i) => ({ i, w: 'x'.repeat(20) })); 1", progress="off")
        writing = asyncio.Event()
        write = session.engine.bridge.handlers["artifacts.write"]

        async def first_piece(args: dict, ctx: object) -> object:
            writing.set()
            return await write(args, ctx)

        session.engine.bridge.handlers["artifacts.write"] = first_piece
        saving = asyncio.ensure_future(session.execute("await api.saveArtifact('big', v)", progress="off"))
        await asyncio.wait_for(writing.wait(), 60)
        session.interrupt()
        result = await saving
        await asyncio.sleep(0.5)  # the abort is sent as the cell unwinds, not awaited
        left = temps(tmp_path / "a")
        after = await session.execute("1 + 1", progress="off")
        await session.close()
        return result.error.name if result.error else "no error", left, after.data["text/plain"]

    assert asyncio.run(main()) == ("InterruptError", [], "2")
    assert files(tmp_path / "a") == []
