"""Read the inputs, rank once, compute every column, and aggregate the ``all`` rows.

The rules are trec_eval's (listed below; README's "Drop-in trec_eval" names the deliberate
deviations), computed with serpeval's ranking (:mod:`serpeval.ranking`) and measure kernels,
vectorized over topics:

* topics are the qrels topics in byte order; run topics without qrels are ignored;
* a qrels topic absent from the run is skipped, with one warning line on stderr giving the
  count (9.0.8's behaviour; 10.0 exits 4 there, contradicting its own help text);
* ``-c`` averages over all qrels topics: 10.0 evaluates a missing topic as an empty
  ranking and prints its ``-q`` rows (num_ret, utility, unj, rbp_resid, relstring cleared),
  9.0.8 prints no rows and adds 0 (log(1e-5) for gm_*) to the sums;
* the ``all`` rows: means over topics (summed in topic order, divided by num_q), sums for
  the counts, geometric means for gm_map/gm_bpref; with ``-c`` num_rel's ``all`` is the
  number of qrels lines with a grade > 0 in every topic, ignoring ``-l`` (trec_eval's
  ``m_num_rel.c`` quirk, reproduced because it is trec_eval's output);
* 9.0.8 compares scores as 32-bit floats and refuses ``#`` comment lines in runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core.data import GRADE_LIMIT, Qrels, Run
from serpeval.core.errors import DuplicateError, InputError, InvalidParameterError
from serpeval.measures.spec import GMEAN_FLOOR
from serpeval.ranking import Rankings, index_qrels, rank
from serpeval.trec_eval.catalog import Column, Context, expand, first_computed
from serpeval.trec_eval.options import (
    EXIT_INPUT,
    EXIT_MEASURE,
    EXIT_NO_QUERIES,
    EXIT_USAGE,
    MAX_LONG,
    Options,
    TrecEvalError,
)

__all__ = ["Evaluation", "compute_evaluation"]


@dataclass(frozen=True)
class Evaluation:
    """Per-topic values and ``all`` values of every output column.

    Attributes:
        columns: the output columns in trec_eval's order.
        topics: the topics of the ``-q`` rows, in byte order.
        per_topic: for each column, its per-topic values (a float array, or an Arrow string
            array for relstring); None for summary-only columns.
        summary: for each column, its ``all`` value (float, or str for runid); None when
            the column has no ``all`` row.
        warnings: lines for stderr (skipped topics).
    """

    columns: list[Column]
    topics: pa.Array
    per_topic: list[Any]
    summary: list[Any]
    warnings: list[str]


def compute_evaluation(opts: Options, qrels: Qrels, run: Run) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` as ``trec_eval`` with ``opts`` does.

    Raises:
        TrecEvalError: with trec_eval's exit status (4 duplicate docs, 7 no common topic).
    """
    _check_supported(opts)
    ctx = Context(opts.rel_level, opts.compat, opts.collection_size)
    columns = expand(opts.measures, ctx)
    if opts.debug_query is not None:
        keep = _is_topic(qrels.query_ids, opts.debug_query)
        qrels = Qrels(qrels.query_ids.filter(keep), qrels.doc_ids.filter(keep),
                      qrels.relevance[keep.to_numpy(zero_copy_only=False)], source=qrels.source)
    index = index_qrels(qrels)
    complete_with_rows = opts.complete and opts.compat == "10.0"
    try:
        # 9.0.8 stores scores as C floats: a finite score beyond float32's range (1e39)
        # becomes inf there too, which is what the cast gives; NumPy's overflow warning
        # is no news for the user (it printed a Python source line on stderr).
        with np.errstate(over="ignore"):
            rankings = rank(index, run, missing="zero" if complete_with_rows else "skip",
                            depth=None if opts.depth == MAX_LONG else opts.depth,
                            judged_only=opts.judged_only, float32_scores=opts.compat == "9.0.8")
    except DuplicateError as exc:
        raise TrecEvalError(f"trec_eval: {exc}\ntrec_eval: Can't calculate measure "
                            f"'{first_computed(opts.measures, opts.compat)}'",
                            EXIT_MEASURE) from None
    except InvalidParameterError as exc:
        raise TrecEvalError(f"trec_eval: {exc}", EXIT_USAGE) from None

    missing = rankings.coverage.missing
    n_judged = rankings.coverage.judged_queries
    warnings = []
    if missing and not opts.complete:
        warnings.append(
            f"trec_eval: {len(missing)} of {n_judged} topics in the qrels have no results in the "
            "run and were skipped (as trec_eval 9.0.8 does; 10.0 would exit 4); use -c to "
            "average over all qrels topics")
    if rankings.n_queries == 0:
        raise TrecEvalError("trec_eval: No queries with both results and relevance info",
                            EXIT_NO_QUERIES)
    absent = np.isin(rankings.query_ids, np.array(missing, dtype=object)) if missing and \
        complete_with_rows else np.zeros(rankings.n_queries, dtype=bool)
    num_q = n_judged if opts.complete else rankings.n_queries

    per_topic: list[Any] = []
    summary: list[Any] = []
    for column in columns:
        values = _values(column, rankings, absent)
        per_topic.append(values if column.per_topic else None)
        summary.append(_summary(column, values, opts, num_q, qrels, run))
    topics = pa.array(rankings.query_ids.tolist(), pa.string())
    return Evaluation(columns, topics, per_topic, summary, warnings)


