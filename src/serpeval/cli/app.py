"""Argument parsing and dispatch for ``serpeval <command>``.

Each command lives in its own module ``serpeval.cli.cmd_<name>`` with ``register(subparsers)``
(which sets ``func`` on its parser); adding a command is one module plus one entry in
:data:`COMMANDS`. Every failure (a :class:`~serpeval.core.errors.SerpevalError`, an unreadable
input, an unwritable output, Ctrl-C...) prints one line on stderr and exits with a status
(:mod:`serpeval.cli.failures`); ``--debug`` shows the traceback instead. Outputs are written
atomically and checked before any work (:mod:`serpeval.cli.common`).
No output may replace an input: every file a command reads, named on its command line or
opened, is noted by identity (:mod:`serpeval.core.identity`) and refused as an output.
A run in which no judged query has results exits 7, as trec_eval does.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from serpeval.cli.common import EXIT_USAGE, note_named_inputs, spare_pandas_import
from serpeval.core.version import __version__

COMMANDS: tuple[str, ...] = (
    "evaluate",
    "measures",
    "demo",
    "compare",
    "gate",
    "trec_eval",
    "ab",
    "interleaving-report",
    "generate-logs",
    "report",
    "simulate",
    "agreement",
    "clicks-to-qrels",
    "pool",
    "judged",
    "diff",
)

class OneLineParser(argparse.ArgumentParser):
    """argparse, except that a bad argument is one line on stderr (no usage block): ``serpeval
    CMD: error: argument --days: must be a positive integer, got -3``, exit status 2, like
    every other error (``serpeval CMD -h`` shows the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per command (each a :class:`OneLineParser`)."""
    parser = OneLineParser(
        prog="serpeval",
        description="Search-quality evaluation: trec_eval-exact measures, fast; significance "
                    "tests; interleaving and A/B analysis; reports.",
    )
    parser.add_argument("--version", action="version", version=f"serpeval {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"serpeval.cli.cmd_{name.replace('-', '_')}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Every failure, from the start-up imports to the last byte written, ends here as one line
    on stderr and a status (:mod:`serpeval.cli.failures`): 2 for errors, 130 for Ctrl-C, 141
    when the reader of standard output went away.
    """
    from serpeval.cli.failures import command_of, error_prefix, handle, prepare_std_streams

    args_list = list(sys.argv[1:] if argv is None else argv)
    command, debug = command_of(args_list)
    try:
        prepare_std_streams()
        return _run(args_list)
    except SystemExit:
        raise
    except BaseException as exc:  # KeyboardInterrupt included: "interrupted", 130
        return handle(exc, error_prefix(command), debug)


def _run(args_list: list[str]) -> int:
    if args_list[:1] == ["trec_eval"]:
        # trec_eval's own flag syntax (-q -m P.5 -c ...) is parsed by that command itself.
        from serpeval.cli.cmd_trec_eval import run_trec_eval

        return run_trec_eval(args_list[1:])
    parser = build_parser()
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    if getattr(args, "backend", "local") == "local":  # Spark hands pandas data to pyarrow
        spare_pandas_import(args.command)
    from serpeval.core.identity import reading_scope

    with reading_scope():  # no output may replace an input (serpeval.core.identity)
        note_named_inputs(args)
        status = args.func(args)
    sys.stdout.flush()  # a full disk or a closed pipe is reported here, not at exit
    return int(status or 0)
