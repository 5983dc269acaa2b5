"""Artifact store: hostile names, symlink escapes, round trips, and atomic writes (including SIGKILL)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from mcp_kernel.display import artifacts
from mcp_kernel.display.artifacts import ArtifactError, ArtifactStore, Handle

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts")


def all_files(folder: Path) -> list[str]:
    """Every file, hidden ones (temp files) included."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()) if folder.exists() else []


HOSTILE = [
    ("../x", "'..'"),
    ("..", "'..'"),
    ("a/../../b", "'..'"),
    ("a/..", "'..'"),
    ("/etc/passwd", "absolute"),
    ("/tmp/x.json", "absolute"),
    ("con", "reserved device"),
    ("CON.json", "reserved device"),
    ("lpt9.txt", "reserved device"),
    ("Com1", "reserved device"),
    ("aux.tar.gz", "reserved device"),
    ("sub/nul", "reserved device"),
    ("PRN .txt", "reserved device"),
    ("COM¹", "reserved device"),
    ("a\x00b", "U+0000"),
    ("a\nb", "U+000A"),
    ("a\x1b[31mb", "U+001B"),
    ("a\x7fb", "U+007F"),
    ("evil\u202egnp.exe", "U+202E"),
    ("a\u2028b", "U+2028"),
    (".hidden", "starts with '.'"),
    ("a/.git/config", "starts with '.'"),
    ("./a", "'.'"),
    ("a/./b", "'.'"),
    ("a\\b", "backslash"),
    ("..\\..\\x", "backslash"),
    ("C:\\Windows\\x", "backslash"),
    ("C:/x", "':'"),
    ("a*b", "'*'"),
    ('a"b', "'\"'"),
    ("a|b", "'|'"),
    ("a?b", "'?'"),
    ("a<b>", "'<'"),
    ("x" * 300, "300 characters"),
    ("é" * 150, "bytes in UTF-8"),
    ("", "empty"),
    (" ", "empty"),
    ("\t", "empty"),
    ("a\tb", "U+0009"),
    (" a", "space"),
    ("a ", "space"),
    ("a.", "ends with '.'"),
    ("a//b", "empty folder segment"),
    ("a/", "empty folder segment"),
]


@pytest.mark.parametrize(("name", "problem"), HOSTILE, ids=[repr(n)[:40] for n, _ in HOSTILE])
def test_hostile_names_are_refused_with_a_clear_message(store: ArtifactStore, tmp_path: Path, name: str, problem: str):
    before = all_files(tmp_path)
    for fmt in ("json", "bytes"):
        with pytest.raises(ArtifactError) as info:
            store.save(name, b"{}", fmt)
        assert problem in str(info.value)
    with pytest.raises(ArtifactError) as info:
        store.read(name)
    assert problem in str(info.value)
    with pytest.raises(ArtifactError):
        store.unique_name(name, "json")
    assert all_files(tmp_path) == before
    assert not store.root.exists()  # refused before anything was created


@pytest.mark.parametrize("name", [None, 3, b"x.json", ["x"]])
def test_non_string_names(store: ArtifactStore, name: object):
    with pytest.raises(ArtifactError, match="must be a string"):
        store.save(name, "{}", "json")  # type: ignore[arg-type]