def _is_topic(query_ids: pa.Array, wanted: str) -> pa.Array:
    """Which qrels lines belong to topic ``wanted`` (``-D level.qid``). A qid from the
    command line that is not UTF-8 (argv's surrogate escapes) names no topic: topic ids are
    UTF-8, so it matches none (then "No queries with both results and relevance info",
    status 7, as trec_eval)."""
    try:
        wanted.encode("utf-8")
    except UnicodeEncodeError:
        return pa.array(np.zeros(len(query_ids), dtype=bool))
    return pc.equal(query_ids, wanted)


def _check_supported(opts: Options) -> None:
    if opts.rel_format != "qrels":
        raise TrecEvalError(
            f"trec_eval: rel_info format '{opts.rel_format}' is not supported by serpeval "
            "trec_eval (only qrels)", EXIT_INPUT)
    if opts.results_format != "trec_results":
        raise TrecEvalError(
            f"trec_eval: Illegal retrieval results format '{opts.results_format}' "
            "(only trec_results)", EXIT_INPUT)
    if opts.zscores is not None:
        raise TrecEvalError("trec_eval: -Z (z-scores) is not supported by serpeval trec_eval",
                            EXIT_USAGE)
    if opts.rel_level < 0:
        raise TrecEvalError(
            f"trec_eval: -l must be >= 0 (got {opts.given('l', opts.rel_level)}); a negative level would count "
            "unjudged docs as relevant", EXIT_USAGE)
    if opts.rel_level > GRADE_LIMIT:
        raise TrecEvalError(
            f"trec_eval: -l must be at most {GRADE_LIMIT} (2^53 - 1), the largest grade "
            f"(got {opts.given('l', opts.rel_level)})", EXIT_USAGE)
    if not 0 <= opts.collection_size <= GRADE_LIMIT:
        raise TrecEvalError(
            f"trec_eval: -N must be a number of docs from 0 to {GRADE_LIMIT} (2^53 - 1) "
            f"(got {opts.given('N', opts.collection_size)})", EXIT_USAGE)
    if opts.depth <= 0:
        raise TrecEvalError(f"trec_eval: -M must be a positive number of docs (got {opts.given('M', opts.depth)})",
                            EXIT_USAGE)


def _values(column: Column, rankings: Rankings, absent: np.ndarray) -> Any:
    """Per-topic values of a column (zeroed where 10.0 clears a missing topic's value)."""
    if column.kind == "str":
        if column.summary == "runid":
            return None
        return relstrings(rankings, column.length)
    if column.measure is None:  # num_q
        return None
    values = column.measure.compute(rankings)
    if column.cleared_when_missing and absent.any():
        values = np.where(absent, 0.0, values)
    return values


