"""``serpeval trec_eval [flags] QRELS RUN`` and the ``trec_eval`` console script.

trec_eval's flag syntax (``-mP.5,10``, ``-l2``, ``-M100``) is parsed by
:mod:`serpeval.trec_eval.options`, not argparse: ``serpeval.cli.app`` routes
``serpeval trec_eval ...`` here before its own parser runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

from serpeval.cli.commands import summary
from serpeval.cli.failures import handle, interrupted, prepare_std_streams
from serpeval.cli.startup import finish, take_over

if TYPE_CHECKING:
    from serpeval.trec_eval.options import Options

# Nothing heavy at the top: the ``trec_eval`` console script imports this module before
# main() fits the process to an address-space limit (serpeval.cli.memory), and numpy
# loaded before that exits the process (OpenBLAS) or fails with a traceback. The
# serpeval.trec_eval package (numpy, pyarrow) is imported inside the functions.


def register(sub: Any) -> None:
    """List the command in ``serpeval --help`` (its arguments never reach argparse)."""
    p = sub.add_parser(
        "trec_eval",
        help=summary("trec_eval"),
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
    try:
        prepare_std_streams()
        from serpeval.cli.common import spare_pandas_import

        spare_pandas_import("trec_eval")
        status = run(argv)
        sys.stdout.flush()  # a full disk or a closed pipe is reported here, not at exit
        return status
    except BaseException as exc:  # KeyboardInterrupt included
        return handle(exc, "trec_eval:")


def main() -> None:
    """Entry point of the ``trec_eval`` console script: as ``serpeval trec_eval``, with the
    process fitted to an address-space limit first (:func:`serpeval.cli.memory.keep_freed_memory`),
    before numpy loads; a failure there (no room to load numpy) is ``trec_eval: out of
    memory ...`` and status 2."""

    try:
        from serpeval.cli.memory import keep_freed_memory

        keep_freed_memory()
        take_over()  # Ctrl-C is a KeyboardInterrupt again, handled here (serpeval.cli.startup)
        status = run_trec_eval(sys.argv[1:])
    except KeyboardInterrupt:  # before (or while) run_trec_eval's own guard takes over
        status = interrupted()
    except Exception as exc:  # start-up failed before run_trec_eval's guard
        status = handle(exc, "trec_eval:")
    finish()  # the command has ended: a Ctrl-C now must not become a traceback at exit
    sys.exit(status)


def run(argv: Sequence[str], *, stdout: IO[bytes] | None = None,
        stderr: IO[str] | None = None) -> int:
    """Run ``trec_eval argv`` and return its exit status (0, or trec_eval's error codes).

    Output goes to ``stdout`` (bytes) and messages to ``stderr`` (default: the process's).
    """
    from serpeval.trec_eval.options import EXIT_USAGE, USAGE, TrecEvalError, parse_options
    from serpeval.trec_eval.output import format_evaluation

    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr
    try:
        opts = parse_options(list(argv))
        if opts.version:
            from serpeval.core.version import __version__

            print(f"trec_eval version {opts.compat} (serpeval {__version__})", file=err)
            return 0
        if opts.help:
            from serpeval.trec_eval.help import help_text

            out.write(help_text(opts.measures, opts.compat).encode())
            return 0
        if len(opts.files) != 2:
            raise TrecEvalError(USAGE.rstrip("\n"), EXIT_USAGE)
        from serpeval.trec_eval.catalog import select
        from serpeval.trec_eval.compute import compute_evaluation, read_inputs

        select(opts.measures, opts.compat)  # an unknown measure ends with 1 before a file is read, as in C
        with _progress(opts, err) as step:
            step("reading the qrels and the run")
            qrels, run_ = read_inputs(opts)
            step(f"ranking {len(run_):,} lines, computing the measures")
            evaluation = compute_evaluation(opts, qrels, run_)
            step("writing")
            _write(out, format_evaluation(evaluation, opts))
        for line in evaluation.warnings:
            print(line, file=err)
    except TrecEvalError as exc:
        print(str(exc), file=err)
        return exc.status
    return 0


def _write(out: IO[bytes], chunks: Iterator[bytes]) -> None:
    """Write the output; a failure (full disk, closed stdout) is a TrecEvalError, status 2.
    A reader that went away (``| head``) stays a BrokenPipeError for the caller."""
    try:
        for chunk in chunks:
            out.write(chunk)
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        from serpeval.core.errors import os_error_cause
        from serpeval.trec_eval.options import EXIT_INPUT, TrecEvalError

        raise TrecEvalError(f"trec_eval: <stdout>: cannot write: {os_error_cause(exc)}", EXIT_INPUT) from None


LONG_INPUT = 50_000_000  # bytes of run: above this, a terminal shows what is going on


@contextmanager
def _progress(opts: Options, err: IO[str]) -> Iterator[Callable[[str], None]]:
    """A transient spinner with the current phase on stderr, only when stderr is a terminal
    and the run is large (stdout, the output, is never touched)."""
    from pathlib import Path

    run_path = Path(opts.files[1])
    if not (err is sys.stderr and err.isatty() and run_path.is_file()
            and run_path.stat().st_size > LONG_INPUT):
        yield lambda phase: None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("trec_eval: {task.description}"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("starting", total=None)
        yield lambda phase: bar.update(task, description=phase)
