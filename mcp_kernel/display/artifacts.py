"""Artifacts: large cell values saved as files, so a notebook shows a small handle instead of megabytes.

Names come from JS code, which makes them untrusted: artifact_names.py checks each one, and here
the fully resolved path (symlinks followed) must stay inside the artifact root.

Writes go to a hidden temp file beside the target, are fsynced and then renamed over it with
``os.replace``, so a crash, SIGKILL or Ctrl-C leaves the old artifact or none, never half of one.

JS serialises values (display/js/artifacts.js) so only text crosses the bridge; the handlers at
the end of this module write and read it in a thread, so a 50 MB artifact never stalls the loop.
A big value's JSON comes in pieces instead, through the streams of artifact_streams.py.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..engine import BridgeError, CallContext, Engine
from .artifact_cap import Eviction, FolderCap, Room
from .artifact_names import FORMATS, ArtifactError, check_name, infer_format, with_extension

_CHUNK = 8 << 20  # write in slices so Ctrl-C is noticed during a 200 MB save, not only after it


@dataclass
class Handle:
    """What a cell gets back instead of the value: small, JSON-able, and says how to read the value again."""

    name: str
    kind: str
    bytes: int
    format: str
    readWith: str  # camelCase: it is read from JS
    path: str
    created: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def default_root(cwd: Path | None = None) -> Path:
    """``MCP2REPL_ARTIFACT_DIR``, else ``<cwd>/.mcp2repl/artifacts`` (beside the notebook the kernel runs for)."""
    env = os.environ.get("MCP2REPL_ARTIFACT_DIR")
    return Path(env).expanduser() if env else (cwd or Path.cwd()) / ".mcp2repl" / "artifacts"


class ArtifactStore:
    """A folder of artifacts. Nothing touches the disk until the first save."""

    def __init__(self, root: Path | None = None, reserved: frozenset[Path] = frozenset(), cap: FolderCap | None = None, base: Path | None = None) -> None:
        self.root = (root if root is not None else default_root()).expanduser().absolute()
        #: the session's working folder: handles name files relative to it, never by a host path
        self.base = (base if base is not None else Path.cwd()).absolute()
        #: files a save must never replace (config files the kernel reads at start-up)
        self.reserved = frozenset(p.resolve() for p in reserved)
        self.cap = cap or FolderCap()
        #: every save, in order: a step's caller learns which artifacts the step wrote (see Session.execute)
        self.saved: list[Handle] = []
        self._unfinished: set[AtomicFile] = set()

    def close(self) -> None:
        """Drop the files still being written (a big value's pieces when the session ends): no temp file stays."""
        for file in list(self._unfinished):
            file.discard()

    def save_within_cap(self, name: str, data: str | bytes, format: str, auto: bool) -> tuple[Handle, Eviction]:
        """:meth:`save` if the artifact fits the folder's cap (refused before anything is written, see
        artifact_cap), then keep the folder within it (``auto``: the kernel chose to save this)."""
        return self.within_cap(self.save(name, data, format, capped=True), auto)

    def check_room(self, name: str, size: int, more: bool = False) -> Room:
        """The folder's room for ``name``; an ArtifactError when ``size`` bytes (``more``: or more) cannot fit."""
        files = [(h.name, h.bytes, mtime) for mtime, h in self._files()]
        room = self.cap.room(self.root.resolve(), files, name)
        if problem := self.cap.refusal(name, size, room, more):
            raise ArtifactError(problem)
        return room

    def within_cap(self, handle: Handle, auto: bool) -> tuple[Handle, Eviction]:
        """Keep the folder within its cap after ``handle`` was saved."""
        root = self.root.resolve()
        self.cap.note_saved(root, handle.name, auto)
        files = [(h.name, h.bytes, mtime) for mtime, h in self._files()]
        return handle, self.cap.enforce(root, files, keep=handle.name)

    def save(self, name: str, data: str | bytes, format: str, capped: bool = False) -> Handle:
        """Write ``data`` (already serialized by the caller) atomically and return its handle (``capped``:
        refused with an ArtifactError before anything is written if it cannot fit the folder's cap).

        ``json`` and ``text`` are stored verbatim (JSON is not re-parsed, so 100 MB saves stay cheap).
        ``ndjson`` takes the JSON text of an array (one compact value per line is written) or text that
        already is NDJSON (every non-blank line is validated); note that an array is always exploded,
        so a single array record must be passed as ``[[...]]``. ``bytes`` takes bytes (str is UTF-8 encoded).
        """
        name = with_extension(check_name(name), format)
        content = _content(data, format)
        if capped:
            self.check_room(name, _size(content))
        file = self.create(name)
        file.write(_pieces(content))
        return self.commit(name, file)

    def create(self, name: str) -> AtomicFile:
        """The file of artifact ``name`` (checked, with its extension), to write and then :meth:`commit`."""
        path = self._target(name)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return AtomicFile(path, name, self._unfinished)
        except OSError as exc:
            raise ArtifactError(f"could not write artifact {name!r}: {exc.strerror or exc}") from exc

    def commit(self, name: str, file: AtomicFile) -> Handle:
        """Make the written file the artifact ``name``; its handle."""
        file.commit()
        handle = self._handle(name, file.path)
        self.saved.append(handle)
        return handle

    def read(self, name_or_handle: str | Mapping[str, object] | Handle) -> tuple[str, str | bytes]:
        """Return ``(format, content)``: str for json/text/ndjson, bytes for bytes (or for text that is not UTF-8)."""
        if isinstance(name_or_handle, Handle):
            name_or_handle = name_or_handle.name
        if isinstance(name_or_handle, Mapping):
            name_or_handle = name_or_handle.get("name")  # type: ignore[assignment]
        name, path = self._find(check_name(name_or_handle))
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ArtifactError(f"could not read artifact {name!r}: {exc.strerror or exc}") from exc
        fmt = infer_format(name)
        if fmt != "bytes":
            with contextlib.suppress(UnicodeDecodeError):
                return fmt, raw.decode("utf-8")
        return "bytes", raw

    def list(self) -> list[Handle]:
        """Every artifact, newest first; hidden files (temp files) and anything resolving outside the root are skipped."""
        found = self._files()
        found.sort(key=lambda item: (-item[0], item[1].name))
        return [handle for _, handle in found]

    def _files(self) -> list[tuple[int, Handle]]:
        root = self.root.resolve()
        found: list[tuple[int, Handle]] = []
        for dirpath, dirnames, filenames in os.walk(root):  # does not descend into symlinked folders
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for filename in filenames:
                name = (Path(dirpath) / filename).relative_to(root).as_posix()
                try:
                    path = self._target(check_name(name))
                    found.append((path.stat().st_mtime_ns, self._handle(name, path)))
                except (ArtifactError, OSError):
                    continue
        return found

    def unique_name(self, stem: str, format: str) -> str:
        """A free name: ``stem`` plus extension, else ``stem-2``, ``stem-3``... before the extension."""
        name = with_extension(check_name(stem), format)
        suffix = Path(name).suffix
        base, n, candidate = name[: len(name) - len(suffix)], 1, name
        while os.path.lexists(self._target(candidate)):
            n += 1
            candidate = f"{base}-{n}{suffix}"
        return candidate

    def _target(self, name: str) -> Path:
        """The resolved path; refuses anything a symlink would carry outside the root."""
        root = self.root.resolve()
        path = (root / name).resolve()
        if path == root or not path.is_relative_to(root):
            raise ArtifactError(f"artifact name {name!r} resolves outside the artifact folder (through a symlink)")
        if path in self.reserved:
            raise ArtifactError(f"artifact name {name!r} would replace a config file the kernel reads; choose another name")
        return path

    def _find(self, name: str) -> tuple[str, Path]:
        """Exact name first, then the name plus each format's extension, so ``readArtifact("results")`` works."""
        path = self._target(name)
        if path.is_file():
            return name, path
        candidates = [(c, self._target(c)) for c in (name + ext for ext in FORMATS.values())]
        hits = [(c, p) for c, p in candidates if p.is_file()]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise ArtifactError(f"artifact name {name!r} is ambiguous: {', '.join(c for c, _ in hits)}; give the extension")
        names = [h.name for h in self.list()]
        if not names:
            raise ArtifactError(f"no artifact named {name!r}; there are no artifacts yet")
        more = f" (and {len(names) - 10} more)" if len(names) > 10 else ""
        raise ArtifactError(f"no artifact named {name!r}; existing artifacts: {', '.join(names[:10])}{more}")

    def _handle(self, name: str, path: Path) -> Handle:
        st = path.stat()
        created = datetime.fromtimestamp(st.st_mtime, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        read_with = f"await api.readArtifact({json.dumps(name)})"
        return Handle(name, "artifact", st.st_size, infer_format(name), read_with, str(path), created)

    def handle_json(self, handle: Handle) -> dict[str, Any]:
        """The handle as cells, faces and agents see it: the one place its shape is made.

        ``path`` is relative to the session's working folder (and ``relPath``, the same, is what
        JupyterLab links to), or, for a folder elsewhere (``MCP2REPL_ARTIFACT_DIR``), relative to
        the artifact folder: a host's absolute paths say nothing a cell needs and much it should not.
        """
        data = handle.to_json()
        path = Path(handle.path)
        for base in (self.base, self.base.resolve()):
            if path.is_relative_to(base):
                data["path"] = data["relPath"] = path.relative_to(base).as_posix()
                return data
        data["path"] = handle.name
        return data


def _content(data: str | bytes, format: str) -> str | bytes:
    """What the file will hold, checked: bytes as they are, text (NDJSON made of an array) as a str."""
    if not isinstance(data, str | bytes | bytearray | memoryview):
        raise ArtifactError(f"artifact data must be str or bytes, got {type(data).__name__}")
    if format == "bytes":
        return data if isinstance(data, str) else bytes(data)
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArtifactError(f"{format} artifact data is not valid UTF-8 (byte {exc.start}); save it with format 'bytes'") from exc
    return _ndjson(text) if format == "ndjson" else text


def _pieces(content: str | bytes) -> Iterable[bytes]:
    """The file's bytes, in pieces: a big text is encoded a slice at a time, never as one more copy of it."""
    return [content] if isinstance(content, bytes) else utf8_pieces(content)


def _size(content: str | bytes) -> int:
    """Bytes the file will take (UTF-8 counted a slice at a time, as it will be written)."""
    if isinstance(content, bytes):
        return len(content)
    return len(content) if content.isascii() else sum(len(piece) for piece in utf8_pieces(content))


def utf8_pieces(text: str) -> Iterator[bytes]:
    """UTF-8 of ``text``, a slice at a time: a 50 MB text is written without a 50 MB copy of it."""
    for start in range(0, max(len(text), 1), _CHUNK):
        yield _utf8_slice(text[start : start + _CHUNK])


def _utf8_slice(text: str) -> bytes:
    """UTF-8, with lone surrogates (possible in JS strings) replaced by U+FFFD instead of failing the save."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def _ndjson(text: str) -> str:
    if text.lstrip().startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            value = None  # e.g. NDJSON whose lines are arrays: checked line by line below
        if isinstance(value, list):
            return "".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n" for v in value)
    lines = [line.rstrip("\r") for line in text.split("\n")]  # not splitlines(): U+2028 is legal inside JSON strings
    for number, line in enumerate(lines, 1):
        try:
            if line.strip():
                json.loads(line)
        except ValueError as exc:
            raise ArtifactError(f"ndjson data must be a JSON array or one JSON value per line; line {number} is not valid JSON") from exc
    kept = [line for line in lines if line.strip()]
    return "\n".join(kept) + "\n" if kept else ""


class AtomicFile:
    """A file that appears whole at its path or not at all: written to a hidden temp file beside it,
    then fsynced, renamed over the path, and the rename made durable. Failures are ArtifactErrors."""

    def __init__(self, path: Path, name: str, unfinished: set[AtomicFile]) -> None:
        self.path, self.name = path, name
        self._tmp = tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", suffix=".part", delete=False)
        self.size = 0  # bytes written so far
        self._unfinished = unfinished  # the store's files not yet committed or discarded (see ArtifactStore.close)
        unfinished.add(self)

    def write(self, pieces: Iterable[bytes]) -> None:
        with self._or_discard():
            for piece in pieces:
                view = memoryview(piece)
                for start in range(0, len(view), _CHUNK):
                    self._tmp.write(view[start : start + _CHUNK])
                self.size += len(view)

    def commit(self) -> None:
        with self._or_discard():
            with self._tmp:
                self._tmp.flush()
                os.fsync(self._tmp.fileno())
            os.replace(self._tmp.name, self.path)
        self._unfinished.discard(self)
        with contextlib.suppress(OSError):  # make the rename itself durable; not possible on every OS
            fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    @contextlib.contextmanager
    def _or_discard(self) -> Iterator[None]:
        """Any failure, an interrupt too, removes the temp file: the old artifact stays, nothing half-written does."""
        try:
            yield
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError):
                raise ArtifactError(f"could not write artifact {self.name!r}: {exc.strerror or exc}") from exc
            raise

    def discard(self) -> None:
        self._unfinished.discard(self)
        with contextlib.suppress(OSError):
            self._tmp.close()
        with contextlib.suppress(OSError):
            os.unlink(self._tmp.name)


# ---- the bridge handlers behind api.saveArtifact, api.readArtifact, api.artifacts ------------------


def register(engine: Engine, store: ArtifactStore, redact: Callable[[str], str] = lambda text: text, redact_json: Callable[[str], str] | None = None) -> None:
    """Serve ``artifacts.save``, ``artifacts.read`` and ``artifacts.list`` for JS; ``redact`` masks secrets in text
    saved, ``redact_json`` in JSON and NDJSON (keeping them JSON)."""
    masks = {"json": redact_json or redact, "ndjson": redact_json or redact}

    async def save(params: dict[str, Any], ctx: CallContext) -> Any:
        fmt = params.get("format", "json")
        auto = params.get("auto") is True
        data: str | bytes = params["data"]
        if fmt == "bytes":
            data = base64.b64decode(params["data"])
        else:
            data = masks.get(fmt, redact)(data)
        try:
            name = params.get("name") or store.unique_name(f"result-{cell_stem(ctx.cell)}", fmt)
            # in a thread: a 50 MB artifact must not stall the kernel's loop, and an interrupt
            # that cancels this task leaves the atomic write to finish or vanish on its own
            handle, eviction = await asyncio.to_thread(store.save_within_cap, name, data, fmt, auto)
            if eviction.message():
                engine.sink.note(ctx.cell, eviction.message())
            return store.handle_json(handle)
        except ArtifactError as exc:
            raise BridgeError("ArtifactError", str(exc)) from None

    async def read(params: dict[str, Any], ctx: CallContext) -> Any:
        try:
            fmt, content = await asyncio.to_thread(store.read, params["name"])
        except ArtifactError as exc:
            raise BridgeError("ArtifactError", str(exc)) from None
        if isinstance(content, bytes):
            return {"format": "bytes", "data": base64.b64encode(content).decode("ascii")}
        return {"format": fmt, "data": content}

    async def listing(params: Any, ctx: CallContext) -> Any:
        return [store.handle_json(h) for h in await asyncio.to_thread(store.list)]

    engine.register("artifacts.save", save)
    engine.register("artifacts.read", read)
    engine.register("artifacts.list", listing)


def cell_stem(cell: str) -> str:
    return cell.replace("[", "").replace("]", "").replace("-", "s") or "value"
