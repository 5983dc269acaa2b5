"""``mcp2repl -e/--file/--load/--library`` without a session: the real command, in-process Session."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from agent_cli import clean_env, cli, config, fixture, start

HELPERS = """\
const base = 10;
function add(a, b) { return a + b + base; }
globalThis.lib = { twice: (x) => 2 * x, deep: { sq: (x) => x * x } };
"""


def test_eval_prints_the_value_exit_0(tmp_path: Path) -> None:
    assert cli("-e", "1+1", cwd=tmp_path) == _run(0, "2\n", "")
    assert cli("-e", "'abc'", cwd=tmp_path) == _run(0, "'abc'\n", "")
    assert cli("-e", "undefined", cwd=tmp_path) == _run(0, "", "")


def test_repeated_eval_joins_lines_and_stdin_dash(tmp_path: Path) -> None:
    assert cli("-e", "const a = 2", "-e", "a * 21", cwd=tmp_path) == _run(0, "42\n", "")
    assert cli("-e", "-", cwd=tmp_path, stdin="const t = {n: 1};\nreturn t;\n") == _run(0, "{ n: 1 }\n", "")
    assert cli("-e", "const x = 5", "-e", "-", cwd=tmp_path, stdin="x + 1") == _run(0, "6\n", "")


def test_human_output_value_then_console_then_displays_then_artifacts(tmp_path: Path) -> None:
    code = "console.log('hello'); console.error('careful'); api.display([1, 2]); await api.saveArtifact('rows', [1, 2]); ({ ok: true })"
    run = cli("-e", code, cwd=tmp_path)
    assert run == _run(
        0,
        "{ ok: true }\nhello\n[ 1, 2 ]\n"
        'artifact rows.json (12 B, json) at .mcp2repl/artifacts/rows.json: await api.readArtifact("rows.json")\n',
        "careful\n",
    )
    assert json.loads((tmp_path / ".mcp2repl" / "artifacts" / "rows.json").read_text()) == [1, 2]


def test_json_envelope(tmp_path: Path) -> None:
    run = cli("--json", "-e", "console.log('hi'); [1, 'x', null]", cwd=tmp_path)
    assert run == _run(0, '{"ok":true,"value":[1,"x",null],"stdout":"hi\\n"}\n', "")
    failed = cli("--json", "-e", "null.x", cwd=tmp_path)
    assert failed.code == 1 and failed.err == ""
    error = failed.envelope
    assert error["ok"] is False and "value" not in error
    assert error["error"] == {
        "name": "TypeError",
        "message": "Cannot read properties of null (reading 'x')",
        "stack": "  at cell[1] line 1, col 6\n    null.x\n         ^",
    }


def test_a_program_that_throws_exits_1_with_its_stack_on_stderr(tmp_path: Path) -> None:
    run = cli("-e", "function f() {\n  throw new RangeError('too far');\n}", "-e", "console.log('before'); f()", cwd=tmp_path)
    assert run == _run(
        1,
        "before\n",
        "RangeError: too far\n  at cell[1] line 2, col 9, in f\n    throw new RangeError('too far');\n          ^\n"
        "  at cell[1] line 4, col 24\n    console.log('before'); f()\n                           ^\n",
    )


def test_timeout_exits_3_and_flags_override_the_environment(tmp_path: Path) -> None:
    run = cli("--timeout", "0.5", "-e", "while (true) {}", cwd=tmp_path)
    assert run == _run(3, "", "TimeoutError: Cell time limit reached\n  at cell[1] line 1, col 15\n    while (true) {}\n                  ^\n")
    env = clean_env(MCP2REPL_TIMEOUT="0.3")
    assert cli("-e", "for (;;) {}", cwd=tmp_path, env=env).code == 3
    assert cli("--timeout", "5", "-e", "await sleep(600); 'done'", cwd=tmp_path, env=env) == _run(0, "'done'\n", "")


def test_ctrl_c_interrupts_the_program_exit_3(tmp_path: Path) -> None:
    # a one-shot run prints at the end, so the program says it runs through an artifact file
    code = "await api.saveArtifact('started.txt', 'yes'); console.log('spinning'); while (true) {}"
    proc = start("-e", code, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / ".mcp2repl" / "artifacts" / "started.txt").exists():
            assert time.monotonic() < deadline, "the program did not start within 120 s"
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        # the file is written before the save's answer reaches JS: a press in that gap stops the program at its
        # await (seen once under load), so the press waits for the next line, which follows at once
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out, err) == (
        3,
        "spinning\nartifact started.txt (3 B, text) at .mcp2repl/artifacts/started.txt: await api.readArtifact(\"started.txt\")\n",
        f"InterruptError: Execution interrupted\n  at cell[1] line 1, col 86\n    {code}\n" + " " * 89 + "^\n",
    )


def test_ctrl_c_while_starting_still_stops_the_program(tmp_path: Path) -> None:
    """A press before the program's first line ran was ignored (an idle engine ignores interrupts), and
    the program then spun forever: seen as an orphaned one-shot run on a loaded machine."""
    # faulthandler: a run still going after the press is made to print every thread's stack below
    proc = start("-e", "console.log('spinning'); while (true) {}", cwd=tmp_path, env=clean_env(PYTHONFAULTHANDLER="1"))
    try:
        _wait_until_python_catches_sigint(proc.pid)  # before that, a press kills any program (exit -2)
        time.sleep(0.3)  # still starting: V8 and the runtime take far longer even on an idle machine
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            raise AssertionError(f"the run did not end within 60 s of Ctrl-C; its threads:\n{proc.communicate(timeout=30)[1]}") from None
    finally:
        proc.kill()
    assert proc.returncode == 3
    assert err in (
        "mcp2repl: interrupted\n",
        "InterruptError: interrupted before the program started\n",
        "InterruptError: Execution interrupted\n",  # while the program was being prepared (rewritten), before it ran
    ) or err.startswith("InterruptError: Execution interrupted\n  at cell[1] line 1"), err


def _wait_until_python_catches_sigint(pid: int) -> None:
    """Poll the process's caught-signals mask: Python installs its SIGINT handler while it starts."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:") and int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)):
                return
        time.sleep(0.01)
    raise AssertionError("the command's Python did not install its SIGINT handler within 60 s")


