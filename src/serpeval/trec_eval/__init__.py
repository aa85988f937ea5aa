"""``serpeval trec_eval``: a drop-in replacement for NIST's trec_eval 10.0 and 9.0.8.

Same options (:mod:`.options`), same measures in the same order (:mod:`.catalog`), same
numbers (:mod:`.compute`, on serpeval's ranking and measure kernels), same bytes
(:mod:`.output`), same exit codes. Where trec_eval 10.0 has a bug the behaviour is the
documented, intended one, and ``trec_eval -h`` lists each such choice (:mod:`.help`).

Examples:
    >>> import io
    >>> from serpeval.trec_eval import run
    >>> out, err = io.BytesIO(), io.StringIO()
    >>> run(["-m", "map", "qrels.txt", "run.txt"], stdout=out, stderr=err)  # doctest: +SKIP
    0
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from serpeval.trec_eval.options import EXIT_INPUT, EXIT_USAGE, USAGE, Options, TrecEvalError, parse_options

if TYPE_CHECKING:
    import pyarrow as pa

    from serpeval.trec_eval.catalog import Column
    from serpeval.trec_eval.compute import Evaluation

__all__ = ["Options", "TrecEvalError", "format_evaluation", "parse_options", "run"]


def run(argv: Sequence[str], *, stdout: IO[bytes] | None = None,
        stderr: IO[str] | None = None) -> int:
    """Run ``trec_eval argv`` and return its exit status (0, or trec_eval's error codes).

    Output goes to ``stdout`` (bytes) and messages to ``stderr`` (default: the process's).
    """
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
        from serpeval.trec_eval.compute import evaluate, read_inputs

        with _progress(opts, err) as step:
            step("reading the qrels and the run")
            qrels, run_ = read_inputs(opts)
            step(f"ranking {len(run_):,} lines, computing the measures")
            evaluation = evaluate(opts, qrels, run_)
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

        raise TrecEvalError(f"trec_eval: <stdout>: cannot write: {os_error_cause(exc)}", EXIT_INPUT) from None


LONG_INPUT = 50_000_000  # bytes of run: above this, a terminal shows what is going on


@contextmanager
def _progress(opts: Options, err: IO[str]) -> Iterator[Callable[[str], None]]:
    """A transient spinner with the current phase on stderr, only when stderr is a terminal
    and the run is large (stdout, the output, is never touched)."""
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


def format_evaluation(evaluation: Evaluation, opts: Options) -> Iterator[bytes]:
    """The output bytes, in blocks: the ``-q`` rows (if asked), then the ``all`` rows."""
    import numpy as np
    import pyarrow as pa

    from serpeval.trec_eval.output import lines

    columns = evaluation.columns
    if opts.per_query:
        shown = [(c, v) for c, v in zip(columns, evaluation.per_topic, strict=True)
                 if v is not None]
        yield from lines([c.name for c, _ in shown], evaluation.topics,
                         [_text(c, v) for c, v in shown])
    if opts.summary:
        shown = [(c, v) for c, v in zip(columns, evaluation.summary, strict=True) if v is not None]
        yield from lines([c.name for c, _ in shown], pa.array(["all"]),
                         [_text(c, pa.array([v]) if c.kind == "str" else np.array([v]))
                          for c, v in shown])


def _text(column: Column, values: Any) -> pa.Array:
    """Printed values: ``%6.4f``, ``%ld`` of the truncated value, runid as is, relstring
    between single quotes."""
    import pyarrow.compute as pc

    from serpeval.trec_eval.output import fixed4, integers

    if column.kind == "str":
        return values if column.summary == "runid" else pc.binary_join_element_wise(
            "'", values, "'", "")
    return integers(values) if column.kind == "long" else fixed4(values)
