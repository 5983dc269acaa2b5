"""Library pages only loading read are given back, and the library works the same after."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from mcp_kernel.kernel.pages import read_only_mappings

SMAPS = """\
7f2ddca00000-7f2dde1b8000 r--p 00000000 fe:00 5325393                    /lib/libmini_racer.so
Rss:               20000 kB
Anonymous:             0 kB
VmFlags: rd mr mw me
7f2ddfda3000-7f2ddfe95000 r--p 033a1000 fe:00 5325393                    /lib/libmini_racer.so
Anonymous:           952 kB
7f2ddfe95000-7f2ddfea4000 rw-p 03492000 fe:00 5325393                    /lib/libmini_racer.so
Anonymous:             0 kB
7f2dde1b8000-7f2ddfda3000 r-xp 017b7000 fe:00 5325393                    /lib/libmini_racer.so
Anonymous:             0 kB
7f2e00810000-7f2e00812000 r-xp 00000000 00:00 0                          [vdso]
Anonymous:             0 kB
7f2e00900000-7f2e00901000 r--p 00000000 00:00 0
Anonymous:             0 kB
"""


def test_only_read_only_file_mappings_without_copied_pages_are_chosen() -> None:
    assert read_only_mappings(SMAPS.splitlines(keepends=True)) == [
        (0x7F2DDCA00000, 0x7F2DDE1B8000 - 0x7F2DDCA00000),  # symbol tables: the file's bytes
        (0x7F2DDE1B8000, 0x7F2DDFDA3000 - 0x7F2DDE1B8000),  # code
    ]  # not the relocated (copied) RELRO part, not .data, not [vdso] or anonymous memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="procfs and madvise")
def test_v8_runs_the_same_after_its_pages_are_given_back() -> None:
    code = textwrap.dedent(
        """
        from py_mini_racer import MiniRacer
        from mcp_kernel.kernel.pages import release_loading_pages
        def file_kb():
            return int(next(l for l in open("/proc/self/status") if l.startswith("RssFile")).split()[1])
        ctx = MiniRacer()
        assert ctx.eval("[1, 2, 3].map(x => x * 2).join()") == "2,4,6"
        before = file_kb()
        assert release_loading_pages() > 0
        after = file_kb()
        print(ctx.eval("JSON.stringify({a: [1, 2, 3].map(x => x * 2)})"), before - after > 10_000)
        ctx.close()  # a live context can hang the interpreter's exit for good (~1 exit in 6 under load)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout, out.stderr) == (0, '{"a":[2,4,6]} True\n', "")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="procfs and madvise")
def test_a_mapped_file_whose_path_is_not_utf8_is_given_back_too(tmp_path) -> None:
    """/proc/self/smaps names each mapped file with the bytes of its path: not UTF-8, it once ended the give-back."""
    import mmap
    import os

    from mcp_kernel.kernel.pages import release_loading_pages

    path = os.path.join(os.fsencode(tmp_path), b"lib-\xff.so")
    with open(path, "wb") as f:
        f.write(b"x" * mmap.PAGESIZE * 4)
    fd = os.open(path, os.O_RDONLY)
    try:
        mapped = mmap.mmap(fd, 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
        assert mapped[:1] == b"x"  # a page of the file is resident
        assert release_loading_pages() >= mmap.PAGESIZE * 4
        assert mapped[mmap.PAGESIZE * 3] == ord("x")  # read again from the file
        mapped.close()
    finally:
        os.close(fd)
