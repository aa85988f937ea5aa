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
    """Run trec_eval with ``argv`` (the words after ``trec_eval``); returns the exit status."""
    from serpeval.cli.app import spare_pandas_import
    from serpeval.trec_eval import run

    spare_pandas_import("trec_eval")
    try:
        return run(argv)
    except BrokenPipeError:  # `trec_eval ... | head`
        return 0


def main() -> None:
    """Entry point of the ``trec_eval`` console script."""
    sys.exit(run_trec_eval(sys.argv[1:]))
