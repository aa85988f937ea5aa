"""What every command shares: the exit statuses in their help, ``-m`` splitting, checked and
atomic outputs, sparing pandas-free commands the pandas import, ``--resamples`` (compare, gate,
report), and the log commands' ``--duplicates``, engine spinner and output (:func:`emit`: ab,
interleaving-report; :func:`ab_rows`: ab and the demo). Commands share helpers through this
module only, never import each other.

Imported by :mod:`serpeval.cli.app` and the ``cmd_*`` modules; imports no command.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from serpeval.cli._args import POSITIVE_INT

__all__ = [
    "EXIT_CODES_HELP",
    "EXIT_USAGE",
    "OUTPUT_OPTIONS",
    "PANDAS_FREE",
    "RESAMPLES",
    "add_duplicates_option",
    "check_outputs",
    "emit",
    "engine_status",
    "note_named_inputs",
    "p_cell",
    "p_text",
    "refuse_stdin_twice",
    "spare_pandas_import",
    "split_measures",
    "started_as",
    "table_width",
    "write_output",
]

EXIT_USAGE = 2

#: The exit statuses every command documents in its help (``gate`` adds 0 pass / 1 fail).
EXIT_CODES_HELP = ("exit status: 0 success; 2 bad input or option (one line on stderr names "
                   "the file or option and the cause); 7 nothing evaluated: no judged query "
                   "has results in a run (wrong qrels or wrong run)")


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

    sys.meta_path.insert(0, NoPandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(NoPandas)


def split_measures(values: Sequence[str] | None) -> list[str]:
    """``-m`` values, each possibly comma-separated outside parentheses.

    A piece that starts with a digit, ``-`` or ``.`` continues trec_eval's value list of the
    measure before it (``P.5,10``, ``ndcg.1=3,2=9``, ``utility.1,-1,0,0``), which the
    measure grammar reads as a whole. A value that names no measure (``-m ''``, ``-m ','``,
    ``-m ' '``) is refused (OptionError), never read as "no -m" and so as the defaults.
    """
    from serpeval.core.errors import OptionError

    out: list[str] = []
    for value in values or []:
        if not value.replace(",", "").strip():
            raise OptionError(f"-m {value!r}: no measure name; give one or more, e.g. -m nDCG@10 -m AP "
                              "or -m nDCG@10,AP (leave -m out for the defaults).")
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


#: The destinations of the options that name what a command writes (``-o/--output``, ``--json``,
#: ``--counts``, ``--plot``, ``--unjudged``, sweep's ``--html``, generate-logs' ``folder``). Every
#: other argument that names a file, a folder or a glob is an input (:func:`note_named_inputs`).
OUTPUT_OPTIONS = frozenset({"output", "json", "counts", "plot", "unjudged", "html", "folder"})

#: The destinations of the inputs that may be folders or globs (log folders, a demo collection):
#: the files in them are inputs too. Any other folder given (a run that is a folder by mistake)
#: is not looked into: its reader says what is wrong.
FOLDER_INPUTS = frozenset({"logs", "clicks", "pre", "data"})

#: At most this many files of one input folder or glob are noted (a bigger one is a dataset no
#: output is written into).
MAX_NOTED_FILES = 10_000


def note_named_inputs(args: Any) -> None:
    """Note every file the command line names as an input, before any work: each argument
    that is not one of :data:`OUTPUT_OPTIONS` and names a regular file (``-``: standard input
    when it is a file) and, for :data:`FOLDER_INPUTS`, the files in a folder it names (a log
    folder, a demo collection) or that a glob it gives matches (``logs/*.parquet``). An output that is one of them, by
    identity, is then refused by :func:`check_outputs` and by the atomic writer
    (:mod:`serpeval.core.identity`; runs inside the scope that :func:`serpeval.cli.app.main` opens).
    An argument that names nothing (a measure, ``builtin:length``) is passed over.
    """

    for dest, value in vars(args).items():
        if dest in OUTPUT_OPTIONS or dest == "func":
            continue
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, (str, Path)) and str(item):
                _note_path(str(item), folders=dest in FOLDER_INPUTS)


def refuse_stdin_twice(args: Any) -> None:
    """Standard input (``-``) named by two input arguments is refused before any work: the
    first reader takes it all, and the second would find it empty (``evaluate QRELS - -``).

    Raises:
        OptionError: naming the arguments.
    """
    named = [dest for dest, value in vars(args).items()
             if dest not in OUTPUT_OPTIONS and dest != "func"
             for item in (value if isinstance(value, (list, tuple)) else (value,)) if item == "-"]
    if len(named) > 1:
        from serpeval.core.errors import OptionError

        shown = ", ".join(dict.fromkeys(name.replace("_", " ") for name in named))
        times = "twice" if len(named) == 2 else f"{len(named)} times"
        raise OptionError(f"standard input (-) is named {times} ({shown}); it can be read once. "
                          "Give the others as files.")


def _note_path(text: str, *, folders: bool) -> None:
    import glob

    from serpeval.core.identity import note_input

    if not folders:
        files: Any = (text,)
    elif os.path.isdir(text):
        walked = ((os.path.join(top, name) for name in names) for top, _, names in os.walk(text))
        files = itertools.chain.from_iterable(walked)
    elif any(ch in text for ch in "*?[") and not os.path.exists(text):
        files = glob.iglob(text, recursive=True)
    else:
        files = (text,)
    for path in itertools.islice(files, MAX_NOTED_FILES):
        note_input(path, None if path == text else f"{path}, in {text}")


def table_width(output: str | None = None) -> int | None:
    """The one decision of how wide terminal tables are: ``COLUMNS`` when it is set, else the
    terminal's width when standard output is a terminal; ``None`` (the renderer's fixed
    layout, :data:`serpeval.report.table.DEFAULT_WIDTH`) for pipes and for an ``output`` file.
    Never below 30 columns.
    """
    import shutil

    if output and output != "-":
        return None
    if os.environ.get("COLUMNS", "").strip().isdigit() or sys.stdout.isatty():
        return max(shutil.get_terminal_size().columns, 30)
    return None


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


def _resamples(text: str) -> int:
    """``--resamples``: a positive integer (``1e4`` counts) up to
    :data:`serpeval.stats.validation.MAX_RESAMPLES`, refused with the reason where argparse
    reads it (``1e20`` used to be accepted and never finish)."""
    from serpeval.stats.validation import MAX_RESAMPLES, RESAMPLES_REASON

    value = POSITIVE_INT(text)
    if value > MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_RESAMPLES:,} ({RESAMPLES_REASON}), got {text}")
    return value


#: The argument type of ``--resamples`` (compare, gate).
RESAMPLES = _resamples


def add_duplicates_option(p: Any) -> None:
    """``--duplicates error|exclude|unchecked`` (``ab`` and ``interleaving-report``)."""
    p.add_argument(
        "--duplicates",
        choices=("error", "exclude", "unchecked"),
        default="error",
        help="repeated impression ids: error (default), exclude their rows, or unchecked "
        "(skip the duplicate-id check when ids are unique by construction)",
    )


@contextmanager
def engine_status(backend: str) -> Iterator[None]:
    """A spinner on a terminal while the engine works (nothing when piped)."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(f"aggregating in {backend}..."):
        yield


def _is_p(column: str) -> bool:
    """``p``, ``p (sign test)``, ``p (units)``, ``p adj.``: a column of p-values."""
    return column == "p" or column.startswith(("p ", "p("))


def p_cell(value: Any, digits: int) -> Any:
    """A p-value as text (``<0.0001`` below what ``digits`` decimals show); other values as given."""
    from serpeval.report.comparison import format_p

    if isinstance(value, float) and value == value:  # not NaN
        return format_p(value, digits)
    return value


def emit(
    args: argparse.Namespace, rows: list[dict[str, Any]], notes: list[str], title: str, payload: Any
) -> int:
    from serpeval.cli.segments import segment_json, segment_text
    from serpeval.report.table import render

    if args.format == "json":
        from serpeval.core.strict_json import dumps

        body = payload if isinstance(payload, dict) else {"rows": payload, "notes": notes}
        write_output(dumps(segment_json(args, body)) + "\n", args.output)
        return 0
    machine = args.format in ("csv", "tsv")
    by_segment = segment_text(args, table_width(args.output), args.output is None and sys.stdout.isatty())
    if machine and by_segment:   # one table per file: the per-segment rows
        write_output(by_segment, args.output)
        for note in notes:
            print(note, file=sys.stderr)
        return 0
    if not machine:  # p-values as every table shows them: <0.0001, never 0.0000
        rows = [{k: p_cell(v, args.digits) if _is_p(k) else v for k, v in row.items()} for row in rows]
    text = render(
        rows,
        args.format,
        digits=args.digits,
        title=None if machine else title,
        notes=() if machine else notes,
        color=args.output is None and sys.stdout.isatty(),
        width=table_width(args.output),
    )
    if by_segment:
        text += "\n" + by_segment
    write_output(text, args.output)
    if machine:
        for note in notes:
            print(note, file=sys.stderr)
    return 0


def ab_rows(rows: list[dict[str, Any]], fmt: str, alpha: float = 0.05) -> list[dict[str, Any]]:
    """Rows for display: the machine formats keep every field; the table shows a digest (where
    a standard error is 0, the effect without an interval, and ``n/a`` for a p-value that is
    not there), its interval columns labelled with the analysis' level (``1 - alpha``)."""
    if fmt not in ("table", "markdown", "latex"):
        return rows
    ci = f"[{ci_label(alpha)} CI]"
    return [
        {
            "metric": r["metric"],
            "treatment": r["treatment"],
            "control value": r["value_control"],
            "treatment value": r["value_treatment"],
            f"effect {ci}": (f"{r['effect']:+.3g} [{r['ci_lower']:+.3g}, {r['ci_upper']:+.3g}]"
                                if math.isfinite(r["ci_lower"]) and math.isfinite(r["ci_upper"])
                                else f"{r['effect']:+.3g} [no interval]"),
            f"relative {ci}": (
                f"{_pct(r['rel_effect'])} [{_pct(r['rel_ci_lower'])}, {_pct(r['rel_ci_upper'])}]"
            ),
            "p": p_text(r["p_value"]),
            "p adj.": p_text(r["p_value_adjusted"]),
            "verdict": r["verdict"],
            **(
                {"var. red.": f"{r['variance_reduction']:.1%}"} if "variance_reduction" in r else {}
            ),
        }
        for r in rows
    ]


def _pct(value: float) -> str:
    """A relative effect in percent; ``undefined`` where it is not a number (a zero control)."""
    return f"{value:+.2%}" if math.isfinite(value) else "undefined"


def p_text(p: float) -> str:
    """A p-value for reading: four decimals, or scientific notation below 1e-4; ``n/a`` where
    there is no test (NaN: no variance)."""
    if p != p:
        return "n/a"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def ci_label(alpha: float) -> str:
    """``1 - alpha`` as the tables label an interval's level (``95%``, ``97.5%``: never rounded;
    :func:`serpeval.stats.validation.confidence_label`, imported here only when a table is shown)."""
    from serpeval.stats.validation import confidence_label

    return confidence_label(1 - float(alpha))
