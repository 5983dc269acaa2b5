"""The artifact folder's cap in-process: auto-saved artifacts make room, the user's are never removed."""

from __future__ import annotations

import os
from pathlib import Path

from mcp_kernel.display.artifact_cap import FolderCap
from mcp_kernel.display.artifacts import ArtifactStore


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


def test_explicit_saves_are_never_evicted_and_being_over_is_said(tmp_path: Path) -> None:
    store = _store(tmp_path, files=2)
    for n in range(2):
        store.save_within_cap(f"keep{n}.json", "1", "json", auto=False)
    _, eviction = store.save_within_cap("keep2.json", "1", "json", auto=False)
    assert eviction.removed == []
    assert eviction.over.startswith(f"the folder {store.root} holds 3 files, 0.0 MB, over its cap of 2 files, 1024.0 MB; ")
    assert "artifacts saved with api.saveArtifact are never removed" in eviction.message()
    assert {h.name for h in store.list()} == {"keep0.json", "keep1.json", "keep2.json"}


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
