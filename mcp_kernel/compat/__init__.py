"""Every use of a dependency's private API, in one place, each pinned by ``tests/test_compat.py``.

Why each exists is said beside it. When a dependency upgrade removes one of these, the pinning
test fails with the name of the attribute, rather than a cell hanging somewhere far away. One
module per dependency; this package imports nothing else from mcp_kernel.
"""

from .interpreter import exit_now, run_exit_handlers
from .jupyter import (
    AbortBeforeReply,
    FileIpFirst,
    dispatch_beside,
    end_kernel_process,
    input_request,
    iopub_sent,
    made_by_jupyter_client,
    no_reply_sleep,
    protocol_version,
    shell_busy,
    skip_empty_flush,
    submit_shell,
)
from .mcp_sdk import (
    absorb_listing,
    call_tool,
    defer_package_inits,
    drive_input_required,
    negotiate,
    pipe_closing,
    rounds_exceeded,
    send_now,
    send_unvalidated,
    session_closed,
    set_modern_log_level,
)
from .mini_racer import (
    BIG_STRING,
    QuietResults,
    V8Function,
    share_icu_data,
    start_eval,
    start_v8_task,
    terminated_exception,
    v8_version,
)
from .v8_memory import ExternalMemory

__all__ = [
    "BIG_STRING",
    "AbortBeforeReply",
    "ExternalMemory",
    "FileIpFirst",
    "QuietResults",
    "V8Function",
    "absorb_listing",
    "call_tool",
    "defer_package_inits",
    "dispatch_beside",
    "drive_input_required",
    "end_kernel_process",
    "exit_now",
    "input_request",
    "iopub_sent",
    "made_by_jupyter_client",
    "negotiate",
    "no_reply_sleep",
    "pipe_closing",
    "protocol_version",
    "rounds_exceeded",
    "run_exit_handlers",
    "send_now",
    "send_unvalidated",
    "session_closed",
    "set_modern_log_level",
    "share_icu_data",
    "shell_busy",
    "skip_empty_flush",
    "start_eval",
    "start_v8_task",
    "submit_shell",
    "terminated_exception",
    "v8_version",
]
