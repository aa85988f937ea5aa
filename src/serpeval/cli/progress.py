"""Progress bars for the command line: a ``progress(done, total)`` callback drawn by rich.

The library reports progress through callbacks (:mod:`serpeval.core.progress`); commands
pass :func:`bar`'s callback, which draws a transient bar on stderr when stderr is a terminal
and does nothing otherwise (pipes and CI logs stay clean).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from serpeval.core.progress import Progress

__all__ = ["bar"]


@contextmanager
def bar(description: str, *, show: bool | None = None) -> Iterator[Progress]:
    """A ``progress(done, total)`` callback drawing a bar titled ``description``."""
    if show is None:
        show = sys.stderr.isatty()
    if not show:
        yield lambda done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn(description), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as display:
        task = display.add_task(description, total=None)

        def report(done: int, total: int) -> None:
            display.update(task, completed=done, total=total)

        yield report
