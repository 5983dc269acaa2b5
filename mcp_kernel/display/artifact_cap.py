"""A cap on the artifact folder: the kernel's own saves make room, the user's are never removed.

Every cut ``api.print``, oversized result and cut console log writes the whole value to the
artifact folder, so a long-running agent loop would fill the disk. Artifacts the kernel saved on
its own ("auto-saved": names it chose) are evicted oldest first when the folder passes its size or
file cap; artifacts a cell saved with ``api.saveArtifact`` are never evicted. A save that would
still not fit once every other auto-saved artifact were gone is refused before anything is written
or removed (:meth:`FolderCap.room`), whoever makes it: the cap is a promise about the disk. Which
artifacts are auto-saved is kept in a hidden index file in the folder, so the rule holds across
kernels sharing the folder.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

INDEX = ".auto-saved.json"


def _env_int(name: str, default: int) -> int:
    try:
        return int(float(os.environ.get(name, default)))
    except ValueError:
        return default


@dataclass
class Eviction:
    """What one save did to the folder: the auto-saved artifacts it removed, and whether it is still over."""

    removed: list[str] = field(default_factory=list)
    freed: int = 0
    over: str = ""  # "" or why the folder is still over its cap

    def message(self) -> str:
        """One line for the cell's stderr, or "" when nothing happened."""
        parts = []
        if self.removed:
            names = ", ".join(self.removed[:5]) + (f" and {len(self.removed) - 5} more" if len(self.removed) > 5 else "")
            parts.append(f"removed {len(self.removed)} auto-saved artifact(s) ({_mb(self.freed)}) to stay within the folder's cap: {names}")
        if self.over:
            parts.append(self.over)
        return "".join(f"[mcp2repl] artifacts: {p}\n" for p in parts)


@dataclass
class Room:
    """What a new artifact may take: the cap minus what the folder keeps whatever happens (the user's saves)."""

    bytes: int
    files: int
    kept_bytes: int
    kept_files: int


@dataclass
class FolderCap:
    """Size and file-count limits of one artifact folder (MCP2REPL_ARTIFACT_MAX_MB, MCP2REPL_ARTIFACT_MAX_FILES)."""

    max_bytes: int = field(default_factory=lambda: _env_int("MCP2REPL_ARTIFACT_MAX_MB", 1024) << 20)
    max_files: int = field(default_factory=lambda: _env_int("MCP2REPL_ARTIFACT_MAX_FILES", 1000))

    def note_saved(self, root: Path, name: str, auto: bool) -> None:
        """Record whether ``name`` is auto-saved (a later explicit save of the same name makes it the user's)."""
        index = _read_index(root)
        if auto:
            index[name] = True
        elif index.pop(name, None) is None:
            return
        _write_index(root, index)

    def room(self, root: Path, files: list[tuple[str, int, int]], name: str) -> Room:
        """The room for artifact ``name`` among ``files`` ((name, bytes, mtime_ns)): every auto-saved one may
        make way, and an older ``name`` is replaced by it."""
        index = _read_index(root)
        kept = [size for other, size, _ in files if other not in index and other != name]
        return Room(self.max_bytes - sum(kept), self.max_files - len(kept), sum(kept), len(kept))

    def refusal(self, name: str, size: int, room: Room, more: bool = False) -> str:
        """Why ``name`` (``size`` bytes, or more than that) cannot be saved within the cap ("" when it can)."""
        if size <= room.bytes and room.files >= 1:
            return ""
        return (
            f"saving {name!r} ({'more than ' if more else ''}{_mb(size)}) would take the artifact folder past its cap of "
            f"{self.max_files} files, {_mb(self.max_bytes)}: it holds {room.kept_files} files, {_mb(room.kept_bytes)}, saved with "
            "api.saveArtifact, which are never removed automatically. Nothing was saved; delete artifacts you no longer need, "
            "or raise MCP2REPL_ARTIFACT_MAX_MB / MCP2REPL_ARTIFACT_MAX_FILES"
        )

    def enforce(self, root: Path, files: list[tuple[str, int, int]], keep: str) -> Eviction:
        """Evict the oldest auto-saved artifacts until ``files`` ((name, bytes, mtime_ns)) fit; never ``keep``."""
        result = Eviction()
        total = sum(size for _, size, _ in files)
        count = len(files)
        if total <= self.max_bytes and count <= self.max_files:
            return result
        index = _read_index(root)
        for name, size, _ in sorted((f for f in files if f[0] in index and f[0] != keep), key=lambda f: f[2]):
            if total <= self.max_bytes and count <= self.max_files:
                break
            with contextlib.suppress(OSError):
                (root / name).unlink()
                total -= size
                count -= 1
                result.removed.append(name)
                result.freed += size
                index.pop(name, None)
        if result.removed:
            _write_index(root, index)
        if total > self.max_bytes or count > self.max_files:
            result.over = (  # another kernel sharing the folder saved meanwhile: said, not undone
                f"the artifact folder holds {count} files, {_mb(total)}, over its cap of {self.max_files} files, "
                f"{_mb(self.max_bytes)}; artifacts saved with api.saveArtifact are never removed: delete some, or raise "
                "MCP2REPL_ARTIFACT_MAX_MB / MCP2REPL_ARTIFACT_MAX_FILES"
            )
        return result


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB"


def _read_index(root: Path) -> dict[str, bool]:
    try:
        data = json.loads((root / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): True for k in data} if isinstance(data, list) else {}


def _write_index(root: Path, index: dict[str, bool]) -> None:
    tmp = root / f"{INDEX}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps(sorted(index)), encoding="utf-8")
        os.replace(tmp, root / INDEX)
