"""Give back the pages of shared libraries that only their loading read.

mini-racer's library is linked ``BIND_NOW`` and exports every V8 symbol, so loading it resolves
~50,000 relocations: the dynamic linker reads its whole symbol tables (13 MB of ``.dynstr``, 4 MB
more of ``.dynsym``, hashes and relocations) and V8's start touches 11 MB of its code, of which a
warm cell runs a small part. Those pages stay mapped, and counted in the kernel's RSS (~33 MB for
that library alone), for as long as the kernel lives. Once start-up is over, ``MADV_DONTNEED`` on
the library's read-only, never-written mappings drops them from this process: the page cache
keeps the file, and a page that is used again comes back with a minor fault on first touch. Only
private mappings with no anonymous (copied-on-write) page are dropped, so nothing written (the
relocated GOT, ``.data``) can be lost: their contents are exactly the file's.

Linux only; elsewhere, or without ``/proc``, it does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import sys
from collections.abc import Iterable

from .. import compat

MADV_DONTNEED = 4
#: mappings of files that are read-only: what is in them is the file, unless a page was copied
READ_ONLY = ("r--p", "r-xp")


def read_only_mappings(smaps: Iterable[str]) -> list[tuple[int, int]]:
    """``(start, length)`` of each read-only private file mapping in ``smaps`` (its lines) with no anonymous page."""
    found: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for line in smaps:
        first, _, rest = line.partition(" ")
        if not first.endswith(":"):  # a mapping's header: range perms offset dev inode [path]
            fields = rest.split()
            current = None
            if len(fields) >= 5 and fields[0] in READ_ONLY and fields[4].startswith("/"):
                lo, hi = (int(x, 16) for x in first.split("-"))
                current = (lo, hi - lo)
        elif first == "Anonymous:" and current is not None:
            if int(rest.split()[0]) == 0:
                found.append(current)
            current = None
    return found


def release_loading_pages() -> int:
    """Drop this process's pages of read-only library mappings; returns the bytes of mappings advised."""
    if not sys.platform.startswith("linux"):
        return 0
    try:  # line by line: the whole text (~1 MB, and its lines) would leave ~0.9 MB in the heap for good
        with open("/proc/self/smaps", encoding="utf-8", errors="surrogateescape") as f:  # any byte a path may hold
            mappings = read_only_mappings(f)
    except OSError:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    madvise = libc.madvise
    madvise.argtypes, madvise.restype = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int], ctypes.c_int
    advised = 0
    for start, length in mappings:
        if madvise(start, length, MADV_DONTNEED) == 0:
            advised += length
    return advised


def give_back() -> None:
    """After start-up: V8's copy of the ICU data becomes the file's pages (see compat), then the pages only loading read go."""
    compat.share_icu_data()
    release_loading_pages()


async def give_back_after(loaded: asyncio.Future[object] | None) -> None:
    """Once V8 and the servers' SDK are loaded (``loaded``: the servers' start): :func:`give_back`."""
    if loaded is not None:
        await asyncio.shield(loaded)
    give_back()
