"""``tie_summary(run, qrels)``: how many score ties a run has, and how far they move each measure.

Without qrels: per run, how many queries have a tie group (docs of one query with equal
scores) reaching into the top ``k``, how many groups there are and how large. With qrels:
every measure under the ``pessimistic``, ``expected`` and ``optimistic`` tie policies (and
``trec_eval``, today's number), the mean of each, the mean per-query range
(optimistic - pessimistic) and the query with the largest range. For a measure where moving
a more relevant doc up never lowers the value (the ``swap_improves`` property of the
registry: P, R, AP, RR, nDCG...), pessimistic and optimistic bound the value of every order
of the ties; for the others the two are only two orders among many, and the summary says so.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from serpeval.core.errors import MissingQueriesWarning
from serpeval.core.id_codes import factorize_sorted
from serpeval.core.order import sort_order
from serpeval.core.tabular import Tabular
from serpeval.core.ties import TiePolicy
from serpeval.evaluation.evaluate import DEFAULT_MEASURES, evaluate
from serpeval.io import as_qrels, as_run
from serpeval.measures import Measure, parse_measures
from serpeval.measures.gains import parse_gain_table
from serpeval.ranking import Coverage, tie_groups

__all__ = ["MeasureRange", "TieSummary", "tie_summary"]

POLICIES: tuple[TiePolicy, ...] = ("pessimistic", "expected", "optimistic")


@dataclass(frozen=True)
class MeasureRange:
    """How far the ties move one measure.

    Attributes:
        measure: canonical name.
        trec_eval, pessimistic, expected, optimistic: the aggregate under each tie policy.
        mean_range: mean over queries of optimistic - pessimistic.
        max_range: the largest per-query optimistic - pessimistic.
        max_range_query: the query with that range ("" when no query moves).
        bounds: whether pessimistic and optimistic bound every order (``swap_improves``).
    """

    measure: str
    trec_eval: float
    pessimistic: float
    expected: float
    optimistic: float
    mean_range: float
    max_range: float
    max_range_query: str
    bounds: bool

    def to_dict(self) -> dict[str, Any]:
        """A row: the measure, the four aggregates, the ranges."""
        return {
            "measure": self.measure, "trec_eval": self.trec_eval, "pessimistic": self.pessimistic,
            "expected": self.expected, "optimistic": self.optimistic, "mean_range": self.mean_range,
            "max_range": self.max_range, "max_range_query": self.max_range_query, "bounds": self.bounds,
        }


@dataclass(frozen=True, eq=False)
class TieSummary(Tabular):
    """What :func:`tie_summary` returns.

    Attributes:
        run: the run's name.
        k: the depth the tie counts look at.
        queries: queries in the run (all of them, judged or not).
        rows: ranked rows of the run.
        tie_groups: groups of two or more equal scores within a query (anywhere in the ranking).
        tied_rows: rows inside those groups.
        tied_queries: queries with at least one such group.
        tied_queries_top_k: queries with a group that starts above rank ``k`` (reaches the top k).
        sizes: ``((size, groups), ...)``: how many groups of each size, ascending.
        largest: the largest group's size and query (0 and "" without ties).
        largest_query: the query of the largest group.
        ranges: one :class:`MeasureRange` per measure (empty without qrels).
        evaluated_queries: queries evaluated for the ranges (judged queries the run answers).
        coverage: the evaluation's :class:`~serpeval.ranking.Coverage` (with qrels; None
            without): among others the judged queries the run has no results for
            (``missing``), skipped or counted as 0 by ``missing_policy``.
    """

    run: str
    k: int
    queries: int
    rows: int
    tie_groups: int
    tied_rows: int
    tied_queries: int
    tied_queries_top_k: int
    sizes: tuple[tuple[int, int], ...]
    largest: int
    largest_query: str
    ranges: tuple[MeasureRange, ...] = ()
    evaluated_queries: int = 0
    coverage: Coverage | None = None

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per measure (the ranges); without qrels, one row of tie counts."""
        if self.ranges:
            return [r.to_dict() for r in self.ranges]
        return [self.counts()]

    def counts(self) -> dict[str, Any]:
        """The tie counts as one row."""
        return {
            "run": self.run, "queries": self.queries, "rows": self.rows, "tie_groups": self.tie_groups,
            "tied_rows": self.tied_rows, "tied_queries": self.tied_queries,
            f"tied_queries_top_{self.k}": self.tied_queries_top_k, "largest": self.largest,
            "largest_query": self.largest_query,
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready."""
        return {
            "run": self.run, "k": self.k, "counts": self.counts(),
            "sizes": [{"size": s, "groups": n} for s, n in self.sizes],
            "evaluated_queries": self.evaluated_queries,
            "ranges": [r.to_dict() for r in self.ranges],
        }

    def _html_caption(self) -> str:
        return f"ties of run {self.run!r}"


def tie_summary(run: Any, qrels: Any = None, measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
                *, k: int = 10, missing: Any = "skip") -> TieSummary:
    """Count a run's score ties and, with ``qrels``, how far they move each measure.

    Args:
        run: a run (anything :func:`serpeval.evaluate` accepts as one run).
        qrels: judgments, or None for the counts only.
        measures: the measures whose range is reported (with ``qrels``).
        k: a query counts in ``tied_queries_top_k`` when one of its tie groups starts at a
            rank <= ``k`` (so the order within it changes the top k).
        missing: judged queries absent from the run (see :func:`serpeval.evaluate`).

    Returns:
        :class:`TieSummary`.

    Examples:
        >>> s = tie_summary({"q1": {"a": 1.0, "b": 1.0, "c": 0.5}}, {"q1": {"b": 1}}, ["RR"], k=1)
        >>> s.tied_queries_top_k, s.sizes, [(r.pessimistic, r.expected, r.optimistic) for r in s.ranges]
        (1, ((2, 1),), [(0.5, 0.75, 1.0)])
    """
    from serpeval.core.checks import check_count

    k = check_count(k, "k")
    the_run = as_run(run)
    codes, query_ids = factorize_sorted(the_run.query_ids)
    order = sort_order(codes, the_run.scores, the_run.doc_ids)
    sorted_codes = codes[order]
    ids = tie_groups(sorted_codes, the_run.scores[order])
    n = len(ids)
    first = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]])) if n else np.zeros(0, dtype=np.int64)
    size = np.diff(np.append(first, n))
    query_start = np.searchsorted(sorted_codes, sorted_codes[first]) if n else first
    start = first - query_start  # 0-based rank of each group's first doc
    tied = size > 1
    group_query = sorted_codes[first]
    sizes, counts = np.unique(size[tied], return_counts=True)
    largest = int(size.max(initial=0)) if tied.any() else 0
    largest_query = query_ids[int(group_query[np.argmax(np.where(tied, size, 0))])].as_py() if largest else ""
    ranges: tuple[MeasureRange, ...] = ()
    evaluated = 0
    coverage = None
    if qrels is not None:
        ranges, evaluated, coverage = _ranges(the_run, as_qrels(qrels), parse_measures(measures), missing)
    return TieSummary(
        run=the_run.name, k=k, queries=len(query_ids), rows=n, tie_groups=int(tied.sum()),
        tied_rows=int(size[tied].sum()), tied_queries=len(np.unique(group_query[tied])),
        tied_queries_top_k=len(np.unique(group_query[tied & (start < k)])),
        sizes=tuple(zip(sizes.tolist(), counts.tolist(), strict=True)), largest=largest,
        largest_query=largest_query, ranges=ranges, evaluated_queries=evaluated, coverage=coverage,
    )


def _ranges(run: Any, qrels: Any, measures: tuple[Measure, ...], missing: Any
            ) -> tuple[tuple[MeasureRange, ...], int, Coverage]:
    """Each measure under trec_eval, pessimistic, expected and optimistic; the per-query ranges;
    the queries evaluated and the coverage (the same under every policy)."""
    results = {"trec_eval": evaluate(qrels, run, measures, missing=missing, ties="trec_eval")}
    with warnings.catch_warnings():
        # The same run on the same queries: the first evaluation has reported those it lacks.
        warnings.simplefilter("ignore", MissingQueriesWarning)
        results.update({policy: evaluate(qrels, run, measures, missing=missing, ties=policy) for policy in POLICIES})
    name = results["trec_eval"].run_names[0]
    out = []
    for i, m in enumerate(measures):
        low = results["pessimistic"][name].column(i)
        high = results["optimistic"][name].column(i)
        spread = high - low
        top = int(np.argmax(spread)) if spread.size else 0
        out.append(MeasureRange(
            measure=str(m),
            trec_eval=results["trec_eval"].aggregate(name, m),
            pessimistic=results["pessimistic"].aggregate(name, m),
            expected=results["expected"].aggregate(name, m),
            optimistic=results["optimistic"].aggregate(name, m),
            mean_range=float(spread.mean()) if spread.size else 0.0,
            max_range=float(spread[top]) if spread.size else 0.0,
            max_range_query=str(results["trec_eval"][name].query_ids[top]) if spread.size and spread[top] else "",
            bounds="swap_improves" in m.spec.properties and _gains_follow_grades(m),
        ))
    return tuple(out), len(results["trec_eval"][name].query_ids), results["trec_eval"].runs[0].coverage


def _gains_follow_grades(measure: Measure) -> bool:
    """Whether a ``gains=`` table of ``measure`` (nDCG, DCG, RBP...) keeps its gains in the
    order of the grades, as ``optimistic`` and ``pessimistic`` order a tie group: positive
    grades only, gains >= 0, non-decreasing with the grade (the grades around each listed one
    keep their base gain, g or 2^g - 1). A table such as ``1:5;2:1`` ranks grade 1 above
    grade 2, and then the two policies are two orders among many, not bounds."""
    params = dict(measure.params)
    text = params.get("gains", "")
    if not text:
        return True
    table = parse_gain_table(str(text))
    exp = params.get("gain") == "exp"
    points = sorted({0, *(g + d for g in table for d in (-1, 0, 1) if g + d >= 0)})
    gains = [table.get(g, float(2 ** min(g, 1023) - 1) if exp else float(g)) for g in points]
    return (min(table) > 0 and min(table.values()) >= 0
            and all(a <= b for a, b in itertools.pairwise(gains)))
