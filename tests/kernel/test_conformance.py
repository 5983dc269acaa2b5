"""jupyter_kernel_test's conformance suite, with every sample attribute filled in."""

from __future__ import annotations

import jupyter_kernel_test as jkt


class MCP2REPLKernelTests(jkt.KernelTests):
    kernel_name = "mcp2repl"
    language_name = "javascript"
    file_extension = ".js"

    code_hello_world = "console.log('hello, world')"
    code_stderr = "console.error('oops')"
    code_generate_error = "throw new Error('boom')"
    code_execute_result = [
        {"code": "1 + 2 + 3", "result": "6"},
        {"code": "[1, 2].map(x => x * 2)", "result": "[ 2, 4 ]"},
        {"code": "({a: 'b'})", "result": "{ a: 'b' }"},
        {"code": "'text'", "result": "'text'"},
    ]
    code_display_data = [
        {"code": "api.html('<b>x</b>')", "mime": "text/html"},
        {"code": "api.display({a: 1})", "mime": "application/json"},
    ]
    completion_samples = [
        {"text": "Math.PI", "matches": {"PI"}},
        {"text": "JSON.str", "matches": {"stringify"}},
        {"text": "api.clearOu", "matches": {"clearOutput"}},
    ]
    complete_code_samples = ["1", "const a = 1", "function f(x) { return x }", "await sleep(1)", "x = `abc`"]
    incomplete_code_samples = ["function f(x) {", "const s = `abc", "const o = {", "foo(1,", "if (x) {\n  y()", "/* open comment"]
    invalid_code_samples = ["const = 7q", "}", "let x = )", "'unterminated\n"]
    code_history_pattern = "1 + 2*"
    supported_history_operations = ("tail", "range", "search")
    code_inspect_sample = "Math.max"
    code_clear_output = "api.clearOutput()"