def _summary(column: Column, values: Any, opts: Options, num_q: int, qrels: Qrels, run: Run) -> Any:
    """The ``all`` value of a column (see the module docstring for each rule)."""
    how = column.summary
    if how == "none":
        return None
    if how == "runid":
        return run.tag
    if how == "num_q":
        return float(num_q)
    if how == "num_rel" and opts.complete:
        return float(np.count_nonzero(qrels.relevance > 0))
    if how in ("sum", "num_rel"):
        return _sequential_sum(values)
    if how == "gmean":
        total = _sequential_sum(np.log(np.maximum(values, GMEAN_FLOOR)))
        if opts.complete and opts.compat == "9.0.8":
            total += (num_q - len(values)) * math.log(GMEAN_FLOOR)
        return math.exp(total / num_q) if num_q else 0.0
    return _sequential_sum(values) / num_q if num_q else 0.0


def _sequential_sum(values: np.ndarray) -> float:
    """The sum in topic order, one addition after another as trec_eval's C loop does (NumPy's
    pairwise ``sum`` can differ in the last bits, and so in the 4th printed decimal).

    The C loop starts from +0.0, so a sum of negative zeros is +0.0 (``utility.-1,-1,-1,-1``
    of a topic that retrieved nothing judged, under ``-J``, is -0.0; its ``all`` row prints
    0.0000, not -0.0000): adding the cumulative sum to 0.0 gives exactly that, and changes
    nothing else (x + 0.0 == x for every x but -0.0).
    """
    return 0.0 + float(np.cumsum(values)[-1]) if len(values) else 0.0


_RELSTRING_CODES = np.frombuffer(b"0123456789", dtype=np.uint8)


def relstrings(rankings: Rankings, length: int) -> pa.Array:
    """The first ``length`` grades of every topic as characters (trec_eval's ``relstring``):
    the grade 0-9, ``>`` above 9, ``-`` not in the pool (not in the qrels), ``.`` in the pool
    but unjudged (a negative grade)."""
    g = rankings.grades
    keep = rankings.position < length
    g = g[keep]
    chars = np.full(len(g), ord("<"), dtype=np.uint8)
    digit = (g >= 0) & (g <= 9)
    chars[digit] = _RELSTRING_CODES[g[digit]]
    chars[g > 9] = ord(">")
    chars[g == -1] = ord("-")
    chars[g == -2] = ord(".")
    counts = np.minimum(rankings.n_ret, length)
    offsets = np.zeros(rankings.n_queries + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.StringArray.from_buffers(rankings.n_queries, pa.py_buffer(offsets),
                                       pa.py_buffer(chars))


def read_inputs(opts: Options) -> tuple[Qrels, Run]:
    """Read the qrels and the run named on the command line (``-`` reads the run from stdin).

    Raises:
        TrecEvalError: status 2 for unreadable or malformed files (the message names the
            file and line) and for running out of memory, 4 for a duplicate judgment.
    """
    from serpeval.core.read_ahead import ReadAhead, may_read_stdin
    from serpeval.io.trec import read_trec_qrels, read_trec_run

    qrels_path, run_path = opts.files
    # The run is read in the background while the qrels are (both from stdin cannot be).
    ahead = ReadAhead([run_path], lambda path: read_trec_run(path, comments=opts.compat == "10.0", allow_no_lines=True),
                      ahead=False if may_read_stdin(qrels_path) else None)
    try:
        qrels = read_trec_qrels(qrels_path)
    except DuplicateError as exc:
        raise TrecEvalError(f"trec_eval: {exc}", EXIT_MEASURE) from None
    except InputError as exc:
        raise TrecEvalError(f"trec_eval: {exc}\ntrec_eval: Quit in file '{qrels_path}'",
                            EXIT_INPUT) from None
    except MemoryError:
        raise _out_of_memory(qrels_path, 0) from None
    try:
        run = next(ahead)
    except InputError as exc:
        raise TrecEvalError(f"trec_eval: {exc}\ntrec_eval: Quit in file '{run_path}'",
                            EXIT_INPUT) from None
    except MemoryError:
        raise _out_of_memory(run_path, len(qrels)) from None
    return qrels, run


def _out_of_memory(path: str, lines: int) -> TrecEvalError:
    return TrecEvalError(
        f"trec_eval: out of memory while reading {path} ({lines:,} lines read so far); "
        "try a machine with more memory, or split the run by topic (the measures are per topic)",
        EXIT_INPUT)
