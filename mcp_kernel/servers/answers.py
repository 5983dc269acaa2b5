"""Which requests a stdio server owes an answer, and what their callers get when it plainly breaks the protocol.

A request the server will never answer would wait for its whole time limit (five minutes by
default). Where the stream shows the protocol is broken, the waiting requests fail now instead,
each with a JSON-RPC error handed to the session as if the server had sent it, so it reaches its
caller by the SDK's own routing and the connection stays usable for the server's other tools:

* an answer that is not JSON-RPC but names a request (``{"jsonrpc": "2.0", "id": 5, "content": …}``)
  fails that request;
* an answer to an id that was never sent fails every request waiting: the server's answers can no
  longer be matched to their requests;
* a line that is not JSON-RPC at all (a server printing to stdout) fails the requests waiting then
  only if nothing valid follows within :data:`JUNK_GRACE` seconds: such a line is usually followed
  by the answer at once, and the official SDKs skip it too. Before the server's first valid
  message, start-up has its own limit.

An answer that comes after its request was failed here is dropped, not taken for a wrong id.
"""

from __future__ import annotations

import json
import time
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage

#: The code of the error a request gets when its server plainly broke the protocol (the last of
#: JSON-RPC's implementation-defined codes; MCP and its SDKs use none near it).
PROTOCOL_ERROR = -32099
#: Seconds a server that wrote a line that is not JSON-RPC has to send something valid.
JUNK_GRACE = 3.0
#: Characters of a bad line quoted in an error.
QUOTED = 120


def request_key(request_id: object) -> str:
    """The key of a request id; "7" and 7 are one id, as for the SDK's dispatcher."""
    return "null" if request_id is None else str(request_id)


def quoted(text: str) -> str:
    return json.dumps(_cut(text))


def _cut(text: str) -> str:
    return text if len(text) <= QUOTED else text[: QUOTED - 1] + "…"


class Answers:
    """The requests one server owes, and the errors waiting to be handed to the session."""

    def __init__(self, who: str, stray: list[str]) -> None:
        self.who = who  # 'MCP server "x"', for messages
        self.stray = stray  # the first wrong ids, for other messages (a timeout's) to name
        self.owed: dict[str, types.RequestId] = {}
        self.given_up: set[str] = set()
        self.failures: list[SessionMessage] = []
        self.deadline: float | None = None  # when the requests waiting at the first junk line fail
        self._suspects: list[str] = []
        self._junk = 0
        self._last_junk = ""
        self._spoke = False

    def sent(self, request_id: types.RequestId) -> None:
        self.owed[request_key(request_id)] = request_id

    def valid(self, message: types.JSONRPCMessage) -> bool:
        """A valid message came; False if it is an answer nobody waits for (dropped, or a wrong id)."""
        self._spoke = True
        if self._junk:  # the stream is in step again (checked first: this runs for every message)
            self.deadline, self._suspects, self._junk = None, [], 0
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return True
        key = request_key(message.id)
        if self.owed.pop(key, None) is not None:
            return True
        if key in self.given_up:
            self.given_up.discard(key)
            return False
        if len(self.stray) < 10:
            self.stray.append(key)
        said = f"; its error: {quoted(message.error.message)}" if isinstance(message, types.JSONRPCError) else ""
        self._fail(list(self.owed), f"it answered request id {key}, which was never sent (a server replying with the wrong id?){said}")
        return False

    def invalid(self, value: Any, text: str) -> bool:
        """A line that is not a JSON-RPC message (``value``: its JSON, if it is JSON); True if it failed the request it names."""
        key = request_key(value.get("id")) if isinstance(value, dict) and "id" in value else None
        if key is not None and key in self.owed:
            shown = json.dumps(value)  # ASCII: whatever the server put in its strings stays escaped
            self._fail([key], f"its answer to request {key} is not JSON-RPC: {_cut(shown)}")
            return True
        self._junk += 1
        self._last_junk = text
        if self.deadline is None and self._spoke and self.owed:
            self.deadline = time.monotonic() + JUNK_GRACE
            self._suspects = list(self.owed)
        return False

    def expire(self) -> None:
        """The grace after a junk line ended with nothing valid: the requests waiting then fail."""
        lines = "a line to stdout that is not JSON-RPC" if self._junk == 1 else f"{self._junk:,} lines to stdout that are not JSON-RPC"
        suspects, self.deadline, self._suspects, self._junk = self._suspects, None, [], 0
        self._fail([k for k in suspects if k in self.owed], f"it wrote {lines} (the last: {quoted(self._last_junk)}), then nothing valid for {JUNK_GRACE:g} s")

    def _fail(self, keys: list[str], what: str) -> None:
        error = types.ErrorData(code=PROTOCOL_ERROR, message=f"{self.who} broke the protocol: {what}")
        for key in keys:
            request_id = self.owed.pop(key)
            self.given_up.add(key)
            self.failures.append(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))
