"""``python -S -I crashtail.py FOLDER``: the run folder's watcher (rundir.py) where ``tee -p`` is missing.

On Linux with GNU's or uutils' ``tee`` the watcher is ``tee -p | tail -c`` (3.6 MB of RSS for the
two, rundir.RunDir._tee_and_tail); this script is the same job for everywhere else.

The watcher reads stdin, which is the kernel's stderr, and passes it through to stdout, which is the
real stderr. It remembers the last :data:`TAIL_BYTES`. When stdin ends and the owner did not clean
up (its record is still in FOLDER), it writes them to ``FOLDER/stderr.txt``: the last words of a V8
abort or a segfault. Every session has one, so its memory counts. Run as a script of rundir.py, it
cost the imports of that module too (13.2 MB RSS); here it imports only ``os`` and ``sys``, the
interpreter's floor (8.4 MB RSS here, of which ~3 MB are its own).
"""

from __future__ import annotations

import os
import sys

TAIL_BYTES = 16 * 1024
RECORD = "run.json"


def tail(folder: str) -> None:
    """Pass stdin through to stdout; at its end, keep the tail if the owner's record is still there."""
    kept = bytearray()
    while True:
        try:
            chunk = os.read(0, 65536)
        except OSError:
            break
        if not chunk:
            break
        try:
            os.write(1, chunk)
        except OSError:
            pass
        kept += chunk
        if len(kept) > 2 * TAIL_BYTES:  # trimmed now and then, not at every chunk
            del kept[:-TAIL_BYTES]
    if os.path.exists(os.path.join(folder, RECORD)):
        try:
            with open(os.path.join(folder, "stderr.txt"), "wb") as fh:
                fh.write(kept[-TAIL_BYTES:])
        except OSError:
            pass


if __name__ == "__main__":
    tail(sys.argv[1])
