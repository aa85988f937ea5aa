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
    from serpeval.trec_eval import run

    if _started_as_command():
        _keep_pyarrow_from_importing_pandas()
    try:
        return run(argv)
    except BrokenPipeError:  # `trec_eval ... | head`
        return 0


def main() -> None:
    """Entry point of the ``trec_eval`` console script."""
    sys.exit(run_trec_eval(sys.argv[1:]))


def _started_as_command() -> bool:
    """Whether this process is the ``trec_eval`` / ``serpeval trec_eval`` command itself
    (not a Python program calling the CLI in-process, whose pyarrow must stay untouched)."""
    program = sys.argv[0].replace("\\", "/")
    if program.endswith("/trec_eval") or program == "trec_eval":
        return True
    launched = program.endswith(("/serpeval", "/serpeval/__main__.py")) or program == "serpeval"
    return launched and sys.argv[1:2] == ["trec_eval"]


def _keep_pyarrow_from_importing_pandas() -> None:
    """Spare the command a pandas import (0.5-1.5 s) it never uses.

    pyarrow imports pandas on its first ``pyarrow.array()`` call, only to check whether the
    input is a pandas object, and remembers the outcome. Making that one attempt fail (by
    hiding pandas while it happens) keeps the process free of pandas; the command never
    hands pandas objects to pyarrow. Done only when this process is the command.
    """
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    class NoPandas:
        @staticmethod
        def find_spec(name: str, *args: Any) -> None:
            if name == "pandas":
                raise ImportError("pandas is not used by trec_eval")

    sys.meta_path.insert(0, NoPandas)  # type: ignore[arg-type]
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(NoPandas)  # type: ignore[arg-type]
