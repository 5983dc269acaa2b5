"""Import jsonschema (and nbformat, which validates with it) without the format checkers nothing here runs.

jsonschema imports optional modules for its format checkers when they are installed (JupyterLab's
jupyter-events pulls them in through ``jsonschema[format-nongpl]``). The worst is
``rfc3987_syntax``: it compiles its Lark grammar at import, 2 s of CPU on a quiet machine and seven
under load, in every process that imports nbformat or jsonschema; ``isoduration`` brings arrow and
dateutil (~2 MB of the kernel's memory with the others of :data:`UNUSED_FORMAT_MODULES`). They only
serve format checks, which nothing here runs: the kernel's argument checks, ``mcp2repl serve``'s
and nbformat's validation use no format checker. So a module is hidden (``sys.modules[name] =
None``: its import fails as if it were not installed) before jsonschema's first import; once
jsonschema is loaded, hiding would change nothing, so it is left alone then.

Two sets: every process hides the IRI grammar (:func:`hide_iri_grammar`); only the kernel's server
layer (:func:`import_jsonschema`) hides all the format modules, since in a process that also runs
Jupyter's own code something else may import one of them for real.
"""

from __future__ import annotations

import sys
from typing import Any

IRI_GRAMMAR = ("rfc3987_syntax",)
#: jsonschema's optional format checkers that no check in the kernel runs: argument checks here and the
#: SDK's output-schema checks pass no format checker, and the metaschemas a schema is checked against
#: (``check_schema``) use only ``uri``, ``uri-reference`` and ``regex``, which need none of these.
UNUSED_FORMAT_MODULES = (*IRI_GRAMMAR, "isoduration", "webcolors", "uri_template", "jsonpointer", "fqdn", "rfc3339_validator")


def _hide(names: tuple[str, ...]) -> None:
    if "jsonschema" not in sys.modules:
        for name in names:
            sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def hide_iri_grammar() -> None:
    """Make jsonschema's optional ``import rfc3987_syntax`` fail, as if it were not installed."""
    _hide(IRI_GRAMMAR)


def import_jsonschema() -> Any:
    """jsonschema, imported without any of :data:`UNUSED_FORMAT_MODULES` (the kernel's server layer)."""
    _hide(UNUSED_FORMAT_MODULES)
    import jsonschema

    return jsonschema
