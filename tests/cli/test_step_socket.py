"""A warm step through the session kernel's socket (cli/quick.py, cli/stepsocket.py) says what the usual path says.

Each case runs the same step twice against one real session: through the socket (the default) and
the usual way (``MCP2REPL_STEP_SOCKET=0``: the ZMQ client in the command's own process), and the
two must print the same stdout and stderr and exit with the same status. A socket path that is
not the kernel's own socket of this user (a planted file, a link) is never used: the step takes
the usual way, which still works. The kernel answers Jupyter requests while a socket step runs,
shows the step to attached frontends as any cell, and serves no process of another user.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_cli import MCP2REPL, PY, Run, clean_env, cli, stop_all

from mcp_kernel.cli.quick import pack, request

CELL = re.compile(r"cell\[\d+\]")
SOCKET = Path(".mcp2repl/sessions/f.sock")
#: What a step through the socket imports: the entry module, the fast client and what they use.
FAST_ONLY = {"mcp_kernel", "mcp_kernel.cli", "mcp_kernel.cli.main", "mcp_kernel.cli.quick", "_socket", "__future__"}


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    cwd = tmp_path_factory.mktemp("fast")
    started = cli("--session", "f", "-e", "let kept = 41", cwd=cwd)
    assert started == Run(0, "", ""), started
    assert (cwd / SOCKET).is_socket(), "the session's kernel made no step socket"
    yield cwd
    stop_all(cwd)


def _both(cwd: Path, *args: str, stdin: str | None = None) -> tuple[Run, Run]:
    """The step through the socket, then the usual way; the cell's number (one more the second time) made the same."""
    fast = cli(*args, cwd=cwd, stdin=stdin)
    usual = cli(*args, cwd=cwd, stdin=stdin, env=clean_env(MCP2REPL_STEP_SOCKET="0"))
    return tuple(Run(r.code, CELL.sub("cell[N]", r.out), CELL.sub("cell[N]", r.err)) for r in (fast, usual))  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("args", "stdin", "code"),
    [
        (("--session", "f", "-e", "return kept + 1"), None, 0),
        (("--session", "f", "-e", "throw new TypeError('no')"), None, 1),
        (("--session", "f", "-e", "await mcp.demo.get_book({ book_id: 'b01' }).then((b) => b.id)"), None, 0),
        (("--session", "f", "--json", "-e", "console.log('said'); return [kept, 'two']"), None, 0),
        (("--session", "f", "--json", "-e", "throw new RangeError('far')"), None, 1),
        (("--session", "f", "-e", "-"), "return kept + 2", 0),
        (("--session", "f", "--timeout", "0.5", "-e", "while (true) {}"), None, 3),
        (("--session", "f", "--json", "--timeout", "0.5", "-e", "while (true) {}"), None, 3),
        (("--session", "f", "--timeout", "soon", "-e", "1"), None, 2),
    ],
    ids=["value", "thrown", "tool-call", "json", "json-thrown", "stdin", "time-limit", "json-time-limit", "bad-option"],
)
def test_the_socket_and_the_usual_path_print_the_same(here: Path, args: tuple[str, ...], stdin: str | None, code: int) -> None:
    fast, usual = _both(here, *args, stdin=stdin)
    assert fast == usual
    assert fast.code == code, fast


