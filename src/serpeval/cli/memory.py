"""Process-wide memory policy of the ``serpeval`` and ``trec_eval`` programs.

glibc's ``malloc`` gives every block over a threshold (at most 32 MiB) its own ``mmap`` and
returns it to the kernel when it is freed, so each large NumPy temporary is faulted in afresh,
page by page: on the production shape (10M run rows) that is a third of the process's time
(system time; ``bench/bench_production.py`` shows it). A short-lived program can keep what it
frees instead and reuse it: :func:`keep_freed_memory` sets ``M_MMAP_MAX`` to 0 (large blocks
come from the heap, like small ones) and a high ``M_TRIM_THRESHOLD`` (freed memory stays in the
process until it exits). Peak memory is the same; only its reuse changes. ``M_ARENA_MAX`` is 1:
the thread that reads the next run (``serpeval.core.read_ahead``) allocates from the same
heap as the main thread, so that what one frees the other reuses (with an arena of its own,
the research shape's peak was ~15 MB higher).

It also stops NumPy from asking for transparent huge pages (``madvise(MADV_HUGEPAGE)`` on
every array of 4 MiB or more). Where the kernel's THP ``defrag`` setting is ``madvise`` (the
common default), each first touch of such an array's 2 MiB pages may wait for the kernel to
compact memory (system time). On the research shape (10M run rows, medians of 5 alternating
runs) ``serpeval evaluate`` took 2.41 s with huge pages (slowest 2.78 s, 0.90 system seconds)
and 1.74 s with small pages (slowest 1.84 s, 0.41 system seconds): ``bench/malloc_policy.py``,
``bench/results/malloc_policy.md``.

Applied only when serpeval runs as a program (its console scripts and ``python -m serpeval``),
never when ``serpeval.cli.main(argv)`` is called inside someone else's Python process. Not on
other C libraries or systems (nothing happens there); ``SERPEVAL_MALLOC=system`` turns it off.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

from serpeval.core.pages import turn_off_huge_pages

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8


def keep_freed_memory() -> bool:
    """Tune glibc's malloc and NumPy's huge pages as above; returns whether malloc was tuned."""
    if not sys.platform.startswith("linux") or os.environ.get("SERPEVAL_MALLOC") == "system":
        return False
    turn_off_huge_pages()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return (bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))
            and bool(mallopt(_M_ARENA_MAX, 1)))
