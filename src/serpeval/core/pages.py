"""NumPy's arrays on small memory pages while serpeval works (:func:`small_pages`).

NumPy asks the kernel for transparent huge pages (``madvise(MADV_HUGEPAGE)``) on every array
of 4 MiB or more. Where the kernel's THP ``defrag`` setting is ``madvise`` (the common
default), the first touch of each 2 MiB page may then wait while the kernel compacts memory:
system time, and runs whose speed varies from one to the next. On the research shape (10M run
rows, medians of 5 alternating runs) ``serpeval evaluate`` took 2.41 s with huge pages
(slowest 2.78 s) and 1.74 s with small pages (slowest 1.84 s): ``bench/malloc_policy.py``,
``bench/results/malloc_policy.md``.

The programs turn huge pages off for good (``serpeval.cli.memory``); :func:`evaluate` turns
them off for its own duration and restores the caller's setting after (it is a hint to the
kernel about speed only: arrays other threads make meanwhile are the same arrays).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["small_pages", "turn_off_huge_pages"]


def _switch() -> Callable[[bool], bool] | None:
    """NumPy's documented switch (it returns the previous setting), or None in a NumPy
    without it (also read from ``NUMPY_MADVISE_HUGEPAGE`` when NumPy is first imported)."""
    try:
        from numpy._core import multiarray
    except ImportError:  # NumPy 1.x
        from numpy.core import multiarray  # type: ignore[no-redef]
    return getattr(multiarray, "_set_madvise_hugepage", None)  # (not in NumPy's type stubs)


def turn_off_huge_pages() -> None:
    """NumPy's arrays without ``madvise(MADV_HUGEPAGE)`` from now on (the programs' setting)."""
    switch = _switch()
    if switch is not None:  # else another NumPy layout: leave it as it is
        switch(False)


_lock = threading.Lock()
_inside = 0  # `with small_pages()` blocks under way, in any thread
_before = True  # the setting the first of them found


@contextmanager
def small_pages() -> Iterator[None]:
    """NumPy's arrays without ``madvise(MADV_HUGEPAGE)`` inside the ``with`` block; the
    setting found by the first of the blocks under way (in any thread) is restored when the
    last one ends."""
    global _inside, _before
    switch = _switch()
    if switch is None:
        yield
        return
    with _lock:
        if not _inside:
            _before = switch(False)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if not _inside:
                switch(_before)