def test_a_step_through_the_socket_imports_almost_nothing(here: Path) -> None:
    runner = "import sys; before = set(sys.modules); from mcp_kernel.cli.main import main; c = main(sys.argv[1:]); print(sorted(set(sys.modules) - before)); sys.exit(c)"
    proc = subprocess.run([PY, "-c", runner, "--session", "f", "-e", "return kept"], cwd=here, env=clean_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("41\n"), proc
    loaded = set(eval(proc.stdout.splitlines()[1]))
    assert loaded <= FAST_ONLY, f"a socket step imported {sorted(loaded - FAST_ONLY)}"


@pytest.mark.parametrize("plant", ["file", "symlink"])
def test_a_planted_file_at_the_socket_path_is_not_used(tmp_path: Path, plant: str) -> None:
    try:
        assert cli("--session", "f", "-e", "let kept = 1", cwd=tmp_path).code == 0
        sock = tmp_path / SOCKET
        sock.unlink()
        if plant == "file":
            sock.write_text("not a socket")
            sock.chmod(0o600)
        else:
            sock.symlink_to(tmp_path / "elsewhere.sock")
        assert cli("--session", "f", "-e", "return kept + 1", cwd=tmp_path) == Run(0, "2\n", "")  # the usual way
        assert (sock.is_symlink() if plant == "symlink" else sock.read_text() == "not a socket")
    finally:
        stop_all(tmp_path)


def test_a_socket_open_to_others_is_not_used(tmp_path: Path) -> None:
    """A socket others may connect to is not this session's (the kernel makes it 0600): the usual way is taken."""
    try:
        assert cli("--session", "f", "-e", "let kept = 1", cwd=tmp_path).code == 0
        (tmp_path / SOCKET).chmod(0o666)
        probe = "import sys; from mcp_kernel.cli.quick import run; print(run(sys.argv[1:]))"
        got = subprocess.run([PY, "-c", probe, "--session", "f", "-e", "return 1"], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=120)
        assert got.stdout == "None\n", got
        assert cli("--session", "f", "-e", "return kept + 1", cwd=tmp_path) == Run(0, "2\n", "")
    finally:
        stop_all(tmp_path)


def test_the_kernel_answers_jupyter_while_a_socket_step_runs(here: Path) -> None:
    step = subprocess.Popen([MCP2REPL, "--session", "f", "-e", "const t = Date.now(); while (Date.now() - t < 4000) {}; return 'done'"], cwd=here, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)  # the step is under way (it takes 4 s)
        listing = cli("sessions", "--json", cwd=here)  # a kernel_info request to the same kernel
        assert listing.code == 0 and '"servers"' in listing.out, listing
        assert step.poll() is None, "the step ended before the listing: it did not overlap"
        out, err = step.communicate(timeout=120)
        assert (step.returncode, out, err) == (0, "'done'\n", "")
    finally:
        if step.poll() is None:
            step.kill()


def test_an_attached_frontend_sees_a_socket_step_as_any_cell_and_no_connection_of_the_kernel_to_itself(here: Path) -> None:
    """The kernel hands a socket step to its own shell (kernel/direct.py): a frontend attached to the session sees it
    on IOPub as any client's cell — busy, its code, its result, idle — and nothing else: no kernel_info of a ZMQ
    connection the kernel would otherwise make to itself for each step."""
    from jupyter_client import BlockingKernelClient

    kc = BlockingKernelClient(connection_file=str(here / ".mcp2repl" / "sessions" / "kernels" / "f.json"))
    kc.load_connection_file()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        while _iopub(kc, 0.5) is not None:  # what kernel_info of wait_for_ready published
            pass
        assert cli("--session", "f", "-e", "return 6 * 7", cwd=here) == Run(0, "42\n", "")
        seen: list[tuple[str, str, object]] = []
        while not seen or seen[-1][0] != "status" or seen[-1][2] != "idle" or seen[-1][1] != "execute_request":
            msg = _iopub(kc, 30)
            assert msg is not None, f"waited 30 s for the step's idle status on IOPub; saw {seen}"
            content = msg["content"]
            shown = content.get("execution_state") or content.get("code") or (content.get("data") or {}).get("text/plain")
            seen.append((msg["msg_type"], msg["parent_header"].get("msg_type", ""), shown))
    finally:
        kc.stop_channels()
    assert seen == [
        ("status", "execute_request", "busy"),
        ("execute_input", "execute_request", "return 6 * 7"),
        ("execute_result", "execute_request", "42"),
        ("status", "execute_request", "idle"),
    ]


def test_late_output_of_a_socket_step_still_reaches_frontends_and_the_record(here: Path) -> None:
    """Once a cell ends, what it keeps for its timers' output is cut down to what that needs (the request's header, the
    record; not its code, nor the finished step's queue): a timer firing after the step still shows, under that step."""
    import nbformat
    from jupyter_client import BlockingKernelClient

    kc = BlockingKernelClient(connection_file=str(here / ".mcp2repl" / "sessions" / "kernels" / "f.json"))
    kc.load_connection_file()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        while _iopub(kc, 0.5) is not None:
            pass
        code = "setTimeout(() => console.log('late ' + kept), 1500); return 'soon'"
        assert cli("--session", "f", "-e", code, cwd=here) == Run(0, "'soon'\n", "")
        step_id, late = "", None
        while late is None:
            msg = _iopub(kc, 60)
            assert msg is not None, "waited 60 s for the timer's output on IOPub"
            if msg["msg_type"] == "execute_input" and msg["content"]["code"] == code:
                step_id = msg["parent_header"]["msg_id"]
            elif msg["msg_type"] == "stream":
                late = msg
    finally:
        kc.stop_channels()
    assert late["content"] == {"name": "stdout", "text": "late 41\n"}
    assert step_id and late["parent_header"]["msg_id"] == step_id
    deadline = time.monotonic() + 60
    while True:  # the record is written by its own thread, soon after
        record = nbformat.read(here / ".mcp2repl" / "sessions" / "f.ipynb", as_version=4)
        cell = next(c for c in record.cells if c.source == code)
        if len(cell.outputs) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert [(o.output_type, o.get("text")) for o in cell.outputs] == [("execute_result", None), ("stream", "late 41\n")]


def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024


def _settled_rss_mb(pid: int, wait: float = 60) -> float:
    """The kernel's RSS once it stopped falling: between cells it gives memory back (gc_tuning.Quiet) a second after."""
    deadline, last = time.monotonic() + wait, _rss_mb(pid)
    while time.monotonic() < deadline:
        time.sleep(2.0)
        now = _rss_mb(pid)
        if now >= last - 0.5:
            return now
        last = now
    return last


def test_big_steps_leave_the_kernel_about_as_big_as_it_was(tmp_path: Path) -> None:
    """A 3 MB step used to stay in the kernel ~8 MB a step: its request (in ipykernel's context, held by the cell's
    cancelled timers), its source map's two copies of its text, and V8's garbage past what was collected between cells."""
    assert cli("--session", "m", "-e", "1", cwd=tmp_path).code == 0
    try:
        listing = json.loads(cli("sessions", "--json", cwd=tmp_path).out)
        pid = int(next(s["pid"] for s in listing if s["name"] == "m"))
        big = "return '" + "x" * (3 << 20) + "'.length"
        assert cli("--session", "m", "-e", "-", cwd=tmp_path, stdin=big) == Run(0, f"{3 << 20}\n", "")
        before = _settled_rss_mb(pid)
        for _ in range(12):
            assert cli("--session", "m", "-e", "-", cwd=tmp_path, stdin=big).code == 0
        grown = _settled_rss_mb(pid) - before
    finally:
        stop_all(tmp_path)
    # what stays by design: the session's record (these steps' code, 40 MB at most) and V8's own heap sizing
    assert grown < 70, f"the kernel grew {grown:.0f} MB over 12 steps of 3 MB"


def _iopub(kc: object, timeout: float) -> dict[str, object] | None:
    try:
        return kc.get_iopub_msg(timeout=timeout)  # type: ignore[attr-defined,no-any-return]
    except Exception:  # noqa: BLE001 - queue.Empty: nothing within the timeout
        return None


NOBODY = 65534


def _ask_as(uid: int | None, path: Path, request: bytes) -> bytes:
    """Everything the kernel answers ``request`` sent over ``path`` by a process of ``uid`` (None: this user).

    A forked child becomes that user before it connects (SO_PEERCRED is taken at connect) and writes
    what it heard to a pipe: no interpreter is started as that user (it could not read this venv)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: syscalls only, then _exit
        status = 1
        try:
            os.close(read)
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(60)
            sock.connect(str(path))
            heard = b""
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # closed unread, maybe before all was sent
                sock.sendall(request)
                while chunk := sock.recv(65536):
                    heard += chunk
            os.write(write, b"heard:" + heard)
            status = 0
        except BaseException as exc:  # noqa: BLE001 - said to the parent, which fails the test with it
            os.write(write, f"failed: {exc!r}".encode())
        finally:
            os._exit(status)
    os.close(write)
    got = b""
    while chunk := os.read(read, 65536):
        got += chunk
    os.close(read)
    os.waitpid(pid, 0)
    assert got.startswith(b"heard:"), got
    return got.removeprefix(b"heard:")


@pytest.mark.skipif(os.getuid() != 0, reason="becoming another user takes root")
def test_a_peer_of_another_user_is_not_served(here: Path) -> None:
    """The kernel serves only peers of its own user (SO_PEERCRED), even when the socket is reachable by others:
    a process of user nobody is given no word and its step never runs; the same request of this user is served."""
    door = Path(tempfile.mkdtemp(prefix="mcp2repl-door-"))  # a hard link, in a folder others may enter, to the session's socket
    sock = here / SOCKET
    try:
        door.chmod(0o755)
        try:
            os.link(sock, door / "f.sock")
        except OSError as exc:
            pytest.skip(f"no hard link to the socket from {door} ({exc})")
        sock.chmod(0o666)  # the inode's mode: others may connect (the kernel checked the folders when it started)
        asked = request(["--session", "f", "-e", "globalThis.stranger = 'ran'; return 'served'"], str(here), None, {})
        assert _ask_as(NOBODY, door / "f.sock", asked) == b""
        sock.chmod(0o600)
        assert cli("--session", "f", "-e", "typeof stranger", cwd=here) == Run(0, "'undefined'\n", "")
        assert _ask_as(None, door / "f.sock", asked) == pack([b"o", b"'served'\n"]) + pack([b"x", b"0"])
    finally:
        sock.chmod(0o600)
        shutil.rmtree(door, ignore_errors=True)


def test_a_connection_reset_before_any_output_falls_back_silently(capsys: pytest.CaptureFixture[str]) -> None:
    """A SIGKILLed kernel's socket can still take a connection (queued, never accepted) and then reset it:
    that is no answer, like the connection's end, so the usual path runs and says the session is dead
    (seen on a loaded run: a ConnectionResetError traceback instead)."""
    from mcp_kernel.cli import quick

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.sendall(b"a request the other side never reads")
    theirs.close()  # closed with unread data: our next recv is reset (ECONNRESET)
    try:
        assert quick._answer(ours) is None
    finally:
        ours.close()
    assert capsys.readouterr() == ("", "")

