"""``serpeval trec_eval [flags] QRELS RUN`` and the ``trec_eval`` console script.

trec_eval's flag syntax (``-mP.5,10``, ``-l2``, ``-M100``) is parsed by
:mod:`serpeval.trec_eval.options`, not argparse: ``serpeval.cli.app`` routes
``serpeval trec_eval ...`` here before its own parser runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any


def register(sub: Any) -> None:
    """List the command in ``serpeval --help`` (its arguments never reach argparse)."""
    p = sub.add_parser(
        "trec_eval",
        help="drop-in trec_eval 10.0 / 9.0.8: same flags, same output (serpeval trec_eval -h)",
        add_help=False,
    )
    p.set_defaults(func=lambda args: run_trec_eval(["-h"]))


def run_trec_eval(argv: Sequence[str]) -> int:
    """Run trec_eval with ``argv`` (the words after ``trec_eval``); returns the exit status.

    trec_eval's statuses (1 usage, 2 input, 4 measure, 7 no common topic) and its
    ``trec_eval: ...`` messages; besides them, as every serpeval command
    (:mod:`serpeval.cli.failures`): a failure to write standard output (full disk, closed)
    is one line and status 2, Ctrl-C prints ``interrupted`` and exits 130, and a reader of
    standard output that went away (``| head``) ends it quietly with 141, as SIGPIPE ends
    the C program.
    """
    from serpeval.cli.failures import handle, prepare_std_streams

    try:
        prepare_std_streams()
        from serpeval.cli.app import spare_pandas_import
        from serpeval.trec_eval import run

        spare_pandas_import("trec_eval")
        status = run(argv)
        sys.stdout.flush()  # a full disk or a closed pipe is reported here, not at exit
        return status
    except BaseException as exc:  # KeyboardInterrupt included
        return handle(exc, "trec_eval:")


def main() -> None:
    """Entry point of the ``trec_eval`` console script."""
    try:
        status = run_trec_eval(sys.argv[1:])
    except KeyboardInterrupt:  # before (or while) run_trec_eval's own guard takes over
        from serpeval.cli import interrupted

        status = interrupted()
    sys.exit(status)
