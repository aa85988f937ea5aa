"""Argument parsing and dispatch for ``serpeval <command>``.

Each command lives in its own module ``serpeval.cli.cmd_<name>`` with ``register(subparsers)``
(which sets ``func`` on its parser); adding a command is one module plus one entry in
:data:`COMMANDS`. Every failure (a :class:`~serpeval.core.errors.SerpevalError`, an unreadable
input, an unwritable output, Ctrl-C...) prints one line on stderr and exits with a status
(:mod:`serpeval.cli.failures`); ``--debug`` shows the traceback instead. Outputs are written
atomically and checked before any work (:func:`check_outputs`, :func:`write_output`).
A run in which no judged query has results exits 7, as trec_eval does.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

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
)

EXIT_USAGE = 2

#: The exit statuses every command documents in its help (``gate`` adds 0 pass / 1 fail).
EXIT_CODES_HELP = ("exit status: 0 success; 2 bad input or option (one line on stderr names "
                   "the file or option and the cause); 7 nothing evaluated: no judged query "
                   "has results in a run (wrong qrels or wrong run)")


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
    from serpeval.cli.failures import handle, prepare_std_streams

    args_list = list(sys.argv[1:] if argv is None else argv)
    command, debug = _command(args_list)
    try:
        prepare_std_streams()
        return _run(args_list)
    except SystemExit:
        raise
    except BaseException as exc:  # KeyboardInterrupt included: "interrupted", 130
        return handle(exc, f"serpeval {command}: error:" if command else "serpeval: error:", debug)


def _command(args: Sequence[str]) -> tuple[str | None, bool]:
    """The command word and whether ``--debug`` comes before it (known before parsing, so that
    a failure while parsing or importing is reported like any other)."""
    for i, word in enumerate(args):
        if not word.startswith("-"):
            return word, "--debug" in args[:i]
    return None, "--debug" in args


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
    status = args.func(args)
    sys.stdout.flush()  # a full disk or a closed pipe is reported here, not at exit
    return int(status or 0)


#: Commands that never hand pandas objects to pyarrow (see :func:`spare_pandas_import`).
PANDAS_FREE = frozenset({"trec_eval", "evaluate", "compare", "gate", "measures"})


def started_as(command: str) -> bool:
    """Whether this process is the ``serpeval <command>`` (or ``trec_eval``) program itself,
    not a Python program calling the CLI in-process (whose pyarrow must stay untouched)."""
    program = sys.argv[0].replace("\\", "/")
    if command == "trec_eval" and (program.endswith("/trec_eval") or program == "trec_eval"):
        return True
    launched = program.endswith(("/serpeval", "/serpeval/__main__.py")) or program == "serpeval"
    return launched and command in sys.argv[1:3]


def spare_pandas_import(command: str) -> None:
    """Spare a pandas-free command the pandas import (0.5-1.5 s) that pyarrow triggers.

    pyarrow imports pandas on its first ``pyarrow.array()`` call, only to check whether the
    input is a pandas object, and remembers the outcome. Making that one attempt fail (by
    hiding pandas while it happens) keeps the process free of pandas. Done only when this
    process is one of the :data:`PANDAS_FREE` commands started from the shell.
    """
    if command not in PANDAS_FREE or "pandas" in sys.modules or not started_as(command):
        return
    import pyarrow as pa

    class NoPandas:
        @staticmethod
        def find_spec(name: str, *args: Any) -> None:
            if name == "pandas":
                raise ImportError(f"pandas is not used by serpeval {command}")

    sys.meta_path.insert(0, NoPandas)  # type: ignore[arg-type]
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(NoPandas)  # type: ignore[arg-type]


def split_measures(values: Sequence[str] | None) -> list[str]:
    """``-m`` values, each possibly comma-separated outside parentheses.

    A piece that starts with a digit, ``-`` or ``.`` continues trec_eval's value list of the
    measure before it (``P.5,10``, ``ndcg.1=3,2=9``, ``utility.1,-1,0,0``), which the
    measure grammar reads as a whole.
    """
    out: list[str] = []
    for value in values or []:
        first = len(out)
        depth = 0
        pieces = [""]
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            if ch == "," and depth == 0:
                pieces.append("")
            else:
                pieces[-1] += ch
        for piece in (p.strip() for p in pieces):
            if piece and piece[0] in "0123456789-." and len(out) > first:
                out[-1] += "," + piece
            elif piece:
                out.append(piece)
    return out


def check_outputs(outputs: dict[str, str | None], inputs: Sequence[str | None] = ()) -> None:
    """Refuse, before any work, an output whose folder is missing, that is a folder, or that
    is one of the command's ``inputs`` (:func:`serpeval.io.outputs.check_outputs`)."""
    from serpeval.io.outputs import check_outputs as check

    check(outputs, inputs)


def write_output(text: str, path: str | None) -> None:
    """Print ``text``, or write it to ``path`` atomically (``-`` is standard output).

    Raises:
        OutputError: the file cannot be written (its folder is missing, the disk is full...)
            or standard output is closed or full; a file written before stays as it was.
    """
    from serpeval.io.outputs import write_stdout, write_text

    if path and path != "-":
        write_text(path, text)
    else:
        write_stdout(text)
