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

Under an address-space limit (``ulimit -v``, ``prlimit --as``) it also fits the BLAS libraries'
threads to the limit and checks, before numpy and scipy load, that the limit leaves them room
(:func:`fit_to_address_space`, below): otherwise OpenBLAS would exit the process or spin forever.

Applied only when serpeval runs as a program (its console scripts and ``python -m serpeval``),
never when ``serpeval.cli.main(argv)`` is called inside someone else's Python process. Not on
other C libraries or systems (nothing happens there); ``SERPEVAL_MALLOC=system`` turns it off.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
from typing import Any

from serpeval.core.pages import turn_off_huge_pages

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8


def keep_freed_memory() -> bool:
    """Tune glibc's malloc and NumPy's huge pages as above, after fitting the process to an
    address-space limit (:func:`fit_to_address_space`); returns whether malloc was tuned."""
    fit_to_address_space()
    if not sys.platform.startswith("linux") or os.environ.get("SERPEVAL_MALLOC") == "system":
        return False
    with contextlib.suppress(ImportError, MemoryError):  # no room for numpy: said where it loads again
        turn_off_huge_pages()  # loads numpy
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return (bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))
            and bool(mallopt(_M_ARENA_MAX, 1)))


# --- Under an address-space limit (ulimit -v, prlimit --as) -------------------------------------
#
# Every OpenBLAS thread maps its own stack and buffer (measured: 40 MiB per thread, in each of
# the two OpenBLAS libraries, numpy's and scipy's), all at load time. Under a low RLIMIT_AS a
# mapping fails while the library loads; numpy's OpenBLAS then exits the process ("Memory
# allocation still failed after 10 retries, giving up"), and scipy's (an older one) retries
# forever at 100% CPU inside ``import scipy.stats``. So, when such a limit is set:
#
# * :func:`fit_blas_threads` sets ``OPENBLAS_NUM_THREADS`` (unless the user did) so that the
#   threads of both libraries take at most an eighth of the limit: one thread under 1.3 GiB,
#   the cores' number from about 40 GiB on (the matrix products of the bootstrap barely slow);
# * :class:`ImportHeadroom` checks, before numpy and before scipy's BLAS module
#   (``scipy.linalg._fblas``, which loads scipy's OpenBLAS) load, that the limit leaves the
#   address space they need (measured with one thread: 86 and 93 MiB; the margins below), and
#   otherwise stops with the out-of-memory line (exit 2) instead. (On the 2-core machine of
#   these measurements ``compare`` spun when the limit left 54-74 MiB at that import; a
#   failure elsewhere in the imports is an ImportError or a MemoryError, which
#   :mod:`serpeval.cli.failures` words as out of memory.)

_MiB = 2**20

#: Address space of one OpenBLAS thread in each of the two libraries (numpy's and scipy's).
BLAS_THREAD_SPACE = 80 * _MiB

#: Address space that loading numpy, pyarrow, or scipy's BLAS module (with its OpenBLAS), needs
#: beyond what the process holds (one BLAS thread; each further thread adds half of
#: BLAS_THREAD_SPACE; pyarrow has no BLAS threads). pyarrow with its compute and Parquet modules
#: loaded after numpy (VmSize 97 MiB) under limits of 190-204 MiB failed in four ways
#: (a MemoryError, C++'s std::bad_alloc abort, "failed to map segment", and jemalloc's
#: "background thread creation failed" line on stderr) and loaded from 208 MiB: 111 MiB.
#: scipy.special's ``_ufuncs`` links scipy's OpenBLAS too (a program that uses scipy.special's
#: distribution functions without scipy.stats, as the paired t-test does, loads it there first):
#: the same room, checked at whichever of the two loads it.
IMPORT_SPACE = {"numpy": 112 * _MiB, "pyarrow": 128 * _MiB, "scipy.linalg._fblas": 128 * _MiB,
                "scipy.special._ufuncs": 128 * _MiB}
#: The modules that load scipy's OpenBLAS: once one of them is loaded, so is the library.
_SCIPY_BLAS = ("scipy.linalg._fblas", "scipy.special._ufuncs")


def address_space_limit() -> int | None:
    """The soft RLIMIT_AS in bytes, or None when there is none (or no such limit here)."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, AttributeError, OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft <= 0 else int(soft)


def address_space_used() -> int | None:
    """This process's mapped address space (``VmSize``, what RLIMIT_AS counts), or None."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def fit_blas_threads(limit: int | None) -> int | None:
    """Set ``OPENBLAS_NUM_THREADS`` for a low ``limit`` (see above); returns the number of
    threads the BLAS libraries will start, None when they are left to choose."""
    chosen = os.environ.get("OPENBLAS_NUM_THREADS", "").strip()
    if chosen.isdigit() and int(chosen) > 0:
        return int(chosen)
    if limit is None or "numpy" in sys.modules:
        return None
    cores = os.cpu_count() or 1
    threads = max(1, min(cores, limit // 8 // BLAS_THREAD_SPACE))
    if threads >= cores:
        return None
    os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    return threads


class ImportHeadroom:
    """A ``sys.meta_path`` finder that refuses to start loading numpy, pyarrow, or scipy's BLAS
    module, when the address-space limit leaves less than :data:`IMPORT_SPACE`.

    Raises (from the ``import`` statement):
        OutOfMemoryError: naming what was being loaded, what it needs and what is left.
    """

    def __init__(self, limit: int, threads: int) -> None:
        self.limit = limit
        self.threads = threads

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name not in IMPORT_SPACE:
            return None
        if name in _SCIPY_BLAS and any(other in sys.modules for other in _SCIPY_BLAS):
            return None  # scipy's OpenBLAS is already mapped
        used = address_space_used()
        if used is None:
            return None
        threads = self.threads if name != "pyarrow" else 1
        need = IMPORT_SPACE[name] + (threads - 1) * BLAS_THREAD_SPACE // 2
        what = name.split(".")[0]
        left = self.limit - used
        if left < need:
            from serpeval.core.errors import OutOfMemoryError

            raise OutOfMemoryError(
                f"out of memory: loading {what} needs about {need // _MiB} MiB more address space, and the "
                f"limit (ulimit -v, prlimit --as: {self.limit // _MiB} MiB) leaves {max(left, 0) // _MiB} MiB. "
                "Raise the limit."
            )
        return None


def fit_to_address_space() -> bool:
    """Under an address-space limit: fit the BLAS threads to it and install
    :class:`ImportHeadroom`; returns whether a limit was found. Done by the programs only (as
    :func:`keep_freed_memory`), before numpy loads."""
    limit = address_space_limit()
    if limit is None:
        return False
    threads = fit_blas_threads(limit) or os.cpu_count() or 1
    if not any(isinstance(finder, ImportHeadroom) for finder in sys.meta_path):
        sys.meta_path.insert(0, ImportHeadroom(limit, threads))
    return True
