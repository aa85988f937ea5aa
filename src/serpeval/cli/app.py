"""Argument parsing and dispatch for ``serpeval <command>``.

Each command lives in its own module ``serpeval.cli.cmd_<name>`` with ``register(subparsers)``
(which sets ``func`` on its parser); adding a command is one module plus one entry in
:data:`COMMANDS`. Errors a user caused (:class:`~serpeval.errors.SerpevalError`) print one
line on stderr and exit with status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from serpeval import __version__

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
    from serpeval.errors import SerpevalError

    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["trec_eval"] and "serpeval.cli.cmd_trec_eval" in _available():
        # trec_eval's own flag syntax (-q -m P.5 -c ...) is parsed by that command itself.
        from serpeval.cli.cmd_trec_eval import run_trec_eval

        return run_trec_eval(args_list[1:])
    parser = build_parser()
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        status = args.func(args)
    except SerpevalError as exc:
        if args.debug:
            raise
        print(f"serpeval {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # pragma: no cover - interactive
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # pragma: no cover - e.g. `| head`
        return 0
    return int(status or 0)


def _available() -> set[str]:
    import importlib.util

    names = set()
    if importlib.util.find_spec("serpeval.cli.cmd_trec_eval") is not None:
        names.add("serpeval.cli.cmd_trec_eval")
    return names


def split_measures(values: Sequence[str] | None) -> list[str]:
    """``-m`` values, each possibly comma-separated outside parentheses."""
    out: list[str] = []
    for value in values or []:
        depth = 0
        current = ""
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            if ch == "," and depth == 0:
                if current.strip():
                    out.append(current.strip())
                current = ""
            else:
                current += ch
        if current.strip():
            out.append(current.strip())
    return out


def write_output(text: str, path: str | None) -> None:
    """Print ``text`` or write it to ``path``."""
    if path:
        from pathlib import Path

        Path(path).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
