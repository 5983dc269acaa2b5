"""What a person is shown of a server's words, and of a tool call's arguments before approving it.

A server's text reaches a person's terminal in elicitation dialogs, log lines, notices, progress
and login links. Raw, it could clear the screen or write the clipboard (ANSI and OSC 52 escapes:
the terminal runs them), move the cursor back over what was shown (a carriage return), reorder or
hide characters (bidi overrides, zero-width and other invisible characters), or add a line that
reads like the kernel's own (``[mcp2repl] …``). :func:`neutral` shows each such character escaped,
visibly (``\\x1b``, ``\\u202e``), and marks a line of a server's text that starts with the kernel's
prefix with the server's name. An approval prompt built by :func:`argument_lines` names every
argument with a bounded value, so a long harmless value cannot push a dangerous one out of sight.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

#: How the kernel's own lines start; a server's line that starts so is marked as the server's.
PREFIX = "[mcp2repl]"
#: Characters of one argument's value in an approval prompt; the rest is elided with a count.
VALUE_CHARS = 120
#: Characters of an argument's name.
NAME_CHARS = 60
#: Arguments listed in one prompt; the rest are counted.
MOST_ARGUMENTS = 20
#: Members of a long object or array listed, each on its own line (two levels deep).
MOST_MEMBERS = 6

# C0 and C1 controls and DEL; the soft hyphen, Arabic letter mark, Mongolian vowel separator;
# zero-width characters, directional marks, embeddings, overrides and isolates; line and
# paragraph separators; invisible operators; the byte-order mark; interlinear annotation marks;
# lone surrogates; tag characters (invisible text).
_INVISIBLE = "\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")
_UNSAFE_ONE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_OURS = PREFIX[:-1]  # "[mcp2repl", so "[mcp2repl ]" or "[mcp2repl:" are marked too


def _escaped(match: re.Match[str]) -> str:
    c = match.group()
    code = ord(c)
    return _NAMED.get(c) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def neutral(text: str, server: str | None = None, one_line: bool = False) -> str:
    """``text`` from a server, safe to show a person: every control (but newlines and tabs, unless
    ``one_line``), bidi and invisible character escaped, and each line after the first (the first
    continues whatever the caller wrote before it) that starts like the kernel's own marked with
    ``[server]``."""
    if one_line:
        return _UNSAFE_ONE_LINE.sub(_escaped, text)
    text = _UNSAFE.sub(_escaped, text.replace("\r\n", "\n"))
    if _OURS not in text:
        return text
    first, *rest = text.split("\n")
    mark = f"[{server or 'server'}] "
    return "\n".join([first, *(mark + line if line.lstrip().startswith(_OURS) else line for line in rest)])


def argument_lines(args: Mapping[str, Any], redact: Callable[[str], str] = lambda text: text) -> list[str]:
    """A tool call's arguments as a person reads them before approving it: ``name: value``, one per line.

    Every argument is named (up to :data:`MOST_ARGUMENTS`, then a count); each value is its JSON,
    with secrets masked by ``redact`` before it is cut to :data:`VALUE_CHARS`; a longer object or
    array is listed member by member (``options.path: "/home"``), so nothing inside it hides
    behind a long first member; every control, bidi and invisible character is shown escaped.
    """
    names = list(args)
    lines = [line for name in names[:MOST_ARGUMENTS] for line in _value_lines(_name(name), args[name], redact, 0)]
    if len(names) > MOST_ARGUMENTS:
        lines.append(f"(+{len(names) - MOST_ARGUMENTS:,} more arguments)")
    return lines


def _value_lines(path: str, value: Any, redact: Callable[[str], str], depth: int) -> list[str]:
    text = neutral(redact(json.dumps(value, ensure_ascii=False, default=str)), one_line=True)
    if len(text) <= VALUE_CHARS or depth >= 2 or not isinstance(value, dict | list) or not value:
        return [f"{path}: {text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + f'… (+{len(text) - VALUE_CHARS:,} characters)'}"]
    members = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    lines = []
    for key, member in members[:MOST_MEMBERS]:
        lines += _value_lines(f"{path}[{key}]" if isinstance(value, list) else f"{path}.{_name(key)}", member, redact, depth + 1)
    if len(members) > MOST_MEMBERS:
        lines.append(f"{path}: (+{len(members) - MOST_MEMBERS:,} more {'items' if isinstance(value, list) else 'members'})")
    return lines


def _name(key: Any) -> str:
    """A key as written in JS: bare when it is an identifier, else quoted; bounded, escaped."""
    key = str(key)
    shown = key if _IDENTIFIER.fullmatch(key) else json.dumps(key, ensure_ascii=False)
    shown = neutral(shown, one_line=True)
    return shown if len(shown) <= NAME_CHARS else shown[: NAME_CHARS - 1] + "…"
