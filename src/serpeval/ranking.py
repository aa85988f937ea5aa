"""The one place that turns (qrels, run) into ranked relevance arrays.

Every measure reads the :class:`Rankings` built here, so each rule is decided once:

* **Order.** Score descending; ties broken by doc id **descending** in byte order
  (trec_eval's ``comp_sim_docno``). The rank column and the order of lines are ignored.
  ``-0.0`` and ``0.0`` tie. This lives in :func:`serpeval.core.order.sort_order` and
  nowhere else (in ``core`` so that the run writers of ``io`` rank with the same rule).
* **Tie policy** (``ties``, :data:`TIE_POLICIES`): what happens inside a group of equal
  scores of one query. ``trec_eval`` (the default) keeps the doc id rule above;
  ``optimistic`` puts the higher grade first and ``pessimistic`` the lower grade first
  (unjudged docs, grade < 0, count as grade 0, i.e. not relevant; equal keys keep the doc
  id rule); ``expected`` keeps the doc id order but records the tie groups
  (:attr:`Rankings.tie_ids`) so that the measures report their exact expectation over
  every order of each group (:mod:`serpeval.measures.expected`); ``rank`` ignores the
  scores and ranks each query by the run file's rank column, ascending (a run whose rank
  column is missing, not an integer or repeated within a query is refused, naming lines).
  Every policy is applied by :func:`break_ties`, and nowhere else.
* **Relevance of a retrieved doc.** Its grade in the qrels of its query; :data:`NONPOOL`
  (``-1``) when the doc is not in the qrels; :data:`UNJUDGED` (``-2``) when the qrels give a
  negative grade ("in the pool but unjudged", trec_eval's and infAP's convention - *not*
  non-relevant).
* **Which queries.** Only judged queries are evaluated; run queries without judgments are
  ignored (counted in :class:`Coverage`). Judged queries absent from the run follow
  ``missing``: ``"skip"`` (trec_eval's default), ``"zero"`` (``-c``: evaluated as an empty
  ranking, so every measure is 0), or ``"error"``.
* **Depth** (``-M``): keep the top ``depth`` docs *after* sorting.
* **Duplicates.** A doc retrieved twice for one evaluated query is an error naming
  ``path:line``, checked after the depth cut (as trec_eval does).
* **Judged only** (``-J``): drop retrieved docs that are not judged (grade < 0) and close
  the gaps in the ranks.

Cutoffs past the end of a ranking are handled by the kernels: missing ranks count as
non-relevant (P@k divides by k).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import pyarrow as pa

from serpeval.core import native
from serpeval.core.columns import take
from serpeval.core.data import Qrels, Run
from serpeval.core.duplicates import find_duplicate
from serpeval.core.errors import (
    DuplicateError,
    InvalidParameterError,
    MissingQueriesError,
    MissingQueriesWarning,
    NothingEvaluatedError,
)
from serpeval.core.fingerprints import fingerprint, keep_run_signature, pair_key
from serpeval.core.hash_index import KeyTable, Stored, StringTable, grades_in_groups
from serpeval.core.id_codes import codes_in
from serpeval.core.order import rank_order, sort_order
from serpeval.core.segments import positions_in_segments, segment_ids, take_segments, weighted_bincount
from serpeval.core.ties import TIE_POLICIES, TIE_RULES, TiePolicy, check_ties

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

__all__ = [
    "NONPOOL",
    "TIE_POLICIES",
    "TIE_RULES",
    "UNJUDGED",
    "Coverage",
    "QrelsIndex",
    "Rankings",
    "RunOrder",
    "TiePolicy",
    "break_ties",
    "check_ties",
    "index_qrels",
    "rank",
    "rank_order",
    "require_evaluated",
    "sort_order",
    "tie_groups",
]

NONPOOL = -1
"""Grade given to a retrieved doc that is not in the qrels of its query."""
UNJUDGED = -2
"""Grade given to a retrieved doc whose qrels grade is negative (pooled but unjudged)."""

Missing = Literal["skip", "zero", "error"]
MISSING_POLICIES: tuple[Missing, ...] = get_args(Missing)


# ----------------------------------------------------------------------------- qrels side


@dataclass(frozen=True, eq=False)
class QrelsIndex:
    """What every evaluation against one qrels shares (built once, reused for every run).

    Attributes:
        query_ids: judged queries in byte order of their ids (an Arrow string array).
        row_query: the query index of every judgment (qrels row).
        doc_ids: the doc id of every judgment.
        grades: the grade of every judgment.
        ideal_offsets: ``int64[n_queries + 1]`` segments of ``ideal_grades``.
        ideal_grades: every judgment's grade, sorted descending within its query.
        groups: with the compiled kernels, the judgments grouped by query and sorted by
            doc fingerprint within it (retrieved docs are matched there); else None.
        table: without them, (query, doc fingerprint) -> qrels row (a hash table); else None.
    """

    query_ids: pa.Array
    row_query: NDArray[np.int32]
    doc_ids: pa.ChunkedArray
    grades: NDArray[np.int64]
    ideal_offsets: NDArray[np.int64]
    ideal_grades: NDArray[np.int64]
    groups: native.Groups | None = None
    table: KeyTable | None = None

    @cached_property
    def query_names(self) -> NDArray[Any]:
        """``query_ids`` as a NumPy array of Python strings, made once and shared by the
        rankings of every run that evaluates all judged queries."""
        return self.query_ids.to_numpy(zero_copy_only=False)

    @cached_property
    def doc_store(self) -> Stored:
        """The judgments' doc ids as the table's matches are confirmed against them (built
        once, shared by every run)."""
        return Stored(self.doc_ids)

    @cached_property
    def query_table(self) -> StringTable:
        """``query_ids`` as a hash index: a run's query ids are looked up in it (built once,
        shared by every run)."""
        return StringTable(self.query_ids)


def index_qrels(qrels: Qrels) -> QrelsIndex:
    """Build (or fetch the cached) :class:`QrelsIndex` of ``qrels``."""
    cached = qrels._cache.get("index")
    if cached is not None:
        return cached
    grades = qrels.relevance
    grouped = qrels.grouped()  # None without the compiled kernels
    if grouped is not None:
        qcodes, query_ids, groups = grouped
        index = QrelsIndex(
            query_ids=query_ids,
            row_query=qcodes,
            doc_ids=qrels.doc_ids,
            grades=grades,
            ideal_offsets=groups.offsets,
            ideal_grades=native.sort_descending(grades[groups.rows], groups.offsets),
            groups=groups,
        )
    else:
        qcodes, query_ids, keys = qrels.pair_keys()
        ideal_offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(qcodes, minlength=len(query_ids)), out=ideal_offsets[1:])
        index = QrelsIndex(
            query_ids=query_ids,
            row_query=qcodes,
            doc_ids=qrels.doc_ids,
            grades=grades,
            ideal_offsets=ideal_offsets,
            ideal_grades=_grades_by_query(qcodes, grades),
            table=KeyTable(keys),
        )
        qrels._cache.pop("pair_keys", None)  # the table has them now
    qrels._cache["index"] = index
    return index


def _grades_by_query(qcodes: NDArray[np.int32], grades: NDArray[np.int64]) -> NDArray[np.int64]:
    """Every judgment's grade, grouped by query code and sorted descending within it.

    Only the values are needed, not the permutation, so when the query code and the grade
    fit side by side in one int64 (grades spanning less than 2^31) the two are packed and
    sorted with NumPy's vectorized ``sort``, several times faster than a ``lexsort``.
    """
    if len(grades) == 0:
        return grades.copy()
    if grades.dtype.kind == "f":  # fractional grades (grades="float")
        return grades[np.lexsort((-grades, qcodes))]
    top, bottom = int(grades.max()), int(grades.min())
    if top - bottom >= 2**31:
        return grades[np.lexsort((-grades, qcodes))]
    packed = qcodes.astype(np.int64)
    packed <<= 32
    packed += top - grades  # 0 for the best grade: ascending order puts it first
    packed.sort()
    packed &= 0xFFFFFFFF
    return top - packed


# ----------------------------------------------------------------------------- result


@dataclass(frozen=True)
class Coverage:
    """Which queries and rows of a run were evaluated, and why others were not.

    Attributes:
        run: the run's name.
        judged_queries: queries in the qrels.
        run_queries: distinct queries in the run.
        evaluated: queries evaluated (and averaged over).
        missing: judged queries absent from the run, in byte order.
        missing_policy: what happened to them (``skip``, ``zero``, ``error``).
        unjudged_queries: run queries with no judgments (ignored, as trec_eval does).
        unjudged_rows: run rows belonging to those queries.
        truncated_rows: rows cut by ``depth``.
        dropped_unjudged: retrieved docs dropped by ``judged_only``.
        ties: groups of equal scores within a query that the doc id order broke.
    """

    run: str
    judged_queries: int
    run_queries: int
    evaluated: int
    missing: tuple[str, ...]
    missing_policy: str
    unjudged_queries: int
    unjudged_rows: int
    truncated_rows: int = 0
    dropped_unjudged: int = 0
    ties: int = 0

    @property
    def answered(self) -> int:
        """Judged queries that have results in the run (``judged_queries - len(missing)``);
        0 means nothing could be evaluated (see :func:`require_evaluated`)."""
        return self.judged_queries - len(self.missing)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the missing ids listed)."""
        return {
            "run": self.run,
            "judged_queries": self.judged_queries,
            "run_queries": self.run_queries,
            "evaluated": self.evaluated,
            "missing": list(self.missing),
            "missing_policy": self.missing_policy,
            "unjudged_queries": self.unjudged_queries,
            "unjudged_rows": self.unjudged_rows,
            "truncated_rows": self.truncated_rows,
            "dropped_unjudged": self.dropped_unjudged,
            "ties": self.ties,
        }


