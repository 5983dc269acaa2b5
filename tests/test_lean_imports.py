"""mcp_kernel/lean_imports.py: jsonschema and nbformat load without compiling the IRI grammar, and still validate.

Each case runs in a fresh interpreter, since the hiding only works before jsonschema's first import.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import sys
{setup}
import jsonschema, nbformat
from nbformat.v4 import new_notebook
nbformat.validate(new_notebook())
try:
    nbformat.validate({{"nbformat": 4, "nbformat_minor": 5, "metadata": {{}}, "cells": [{{"cell_type": "nope"}}]}})
except nbformat.ValidationError:
    print("invalid notebook refused")
try:
    jsonschema.Draft202012Validator({{"type": "object", "required": ["code"]}}).validate({{}})
except jsonschema.ValidationError as e:
    print(e.message)
print(sorted(m for m in ("rfc3987_syntax", "lark") if sys.modules.get(m) is not None))
"""


@pytest.mark.parametrize(
    "setup",
    ["from mcp_kernel.lean_imports import hide_iri_grammar; hide_iri_grammar()", "import mcp_kernel.serve.tools"],
    ids=["helper", "serve-tools"],
)
def test_validation_works_without_the_iri_grammar(setup: str) -> None:
    done = subprocess.run([sys.executable, "-c", CHECK.format(setup=setup)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "invalid notebook refused\n'code' is a required property\n[]\n"


def test_hiding_after_jsonschema_loaded_changes_nothing() -> None:
    code = "import sys, jsonschema\nfrom mcp_kernel.lean_imports import hide_iri_grammar\nhide_iri_grammar()\nprint('rfc3987_syntax' in sys.modules and sys.modules['rfc3987_syntax'] is None)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "False\n"), done.stderr


def test_the_server_layer_loads_jsonschema_without_any_format_module() -> None:
    code = (
        "import sys\nfrom mcp_kernel.lean_imports import UNUSED_FORMAT_MODULES, import_jsonschema\n"
        "jsonschema = import_jsonschema()\n"
        "print(list(jsonschema.Draft202012Validator({'type': 'integer'}).iter_errors('x'))[0].message)\n"
        "print(sorted(m for m in (*UNUSED_FORMAT_MODULES, 'arrow', 'lark') if sys.modules.get(m) is not None))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "'x' is not of type 'integer'\n[]\n"), done.stderr
