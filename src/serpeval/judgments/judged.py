"""How much of each run is judged: Graded@k and Unjudged@k per run and query, and the warning
when the runs compared are judged unequally.

The ``judged`` workflow reports two measures of the top k (:mod:`serpeval.measures.judged`),
each under its own name:

* ``Graded@k`` = (documents in the top k with a grade >= 0) / k: the share of the k ranks a
  judgment backs. A negative grade (trec_eval's "pooled but unjudged": what ``pool`` writes
  for a row still to judge) is not a grade, and the empty ranks of a ranking shorter than k
  hold nothing graded;
* ``Unjudged@k`` = (documents in the top k not in the qrels or with a negative grade) / k,
  trec_eval 10.0's ``unj``: what judging could still add.

``Graded@k + Unjudged@k = min(k, retrieved) / k``; the rest are empty ranks. (``Judged@k``,
ir_measures' measure, is a third meaning: over ``min(k, retrieved)``, and any qrels entry,
a negative grade too, counts as judged; this workflow does not report it.)

Unjudged documents count as non-relevant in every measure, so a run that retrieves
documents the judges never saw (a new system, not in the pool) looks worse than it is;
when the runs compared differ in judged rate at a measure's depth by more than a
threshold, :func:`judged_gaps` says so and suggests condensed lists (``judged_only``:
unjudged documents removed before measuring; Sakai 2007) or judging the missing documents
(:func:`serpeval.judgments.pool.pool`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import check_count, check_probability
from serpeval.core.errors import MissingQueriesWarning
from serpeval.core.tabular import Tabular

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from serpeval.evaluation.results import Results
    from serpeval.ranking import Coverage

__all__ = ["JudgedGap", "JudgedRates", "judged", "judged_gaps"]


@dataclass(frozen=True, eq=False)
class JudgedRates(Tabular):
    """Graded@k (and Unjudged@k) of every run, per query and on average.

    Attributes:
        cutoffs: the depths k.
        run_names: the runs, in the order given.
        query_ids: per run, the evaluated queries (byte order).
        rates: per run, ``float64[n_queries, n_cutoffs]`` Graded@k (documents with a grade >= 0
            in the top k, over k).
        pool_needed: per cutoff, distinct (query, document) pairs in some run's top k that
            the qrels do not judge: what a depth-k pool of these runs would ask for.
        qrels: the qrels' source.
        retrieved: per run, ``int64[n_queries, n_cutoffs]`` documents the run retrieved in the
            top k (``min(k, ranking length)``; 0 for an evaluated query it has no results for).
        coverage: per run, the evaluation's :class:`~serpeval.ranking.Coverage`: among others
            the judged queries it has no results for (``missing``), skipped or counted as 0
            by ``missing_policy``.
    """

    cutoffs: tuple[int, ...]
    run_names: tuple[str, ...]
    query_ids: tuple[NDArray[Any], ...]
    rates: tuple[NDArray[np.float64], ...]
    pool_needed: tuple[int, ...]
    qrels: str = ""
    retrieved: tuple[NDArray[np.int64], ...] = ()
    coverage: tuple[Coverage, ...] = ()

    def mean(self, run: str, k: int) -> float:
        """Mean Graded@k of ``run`` over its evaluated queries."""
        i = self.run_names.index(run)
        values = self.rates[i][:, self.cutoffs.index(k)]
        return float(values.mean()) if len(values) else float("nan")

    def mean_of_retrieved(self, run: str, k: int) -> float:
        """Mean share of the documents ``run`` retrieved in the top k that are judged:
        ``Graded@k * k / min(k, length)`` over the queries it retrieved something for
        (ir_measures' denominator, but a negative grade is not judged). Unlike Graded@k, a
        ranking shorter than k is not penalised:
        its missing ranks are not unjudged documents, and judging cannot fill them."""
        i, j = self.run_names.index(run), self.cutoffs.index(k)
        n = self.retrieved[i][:, j]
        values = self.rates[i][n > 0, j] * k / n[n > 0]
        return float(values.mean()) if len(values) else float("nan")

    def unjudged(self, i: int) -> NDArray[np.float64]:
        """Unjudged@k of run ``i`` per query and cutoff (trec_eval's ``unj``): the retrieved
        documents of the top k without a grade >= 0, over k (``min(k, n) / k - Graded@k``)."""
        k = np.array(self.cutoffs, dtype=np.float64)[None, :]
        return (self.retrieved[i] - np.rint(self.rates[i] * k)) / k

    def to_dicts(self, per_query: bool = False) -> list[dict[str, Any]]:
        """One row per run (``run, queries, Graded@k, Unjudged@k...``), or per run and query."""
        rows: list[dict[str, Any]] = []
        for i, (name, qids, rates) in enumerate(zip(self.run_names, self.query_ids, self.rates, strict=True)):
            unjudged = self.unjudged(i)
            if per_query:
                for q, graded, unj in zip(qids.tolist(), rates.tolist(), unjudged.tolist(), strict=True):
                    row: dict[str, Any] = {"run": name, "query_id": q}
                    for k, g, u in zip(self.cutoffs, graded, unj, strict=True):
                        row[f"Graded@{k}"] = g
                        row[f"Unjudged@{k}"] = u
                    rows.append(row)
                continue
            row = {"run": name, "queries": len(qids)}
            for j, k in enumerate(self.cutoffs):
                row[f"Graded@{k}"] = float(rates[:, j].mean()) if len(qids) else float("nan")
                row[f"Unjudged@{k}"] = float(unjudged[:, j].mean()) if len(qids) else float("nan")
            rows.append(row)
        return rows

    def to_json_dict(self, per_query: bool = False) -> dict[str, Any]:
        """The rows, the cutoffs and the pool each cutoff would need."""
        return {"qrels": self.qrels, "cutoffs": list(self.cutoffs),
                "pool_needed": dict(zip(map(str, self.cutoffs), self.pool_needed, strict=True)),
                "runs": self.to_dicts(), **({"per_query": self.to_dicts(True)} if per_query else {})}

    def _html_caption(self) -> str:
        return "Graded@k and Unjudged@k"


def judged(qrels: Any, runs: Sequence[Any], cutoffs: int | Sequence[int] = (10,), *,
           missing: str = "skip", pool_counts: bool = True) -> JudgedRates:
    """Graded@k and Unjudged@k of every run against ``qrels`` (the judged queries only, as in
    evaluation; see the module docstring for both).

    Args:
        qrels: the judgments (a path, :class:`~serpeval.core.data.Qrels`, ...).
        runs: the runs.
        cutoffs: the depths k (positive integers).
        missing: judged queries absent from a run: ``skip`` or ``zero`` (then Graded@k is 0).
        pool_counts: also count what a depth-k pool of the runs would still ask for
            (``pool_needed``; one more sort of all the runs). Without: ``pool_needed`` is ``()``.
    """
    from serpeval.evaluation.evaluate import evaluate
    from serpeval.io import as_qrels, as_run

    ks = (cutoffs,) if isinstance(cutoffs, int) else tuple(cutoffs)
    ks = tuple(dict.fromkeys(check_count(k, "cutoff") for k in ks))
    q = as_qrels(qrels)
    run_objects = [as_run(r) for r in runs]
    # Graded@k (grade >= 0 in the top k, over k: a negative grade, an unfilled judging list,
    # is not judged) and NumRet (retrieved = min(k, NumRet), from which Unjudged@k follows).
    measures = [f"Graded@{k}" for k in ks] + ["NumRet"]
    results = evaluate(q, run_objects, measures, missing=missing)  # type: ignore[arg-type]
    k_row = np.array(ks, dtype=np.int64)[None, :]
    retrieved = tuple(np.minimum(np.rint(r.values[:, -1:]).astype(np.int64), k_row) for r in results.runs)
    rates = tuple(np.ascontiguousarray(r.values[:, :-1]) for r in results.runs)
    needed = _pool_needed(q, run_objects, ks) if pool_counts else ()
    return JudgedRates(ks, tuple(results.run_names), tuple(r.query_ids for r in results.runs), rates, needed,
                       qrels=q.source, retrieved=retrieved, coverage=tuple(r.coverage for r in results.runs))


def _pool_needed(qrels: Any, runs: Sequence[Any], ks: tuple[int, ...]) -> tuple[int, ...]:
    """Per k, the distinct (judged query, document) pairs in some run's top k without a usable
    judgment (not in the qrels, or a negative grade): what a depth-k pool would ask for."""
    from serpeval.core.id_codes import codes_in
    from serpeval.judgments.stacked import qrels_grades, stack_runs

    stacked = stack_runs(runs, max(ks))
    grades = qrels_grades(stacked, qrels)
    best = np.full(stacked.n_pairs, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, stacked.pair, stacked.rank)
    judged_query = np.zeros(stacked.n_queries, dtype=bool)
    codes, _ = codes_in(qrels.query_ids, stacked.query_ids)
    judged_query[codes[codes >= 0]] = True
    open_ = (grades < 0) & judged_query[stacked.pair_query]
    return tuple(int(np.count_nonzero(open_ & (best <= k))) for k in ks)


@dataclass(frozen=True)
class JudgedGap:
    """Two runs whose judged rates at a measure's depth differ by more than the threshold.

    Attributes:
        measures: the measures evaluated at this depth.
        depth: the depth k of the judged rate.
        best: the best-judged run and its judged share of the retrieved top k.
        worst: the least-judged run and its judged share of the retrieved top k.
        threshold: the difference (a share, 0.05 = 5 points) that triggers the warning.
        deeper: the measures that look deeper than ``depth``, with their own depth: the
            runs are compared only as deep as every run reaches.
    """

    measures: tuple[str, ...]
    depth: int
    best: tuple[str, float]
    worst: tuple[str, float]
    threshold: float
    deeper: tuple[tuple[str, int], ...] = ()

    @property
    def gap(self) -> float:
        return self.best[1] - self.worst[1]

    def _where(self) -> str:
        """The depth compared, and why when it is shallower than some measures look."""
        if not self.deeper:
            return f"the retrieved top {self.depth}"
        looks = "; ".join(f"{m} looks to {k}" for m, k in self.deeper)
        return f"the retrieved top {self.depth} (the depth every run reaches; {looks})"

    def message(self) -> str:
        """The warning, with the fix."""
        return (f"warning: judged rate of {self._where()} differs by {100 * self.gap:.1f} points "
                f"({self.best[0]} {100 * self.best[1]:.1f}%, {self.worst[0]} {100 * self.worst[1]:.1f}%), "
                f"more than {100 * self.threshold:g}: unjudged documents count as non-relevant, which "
                f"favours {self.best[0]} in {', '.join(self.measures)}. Evaluate condensed lists "
                "(--judged-only, judged_only=True) or judge the missing documents (serpeval pool).")

    def to_dict(self) -> dict[str, Any]:
        return {"measures": list(self.measures), "depth": self.depth,
                "deeper": {m: k for m, k in self.deeper}, "best": list(self.best),
                "worst": list(self.worst), "gap": self.gap, "threshold": self.threshold}


def judged_gaps(qrels: Any, runs: Sequence[Any], results: Results, *, threshold: float = 0.05,
                depth: int | None = None) -> list[JudgedGap]:
    """The depths at which the runs of ``results`` differ in their judged share of the
    retrieved top k (:meth:`JudgedRates.mean_of_retrieved`) by more than ``threshold``.

    The share counts the documents a run retrieved, not the ranks it left empty: a run that
    returns 5 documents, all judged, is fully judged at depth 10 (its Judged@10 is 0.5, but
    no judging would change its scores), so ranking lengths alone raise no warning.

    A measure's depth is its cutoff; a measure without one (AP, RR, R-prec...) looks to
    ``depth`` (the evaluation's ``--depth``) or else to the longest ranking of the runs. The
    shares are compared at ``min(measure's depth, reach)``, where ``reach`` is the depth every
    run reaches (the smallest of the runs' longest rankings): below it a shallower run has no
    documents to compare, and a deeper run's extra documents, which a pool of shallower runs
    never saw, would read as a judging gap against it (Robust04, BM25 150 deep vs RM3 1000
    deep: 91% vs 43% at 1000, 91% vs 90% over the 150 ranks both reach). The
    :class:`JudgedGap` says which depth was compared.
    The share is averaged over each run's evaluated queries (``results``' settings) that it retrieved
    something for.
    Returns one :class:`JudgedGap` per depth that crosses the threshold (none when the
    judgments cover the runs alike, or when fewer than two runs are given).
    """
    from serpeval.core.id_codes import factorize_sorted
    from serpeval.io import as_qrels, as_run

    threshold = check_probability(threshold, "threshold")
    if len(results.runs) < 2 or results.settings.judged_only:
        return []  # condensed lists already leave the unjudged documents out
    run_objects = [as_run(r) for r in runs]
    if depth is None:
        depth = results.settings.depth
    lengths = [int(np.bincount(factorize_sorted(r.query_ids)[0]).max()) if len(r) else 1
               for r in run_objects]
    reach = min(lengths)
    by_depth: dict[int, list[str]] = {}
    deeper: dict[int, list[tuple[str, int]]] = {}
    for m in results.measures:
        k = int(m.cutoff if m.cutoff is not None else (depth or max(lengths)))
        if m.spec.name in ("Judged", "Unjudged"):
            continue
        compared = min(k, reach)
        by_depth.setdefault(compared, []).append(str(m))
        if k > compared:
            deeper.setdefault(compared, []).append((str(m), k))
    if not by_depth:
        return []
    with warnings.catch_warnings():
        # The evaluation of ``results`` has reported the judged queries a run lacks already;
        # this second look at the same runs must not report them again.
        warnings.simplefilter("ignore", MissingQueriesWarning)
        rates = judged(as_qrels(qrels), run_objects, sorted(by_depth), missing=results.settings.missing,
                       pool_counts=False)
    gaps = []
    for k, measures in by_depth.items():
        means = [(name, rates.mean_of_retrieved(name, k)) for name in rates.run_names]
        means = [(n, v) for n, v in means if not np.isnan(v)]
        if len(means) < 2:
            continue
        best = max(means, key=lambda item: item[1])
        worst = min(means, key=lambda item: item[1])
        if best[1] - worst[1] > threshold + 1e-12:
            gaps.append(JudgedGap(tuple(measures), k, best, worst, threshold, tuple(deeper.get(k, ()))))
    return gaps