def missing_queries_error(source: str, run: str, missing: tuple[str, ...]) -> MissingQueriesError:
    """The error for ``missing="error"`` (one wording for every backend)."""
    shown = ", ".join(repr(q) for q in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return MissingQueriesError(
        f"{source}: {len(missing)} judged queries have no results in run {run!r}: {shown}{more}. "
        "Use missing='skip' to leave them out or missing='zero' to count them as 0."
    )


def require_evaluated(coverage: Coverage, source: str, *, qrels: str = "",
                      run_examples: Sequence[str] = ()) -> None:
    """Refuse a run none of whose queries is judged: the one check of every evaluation path.

    With no judged query answered there is no number to report, whatever the ``missing``
    policy: ``skip`` would average over no query (NaN), ``zero`` (trec_eval ``-c``) would
    report 0.0 for a run that was never matched with the judgments, and either hides a
    wrong qrels or run file. trec_eval stops the same way ("No queries with both results
    and relevance info", exit 7). A run that answers at least one judged query passes.

    Args:
        coverage: the run's coverage (:attr:`Coverage.answered` is what counts).
        source: the run's file (or label), named first in the message.
        qrels: the qrels' file, when known.
        run_examples: a few of the run's query ids, to set beside the judged ones.

    Raises:
        NothingEvaluatedError: no judged query has results in the run.
    """
    if coverage.answered > 0:
        return

    def some(ids: Sequence[str], total: int) -> str:
        shown = ", ".join(repr(q) for q in list(ids)[:3])
        return f" (e.g. {shown}{', ...' if total > 3 else ''})" if shown else ""

    judged = coverage.judged_queries
    where = f" ({qrels})" if qrels else ""
    found = (f"the run has results for {_queries(coverage.run_queries)}, none of them judged"
             f"{some(run_examples, coverage.run_queries)}") if coverage.run_queries else \
        "the run has no results"
    raise NothingEvaluatedError(
        f"{source}: no judged query has results in run {coverage.run!r}, so nothing can be "
        f"evaluated: the qrels{where} judge {_queries(judged)}{some(coverage.missing, judged)} "
        f"and {found}. Check that the run and the qrels belong to the same collection and use "
        "the same query ids."
    )


def _queries(n: int) -> str:
    return f"{n:,} quer{'y' if n == 1 else 'ies'}"


def missing_queries_warning(coverage: Coverage) -> MissingQueriesWarning:
    """The warning for ``missing="skip"`` that gives the count (one wording for every backend)."""
    return MissingQueriesWarning(
        f"run {coverage.run!r}: {len(coverage.missing)} of {coverage.judged_queries} judged "
        "queries have no results and were skipped (missing='skip', trec_eval's default); "
        "use missing='zero' (trec_eval -c) to count them as 0."
    )


@dataclass(frozen=True, eq=False)
class RunOrder:
    """How :func:`rank` sorted a run: its judged rows in ranking order (before the depth cut),
    kept so that another ranking of the same run (the subtopic ranking of
    :mod:`serpeval.measures.subtopic_ranking`, the streaming evaluation's grouping check)
    need not sort it again.

    Attributes:
        run: the run sorted.
        query_ids: the judged query ids the codes index.
        float32_scores: whether scores were rounded to float32 before sorting.
        order: row numbers of the run's judged rows, in ranking order.
        sorted_codes: the judged-query code of each of those rows.
    """

    run: Run
    query_ids: pa.ChunkedArray
    float32_scores: bool
    order: NDArray[np.int64]
    sorted_codes: NDArray[Any]

    def same_sort(self, run: Run, query_ids: pa.ChunkedArray, float32_scores: bool) -> bool:
        """Was this order made for ``run`` against these judged queries, with this rounding?"""
        return self.run is run and self.float32_scores == float32_scores and self.query_ids.equals(query_ids)


@dataclass(frozen=True, eq=False)
class Rankings:
    """Ranked relevance of one run, flat over all evaluated queries.

    ``grades[offsets[i]:offsets[i+1]]`` are the grades of query ``query_ids[i]``'s docs in
    rank order (:data:`NONPOOL`, :data:`UNJUDGED` for docs without a usable judgment).
    ``ideal_grades`` holds the same query's judgments, all of them (retrieved or not),
    sorted descending: the ideal ranking. Kernels combine the helpers below; none loops
    over queries in Python.

    ``ties`` is the tie policy that ordered the grades; under ``expected``, ``tie_ids``
    gives every ranked doc the id of its tie group (docs of one query with equal scores,
    consecutive in the ranking; ids increase down the ranking), which the measures read to
    return their expectation over every order of each group.
    """

    query_ids: NDArray[Any]
    offsets: NDArray[np.int64]
    grades: NDArray[np.int64]
    ideal_offsets: NDArray[np.int64]
    ideal_grades: NDArray[np.int64]
    coverage: Coverage
    run_order: RunOrder | None = field(default=None, repr=False)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    ties: TiePolicy = "trec_eval"
    tie_ids: NDArray[np.integer] | None = field(default=None, repr=False)

    @property
    def n_queries(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)

    @cached_property
    def segment(self) -> NDArray[np.int64]:
        """Query index of every ranked doc."""
        return segment_ids(self.offsets)

    @cached_property
    def position(self) -> NDArray[np.int64]:
        """0-based rank of every ranked doc within its query."""
        return positions_in_segments(self.offsets)

    @cached_property
    def n_ret(self) -> NDArray[np.int64]:
        """Number of docs retrieved per query."""
        return np.diff(self.offsets)

    @cached_property
    def ideal_segment(self) -> NDArray[np.int64]:
        """Query index of every judgment in ``ideal_grades``."""
        return segment_ids(self.ideal_offsets)

    @cached_property
    def ideal_position(self) -> NDArray[np.int64]:
        """0-based position of every judgment in its query's ideal ranking."""
        return positions_in_segments(self.ideal_offsets)

    def total(self, values: NDArray[np.float64], mask: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """Per query: the sum of ``values`` over ranked docs (where ``mask``)."""
        if mask is None:
            return weighted_bincount(self.segment, values, self.n_queries)
        return weighted_bincount(self.segment[mask], values[mask], self.n_queries)

    def ideal_total(self, values: NDArray[np.float64], mask: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """Per query: the sum of ``values`` over the ideal ranking (where ``mask``)."""
        seg = self.ideal_segment
        if mask is None:
            return weighted_bincount(seg, values, self.n_queries)
        return weighted_bincount(seg[mask], values[mask], self.n_queries)

    def num_rel(self, rel: int) -> NDArray[np.int64]:
        """Per query: judged docs with grade >= ``rel`` (retrieved or not), trec_eval's R."""
        key = ("num_rel", rel)
        if key not in self._memo:
            self._memo[key] = np.bincount(
                self.ideal_segment[self.ideal_grades >= rel], minlength=self.n_queries
            ).astype(np.int64)
        return self._memo[key]

    def only_judged(self) -> Rankings:
        """These rankings without their unjudged docs (grade < 0), ranks closed up: the
        judged-only rule of ``rank(judged_only=True)`` (trec_eval ``-J``) applied to one
        measure (ir_measures' ``judged_only=True``). Built once per rankings."""
        if "only_judged" not in self._memo:
            grades, offsets, dropped = _drop_unjudged(self.grades, self.segment, self.n_queries)
            coverage = replace(self.coverage, dropped_unjudged=self.coverage.dropped_unjudged + dropped)
            tie_ids = None if self.tie_ids is None else self.tie_ids[self.grades >= 0]
            self._memo["only_judged"] = Rankings(self.query_ids, offsets, grades, self.ideal_offsets,
                                                 self.ideal_grades, coverage, ties=self.ties, tie_ids=tie_ids)
        return self._memo["only_judged"]

    def num_nonrel(self, rel: int) -> NDArray[np.int64]:
        """Per query: judged docs with ``0 <= grade < rel`` (retrieved or not)."""
        g = self.ideal_grades
        return np.bincount(self.ideal_segment[(g >= 0) & (g < rel)], minlength=self.n_queries).astype(np.int64)


# ----------------------------------------------------------------------------- building


def rank(
    qrels: Qrels | QrelsIndex,
    run: Run,
    *,
    missing: Missing = "skip",
    depth: int | None = None,
    judged_only: bool = False,
    float32_scores: bool = False,
    ties: TiePolicy = "trec_eval",
) -> Rankings:
    """Rank ``run`` against ``qrels`` under the rules in this module's docstring.

    Args:
        qrels: the judgments, or their prebuilt :class:`QrelsIndex` (to share the work
            between runs).
        run: the system output.
        missing: policy for judged queries absent from the run.
        depth: keep only the top ``depth`` docs of each query (trec_eval ``-M``).
        judged_only: drop unjudged docs before measuring (trec_eval ``-J``).
        float32_scores: round scores to 32-bit floats first, so that scores equal in
            float32 tie (trec_eval 9.0.8 and pytrec_eval store scores that way).
        ties: the tie policy (:data:`TIE_POLICIES`, applied by :func:`break_ties`). Under
            ``optimistic``/``pessimistic`` the order within ties is decided before the depth
            cut (so a doc repeated below ``depth`` is an error there too); ``expected`` with
            a ``depth`` that cuts through a tie group is refused.

    Raises:
        InvalidParameterError: an unknown tie policy, or ``expected`` with a depth cut
            through a tie group.
        DuplicateError: a doc appears twice for one evaluated query.
        MissingQueriesError: ``missing="error"`` and judged queries are absent.
        NothingEvaluatedError: ``missing="error"`` and no judged query has results (the
            other policies leave this check to the caller: :func:`require_evaluated`).
    """
    _check_options(missing, depth)
    policy = check_ties(ties)
    index = qrels if isinstance(qrels, QrelsIndex) else index_qrels(qrels)
    scores = run.scores.astype(np.float32).astype(np.float64) if float32_scores else run.scores
    rows = _sort_judged_rows(index, run, scores, float32_scores)  # which queries; order (trec_eval's)
    grades, truncated, tie_ids = _policy_depth_grades(index, run, rows, scores, policy, depth)
    ties_broken = _count_ties(rows.sorted_codes, scores, rows.order) + rows.split_ties
    offsets, dropped = rows.offsets, 0
    if judged_only:
        if tie_ids is not None:
            tie_ids = tie_ids[grades >= 0]
        grades, offsets, dropped = _drop_unjudged(grades, rows.sorted_codes, len(index.query_ids))
    coverage = rows.coverage(run, index, missing, truncated=truncated, dropped=dropped, ties=ties_broken)
    if coverage.missing and missing == "error":
        # none answered is the more telling error
        require_evaluated(coverage, run.source, run_examples=rows.run_names.slice(0, 4).to_pylist())
        raise missing_queries_error(run.source, run.name, coverage.missing)
    rankings = _evaluated_queries(index, offsets, grades, coverage, rows, tie_ids)
    return rankings if policy == "trec_eval" else replace(rankings, ties=policy)


def _policy_depth_grades(index: QrelsIndex, run: Run, rows: _RankedRows, scores: NDArray[np.float64],
                         policy: TiePolicy, depth: int | None
                         ) -> tuple[NDArray[np.int64], int, NDArray[np.integer] | None]:
    """The tie policy, the depth cut and the join to the grades, in the order each policy
    needs: the grades in rank order, the rows cut, and the tie-group ids (``expected``)."""
    if policy == "rank":  # the file's rank column orders each query; scores play no part
        ranks = _run_ranks(run, rows)
        perm = break_ties(policy, rows.sorted_codes, ranks)
        rows.reorder(run, perm, None)
        _check_unique_ranks(run, rows, ranks[perm])
    elif policy in ("optimistic", "pessimistic"):  # the order within ties needs the grades first
        grades = _grades_in_rank_order(index, run, rows)  # relevance; duplicates (before the cut)
        perm = break_ties(policy, tie_groups(rows.sorted_codes, _ranked_scores(rows, scores)), grades)
        grades = rows.reorder(run, perm, grades)
        truncated = rows.cut_at_depth(depth, scores)
        return (grades if rows.kept is None else grades[rows.kept]), truncated, None
    if policy == "rank":
        truncated = rows.cut_at_depth(depth)
        return _grades_in_rank_order(index, run, rows), truncated, None
    if policy == "expected" and depth is not None:
        _check_no_straddle(rows, scores, depth, index)
    truncated = rows.cut_at_depth(depth, scores)  # depth, after sorting
    grades = _grades_in_rank_order(index, run, rows)  # relevance; duplicates (after the cut)
    tie_ids = tie_groups(rows.sorted_codes, _ranked_scores(rows, scores)) if policy == "expected" else None
    return grades, truncated, tie_ids


def _ranked_scores(rows: _RankedRows, scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """The scores of the ranked rows in rank order (the file's own array when nothing moved)."""
    if rows.in_file_order and len(rows.order) == len(scores):
        return scores
    return scores[rows.order]


def tie_groups(sorted_codes: NDArray[np.integer], ranked_scores: NDArray[np.float64]) -> NDArray[np.integer]:
    """A tie-group id for every ranked row: consecutive rows of one query with equal scores
    (``-0.0`` and ``0.0`` equal) share one; ids start at 0 and increase down the ranking, so
    a group is a run of equal ids. ``sorted_codes`` and ``ranked_scores`` are in rank order."""
    new = np.ones(len(ranked_scores), dtype=bool)
    if len(ranked_scores) > 1:
        np.not_equal(sorted_codes[1:], sorted_codes[:-1], out=new[1:])
        new[1:] |= ranked_scores[1:] != ranked_scores[:-1]
    ids: NDArray[np.integer] = np.cumsum(new, dtype=np.int32 if len(new) < 2**31 else np.int64)  # half the memory
    np.subtract(ids, 1, out=ids)
    return ids


def break_ties(policy: TiePolicy, tie_ids: NDArray[np.integer], grades: NDArray[Any]) -> NDArray[np.int64] | None:
    """THE tie policy: the permutation of a ranking (in trec_eval's order: score descending,
    doc id descending, :func:`sort_order`) that ``policy`` makes within its tie groups, or
    None when it keeps that order (``trec_eval``, and ``expected``, whose measures read the
    groups instead of one order).

    ``optimistic`` sorts each group by grade descending, ``pessimistic`` ascending; grades
    below 0 (not in the qrels, or pooled but unjudged) count as 0 - not relevant - so an
    unjudged doc and a judged non-relevant one keep the doc id order between them. The
    sort is stable: equal keys keep the doc id order. Only rows in groups of two or more
    are sorted.

    ``rank`` makes every query one group (``tie_ids`` are then the query codes) and sorts
    it by ``grades`` read as the rows' rank column, ascending; equal ranks keep file order.
    """
    if policy == "rank":
        return np.lexsort((np.arange(len(tie_ids)), grades, tie_ids))
    if policy not in ("optimistic", "pessimistic"):
        return None
    n = len(tie_ids)
    tied = np.zeros(n, dtype=bool)
    if n > 1:
        same = tie_ids[1:] == tie_ids[:-1]
        tied[1:] |= same
        tied[:-1] |= same
    rows = np.flatnonzero(tied)
    perm = np.arange(n, dtype=np.int64)
    if rows.size == 0:
        return perm
    key = np.maximum(grades[rows], 0)
    if policy == "optimistic":
        key = -key
    perm[rows] = rows[np.lexsort((key, tie_ids[rows]))]
    return perm


def _run_ranks(run: Run, rows: _RankedRows) -> NDArray[np.int64]:
    """The rank column of the ranked rows (in the order of ``rows.order``), read again from
    the run's TREC file; refused when the run has none or a line's rank is not an integer."""

    from serpeval.io.trec import read_trec_ranks

    if run.source_kind != "trec" or not Path(run.source).is_file():
        raise InvalidParameterError(
            f"{run.source}: ties='rank' reads the rank column of a TREC run file (qid Q0 docid rank score tag), "
            f"and this run was not read from one ({run.source_kind}); write it as a TREC run, or use another "
            "tie policy."
        )
    ranks, bad = read_trec_ranks(run.source)
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise InvalidParameterError(
            f"{run.source}: ties='rank' needs an integer rank in column 4 of every line; "
            f"line{'s' if len(bad) > 1 else ''} {shown} {'have' if len(bad) > 1 else 'has'} none: the field is "
            "missing, is not a whole number in digits (3, not 3.0), or is beyond ±2^62. "
            "Fix the rank column, or use another tie policy."
        )
    if len(ranks) != len(run):  # pragma: no cover - the file changed since it was read
        raise InvalidParameterError(f"{run.source}: the file changed since it was read; read it again.")
    return ranks[rows.order]


def _check_unique_ranks(run: Run, rows: _RankedRows, ranks: NDArray[np.int64]) -> None:
    """Under ``rank``: refuse a rank repeated within a query (naming both lines); ``ranks``
    are the ranked rows' ranks."""
    same = (rows.sorted_codes[1:] == rows.sorted_codes[:-1]) & (ranks[1:] == ranks[:-1])
    if same.any():
        i = int(np.argmax(same))
        a, b = sorted((int(rows.order[i]), int(rows.order[i + 1])))
        raise InvalidParameterError(
            f"{_where(run, b)}: ties='rank' needs distinct ranks within a query, and query "
            f"{run.query_ids[b].as_py()!r} has rank {int(ranks[i])} twice (also at {_where(run, a, short=True)}). "
            "Fix the rank column, or use another tie policy."
        )


def _check_no_straddle(rows: _RankedRows, scores: NDArray[np.float64], depth: int, index: QrelsIndex) -> None:
    """``expected`` with ``depth``: refuse when the cut at ``depth`` splits a tie group (which
    docs are kept would then depend on the order within the group)."""
    cut_at = rows.offsets[:-1] + depth  # the first cut row of each query, where it has one
    has = np.flatnonzero(rows.counts > depth)
    if has.size == 0:
        return
    ranked = rows.order
    split = scores[ranked[cut_at[has]]] == scores[ranked[cut_at[has] - 1]]
    if split.any():
        q = int(has[np.argmax(split)])
        raise InvalidParameterError(
            f"ties='expected' with depth {depth}: the depth cut splits a tie group of query "
            f"{index.query_ids[q].as_py()!r} ({int(split.sum())} quer{'y' if split.sum() == 1 else 'ies'} like this), "
            "so which docs are kept would depend on the order within the tie; use a larger depth, no depth, "
            "or another tie policy."
        )


def _check_options(missing: str, depth: int | None) -> None:
    if missing not in MISSING_POLICIES:
        raise InvalidParameterError(
            f"missing must be one of {', '.join(MISSING_POLICIES)}; got {missing!r}."
        )
    # An integer, not a bool or a float: depth=2.5 crashed in the cut, and depth=nan kept no
    # doc while counting a negative number of docs retrieved.
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth <= 0):
        raise InvalidParameterError(f"depth must be a positive number of docs (an integer >= 1); got {depth!r}.")


@dataclass(eq=False)
class _RankedRows:
    """A run's rows of judged queries in ranking order, as :func:`rank` builds them step by
    step (each step replaces the arrays it changes).

    ``order`` lists the rows, ``sorted_codes`` their judged-query codes; query ``q``'s rows
    are ``order[offsets[q]:offsets[q + 1]]``. ``file_codes`` (every row's code in file
    order, -1 for an unjudged query) is held only until the join takes it, so that it is
    freed before the join's own arrays are allocated.
    """

    run_names: pa.Array
    unjudged_rows: int
    run_order: RunOrder
    order: NDArray[np.int64]
    sorted_codes: NDArray[Any]
    counts: NDArray[np.int64]
    offsets: NDArray[np.int64]
    present: NDArray[np.bool_]
    in_file_order: bool
    file_codes: NDArray[np.int32] | None
    kept: NDArray[np.bool_] | None = None
    split_ties: int = 0
    """Tie groups the depth cut split leaving one row above it (:meth:`cut_at_depth`): the
    tie rule chose that row, but the kept ranking shows no tie to count."""

    def reorder(self, run: Run, perm: NDArray[np.int64] | None, grades: Any) -> Any:
        """Apply a tie policy's permutation (within queries, :func:`break_ties`) to the rows
        and to ``grades`` (in rank order, or None); returns the grades in the new order."""
        if perm is None:
            return grades
        self.order = self.order[perm]
        self.in_file_order = self.in_file_order and bool(np.all(perm[1:] > perm[:-1]))
        self.run_order = RunOrder(run, self.run_order.query_ids, self.run_order.float32_scores, self.order,
                                  self.sorted_codes)
        return None if grades is None else grades[perm]

    def cut_at_depth(self, depth: int | None, scores: NDArray[np.float64] | None = None) -> int:
        """Keep the top ``depth`` rows of each query; return how many were cut (the mask of
        the rows kept is left in ``kept``). With ``scores``, count in ``split_ties`` the tie
        groups the cut splits with a single row above it (a group with two or more rows kept
        is counted on the kept ranking)."""
        if depth is None or self.counts.max(initial=0) <= depth:
            return 0
        if scores is not None:
            has = np.flatnonzero(self.counts > depth)
            last = self.order[self.offsets[has] + depth - 1]  # the last row kept
            split = scores[self.order[self.offsets[has] + depth]] == scores[last]
            if depth > 1:
                split &= scores[self.order[self.offsets[has] + depth - 2]] != scores[last]
            self.split_ties = int(np.count_nonzero(split))
        position = np.arange(len(self.order)) - self.offsets[:-1][self.sorted_codes]
        kept = position < depth
        self.kept = kept
        self.order, self.sorted_codes = self.order[kept], self.sorted_codes[kept]
        self.counts = np.minimum(self.counts, depth)
        np.cumsum(self.counts, out=self.offsets[1:])
        return int(len(kept) - np.count_nonzero(kept))

    def take_file_codes(self) -> NDArray[np.int32]:
        """``file_codes``, no longer held here (the caller's reference is the last one)."""
        codes, self.file_codes = self.file_codes, None
        if codes is None:  # pragma: no cover - rank() takes them once
            raise RuntimeError("the file-order query codes were already taken")
        return codes

    def coverage(self, run: Run, index: QrelsIndex, missing: Missing, *, truncated: int, dropped: int,
                 ties: int) -> Coverage:
        """Which queries: the judged ones the run answers (all of them under ``missing="zero"``);
        and the rows cut by depth, dropped by judged-only, the ties broken."""
        n_judged = len(index.query_ids)
        absent = np.flatnonzero(~self.present)
        return Coverage(
            run=run.name,
            judged_queries=n_judged,
            run_queries=len(self.run_names),
            evaluated=n_judged if missing == "zero" else int(np.count_nonzero(self.present)),
            missing=tuple(index.query_ids.take(pa.array(absent, pa.int64())).to_pylist()),
            missing_policy=missing,
            unjudged_queries=len(self.run_names) - int(np.count_nonzero(self.present)),
            unjudged_rows=self.unjudged_rows,
            truncated_rows=truncated,
            dropped_unjudged=dropped,
            ties=ties,
        )


def _sort_judged_rows(index: QrelsIndex, run: Run, scores: NDArray[np.float64], float32_scores: bool
                      ) -> _RankedRows:
    """The run's rows of judged queries (rows of other queries counted, left out), sorted by
    :func:`serpeval.core.order.sort_order`. Most files list queries in byte order with scores
    descending: then nothing moves and the codes are not copied."""
    n_judged = len(index.query_ids)
    codes, run_names = codes_in(run.query_id_blocks(), index.query_table)
    unjudged_rows = int(len(codes) - np.count_nonzero(codes >= 0))
    if unjudged_rows:
        keep = np.flatnonzero(codes >= 0)
        order = keep[sort_order(codes[keep], scores[keep], take(run.doc_ids, keep))]
    else:
        order = sort_order(codes, scores, run.doc_ids)
    in_file_order = len(order) == len(codes) and bool(np.all(order[1:] > order[:-1]))
    sorted_codes = codes if in_file_order else codes[order]
    counts = np.bincount(sorted_codes, minlength=n_judged)
    offsets = np.zeros(n_judged + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return _RankedRows(run_names, unjudged_rows, RunOrder(run, index.query_ids, float32_scores, order, sorted_codes),
                       order, sorted_codes, counts, offsets, counts > 0, in_file_order, codes)


def _grades_in_rank_order(index: QrelsIndex, run: Run, rows: _RankedRows) -> NDArray[np.int64]:
    """The grade of every ranked row, in rank order (``NONPOOL``, ``UNJUDGED`` where the
    qrels give none); :class:`DuplicateError` if a doc is ranked twice for one query."""
    if index.groups is not None:
        rows.take_file_codes()  # not needed by the compiled join: freed before its fingerprints
        return _grades_compiled(index, run, rows)
    return _grades_numpy(index, run, rows)


def _grades_compiled(index: QrelsIndex, run: Run, rows: _RankedRows) -> NDArray[np.int64]:
    """Compiled kernels: the ranked rows' doc fingerprints, in rank order (the doc ids are
    read through ``order``, not gathered); a repeat within a query's ranking is looked for
    with a small hash set per query (only a repeat goes on to the sort-based check, which
    confirms on the strings and reports); then every ranked doc is matched within its
    query's judgments, its grade written over its fingerprint: one array of 8 bytes per
    ranked row serves both, already in rank order."""
    order, sorted_codes = rows.order, rows.sorted_codes
    ranked = None if rows.in_file_order and len(order) == len(run) else order
    prints = fingerprint(run.doc_ids, ranked)
    if len(order) == len(run):  # every row ranked: the run's signature from these fingerprints
        keep_run_signature(run, index.query_ids, sorted_codes, prints, ranked)
    if native.first_repeat(prints, rows.offsets) >= 0:
        _check_duplicates(run, order, sorted_codes, pair_key(sorted_codes, prints))
    return _match_grades(index, run.doc_ids, sorted_codes, prints, ranked)


def _grades_numpy(index: QrelsIndex, run: Run, rows: _RankedRows) -> NDArray[np.int64]:
    """NumPy path: (query, doc fingerprint) keys looked up in the qrels' hash table. When
    every row is ranked they are looked up in file order (no permuted copies of the
    fingerprints), and the grades put in rank order last, once the keys and codes are freed."""
    order, sorted_codes, codes = rows.order, rows.sorted_codes, rows.take_file_codes()
    if len(order) == len(run):
        keys = pair_key(codes, fingerprint(run.doc_ids), inplace=True)
        grades = _lookup_grades(index, run.doc_ids, keys, None, codes)
    else:
        keys = pair_key(sorted_codes, _ranked_fingerprints(run, order), inplace=True)
        grades = _lookup_grades(index, run.doc_ids, keys, order, sorted_codes)
    _check_duplicates(run, order, sorted_codes, keys)  # sorts keys in place: last use
    del keys, codes
    if len(grades) == len(run) and not rows.in_file_order:
        grades = grades[order]
    return grades


def _evaluated_queries(index: QrelsIndex, offsets: NDArray[np.int64], grades: NDArray[np.int64],
                       coverage: Coverage, rows: _RankedRows, tie_ids: NDArray[np.integer] | None = None
                       ) -> Rankings:
    """The :class:`Rankings` of the queries ``coverage`` evaluates: the judged ones the run
    answers, or every judged one (``missing="zero"``: an absent query is an empty ranking)."""
    n_judged = len(index.query_ids)
    if coverage.evaluated == n_judged:
        return Rankings(index.query_names, offsets, grades, index.ideal_offsets, index.ideal_grades, coverage,
                        rows.run_order, tie_ids=tie_ids)
    evaluate_these = np.flatnonzero(rows.present)
    q_offsets, picked = take_segments(offsets, evaluate_these)
    i_offsets, ideal_picked = take_segments(index.ideal_offsets, evaluate_these)
    query_ids = index.query_ids.take(pa.array(evaluate_these, pa.int64())).to_numpy(zero_copy_only=False)
    return Rankings(query_ids, q_offsets, grades[picked], i_offsets, index.ideal_grades[ideal_picked], coverage,
                    rows.run_order, tie_ids=None if tie_ids is None else tie_ids[picked])




def _drop_unjudged(grades: NDArray[np.int64], segment: NDArray[Any], n: int
                   ) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """The judged-only rule (trec_eval ``-J``), in one place: drop the ranked docs whose grade
    is negative (not in the qrels, or pooled but unjudged) and close the gaps in the ranks.
    Returns the kept grades, their offsets over ``n`` queries and the number dropped."""
    judged = grades >= 0
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(segment[judged], minlength=n), out=offsets[1:])
    return grades[judged], offsets, int(len(grades) - np.count_nonzero(judged))


def _lookup_grades(
    index: QrelsIndex,
    doc_ids: pa.ChunkedArray,
    keys: NDArray[np.uint64],
    order: NDArray[np.int64] | None,
    sorted_codes: NDArray[np.int32],
) -> NDArray[np.int64]:
    """Grade of every row ``order`` lists (all rows in file order when None): its
    judgment, NONPOOL or UNJUDGED. ``keys`` and ``sorted_codes`` follow the same rows.

    Rows are matched to judgments through the (query, doc fingerprint) hash table, then
    every match is confirmed by comparing the doc id strings, so a fingerprint collision
    can never give a doc another doc's grade.
    """
    if index.table is None:  # pragma: no cover - rank() takes the groups
        raise RuntimeError("this QrelsIndex was built for the compiled kernels")
    rows = index.table.find(keys, doc_ids, index.doc_store, codes=sorted_codes, stored_codes=index.row_query,
                            value_rows=order)
    return _grades_of(index, rows)


def _match_grades(index: QrelsIndex, doc_ids: pa.ChunkedArray, codes: NDArray[np.int32],
                  prints: NDArray[np.uint64], order: NDArray[np.int64] | None) -> NDArray[np.int64]:
    """:func:`_lookup_grades` with the compiled kernels, for the rows ``order`` in that order
    (every row in file order where None): each doc is searched among its query's judgments
    by fingerprint, and confirmed on the bytes. The grades are written over ``prints`` (each
    row's fingerprint is read before its grade is written), which is returned as ``int64``."""
    if index.groups is None:  # pragma: no cover - rank() checks
        raise RuntimeError("this QrelsIndex was built without the compiled kernels")
    return grades_in_groups(index.groups, codes, prints, doc_ids, index.grades, NONPOOL, UNJUDGED,
                            out=prints.view(np.int64), order=order)


def _grades_of(index: QrelsIndex, rows: NDArray[np.int32]) -> NDArray[np.int64]:
    """The grade of every matched judgment row (``rows < 0``: not in the qrels)."""
    hit = np.flatnonzero(rows >= 0)
    grades = np.full(len(rows), NONPOOL, dtype=index.grades.dtype)  # int64, float64 for fractional grades
    if hit.size == 0:
        return grades
    found = index.grades[rows[hit]]
    grades[hit] = np.where(found < 0, UNJUDGED, found)
    return grades


def _ranked_fingerprints(run: Run, order: NDArray[np.int64]) -> NDArray[np.uint64]:
    """Fingerprints of the doc ids of the ranked rows (hashed in file order, then permuted)."""
    if len(order) == len(run):
        prints = fingerprint(run.doc_ids)
        if len(order) < 2 or bool(np.all(order[1:] > order[:-1])):
            return prints  # ranked order is file order
        return prints[order]
    return fingerprint(take(run.doc_ids, order))


def _count_ties(sorted_codes: NDArray[np.integer], scores: NDArray[np.float64],
                order: NDArray[np.int64], block: int = 1 << 20) -> int:
    """Number of groups of equal scores within a query (broken by doc id).

    Computed block by block so that the ranked scores are never copied whole.
    """
    ties = 0
    previous_same = False
    for start in range(0, max(len(order) - 1, 0), block):
        stop = min(start + block, len(order) - 1)
        ranked = scores[order[start: stop + 1]]
        same = (sorted_codes[start + 1: stop + 1] == sorted_codes[start: stop]) & (ranked[1:] == ranked[:-1])
        starts = same & ~np.concatenate([[previous_same], same[:-1]])
        ties += int(np.count_nonzero(starts))
        previous_same = bool(same[-1]) if same.size else previous_same
    return ties


def _check_duplicates(run: Run, order: NDArray[np.int64], sorted_codes: NDArray[np.integer],
                      keys: NDArray[np.uint64]) -> None:
    """Raise DuplicateError if a doc appears twice for one query among the ranked rows.

    Equal (query, doc fingerprint) keys are the candidates; they are confirmed on the
    strings before anything is reported. ``keys`` is sorted in place.
    """
    if len(order) < 2:
        return
    keys.sort()
    repeated = keys[1:][keys[1:] == keys[:-1]]
    if repeated.size == 0:
        return
    # Rebuild the keys in rank order; compare with the lowest bit set on both sides (the
    # hash table lookup sets it in place).
    repeated |= np.uint64(1)
    original = pair_key(sorted_codes, _ranked_fingerprints(run, order), inplace=True) | np.uint64(1)
    candidates = order[np.isin(original, repeated)]

    first, second = find_duplicate(take(run.query_ids, candidates), take(run.doc_ids, candidates))
    if first < 0:
        return  # fingerprint collision between different docs
    a, b = sorted((int(candidates[first]), int(candidates[second])))
    query, doc = run.query_ids[b].as_py(), run.doc_ids[b].as_py()
    raise DuplicateError(
        f"{_where(run, b)}: document {doc!r} is retrieved twice for query {query!r} "
        f"(first at {_where(run, a, short=True)}). "
        "trec_eval refuses such runs; keep one line per (query, document).",
        query=query, doc=doc,
    )


def _where(run: Run, row: int, short: bool = False) -> str:
    """``path:line`` of a run row (re-reading the file only now, on the error path)."""

    from serpeval.io.trec import physical_line

    source = run.source
    if run.source_kind == "trec" and Path(source).is_file():
        from serpeval.io.trec import read_source

        data, _ = read_source(source)
        line = physical_line(data, row)
        return f"line {line}" if short else f"{source}:{line}"
    return f"row {row + 1}" if short else f"{source}: row {row + 1}"
