"""What a person is shown of a server's text and of a call's arguments, in-process (the channels, through a
real kernel: tests/api/test_server_text_kernel.py and tests/api/test_gate_kernel.py)."""

from __future__ import annotations

import pytest

from mcp_kernel.servers.shown import argument_lines, neutral


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, ünïcödé, 中文, emoji 🎉", "plain text, ünïcödé, 中文, emoji 🎉"),
        ("\x1b[31mred\x1b[0m", r"\x1b[31mred\x1b[0m"),
        ("\x9b2J C1 CSI, \x85 NEL, \x7f DEL", r"\x9b2J C1 CSI, \x85 NEL, \x7f DEL"),
        ("bell\x07 null\x00 back\x08", r"bell\x07 null\x00 back\x08"),
        ("over\rwrite", r"over\rwrite"),
        ("a\u202eb\u2066c\u2069d\u200fe", r"a\u202eb\u2066c\u2069d\u200fe"),
        ("zero\u200bwidth\u2060joiner\ufeffbom\u00adshy", r"zero\u200bwidth\u2060joiner\ufeffbom\xadshy"),
        ("line\u2028sep", r"line\u2028sep"),
        ("tags\U000e0041\U000e0042", r"tags\U000e0041\U000e0042"),
        ("lone \ud800 surrogate", r"lone \ud800 surrogate"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("windows\r\nlines", "windows\nlines"),
    ],
)
def test_controls_bidi_and_invisible_characters_are_shown_escaped(text: str, shown: str) -> None:
    assert neutral(text) == shown
    assert neutral(neutral(text)) == neutral(text)  # escaping twice changes nothing


def test_one_line_escapes_newlines_and_tabs_too() -> None:
    assert neutral("a\nb\tc\r\nd", one_line=True) == r"a\nb\tc\r\nd"


def test_a_line_that_starts_like_the_kernels_is_marked_as_the_servers() -> None:
    text = "[mcp2repl] first line continues the caller's\nok\n[mcp2repl] fake\n   [mcp2repl] indented\n[mcp2repl:also"
    assert neutral(text, "srv") == (
        "[mcp2repl] first line continues the caller's\nok\n[srv] [mcp2repl] fake\n[srv]    [mcp2repl] indented\n[srv] [mcp2repl:also"
    )
    assert neutral(neutral(text, "srv"), "srv") == neutral(text, "srv")
    assert neutral("x\n[mcp2repl] y") == "x\n[server] [mcp2repl] y"
    assert neutral("x\n\x1b[2K[mcp2repl] y", "s") == r"x" + "\n" + r"\x1b[2K[mcp2repl] y"  # escaped: visibly not ours


def test_every_argument_is_named_with_a_bounded_value() -> None:
    lines = argument_lines({"note": "n" * 500, "path": "/home", "n": 3, "ok": True, "none": None, "empty": {}, "weird key\n": "v"})
    assert lines == [
        f'note: "{"n" * 119}… (+382 characters)',
        'path: "/home"',
        "n: 3",
        "ok: true",
        "none: null",
        "empty: {}",
        '"weird key\\n": "v"',
    ]


def test_long_objects_and_arrays_are_listed_member_by_member_two_levels_deep() -> None:
    args = {"items": [{"path": "/a", "pad": "p" * 200}, "x" * 130, 3, 4, 5, 6, 7, 8], "deep": {"a": {"b": {"c": "c" * 200}}}}
    assert argument_lines(args) == [
        'items[0].path: "/a"',
        f'items[0].pad: "{"p" * 119}… (+82 characters)',
        f'items[1]: "{"x" * 119}… (+12 characters)',
        "items[2]: 3",
        "items[3]: 4",
        "items[4]: 5",
        "items[5]: 6",
        "items: (+2 more items)",
        f'deep.a.b: {{"c": "{"c" * 113}… (+89 characters)',  # two levels down a value is shown as it is, bounded
    ]


def test_past_twenty_arguments_the_rest_are_counted_and_secrets_are_masked_before_the_cut() -> None:
    lines = argument_lines({f"a{i}": i for i in range(23)})
    assert lines[-2:] == ["a19: 19", "(+3 more arguments)"]
    secret = "hunter2-secret"
    (line,) = argument_lines({"t": "a" * 110 + secret}, lambda text: text.replace(secret, "[redacted]"))
    assert line == f't: "{"a" * 110}[redacted… (+2 characters)' and "hunter" not in line
