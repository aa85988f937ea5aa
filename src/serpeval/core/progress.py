"""Progress reporting for long computations: the library calls back, the CLI draws.

A function that runs long takes ``progress``: a callable ``progress(done, total)`` called as
the work advances (``total`` units in all), or None/False for silence. Nothing below
``cli/`` draws a bar; ``serpeval.cli.progress.bar`` turns a callback into a rich progress
bar on a terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from serpeval.core.errors import OptionError

__all__ = ["Progress", "progress_callback"]

#: ``progress(done, total)``: ``done`` of ``total`` units of work are finished.
Progress = Callable[[int, int], None]


def _silent(done: int, total: int) -> None:
    return None


def progress_callback(progress: Any) -> Progress:
    """The callback to report to: ``progress`` itself, or a silent one for None/False."""
    if progress is None or progress is False:
        return _silent
    if callable(progress):
        return progress
    raise OptionError(
        f"progress must be a callable progress(done, total) or None; got {progress!r}. "
        "The library draws nothing itself: the serpeval command line shows a bar."
    )
