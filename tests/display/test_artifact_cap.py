"""The artifact folder's cap in-process: auto-saved artifacts make room, the user's are never removed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_kernel.display.artifact_cap import FolderCap
from mcp_kernel.display.artifact_streams import ArtifactStreams
from mcp_kernel.display.artifacts import ArtifactError, ArtifactStore


def _store(tmp_path: Path, files: int = 3, mb: int = 1024) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts", cap=FolderCap(max_bytes=mb << 20, max_files=files))


def _aged(store: ArtifactStore, name: str, age: int) -> None:
    path = store.root / name
    os.utime(path, (1e9, 1e9 + 1000 - age))


def test_oldest_auto_saved_go_first_and_the_user_hears_which(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save_within_cap("mine.json", "1", "json", auto=False)
    for n in range(3):
        store.save_within_cap(f"result-cell{n}.json", "2", "json", auto=True)
        _aged(store, f"result-cell{n}.json", 10 - n)
    names = {h.name for h in store.list()}
    assert names == {"mine.json", "result-cell1.json", "result-cell2.json"}
    handle, eviction = store.save_within_cap("result-cell3.json", "3", "json", auto=True)
    assert handle.name == "result-cell3.json"
    assert eviction.removed == ["result-cell1.json"]
    assert eviction.message() == "[mcp2repl] artifacts: removed 1 auto-saved artifact(s) (0.0 MB) to stay within the folder's cap: result-cell1.json\n"
    assert {h.name for h in store.list()} == {"mine.json", "result-cell2.json", "result-cell3.json"}


def test_explicit_saves_are_never_evicted_and_a_save_past_the_cap_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path, files=2)
    for n in range(2):
        store.save_within_cap(f"keep{n}.json", "1", "json", auto=False)
    with pytest.raises(ArtifactError) as refused:
        store.save_within_cap("keep2.json", "1", "json", auto=False)
    assert str(refused.value) == (
        "saving 'keep2.json' (0.0 MB) would take the artifact folder past its cap of 2 files, 1024.0 MB: it holds 2 files, "
        "0.0 MB, saved with api.saveArtifact, which are never removed automatically. Nothing was saved; delete artifacts "
        "you no longer need, or raise MCP2REPL_ARTIFACT_MAX_MB / MCP2REPL_ARTIFACT_MAX_FILES"
    )
    assert {h.name for h in store.list()} == {"keep0.json", "keep1.json"}
    store.save_within_cap("keep1.json", "2", "json", auto=False)  # replacing one adds no file
    assert store.read("keep1.json") == ("json", "2")


def test_a_save_bigger_than_the_cap_writes_and_removes_nothing(tmp_path: Path) -> None:
    """Issue 22, item 15: 12 MB were saved under a 2 MB cap."""
    store = _store(tmp_path, files=100, mb=2)
    store.save_within_cap("result-old.txt", "o" * 500_000, "text", auto=True)
    with pytest.raises(ArtifactError, match=r"^saving 'big.txt' \(12.0 MB\) would take the artifact folder past its cap of 100 files, 2.0 MB"):
        store.save_within_cap("big.txt", "x" * (12 << 20), "text", auto=False)
    assert [h.name for h in store.list()] == ["result-old.txt"]  # no room could be made: nothing was evicted either
    assert not list(store.root.glob(".tmp-*"))
    with pytest.raises(ArtifactError, match="past its cap"):  # the kernel's own saves obey the cap too
        store.save_within_cap("result-huge.txt", "é" * (1 << 20) + "!", "text", auto=True)
    _, eviction = store.save_within_cap("fits.txt", "f" * 1_800_000, "text", auto=False)  # fits once the auto-saved one goes
    assert eviction.removed == ["result-old.txt"]
    assert sum(h.bytes for h in store.list()) <= 2 << 20
    assert str(tmp_path) not in eviction.message()


def test_a_save_written_in_pieces_stops_at_the_cap(tmp_path: Path) -> None:
    store = _store(tmp_path, files=100, mb=1)
    streams = ArtifactStreams(store)
    stream = streams.open("pieces", "text", "cell[1]", auto=False)
    streams.write(stream, "a" * 600_000)
    with pytest.raises(ArtifactError, match=r"^saving 'pieces.txt' \(more than 1.1 MB\) would take the artifact folder past its cap"):
        streams.write(stream, "b" * 600_000)
    assert store.list() == [] and not list(store.root.glob(".tmp-*"))
    with pytest.raises(ArtifactError, match="no artifact is being written as stream"):
        streams.close(stream)


def test_size_cap_and_an_auto_name_saved_again_by_the_user(tmp_path: Path) -> None:
    store = _store(tmp_path, files=100, mb=1)
    store.save_within_cap("result-a.txt", "a" * 600_000, "text", auto=True)
    _aged(store, "result-a.txt", 5)
    store.save_within_cap("result-b.txt", "b" * 300_000, "text", auto=True)
    store.save_within_cap("result-b.txt", "b" * 300_000, "text", auto=False)  # now the user's
    _, eviction = store.save_within_cap("result-c.txt", "c" * 300_000, "text", auto=True)
    assert eviction.removed == ["result-a.txt"]
    assert eviction.freed == 600_000
    _, eviction = store.save_within_cap("result-d.txt", "d" * 600_000, "text", auto=True)
    assert eviction.removed == ["result-c.txt"]
    assert {h.name for h in store.list()} == {"result-b.txt", "result-d.txt"}


def test_api_save_artifact_obeys_the_cap_in_a_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import SessionHarness

    monkeypatch.setenv("MCP2REPL_ARTIFACT_MAX_MB", "2")
    s = SessionHarness(tmp_path, {"mcpServers": {}})
    try:
        for code in ("await api.saveArtifact('big.txt', 'x'.repeat(12 << 20))", "await api.saveArtifact('rows', Array.from({ length: 400000 }, (_, i) => ({ i, s: 'row' })))"):
            result, _ = s.run(code)
            assert result.error is not None and result.error.name == "ArtifactError", result
            assert "would take the artifact folder past its cap of 1000 files, 2.0 MB" in result.error.message
            assert str(tmp_path) not in result.error.message
        assert s.value("(await api.artifacts()).length") == "0"
        assert s.value("(await api.saveArtifact('ok.txt', 'fine')).bytes") == "4"  # the session goes on
    finally:
        s.close()