def test_symlinked_folder_pointing_outside_is_refused(store: ArtifactStore, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    store.root.mkdir(parents=True)
    (store.root / "link").symlink_to(outside, target_is_directory=True)
    for name in ("link/x.json", "link/secret.txt", "link/sub/deeper.json"):
        with pytest.raises(ArtifactError, match="outside the artifact folder"):
            store.save(name, "{}", "json" if name.endswith(".json") else "text")
    with pytest.raises(ArtifactError, match="outside the artifact folder"):
        store.read("link/secret.txt")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "top secret"
    assert store.list() == []


def test_symlinked_file_pointing_outside_is_refused(store: ArtifactStore, tmp_path: Path):
    victim = tmp_path / "victim.json"
    victim.write_text('"original"')
    store.root.mkdir(parents=True)
    (store.root / "evil.json").symlink_to(victim)
    with pytest.raises(ArtifactError, match="outside"):
        store.save("evil.json", '"pwned"', "json")
    with pytest.raises(ArtifactError, match="outside"):
        store.read("evil.json")
    with pytest.raises(ArtifactError, match="outside"):
        store.unique_name("evil", "json")
    assert victim.read_text() == '"original"'
    assert store.list() == []


def test_symlink_inside_the_root_is_allowed(store: ArtifactStore):
    store.save("real/a.json", "1", "json")
    (store.root / "alias").symlink_to(store.root / "real", target_is_directory=True)
    handle = store.save("alias/b.json", "2", "json")
    assert Path(handle.path) == (store.root / "real" / "b.json").resolve()
    assert store.read("alias/b.json") == ("json", "2")


def test_root_from_env_and_cwd_created_lazily(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MCP2REPL_ARTIFACT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert ArtifactStore().root == tmp_path / ".mcp2repl" / "artifacts"
    monkeypatch.setenv("MCP2REPL_ARTIFACT_DIR", str(tmp_path / "env-dir"))
    store = ArtifactStore()
    assert store.root == tmp_path / "env-dir"
    assert store.list() == []
    assert not store.root.exists()
    store.save("x", "1", "json")
    assert (tmp_path / "env-dir" / "x.json").read_text() == "1"


UNICODE = 'h\u00e9llo \u2603 \U0001f600 \u4e2d\u6587 \u2028 "quoted" \\ \r\n tab\t nul\x00 end'


def test_json_round_trip(store: ArtifactStore):
    text = json.dumps({"a": [1, 2.5, None, True], "s": UNICODE}, ensure_ascii=False)
    handle = store.save("results", text, "json")
    assert handle.name == "results.json"
    assert handle.format == "json"
    assert handle.kind == "artifact"
    assert handle.bytes == len(text.encode("utf-8")) == Path(handle.path).stat().st_size
    assert handle.readWith == 'await api.readArtifact("results.json")'
    assert Path(handle.path).is_absolute()
    assert Path(handle.path) == (store.root / "results.json").resolve()
    assert datetime.fromisoformat(handle.created.replace("Z", "+00:00")).tzinfo is not None
    assert store.read("results.json") == ("json", text)
    assert json.loads(store.read("results.json")[1])["s"] == UNICODE


def test_text_round_trip(store: ArtifactStore):
    handle = store.save("notes", UNICODE, "text")
    assert handle.name == "notes.txt"
    assert store.read(handle) == ("text", UNICODE)
    assert Path(handle.path).read_bytes() == UNICODE.encode("utf-8")  # \r\n kept: no newline translation


def test_ndjson_from_array_text(store: ArtifactStore):
    rows = [{"a": 1}, "x\ny", [1, 2], None, UNICODE, 12345678901234567890]
    handle = store.save("rows", json.dumps(rows), "ndjson")
    assert handle.name == "rows.ndjson"
    fmt, content = store.read("rows.ndjson")
    assert fmt == "ndjson"
    assert content.endswith("\n")
    assert [json.loads(line) for line in content.split("\n")[:-1]] == rows
    assert handle.bytes == len(content.encode("utf-8"))


def test_ndjson_accepts_ndjson_text_and_refuses_garbage(store: ArtifactStore):
    store.save("lines.jsonl", '{"a":1}\r\n\n[1,2]\n[3]\n"\u2028"', "ndjson")
    assert store.read("lines.jsonl") == ("ndjson", '{"a":1}\n[1,2]\n[3]\n"\u2028"\n')
    store.save("empty", "[]", "ndjson")
    assert store.read("empty.ndjson") == ("ndjson", "")
    with pytest.raises(ArtifactError, match="line 2 is not valid JSON"):
        store.save("bad", '{"a":1}\n{oops\n', "ndjson")
    with pytest.raises(ArtifactError, match="line 1"):
        store.save("pretty", '{\n  "a": 1\n}', "ndjson")


def test_bytes_round_trip(store: ArtifactStore):
    data = bytes(range(256)) * 1000
    handle = store.save("blob", data, "bytes")
    assert (handle.name, handle.format, handle.bytes) == ("blob.bin", "bytes", len(data))
    assert store.read("blob.bin") == ("bytes", data)
    store.save("image.png", bytearray(b"\x89PNG"), "bytes")
    assert store.read("image.png") == ("bytes", b"\x89PNG")


def test_data_checks(store: ArtifactStore):
    with pytest.raises(ArtifactError, match="not valid UTF-8"):
        store.save("x", b"\xff\xfe", "text")
    with pytest.raises(ArtifactError, match="must be str or bytes"):
        store.save("x", {"a": 1}, "json")  # type: ignore[arg-type]
    with pytest.raises(ArtifactError, match="unknown artifact format 'csv'"):
        store.save("x", "a,b", "csv")
    assert store.save("utf8", "é".encode(), "text").bytes == 2
    assert store.read("utf8.txt") == ("text", "é")
    assert store.save("lone", "a\ud800b", "text").bytes == len("a\ufffdb".encode())  # lone JS surrogate does not fail the save
    assert store.read("lone.txt") == ("text", "a\ufffdb")


@pytest.mark.parametrize(
    ("name", "fmt", "expected"),
    [
        ("x", "json", "x.json"),
        ("x.json", "json", "x.json"),
        ("x.JSON", "json", "x.JSON"),
        ("x.json", "bytes", "x.json.bin"),
        ("x.json", "text", "x.json.txt"),
        ("report.csv", "text", "report.csv"),
        ("report.md", "text", "report.md"),
        ("rows.jsonl", "ndjson", "rows.jsonl"),
        ("v1.2", "json", "v1.2.json"),
        ("photo.png", "bytes", "photo.png"),
        ("x", "bytes", "x.bin"),
        ("dir/sub/x", "text", "dir/sub/x.txt"),
        ("caf\u0065\u0301", "json", "caf\u00e9.json"),  # NFC
    ],
)
def test_extensions(store: ArtifactStore, name: str, fmt: str, expected: str):
    handle = store.save(name, "1", fmt)
    assert handle.name == expected
    assert (store.root / expected).is_file()
    assert store.read(expected)[0] == artifacts.infer_format(expected)


def test_a_name_too_long_with_its_extension_is_refused_not_saved_unreadable(store: ArtifactStore):
    store.save("n" * 195, "1", "json")  # 200 with ".json": the limit, readable
    assert store.read("n" * 195 + ".json") == ("json", "1")
    with pytest.raises(ArtifactError, match=re.escape("artifact name is 201 characters long with its extension '.ndjson'; the limit is 200")):
        store.save("n" * 194, "[1]", "ndjson")
    assert [h.name for h in store.list()] == ["n" * 195 + ".json"]


def test_read_by_handle_dict_and_without_extension(store: ArtifactStore):
    handle = store.save("results", "[1]", "json")
    assert store.read(handle.to_json()) == ("json", "[1]")
    assert store.read(json.loads(json.dumps(handle.to_json()))) == ("json", "[1]")
    assert store.read("results") == ("json", "[1]")
    store.save("results", "one", "text")
    with pytest.raises(ArtifactError, match=re.escape("ambiguous: results.json, results.txt")):
        store.read("results")
    with pytest.raises(ArtifactError, match="must be a string"):
        store.read({"nope": 1})


def test_to_json(store: ArtifactStore):
    data = store.save("a", "{}", "json").to_json()
    assert list(data) == ["name", "kind", "bytes", "format", "readWith", "path", "created"]
    json.dumps(data)
    assert Handle(**data) == Handle(**data)


def test_read_missing_lists_existing_names(store: ArtifactStore):
    with pytest.raises(ArtifactError, match="no artifacts yet"):
        store.read("nothing.json")
    for i in range(12):
        store.save(f"item{i:02d}", str(i), "json")
    with pytest.raises(ArtifactError) as info:
        store.read("nothing.json")
    message = str(info.value)
    assert "no artifact named 'nothing.json'" in message
    assert message.count("item") == 10
    assert "(and 2 more)" in message


def test_read_falls_back_to_bytes_for_non_utf8_text(store: ArtifactStore):
    store.root.mkdir(parents=True)
    (store.root / "latin1.txt").write_bytes("caf\u00e9".encode("latin-1"))
    assert store.read("latin1.txt") == ("bytes", b"caf\xe9")


def test_overwrite_replaces(store: ArtifactStore):
    store.save("x", "old", "text")
    store.save("x", "new", "text")
    assert store.read("x.txt") == ("text", "new")
    assert all_files(store.root) == ["x.txt"]


def test_unique_name(store: ArtifactStore):
    assert store.unique_name("result-cell12", "json") == "result-cell12.json"
    assert not store.root.exists()
    store.save("result-cell12", "1", "json")
    assert store.unique_name("result-cell12", "json") == "result-cell12-2.json"
    store.save("result-cell12-2.json", "2", "json")
    assert store.unique_name("result-cell12", "json") == "result-cell12-3.json"
    assert store.unique_name("result-cell12", "text") == "result-cell12.txt"
    store.save("pic.png", b"x", "bytes")
    assert store.unique_name("pic.png", "bytes") == "pic-2.png"
    assert store.unique_name("sub/out", "ndjson") == "sub/out.ndjson"
    with pytest.raises(ArtifactError, match="unknown artifact format"):
        store.unique_name("x", "yaml")


def test_list_newest_first_and_skips_hidden(store: ArtifactStore):
    for i, name in enumerate(["b", "a", "sub/c", "d"]):
        handle = store.save(name, str(i), "json")
        os.utime(handle.path, ns=(1_700_000_000_000_000_000 + i * 10**9,) * 2)
    os.utime(store.root / "b.json", ns=(1_800_000_000_000_000_000,) * 2)  # touched last
    (store.root / ".tmp-leftover.part").write_text("partial")
    (store.root / ".cache").mkdir()
    (store.root / ".cache" / "x.json").write_text("1")
    handles = store.list()
    assert [h.name for h in handles] == ["b.json", "d.json", "sub/c.json", "a.json"]
    assert all(isinstance(h, Handle) and h.format == "json" and h.bytes == 1 for h in handles)
    assert handles[0].created.startswith("2027-")


# --- atomicity ----------------------------------------------------------------------------------


@pytest.mark.parametrize("existing", [False, True])
def test_interrupt_in_replace_leaves_old_file_and_no_temp(store: ArtifactStore, monkeypatch: pytest.MonkeyPatch, existing: bool):
    if existing:
        store.save("x", "old", "text")

    def interrupted(src: str, dst: str) -> None:
        assert Path(src).read_bytes() == b"new" * 1000  # the temp file was complete
        raise KeyboardInterrupt

    monkeypatch.setattr(artifacts.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.save("x", "new" * 1000, "text")
    monkeypatch.undo()
    assert all_files(store.root) == (["x.txt"] if existing else [])
    if existing:
        assert store.read("x.txt") == ("text", "old")


@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError(28, "No space left on device")])
@pytest.mark.parametrize("existing", [False, True])
def test_failure_inside_write_leaves_old_file_and_no_temp(
    store: ArtifactStore, monkeypatch: pytest.MonkeyPatch, error: BaseException, existing: bool
):
    if existing:
        store.save("big.bin", b"old", "bytes")
    real = tempfile.NamedTemporaryFile
    monkeypatch.setattr(artifacts, "_CHUNK", 1000)

    def failing(*args, **kwargs):
        tmp = real(*args, **kwargs)
        write, calls = tmp.write, []

        def write_then_fail(data) -> int:
            calls.append(1)
            if len(calls) == 3:  # two chunks are already on disk
                raise error
            return write(data)

        tmp.write = write_then_fail
        return tmp

    monkeypatch.setattr(artifacts.tempfile, "NamedTemporaryFile", failing)
    expected = KeyboardInterrupt if error is KeyboardInterrupt else ArtifactError
    with pytest.raises(expected) as info:
        store.save("big", b"n" * 10_000, "bytes")
    if expected is ArtifactError:
        assert "No space left on device" in str(info.value)
    assert all_files(store.root) == (["big.bin"] if existing else [])
    if existing:
        assert store.read("big.bin") == ("bytes", b"old")


CHILD = """
import sys
from pathlib import Path
from mcp_kernel.display.artifacts import ArtifactStore
store = ArtifactStore(Path(sys.argv[1]))
size = int(sys.argv[2])
for i in range(1000):
    store.save("big", bytes([i % 250 + 1]) * size, "bytes")
    print(i, flush=True)
"""
SIZE = 200 * 1024 * 1024


def check_complete(path: Path) -> None:
    assert path.stat().st_size == SIZE
    with path.open("rb") as f:
        fill = f.read(1)
        f.seek(0)
        while chunk := f.read(16 << 20):
            assert chunk == fill * len(chunk), "artifact is a mix of two writes"


@pytest.mark.slow
@pytest.mark.parametrize("completed_saves", [0, 1])
def test_sigkill_while_writing_200mb_leaves_old_file_or_none(tmp_path: Path, completed_saves: int):
    root = tmp_path / "artifacts"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(SIZE)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        for _ in range(completed_saves):
            assert child.stdout is not None
            assert child.stdout.readline().strip() != ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until a temp file is partly written, then kill
            temps = [p for p in root.glob(".tmp-*")] if root.exists() else []
            if any(0 < p.stat().st_size < SIZE for p in temps if p.exists()):
                break
            time.sleep(0.001)
        else:
            pytest.fail("never saw a partly written temp file")
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    target = root / "big.bin"
    if completed_saves:
        check_complete(target)
    else:
        assert not target.exists()
    store = ArtifactStore(root)
    assert [h.name for h in store.list()] == (["big.bin"] if completed_saves else [])  # a stray temp file is never listed


# --- property -----------------------------------------------------------------------------------

PIECES = ["..", ".", "a", "b.json", "/", "\\", "con", "CON.json", "\x00", " ", "link", "é", ":", "~", "$HOME", "%2e%2e", "\u202e", "x" * 60]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=8).map("".join), st.sampled_from(sorted(artifacts.FORMATS)))
def test_save_raises_or_writes_inside_the_root(name: str, fmt: str):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        outside, root = base / "outside", base / "root"
        outside.mkdir()
        root.mkdir()
        (root / "link").symlink_to(outside, target_is_directory=True)
        store = ArtifactStore(root)
        try:
            handle = store.save(name, "[1]", fmt)
        except ArtifactError as exc:
            event("refused")
            assert str(exc)
        else:
            event("saved")
            path = Path(handle.path)
            assert path.is_file()
            assert path.resolve().is_relative_to(root.resolve())
            assert store.read(handle.name)[0] in (fmt, "bytes")
        assert list(outside.iterdir()) == []
        assert not [p for p in base.iterdir() if p.name not in ("outside", "root")]


