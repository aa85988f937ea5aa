"""Argument parsing and dispatch for ``serpeval <command>``.

Each command lives in its own module ``serpeval.cli.cmd_<name>`` with ``register(subparsers)``
(which sets ``func`` on its parser); adding a command is one module plus one entry in
:data:`COMMANDS`. Errors a user caused (:class:`~serpeval.core.errors.SerpevalError`) print one
line on stderr and exit with status 2, or 7 when no judged query has results in a run
(:class:`~serpeval.core.errors.NothingEvaluatedError`, trec_eval's status for it); ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

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
EXIT_NOTHING_EVALUATED = 7  # no judged query has results in a run (as trec_eval's exit 7)

#: The exit statuses every command documents in its help (``gate`` adds 0 pass / 1 fail).
EXIT_CODES_HELP = ("exit status: 0 success; 2 bad input or option (one line on stderr names "
                   "the file or option and the cause); 7 nothing evaluated: no judged query "
                   "has results in a run (wrong qrels or wrong run)")


def exit_status(exc: Exception) -> int:
    """The exit status of a user error: 7 for nothing evaluated, else 2."""
    from serpeval.core.errors import NothingEvaluatedError

    return EXIT_NOTHING_EVALUATED if isinstance(exc, NothingEvaluatedError) else EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per command."""
    parser = argparse.ArgumentParser(
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
    """Run the command line; returns the exit status."""
    from serpeval.core.errors import SerpevalError

    args_list = list(sys.argv[1:] if argv is None else argv)
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
    try:
        status = args.func(args)
    except SerpevalError as exc:
        if args.debug:
            raise
        print(f"serpeval {args.command}: error: {exc}", file=sys.stderr)
        return exit_status(exc)
    except KeyboardInterrupt:  # pragma: no cover - interactive
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # pragma: no cover - e.g. `| head`
        return 0
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


def write_output(text: str, path: str | None) -> None:
    """Print ``text`` or write it to ``path``."""
    if path:
        from pathlib import Path

        Path(path).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