def test_file_and_load(tmp_path: Path) -> None:
    (tmp_path / "helpers.js").write_text(HELPERS)
    (tmp_path / "task.js").write_text("const r = add(1, 2);\nreturn { r, twice: lib.twice(r) };\n")
    assert cli("--file", "task.js", "--load", "helpers.js", cwd=tmp_path) == _run(0, "{ r: 13, twice: 26 }\n", "")
    manifest = cli("--json", "--load", "helpers.js", cwd=tmp_path).envelope["value"]
    assert manifest == {
        "loaded": "helpers.js",  # as given: no host path
        "digest": "sha256:" + __import__("hashlib").sha256(HELPERS.encode()).hexdigest(),
        "exports": ["add", "lib.deep.sq", "lib.twice"],
        "topLevel": ["add", "base", "lib"],
    }
    (tmp_path / "broken.js").write_text("function g() {\n  return missing + 1;\n}\n")
    run = cli("--load", "broken.js", "-e", "g()", cwd=tmp_path)
    assert run == _run(1, "", "ReferenceError: missing is not defined\n  at load[broken.js] line 2, col 3, in g\n  at cell[2] line 1, col 1\n    g()\n    ^\n")


def test_library_prints_tool_docs_and_runs_no_code(tmp_path: Path, session_docs: list[str]) -> None:
    run = cli("--library", "search books", "--limit", "2", cwd=tmp_path)
    assert run == _run(0, "\n\n".join(session_docs) + "\n", "")
    as_json = cli("--library", "search books", "--limit", "2", "--json", cwd=tmp_path).envelope
    assert as_json["value"] == session_docs


def test_library_says_why_nothing_matched_and_which_words_it_corrected_with_the_docs(tmp_path: Path) -> None:
    """Issue 23, item 11: `--library "kubernetes pods"` printed unrelated tools, a `pods → nodes` note only on stderr."""
    run = cli("--library", "kubernetes pods", cwd=tmp_path)
    assert run == _run(0, 'No tool matches "kubernetes pods" (searched 8 tools on 1 server: demo). Try fewer or different words, or api.listTools().\n', "")
    run = cli("--library", "serch boks", "--limit", "1", cwd=tmp_path)
    assert run.code == 0 and run.err == ""
    assert run.out.startswith("Matched similar words: serch → search, boks → book.\n\n/**")
    assert "search_books(" in run.out
    assert cli("--library", "z" * 900, cwd=tmp_path).out == (
        f'No tool matches "{"z" * 60}…" (searched 8 tools on 1 server: demo). Try fewer or different words, or api.listTools().\n'
    )


