"""Papermill parameters for mcp2repl notebooks: ``papermill in.ipynb out.ipynb -p limit 5``.

Papermill has no JavaScript translator and no entry point for translators, but it imports every
``papermill.engine`` entry point when it starts. This module is one: importing it registers the
translator for the ``mcp2repl`` kernel and the ``javascript`` language, and the engine it
exposes is papermill's own nbclient engine, unchanged.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from papermill.engines import NBClientEngine
from papermill.models import Parameter
from papermill.translators import Translator, papermill_translators


class JavaScriptTranslator(Translator):
    """Parameters as top-level ``const`` declarations, which mcp2repl lets a later cell redeclare."""

    @classmethod
    def translate_escaped_str(cls, str_val: str) -> str:
        return json.dumps(str_val, ensure_ascii=False)

    @classmethod
    def translate_none(cls, val: None) -> str:
        return "null"

    @classmethod
    def translate_bool(cls, val: bool) -> str:
        return "true" if val else "false"

    @classmethod
    def translate_float(cls, val: float) -> str:
        if math.isnan(val):
            return "NaN"
        if math.isinf(val):
            return "Infinity" if val > 0 else "-Infinity"
        return repr(val)

    @classmethod
    def translate_dict(cls, val: dict[str, Any]) -> str:
        return "{" + ", ".join(f"{json.dumps(str(k))}: {cls.translate(v)}" for k, v in val.items()) + "}"

    @classmethod
    def translate_list(cls, val: list[Any]) -> str:
        return "[" + ", ".join(cls.translate(v) for v in val) + "]"

    @classmethod
    def comment(cls, cmt_str: str) -> str:
        return f"// {cmt_str}".strip()

    @classmethod
    def assign(cls, name: str, str_val: str) -> str:
        return f"const {name} = {str_val};"

    @classmethod
    def inspect(cls, parameters_cell: Any) -> list[Parameter]:
        """The parameters a notebook declares: top-level ``const/let/var name = value`` lines."""
        found = []
        for line in parameters_cell.source.splitlines():
            m = _DECLARATION.match(line)
            if m:
                value = m.group("value").rstrip(";").strip()
                comment = (m.group("help") or "").strip()
                found.append(Parameter(name=m.group("name"), inferred_type_name=_js_type(value), default=value, help=comment))
        return found


_DECLARATION = re.compile(r"^\s*(?:const|let|var)\s+(?P<name>[A-Za-z_$][\w$]*)\s*=\s*(?P<value>.*?)\s*(?://\s*(?P<help>.*))?$")


def _js_type(value: str) -> str:
    if value.startswith(("'", '"', "`")):
        return "string"
    if value in ("true", "false"):
        return "boolean"
    if re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?|NaN|-?Infinity", value):
        return "number"
    if value.startswith("["):
        return "array"
    if value.startswith("{"):
        return "object"
    return "None" if value == "null" else "unknown"


papermill_translators.register("mcp2repl", JavaScriptTranslator)
papermill_translators.register("javascript", JavaScriptTranslator)

#: the entry point's object: papermill's default engine, so selecting it changes nothing
Engine = NBClientEngine
