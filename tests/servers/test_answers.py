"""Which requests a stdio server owes, in-process: when their callers get a protocol error instead of waiting.

The transport and real hostile servers are in test_faults.py; these are the rules around them.
"""

from __future__ import annotations

import mcp_types as types

from mcp_kernel.servers import answers as answers_module
from mcp_kernel.servers.answers import PROTOCOL_ERROR, Answers


def response(request_id: types.RequestId) -> types.JSONRPCResponse:
    return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={})


def failed(a: Answers) -> list[tuple[types.RequestId, str]]:
    out = [(m.message.id, m.message.error.message) for m in a.failures]  # type: ignore[union-attr]
    assert all(m.message.error.code == PROTOCOL_ERROR for m in a.failures)  # type: ignore[union-attr]
    a.failures.clear()
    return out


def test_a_wrong_id_fails_every_request_waiting_and_their_late_answers_are_dropped() -> None:
    a = Answers('MCP server "x"', stray := [])
    a.sent(1)
    a.sent("2")
    assert a.valid(response(1)) is True  # answered: not owed any more
    assert a.valid(response(9)) is False
    assert failed(a) == [("2", 'MCP server "x" broke the protocol: it answered request id 9, which was never sent (a server replying with the wrong id?)')]
    assert stray == ["9"]
    assert a.valid(response(2)) is False and failed(a) == [] and stray == ["9"]  # "2" came late: dropped, not another wrong id


def test_an_error_for_no_request_says_what_the_server_said() -> None:
    a = Answers("the server", [])
    a.sent(1)
    error = types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=-32700, message="Parse error"))
    assert a.valid(error) is False
    assert failed(a) == [(1, 'the server broke the protocol: it answered request id null, which was never sent (a server replying with the wrong id?); its error: "Parse error"')]


def test_junk_fails_the_requests_waiting_only_after_a_silent_grace() -> None:
    a = Answers("the server", [])
    a.sent(0)
    a.invalid(None, "starting up...")  # before the server's first valid message: start-up has its own limit
    assert a.deadline is None
    a.valid(response(0))
    a.sent(1)
    a.invalid(None, "debug: working")
    assert a.deadline is not None
    a.valid(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={}))  # something valid: fine again
    assert a.deadline is None
    a.invalid(None, "one")
    a.sent(2)  # sent after the junk: not suspected
    a.invalid({"level": 30}, '{"level": 30}')  # JSON without the id of a request is junk too
    a.expire()
    grace = f"{answers_module.JUNK_GRACE:g}"
    assert failed(a) == [(1, f'the server broke the protocol: it wrote 2 lines to stdout that are not JSON-RPC (the last: "{{\\"level\\": 30}}"), then nothing valid for {grace} s')]
    assert list(a.owed) == ["2"]


def test_an_answer_that_is_not_json_rpc_fails_the_request_it_names() -> None:
    a = Answers("the server", [])
    a.sent(7)
    assert a.invalid({"jsonrpc": "2.0", "id": 7, "oops": "\u202e"}, "ignored") is True
    assert failed(a) == [(7, 'the server broke the protocol: its answer to request 7 is not JSON-RPC: {"jsonrpc": "2.0", "id": 7, "oops": "\\u202e"}')]
    assert a.invalid({"jsonrpc": "2.0", "id": 8}, "x") is False and a.owed == {}  # an id nobody waits for: junk