@pytest.mark.timeout(900)  # seven one-shot runs, each starting Python, V8 and servers: minutes on a loaded machine
def test_config_server_profile_and_only_touched_servers_start(tmp_path: Path) -> None:
    config(
        tmp_path,
        {
            "a": fixture("marked_server.py", MARK_FILE=str(tmp_path / "a.started")),
            "b": fixture("marked_server.py", MARK_FILE=str(tmp_path / "b.started")),
        },
    )
    assert cli("-e", "1+1", cwd=tmp_path) == _run(0, "2\n", "")
    assert sorted(p.name for p in tmp_path.glob("*.started")) == []
    assert cli("-e", "(await mcp.a.add({ a: 1, b: 2 })).sum", cwd=tmp_path) == _run(0, "3\n", "")
    assert sorted(p.name for p in tmp_path.glob("*.started")) == ["a.started"]
    assert cli("-e", "(await tools.call('b.add', { a: 2, b: 2 })).data.structuredContent", cwd=tmp_path) == _run(0, "{ sum: 4 }\n", "")
    assert sorted(p.name for p in tmp_path.glob("*.started")) == ["a.started", "b.started"]
    only = cli("--server", "b", "-e", "Object.keys(mcp)", cwd=tmp_path)
    assert only == _run(0, "[ 'b' ]\n", "")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    via_env = cli("-e", "Object.keys(mcp)", cwd=elsewhere, env=clean_env(MCP2REPL_CONFIG=str(tmp_path / "mcp.json"), MCP2REPL_SERVER="a"))
    assert via_env == _run(0, "[ 'a' ]\n", "")
    assert cli("--config", str(tmp_path / "mcp.json"), "-e", "Object.keys(mcp).sort()", cwd=elsewhere) == _run(0, "[ 'a', 'b' ]\n", "")


def test_max_output_chars_and_artifact_dir(tmp_path: Path) -> None:
    code = "Array.from({ length: 400 }, (_, i) => ({ id: i, name: 'item ' + i }))"
    run = cli("--max-output-chars", "300", "--artifact-dir", "out", "--json", "-e", code, cwd=tmp_path)
    env = run.envelope
    assert run.code == 0
    assert env["value"][-1] == "…389 more items" and env["notes"] == ["view cut to 296 of max 300 chars: (root): 389 more items"]
    [handle] = env["artifacts"]
    assert (handle["name"], handle["path"]) == ("result-cell1.json", "out/result-cell1.json")
    assert len(json.loads((tmp_path / "out" / handle["name"]).read_text())) == 400
    via_env = cli("--json", "-e", code, cwd=tmp_path, env=clean_env(MCP2REPL_MAX_OUTPUT_CHARS="300", MCP2REPL_ARTIFACT_DIR="env-out"))
    assert via_env.envelope["artifacts"][0]["path"] == "env-out/result-cell1.json"


def test_json_and_quiet_from_the_environment(tmp_path: Path) -> None:
    run = cli("-e", "7", cwd=tmp_path, env=clean_env(MCP2REPL_JSON="1", MCP2REPL_QUIET="yes"))
    assert (run.code, run.envelope["value"], run.err) == (0, 7, "")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {}, "nothing to run: give -e CODE, -e - (stdin), --file PATH, --load PATH or --library QUERY (see mcp2repl --help)"),
        (["-e", "1", "--file", "x.js"], {}, "give the program with -e or with --file, not both"),
        (["--timeout", "soon", "-e", "1"], {}, "--timeout must be a number, not 'soon'"),
        (["-e", "1"], {"MCP2REPL_TIMEOUT": "-1"}, "MCP2REPL_TIMEOUT must be a number >= 0, not '-1'"),
        (["--max-output-chars", "10", "-e", "1"], {}, "--max-output-chars must be at least 200, not 10"),
        (["--file", "missing.js"], {}, "--file missing.js: No such file or directory"),
        (["--load", "notes.txt", "-e", "1"], {}, "--load notes.txt: helpers are .js files"),
        (["--library", "x", "-e", "1"], {}, "--library prints tool docs and runs no code: leave out -e, --file and --load"),
        (["--restart", "-e", "1"], {}, "--restart is about sessions: give --session NAME (or MCP2REPL_SESSION)"),
        (["--session", "bad name", "-e", "1"], {}, "invalid session name 'bad name': use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"),
        (["--bogus"], {}, "unrecognized arguments: --bogus"),
        (["sessions", "extra"], {}, "'mcp2repl sessions' takes only --json, or export / plans / approve / reject, not extra"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], env: dict[str, str], message: str) -> None:
    assert cli(*args, cwd=tmp_path, env=clean_env(**env)) == _run(2, "", f"mcp2repl: error: {message}\n")


