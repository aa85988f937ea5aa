"""Reading the next input while the current one is being evaluated.

:class:`ReadAhead` hands out ``read(item)`` for each item, in order, like a generator would,
but reads item *k+1* in a background thread while the caller works on item *k*, and starts
reading the first item at once, so that the caller can read something else (the qrels)
meanwhile. On two cores that hides most of the reading of many runs behind their evaluation.

Memory: at most two results are alive because of it, the caller's current one and the next.
The read of item *k+1* starts only when the caller takes item *k*, and the caller is expected
to have dropped item *k-1* by then (as ``for run in ...: ...; del run`` does).

The readers release the GIL where their time goes (the compiled TREC reader and Arrow's CSV
reader); a reader that does not still gives the same results, only without the overlap.

Errors are the reader's own, raised when the caller reaches the item that failed, so they
come in the same order as a plain loop's would. A read still going on when the caller stops
early runs on in a daemon thread, whose result is dropped; it never delays the process's exit
(a Ctrl-C while waiting for a read ends the wait at once).

With one usable CPU, or ``SERPEVAL_READ_AHEAD=0`` in the environment, nothing is read ahead:
the items are read in the caller's thread, one after another, when they are reached. (On the
research shape, 20 runs of 10M lines each, ``serpeval evaluate`` took 1.66x the wall time of
just reading the runs before reading ahead and 0.97x after it (with the reader's buffers on
pages of their own, which slow a read and bound the memory), at 1.25x one run's peak
memory: ``bench/results/production.md``, ``docs/performance.md``.)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

__all__ = ["ReadAhead", "may_read_stdin", "reads_ahead", "usable_cpus"]

Item = TypeVar("Item")
Result = TypeVar("Result")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def may_read_stdin(source: object) -> bool:
    """Whether reading ``source`` may read standard input (``"-"`` or a file object): a
    caller reading it beside a :class:`ReadAhead` whose items may be ``"-"`` reads nothing
    ahead then (two readers would split the stream between them)."""
    return str(source) == "-" if isinstance(source, (str, os.PathLike)) else hasattr(source, "read")


def reads_ahead() -> bool:
    """Whether :class:`ReadAhead` reads in the background by default (see the module's text)."""
    return os.environ.get("SERPEVAL_READ_AHEAD", "1") != "0" and usable_cpus() > 1


class _Pending(Generic[Result]):
    """One ``read(item)`` running in a daemon thread."""

    def __init__(self, read: Callable[[Item], Result], item: Item) -> None:
        self._result: Result | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = threading.Thread(
            target=self._run, args=(read, item), name="serpeval-read-ahead", daemon=True)
        try:
            self._thread.start()
        except RuntimeError:  # "can't start new thread" (no room for its stack: ulimit -v): read here
            self._thread = None
            self._run(read, item)

    def _run(self, read: Callable[[Item], Result], item: Item) -> None:
        try:
            self._result = read(item)
        except BaseException as error:  # handed to the caller, who raises it
            self._error = error

    def result(self) -> Result:
        """The read's result (waiting for it), or its exception raised here; handed out once."""
        if self._thread is not None:
            self._thread.join()
        error, self._error = self._error, None
        if error is not None:
            raise error
        result, self._result = self._result, None
        return result  # type: ignore[return-value]


class ReadAhead(Generic[Item, Result]):
    """``read(item)`` for each of ``items`` in order, the next one read in the background.

    Args:
        items: what to read (paths); taken one at a time, as the reads start.
        read: reads one item; may raise (the caller gets the error when it reaches the item).
        ahead: read in the background; by default as :func:`reads_ahead` says.
    """

    def __init__(self, items: Iterable[Item], read: Callable[[Item], Result], *,
                 ahead: bool | None = None) -> None:
        self._items = iter(items)
        self._read = read
        self._ahead = reads_ahead() if ahead is None else ahead
        self._pending: _Pending[Result] | None = None
        if self._ahead:
            self._start_next()

    def _start_next(self) -> None:
        for item in self._items:
            self._pending = _Pending(self._read, item)
            return
        self._pending = None

    def __iter__(self) -> Iterator[Result]:
        return self

    def __next__(self) -> Result:
        if not self._ahead:
            for item in self._items:
                return self._read(item)
            raise StopIteration
        pending, self._pending = self._pending, None
        if pending is None:
            raise StopIteration
        result = pending.result()  # an error here ends the iteration
        self._start_next()
        return result
