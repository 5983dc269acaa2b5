"""What a user reads when a 2026-07-28 server refuses a request or answers out of the revision:
the new error codes and invalid results worded in one line (no pydantic dump), in-process."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from mcp_kernel.servers import era


def test_the_new_error_codes_say_what_to_do() -> None:
    missing = era.worded(MCPError(-32021, "Missing required client capability", {"requiredCapabilities": {"elicitation": {"form": {}}}}), "s")
    assert missing.error.message == (
        'MCP server "s" needs elicitation (its config says "elicitation": "decline"; "ask" or "defaults" offer it), which mcp2repl did not offer it'
    )
    both = era.worded(MCPError(-32021, "Missing", {"requiredCapabilities": {"sampling": {}, "roots": {}}}), "s")
    assert both.error.message == 'MCP server "s" needs roots (its config lists no "roots"), sampling (mcp2repl does not offer it), which mcp2repl did not offer it'

    assert missing.error.code == -32021
    version = era.worded(MCPError(-32022, "Unsupported protocol version", {"supported": ["2027-01-01"], "requested": "2026-07-28"}), "s")
    assert version.error.message == 'MCP server "s" speaks MCP 2027-01-01; mcp2repl speaks 2026-07-28 and 2025-11-25 (and older)'
    headers = era.worded(MCPError(-32020, "Mcp-Name does not match params.name"), "s")
    assert headers.error.message == (
        'MCP server "s" says the request\'s MCP headers do not match its body, even after its tools were listed again (Mcp-Name does not match params.name)'
    )
    other = MCPError(-32602, "bad params")
    assert era.worded(other, "s") is other


def test_an_answer_out_of_the_revision_is_one_line() -> None:
    with pytest.raises(ValidationError) as info:
        types.ListToolsResult.model_validate({"tools": [{"name": 1}]})
    text = era.invalid_answer(info.value, "2026-07-28")
    assert text is not None and text.startswith("the server's answer is not valid MCP 2026-07-28: tools.0.name: ")
    assert "\n" not in text and "pydantic" not in text
    assert era.invalid_answer(ValueError("x"), "2026-07-28") is None
