"""Ctrl-C after a command has finished its work: not a crash of the teardown.

Once a command's output is written and its status decided, Python still tears the process
down: it restores the default SIGINT action (killing the process at once) *before* it frees
its modules, and with DuckDB, ibis, pyarrow and scipy loaded that takes about half a second
(measured: 0.4 - 0.7 s after ``interleaving-report`` returned). A Ctrl-C then killed the
process by the signal (status -2 / 130 from the shell, no ``interrupted`` line) although
the output was complete. :func:`finishing` makes the commands that load those engines
ignore SIGINT from the moment their work is done: a Ctrl-C during the work is
``interrupted``, status 130 (:mod:`serpeval.cli.failures`); one during the teardown leaves
the complete output and the command's own status.

Only when serpeval runs as the program (console script or ``python -m serpeval``): a
caller of :func:`serpeval.cli.main` inside its own process keeps its Ctrl-C.
"""

from __future__ import annotations

import functools
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["finishing", "running_as_program"]


def running_as_program() -> bool:
    """True when this process is ``serpeval`` itself (console script or ``python -m serpeval``)."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    return script is not None and (script.name == "serpeval" or script.parent.name == "serpeval")


def finishing(run: Callable[[Any], int]) -> Callable[[Any], int]:
    """``run``, which, once it has returned its status, ignores Ctrl-C for the teardown."""

    @functools.wraps(run)
    def wrapper(args: Any) -> int:
        status = run(args)
        if running_as_program() and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return status

    return wrapper