@settings(max_examples=100, deadline=None)
@given(st.text(), st.binary())
def test_content_round_trips(text: str, data: bytes):
    with tempfile.TemporaryDirectory() as tmp:
        store = ArtifactStore(Path(tmp))
        assert store.read(store.save("t", text, "text")) == ("text", text)
        assert store.read(store.save("b", data, "bytes")) == ("bytes", data)


def test_handles_show_paths_relative_to_the_working_folder_never_host_paths(tmp_path: Path):
    """What cells, faces and agents see of a handle: a relative path (issue 22, item 21)."""
    inside = ArtifactStore(tmp_path / ".mcp2repl" / "artifacts", base=tmp_path)
    shown = inside.handle_json(inside.save("sub/a", "{}", "json"))
    assert (shown["path"], shown["relPath"]) == (".mcp2repl/artifacts/sub/a.json",) * 2
    assert str(tmp_path) not in json.dumps(shown)
    assert list(shown) == ["name", "kind", "bytes", "format", "readWith", "path", "created", "relPath"]
    elsewhere = ArtifactStore(tmp_path / "elsewhere", base=tmp_path / "work")  # MCP2REPL_ARTIFACT_DIR outside the folder
    shown = elsewhere.handle_json(elsewhere.save("b", "1", "json"))
    assert shown["path"] == "b.json" and "relPath" not in shown  # relative to the artifact folder
    assert str(tmp_path) not in json.dumps(shown)


def test_a_session_hands_out_relative_handles(tmp_path: Path):
    from conftest import SessionHarness

    s = SessionHarness(tmp_path, {"mcpServers": {}})
    try:
        result, _ = s.run("const h = await api.saveArtifact('x.json', { a: 1 }); [h.path, h.relPath, JSON.stringify(await api.artifacts())]")
        path, rel, listing = result.value
        assert (path, rel) == ("artifacts/x.json", "artifacts/x.json")
        assert str(tmp_path) not in listing and str(tmp_path) not in json.dumps(result.artifacts)
        result, _ = s.run("(await api.saveArtifact('big', Array.from({ length: 300000 }, (_, i) => ({ i })))).path")  # written in pieces
        assert result.value == "artifacts/big.json"
    finally:
        s.close()