def test_bad_input_with_json_prints_the_envelope_alone(tmp_path: Path) -> None:
    run = cli("--json", "--timeout", "x", "-e", "1", cwd=tmp_path)
    assert run == _run(
        2,
        '{"ok":false,"error":{"name":"UsageError","message":"--timeout must be a number, not \'x\'","stack":""}}\n',
        "",  # said once (issue 23, item 9): nothing on stderr beside it
    )


def test_run_subcommand_still_runs_notebooks(tmp_path: Path) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(metadata={"kernelspec": {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"}})
    nb.cells = [new_code_cell("6 * 7")]
    nbformat.write(nb, tmp_path / "nb.ipynb")
    run = cli("run", "nb.ipynb", "-o", "out.ipynb", cwd=tmp_path)
    assert run.code == 0, run.err
    assert run.out == f"Executed 1 code cells of nb.ipynb (0 with errors)\nExecuted notebook: {tmp_path / 'out.ipynb'}\n"


@pytest.fixture(scope="module")
def session_docs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """api.library's answer from a Session in-process, to compare the command's output with."""
    from conftest import SessionHarness

    harness = SessionHarness(tmp_path_factory.mktemp("docs"))
    try:
        return harness.json("await api.library('search books', { limit: 2 })")
    finally:
        harness.close()


def _run(code: int, out: str, err: str) -> object:
    from agent_cli import Run

    return Run(code, out, err)


def test_json_envelope_is_valid_json_for_lone_surrogates(tmp_path: Path) -> None:
    # half an emoji: a lone surrogate is a valid JS string, and no UTF-8 (the envelope escapes it)
    run = cli("--json", "-e", "console.log('a\\ud800b'); '😀'.slice(0, 1)", cwd=tmp_path)
    assert (run.code, run.err, run.envelope["value"], run.envelope["stdout"]) == (0, "", "\ud83d", "a\ud800b\n")
    assert '"value":"\\ud83d"' in run.out
    thrown = cli("--json", "-e", "throw new Error('\\udfff')", cwd=tmp_path)
    assert (thrown.code, thrown.envelope["error"]["message"]) == (1, "\udfff")
    human = cli("-e", "console.log('a\\ud800b'); '\\ud800'", cwd=tmp_path)
    assert human == _run(0, "'\\ud800'\na\\ud800b\n", "")


def test_json_envelope_is_bounded_by_the_output_limit(tmp_path: Path) -> None:
    value = cli("--json", "-e", "'x'.repeat(1e5)", cwd=tmp_path)  # the kernel shows 10,000 of it, saves no artifact
    assert value.code == 0 and len(value.out) < 12_000
    env = value.envelope
    assert set(env) == {"ok", "text"} and env["text"].endswith("x'... 90000 more characters")  # its text form, once
    thrown = cli("--json", "--max-output-chars", "1000", "-e", "throw new Error('y'.repeat(2e6))", cwd=tmp_path)
    assert thrown.code == 1 and len(thrown.out) < 5000
    error = thrown.envelope["error"]
    assert error["message"] == "y" * 1000 + "\n[mcp2repl: 1,999,000 more characters left out]"
    assert error["stack"] == "  at cell[1] line 1, col 7\n    throw new Error('y'.repeat(2e6))\n          ^"  # the frames; the message is said once


def test_binary_stdin_is_a_usage_error(tmp_path: Path) -> None:
    import subprocess

    from agent_cli import MCP2REPL

    proc = subprocess.run([MCP2REPL, "-e", "-"], cwd=tmp_path, env=clean_env(), input=b"\xff\xfe1", capture_output=True, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, b"", b"mcp2repl: error: -e -: stdin is not UTF-8 text\n")


def test_a_run_that_started_no_server_still_connects_and_searches(tmp_path: Path) -> None:
    """Issue 22, item 16: with no server to start, api.connect and --library failed with an internal RuntimeError."""
    config(tmp_path, {"a": {**fixture("marked_server.py", MARK_FILE=str(tmp_path / "a.started")), "disabled": True}})
    run = cli("-e", "(await api.connect('a')).state", cwd=tmp_path)
    assert run == _run(0, "'ready'\n", "")
    assert (tmp_path / "a.started").exists()
    run = cli("-e", "await api.connect('nope')", cwd=tmp_path)
    assert run.code == 1 and run.err.startswith('TypeError: api.connect("nope"): the config (') and "RuntimeError" not in run.err
    nothing = "No tools to search: no MCP server runs in this session (one the config disables starts with await api.connect(name)).\n"
    assert cli("--library", "add numbers", cwd=tmp_path) == _run(0, nothing, "")
    (tmp_path / "mcp.json").write_text('{"mcpServers": {}}')
    assert cli("--library", "add numbers", cwd=tmp_path) == _run(0, nothing, "")


def test_a_huge_library_query_is_refused_at_once_with_a_bounded_echo(tmp_path: Path) -> None:
    """Issue 22, item 17: a 100 KB query took 27 s and was echoed whole."""
    (tmp_path / "mcp.json").write_text('{"mcpServers": {}}')
    query = " ".join(f"word{i}" for i in range(20000))[: 100 * 1024].strip()
    started = time.monotonic()
    run = cli("--library", query, cwd=tmp_path)
    assert time.monotonic() - started < 60  # a refusal, not a search of 15,000 words (generous: a loaded machine)
    assert run.code == 1 and run.out == ""
    assert run.err.startswith(
        f"RangeError: api.library: the query is {len(query):,} characters and {len(query.split()):,} words long; give at most "
        "1,000 characters and 32 words (it began: 'word0 word1 word2 word3 word4 word5 word6 word7 word8 word9…')\n  at cell[1] line 1"
    )
    assert len(run.err) < 600
    query = "zebra " * 150  # under the bound of characters, over that of words
    assert "words long; give at most" in cli("--library", query, cwd=tmp_path).err
    nothing = "No tools to search: no MCP server runs in this session (one the config disables starts with await api.connect(name)).\n"
    assert cli("--library", "q" * 900, cwd=tmp_path) == _run(0, nothing, "")


def test_an_empty_search_names_the_failed_server_with_its_secrets_masked(tmp_path: Path) -> None:
    # a configured secret the failed server printed stays masked in the note (api.servers() masks it too)
    secret = "sk-" + "k3y" * 8
    leaky = {"command": "sh", "args": ["-c", "echo \"rejected key $API_KEY\" >&2; exit 3"], "env": {"API_KEY": secret}}
    config(tmp_path, {"leaky": leaky})
    run = cli("--library", "add numbers", cwd=tmp_path)
    assert run.code == 0 and "leaky failed: " in run.out and "rejected key [redacted]" in run.out and secret not in run.out + run.err, run
    # masked before it reaches JS, not only on the way out: a cell could pass the note on to a tool
    probe = "const { note } = await api.searchTools('add'); [note.includes('rejected key'), note.includes('sk-' + 'k3y'.repeat(8))]"
    assert cli("-e", probe, "--json", cwd=tmp_path).out == '{"ok":true,"value":[true,false]}\n'
    config(tmp_path, {"bad": {"command": "/nonexistent/mcp2repl-test-server"}})  # the server that has no tools, and why
    assert cli("--library", "add numbers", cwd=tmp_path) == _run(
        0,
        "No tools to search: no MCP server offers any. bad failed: the server exited with status 127 during start-up "
        "(server stderr: cannot start '/nonexistent/mcp2repl-test-server': No such file or directory). await api.servers() shows their state.\n",
        "",
    )
