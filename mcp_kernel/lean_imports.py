"""Import jsonschema (and nbformat, which validates with it) without the IRI grammar it need not compile.

jsonschema imports ``rfc3987_syntax`` when it is installed (JupyterLab's jupyter-events pulls it in
through ``jsonschema[format-nongpl]``), and that module compiles its Lark grammar at import: 2 s of
CPU on a quiet machine, seven under load, in every process that imports nbformat or jsonschema. It
only serves the ``iri`` and ``iri-reference`` format checks, which nothing here runs: the kernel's
argument checks, ``mcp2repl serve``'s and nbformat's validation use no format checker. So each
process hides the optional module before jsonschema's first import (once jsonschema is loaded,
hiding it would change nothing, so it is left alone then).
"""

from __future__ import annotations

import sys


def hide_iri_grammar() -> None:
    """Make jsonschema's optional ``import rfc3987_syntax`` fail, as if it were not installed."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
