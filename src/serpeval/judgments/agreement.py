"""Assessor agreement between two or more label sets (qrels) of the same topics.

:func:`agreement` lines the label sets up on their (query, document) pairs and reports, for
every pair of sets, on the documents **both** judged:

- the observed agreement ``p_o`` (share of identical grades) and the confusion matrix
  (rows: the first set's grade, columns: the second's);
- Cohen's kappa ``1 - sum(w O) / sum(w E)`` with ``O`` the observed and ``E = r c^T`` the
  chance joint distribution (row and column marginals), unweighted (``w = 1 - I``), linear
  (``w = |g - h|``) and quadratic (``w = (g - h)^2``) weights on the grade values. Grades are
  the categories ``min .. max`` of every grade seen (an unused grade in between is an empty
  category), so the weights equal scikit-learn's ``cohen_kappa_score(labels=range(min,
  max + 1))`` and statsmodels' ``cohens_kappa(wt="linear"|"quadratic")``;
- Krippendorff's alpha (ordinal) of the two sets;

and over all sets at once: Krippendorff's alpha (ordinal) on every document judged by at least
two sets (alpha's own rule for missing labels), and with three or more sets Fleiss' kappa on the
documents judged by every set (Fleiss needs the same number of labels per document).

Alpha's point estimates come from the ``krippendorff`` package; the bootstrap replicates use the
same definition computed here from per-query coincidence matrices (``alpha = 1 - (n - 1)
sum(o d2) / sum(n_c n_k d2)``, ordinal ``d2(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2``;
the tests check both agree).

**Confidence intervals**: a percentile bootstrap over queries (the unit that was sampled):
``resamples`` draws of the queries with replacement, every statistic recomputed from the
drawn queries' summed confusion / coincidence / count tables (one matrix product, no loop per
query). Seeded (``rng``). A replicate whose statistic is undefined (every drawn label the
same: chance agreement 1) is left out and counted.

**What is not compared, and how it is counted** (never silently dropped): a document judged by
only one set of a pair is counted in ``only_a`` / ``only_b`` of that pair; negative grades
("in the pool but not judged", trec_eval's rule) are not labels: they are counted per set in
``unjudged`` and the document is treated as not judged by that set.

**System-ranking stability** (``runs=``): every run is evaluated under every label set on the
queries all sets judge (each set's own full judgments for those queries), and for every pair
of sets and measure it reports Kendall's tau-b between the two orderings of the systems' means
(scipy's ``kendalltau`` default), tau_AP (Yilmaz, Aslam & Robertson 2008; the first set of
the pair is the reference, tied systems left out as tau-b leaves them out), and how many pairwise
significance decisions of :func:`serpeval.comparison.compare.compare_results` (all pairs, the
given test and correction) differ: a pair significant under one set and not under the other,
or significant in opposite directions (``reversals``). Randomized tests draw the same
resamples under every set (one seed), so identical label sets never flip a decision.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import RngLike, as_generator, check_level
from serpeval.core.errors import InputError, MissingQueriesWarning, OptionError
from serpeval.core.tabular import Tabular
from serpeval.stats.agreement import (
    MEAN_TIE_RTOL,
    alpha_from_coincidences,
    cohen_kappa,
    fleiss_from_sums,
    fleiss_kappa,
    kendall_tau,
    krippendorff_alpha,
    tau_ap,
    tie_classes,
    tied_pairs,
    weights_coincidence,
)
from serpeval.stats.registry import AGREEMENT
from serpeval.stats.validation import check_resamples, confidence_label

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.core.data import Qrels

__all__ = ["Agreement", "PairAgreement", "RankingStability", "SetCounts", "StabilityRow", "agreement",
           "alpha_from_coincidences", "cohen_kappa", "fleiss_kappa", "kendall_tau", "tau_ap",
           "tie_classes", "tied_pairs"]

#: The statistics of a pair of label sets, in report order: (key, display name).
PAIR_STATISTICS = (("observed", "agreement p_o"), ("kappa", "Cohen kappa"),
                   ("kappa_linear", "Cohen kappa (linear)"), ("kappa_quadratic", "Cohen kappa (quadratic)"),
                   ("alpha", "Krippendorff alpha (ordinal)"))
#: Widest grade span accepted (confusion matrices are span x span).
MAX_GRADE_SPAN = 100


# ------------------------------------------------------------------ result objects

@dataclass(frozen=True)
class SetCounts:
    """One label set: its name, file, judged documents and queries, negative grades set aside."""

    name: str
    source: str
    judged: int
    queries: int
    unjudged: int

    def to_dict(self) -> dict[str, Any]:
        return {"set": self.name, "source": self.source, "judged": self.judged, "queries": self.queries,
                "negative grades (not labels)": self.unjudged}


@dataclass(frozen=True, eq=False)
class PairAgreement:
    """Agreement of label sets ``a`` and ``b`` on the documents both judged.

    Attributes:
        a, b: the sets' names.
        both, only_a, only_b: documents judged by both, by ``a`` only, by ``b`` only.
        queries: queries with at least one document judged by both.
        values: statistic key (:data:`PAIR_STATISTICS`) -> value.
        intervals: statistic key -> bootstrap ``(low, high)``.
        confusion: ``int64[L, L]``, rows ``a``'s grade, columns ``b``'s (``Agreement.grades``).
    """

    a: str
    b: str
    both: int
    only_a: int
    only_b: int
    queries: int
    values: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    confusion: NDArray[np.int64]

    @property
    def kappa(self) -> float:
        return self.values["kappa"]

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "both": self.both, "only_a": self.only_a, "only_b": self.only_b,
                "queries": self.queries, **self.values,
                **{f"{k}_ci": list(v) for k, v in self.intervals.items()},
                "confusion": self.confusion.tolist()}


@dataclass(frozen=True)
class StabilityRow:
    """System-ranking stability between label sets ``a`` and ``b`` on one measure.

    ``decisions``: system pairs tested; ``significant_a`` / ``_b``: significant under each set;
    ``flips``: pairs whose decision differs (significant under one set only, or reversed);
    ``reversals``: significant under both in opposite directions; ``ties_a`` / ``_b``: system
    pairs whose means are a tie under each set (:data:`MEAN_TIE_RTOL`).
    """

    measure: str
    a: str
    b: str
    systems: int
    tau: float
    tau_ap: float
    decisions: int
    significant_a: int
    significant_b: int
    flips: int
    reversals: int
    ties_a: int = 0
    ties_b: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "a": self.a, "b": self.b, "systems": self.systems,
                "kendall_tau": self.tau, "tau_ap": self.tau_ap, "decisions": self.decisions,
                "significant_a": self.significant_a, "significant_b": self.significant_b,
                "flips": self.flips, "reversals": self.reversals, "ties_a": self.ties_a,
                "ties_b": self.ties_b}


@dataclass(frozen=True, eq=False)
class RankingStability(Tabular):
    """How the systems' order and significance decisions change with the label set.

    Attributes:
        sets: label-set names; ``systems``: run names; ``measures``: canonical names.
        queries: queries evaluated (judged by every set); ``left_out``: queries judged by
            some sets only (not evaluated).
        means: ``float64[sets, systems, measures]``.
        rows: one :class:`StabilityRow` per (measure, pair of sets).
        test, correction, alpha: the significance decisions' settings.
        missing: per run, evaluated queries it has no results for (skipped, as ``evaluate``
            does; ``compare`` then uses the queries every run answers).
    """

    sets: tuple[str, ...]
    systems: tuple[str, ...]
    measures: tuple[str, ...]
    queries: int
    left_out: int
    means: NDArray[np.float64]
    rows: tuple[StabilityRow, ...]
    test: str
    correction: str
    alpha: float
    missing: dict[str, int] = field(default_factory=dict)

    def to_dicts(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]

    def means_dicts(self) -> list[dict[str, Any]]:
        """One row per (measure, system): its mean and rank under every set (tied means,
        :data:`MEAN_TIE_RTOL`, share the best rank of their group: 1, 2, 2, 4)."""
        out = []
        for m, measure in enumerate(self.measures):
            ranks = [_ranks(self.means[s, :, m]) for s in range(len(self.sets))]
            for i, system in enumerate(self.systems):
                row: dict[str, Any] = {"measure": measure, "system": system}
                for s, name in enumerate(self.sets):
                    row[f"{name} mean"] = float(self.means[s, i, m])
                    row[f"{name} rank"] = int(ranks[s][i])
                out.append(row)
        return out

    def notes(self) -> list[str]:
        ties = {(r.measure, name): n for r in self.rows for name, n in ((r.a, r.ties_a), (r.b, r.ties_b)) if n}
        return [f"{len(self.systems)} systems evaluated under each label set on the {self.queries} "
                f"queries every set judges (left out: {self.left_out} judged by some sets only); tau: "
                "Kendall's tau-b; tau_AP: Yilmaz et al. 2008 with the first set as the reference; "
                f"decisions: all system pairs, {self.test} test, {self.correction} "
                f"correction, alpha {self.alpha:g}; flips: decisions that differ, reversals: "
                "significant in opposite directions; means closer than "
                f"{MEAN_TIE_RTOL:g} x the largest mean are ties (rounding in the sums, not a "
                "difference): they share a rank and count as ties in tau and tau_AP"] + (
            ["tied system pairs: " + ", ".join(f"{m} under {name}: {n}" for (m, name), n in ties.items())]
            if ties else []) + (
            ["queries without results, skipped: " + ", ".join(f"{k} {v}" for k, v in self.missing.items() if v)]
            if any(self.missing.values()) else [])


def _ranks(values: NDArray[np.float64]) -> NDArray[np.int64]:
    """Competition ranks, highest mean first; tied means (:func:`tie_classes`) share the best
    rank of their group; a NaN mean ranks last."""
    classes = tie_classes(values)
    return (1 + (classes[None, :] > classes[:, None]).sum(axis=1)).astype(np.int64)


@dataclass(frozen=True, eq=False)
class Agreement(Tabular):
    """What :func:`agreement` returns; every renderer derives from its ``*_dicts`` methods.

    Attributes:
        sets: one :class:`SetCounts` per label set, in the order given.
        grades: the grade of each confusion-matrix row/column (``min .. max``).
        pairs: one :class:`PairAgreement` per pair of sets (``(0, 1), (0, 2), ... ``).
        fleiss: Fleiss' kappa on the documents every set judged (None with two sets), its
            interval, and ``all_judged`` those documents.
        alpha: Krippendorff's ordinal alpha over all sets (documents judged by >= 2 sets,
            ``alpha_items`` of them), and its interval.
        resamples, confidence, undefined: the bootstrap over queries (``undefined``: replicates
            left out per statistic because it was undefined there).
        stability: system-ranking stability when runs were given.
    """

    sets: tuple[SetCounts, ...]
    grades: tuple[int, ...]
    pairs: tuple[PairAgreement, ...]
    fleiss: float | None
    fleiss_ci: tuple[float, float] | None
    all_judged: int
    alpha: float
    alpha_ci: tuple[float, float]
    alpha_items: int
    resamples: int
    confidence: float
    undefined: dict[str, int] = field(default_factory=dict)
    stability: RankingStability | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sets)

    def pair(self, a: str, b: str) -> PairAgreement:
        """The :class:`PairAgreement` of sets ``a`` and ``b`` (in either order)."""
        for p in self.pairs:
            if {p.a, p.b} == {a, b}:
                return p
        raise OptionError(f"no pair of label sets {a!r} and {b!r}; sets: {', '.join(self.names)}.")

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per (pair of sets or all sets, statistic): value, interval, documents."""
        rows = []
        for p in self.pairs:
            for key, label in PAIR_STATISTICS:
                low, high = p.intervals[key]
                rows.append({"sets": f"{p.a} vs {p.b}", "statistic": label, "value": p.values[key],
                             "ci_low": low, "ci_high": high, "documents": p.both})
        if len(self.sets) > 2:
            everyone = "all " + str(len(self.sets))
            if self.fleiss is not None and self.fleiss_ci is not None:
                rows.append({"sets": everyone, "statistic": "Fleiss kappa", "value": self.fleiss,
                             "ci_low": self.fleiss_ci[0], "ci_high": self.fleiss_ci[1],
                             "documents": self.all_judged})
            rows.append({"sets": everyone, "statistic": "Krippendorff alpha (ordinal)", "value": self.alpha,
                         "ci_low": self.alpha_ci[0], "ci_high": self.alpha_ci[1], "documents": self.alpha_items})
        return rows

    def coverage_dicts(self) -> list[dict[str, Any]]:
        """Per pair: documents judged by both (compared), by one only (not compared), queries."""
        return [{"a": p.a, "b": p.b, "both": p.both, "only a": p.only_a, "only b": p.only_b,
                 "queries": p.queries} for p in self.pairs]

    def confusion_dicts(self, index: int = 0) -> list[dict[str, Any]]:
        """The confusion matrix of pair ``index``: one row per grade of ``a``, a column per grade of ``b``."""
        p = self.pairs[index]
        rows = []
        for i, g in enumerate(self.grades):
            row: dict[str, Any] = {f"{p.a} \\ {p.b}": g}
            row.update({str(h): int(p.confusion[i, j]) for j, h in enumerate(self.grades)})
            row["total"] = int(p.confusion[i].sum())
            rows.append(row)
        return rows

    def notes(self) -> list[str]:
        notes = [f"compared on documents both sets judged; documents judged by one set only are counted "
                 f"(only a / only b), not compared; negative grades are not labels "
                 f"({sum(s.unjudged for s in self.sets)} set aside)",
                 f"{confidence_label(self.confidence)} CIs: percentile bootstrap over queries, "
                 f"{self.resamples} resamples"]
        if len(self.sets) > 2 and self.fleiss is None:
            notes.append("no document is judged by every set, so there is no Fleiss kappa (alpha uses "
                         "documents judged by two sets or more)")
        if any(self.undefined.values()):
            parts = ", ".join(f"{k}: {v}" for k, v in self.undefined.items() if v)
            notes.append("bootstrap replicates where a statistic is undefined (one label only, or no document "
                         f"judged in both sets), left out: {parts}")
        return notes

    def to_json_dict(self) -> dict[str, Any]:
        return {"sets": [s.to_dict() for s in self.sets], "grades": list(self.grades),
                "pairs": [p.to_dict() for p in self.pairs],
                "fleiss_kappa": self.fleiss, "fleiss_kappa_ci": list(self.fleiss_ci) if self.fleiss_ci else None,
                "all_judged": self.all_judged, "alpha": self.alpha, "alpha_ci": list(self.alpha_ci),
                "alpha_documents": self.alpha_items, "resamples": self.resamples,
                "confidence": self.confidence, "undefined_replicates": dict(self.undefined),
                "stability": None if self.stability is None else {
                    "rows": self.stability.to_dicts(), "means": self.stability.means_dicts(),
                    "queries": self.stability.queries, "left_out": self.stability.left_out,
                    "missing": dict(self.stability.missing),
                    "notes": self.stability.notes()},
                "notes": self.notes()}


# ------------------------------------------------------------------ the computation

@dataclass(frozen=True)
class _Aligned:
    grades: NDArray[np.int64]    # [sets, items] category index, -1 not judged
    query: NDArray[np.int64]     # [items] query code
    n_queries: int
    categories: tuple[int, ...]
    counts: tuple[SetCounts, ...]
    query_names: list[str]


def _align(sets: Sequence[Qrels], names: Sequence[str]) -> _Aligned:
    """One grade matrix over the union of judged (query, document) pairs.

    Ids of all sets are dictionary-encoded together once; a pair is the integer
    ``query code * documents + document code`` (no string keys).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    kept_q, kept_d, grades, counts = [], [], [], []
    for name, q in zip(names, sets, strict=True):
        keep = q.relevance >= 0
        mask = pa.array(keep)
        qids = q.query_ids.filter(mask)
        kept_q.extend(qids.chunks)
        kept_d.extend(q.doc_ids.filter(mask).chunks)
        grades.append(q.relevance[keep])
        counts.append(SetCounts(name, q.source, int(keep.sum()), len(pc.unique(qids)),
                                int(len(keep) - keep.sum())))
        if not keep.any():
            raise InputError(f"{q.source}: no non-negative grade; label set {name!r} judges nothing "
                             "(negative grades mean 'in the pool but not judged').")
    lowest = min(int(g.min()) for g in grades)
    highest = max(int(g.max()) for g in grades)
    if highest - lowest + 1 > MAX_GRADE_SPAN:
        low_in = next(q.source for q, g in zip(sets, grades, strict=True) if int(g.min()) == lowest)
        high_in = next(q.source for q, g in zip(sets, grades, strict=True) if int(g.max()) == highest)
        raise InputError(f"grades span {lowest} ({low_in}) .. {highest} ({high_in}); agreement takes graded "
                         f"labels, at most {MAX_GRADE_SPAN} grades from the lowest to the highest (each grade "
                         "is a category). Map scores to a few grades first.")
    query_codes = pc.dictionary_encode(pa.chunked_array(kept_q, pa.string()).combine_chunks())
    doc_codes = pc.dictionary_encode(pa.chunked_array(kept_d, pa.string()).combine_chunks())
    n_docs = len(doc_codes.dictionary)
    key = (query_codes.indices.to_numpy(zero_copy_only=False).astype(np.int64) * n_docs
           + doc_codes.indices.to_numpy(zero_copy_only=False))
    pairs, item = np.unique(key, return_inverse=True)
    matrix = np.full((len(sets), len(pairs)), -1, dtype=np.int64)
    start = 0
    for s, g in enumerate(grades):
        matrix[s, item[start:start + len(g)]] = g - lowest
        start += len(g)
    used, query = np.unique(pairs // n_docs, return_inverse=True)
    query_names = query_codes.dictionary.take(pa.array(used)).to_pylist()
    return _Aligned(matrix, query.astype(np.int64), len(used), tuple(range(lowest, highest + 1)), tuple(counts),
                    query_names)


def _per_query(query: NDArray[np.int64], cells: NDArray[np.int64], n_queries: int, size: int,
               weights: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """``[queries, size]`` sums of ``weights`` (or counts) per (query, cell)."""
    flat = np.bincount(query * size + cells, weights=weights, minlength=n_queries * size)
    return flat.reshape(n_queries, size).astype(np.float64)


def _interval(replicates: NDArray[np.float64], confidence: float) -> tuple[tuple[float, float], int]:
    finite = replicates[np.isfinite(replicates)]
    undefined = len(replicates) - len(finite)
    if len(finite) == 0:
        return (float("nan"), float("nan")), undefined
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return (float(low), float(high)), undefined


def agreement(
    qrels: Iterable[Any],
    *,
    names: Sequence[str] | None = None,
    runs: Any = None,
    measures: str | Iterable[str] = ("nDCG@10", "AP"),
    resamples: int = 1000,
    confidence: float = 0.95,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    rng: RngLike = 0,
) -> Agreement:
    """Agreement of two or more label sets (see the module docstring for every rule).

    Args:
        qrels: two or more label sets (paths, :class:`~serpeval.core.data.Qrels`, dicts...).
        names: a name per set (default: the file names, made unique).
        runs: runs to evaluate under every set for the ranking-stability part (optional).
        measures: the measures of the stability part.
        resamples: bootstrap resamples over queries (1 .. MAX_RESAMPLES, 10 million).
        confidence: level of the intervals.
        test, correction, alpha: the significance decisions of the stability part.
        rng: seed or generator of the bootstrap (and of randomized tests).

    Raises:
        InputError: fewer than two sets, a set with no non-negative grade, two sets that share
            no judged document.
        OptionError: ``resamples`` not an integer in 1 .. MAX_RESAMPLES, ``confidence`` not in
            (0, 1), ``names`` not one distinct name per set.
    """
    from serpeval.io import as_qrels

    sets = [as_qrels(q).as_grades("int") for q in qrels]  # categories: a fractional grade is refused
    if len(sets) < 2:
        raise InputError(f"agreement needs at least two label sets; got {len(sets)}.")
    labels = _names(sets, names)
    check_resamples(resamples, "resamples")   # at most MAX_RESAMPLES, as every resampling statistic
    level = check_level(confidence, "confidence", example=0.95)
    generator = as_generator(rng)
    data = _align(sets, labels)
    n_cat = len(data.categories)
    # One bootstrap draw of the queries for every statistic: weights[b, q] = times q is drawn.
    weights = generator.multinomial(data.n_queries, np.full(data.n_queries, 1.0 / data.n_queries),
                                    size=resamples).astype(np.float64)
    undefined: dict[str, int] = {}
    pairs = []
    for a in range(len(sets)):
        for b in range(a + 1, len(sets)):
            pairs.append(_pair(data, labels, a, b, weights, level, undefined))
    judged = data.grades >= 0
    counts = np.zeros((data.grades.shape[1], n_cat), dtype=np.int64)
    for s in range(len(sets)):
        np.add.at(counts, (np.flatnonzero(judged[s]), data.grades[s][judged[s]]), 1)
    alpha_value, alpha_ci, alpha_items = _overall_alpha(data, counts, weights, level, undefined)
    by_all: NDArray[np.bool_] = np.logical_and.reduce(judged, axis=0)
    fleiss, fleiss_ci, everyone = None, None, int(by_all.sum())
    if len(sets) > 2 and everyone:
        fleiss, fleiss_ci = _fleiss(data, counts, by_all, len(sets), weights, level, undefined)
    stability = None
    if runs is not None:
        stability = _stability(sets, labels, runs, measures, test, correction, alpha, generator)
    return Agreement(tuple(data.counts), data.categories, tuple(pairs), fleiss, fleiss_ci, everyone,
                     alpha_value, alpha_ci, alpha_items, resamples, level, undefined, stability)


def _names(sets: Sequence[Qrels], names: Sequence[str] | None) -> list[str]:
    from pathlib import Path

    if names is not None:
        out = [str(n) for n in names]
        if len(out) != len(sets) or len(set(out)) != len(out) or not all(out):
            raise OptionError(f"names must be {len(sets)} distinct non-empty names, one per label set; "
                              f"got {list(names)!r}.")
        return out
    out = []
    for i, q in enumerate(sets):
        path = Path(q.source[:-3] if q.source.endswith(".gz") else q.source)
        base = path.stem or path.name if not q.source.startswith("<") else f"set{i + 1}"
        name, n = base, 2
        while name in out:
            name, n = f"{base}#{n}", n + 1
        out.append(name)
    return out


def _pair(data: _Aligned, labels: Sequence[str], a: int, b: int, weights: NDArray[np.float64],
          level: float, undefined: dict[str, int]) -> PairAgreement:
    ga, gb = data.grades[a], data.grades[b]
    both = (ga >= 0) & (gb >= 0)
    n_both = int(both.sum())
    if n_both == 0:
        raise InputError(f"label sets {labels[a]!r} and {labels[b]!r} share no judged (query, document) "
                         "pair, so there is nothing to compare; check that they judge the same topics and "
                         "use the same ids.")
    n_cat = len(data.categories)
    q = data.query[both]
    per_query = _per_query(q, ga[both] * n_cat + gb[both], data.n_queries, n_cat * n_cat)
    confusion = per_query.sum(axis=0).reshape(n_cat, n_cat)
    boot = (weights @ per_query).reshape(-1, n_cat, n_cat)
    values: dict[str, float] = {}
    replicates: dict[str, NDArray[np.float64]] = {}
    for spec in AGREEMENT.values():  # p_o and the kappas; a draw without co-judged documents: NaN
        if spec.data == "confusion":
            weighted = (spec.weights,) if spec.weights else ()
            values[spec.name] = float(spec.function(confusion, *weighted))
            replicates[spec.name] = spec.function(boot, *weighted)
    pair_counts = np.zeros((n_both, n_cat), dtype=np.int64)
    rows = np.arange(n_both)
    np.add.at(pair_counts, (rows, ga[both]), 1)
    np.add.at(pair_counts, (rows, gb[both]), 1)
    values["alpha"] = krippendorff_alpha(pair_counts)
    replicates["alpha"] = alpha_from_coincidences(weights_coincidence(boot))
    intervals = {}
    for key, reps in replicates.items():
        intervals[key], missed = _interval(reps, level)
        undefined[f"{labels[a]} vs {labels[b]}: {key}"] = missed
    return PairAgreement(labels[a], labels[b], n_both, int(((ga >= 0) & ~both).sum()),
                         int(((gb >= 0) & ~both).sum()), len(np.unique(q)), values, intervals,
                         confusion.astype(np.int64))


def _coincidences(counts: NDArray[np.int64], query: NDArray[np.int64], n_queries: int) -> NDArray[np.float64]:
    """Per-query coincidence matrices ``[queries, L * L]`` from per-document label counts:
    ``o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)`` over documents with ``m_u >= 2``."""
    m = counts.sum(axis=1)
    keep = m >= 2
    n = counts[keep].astype(np.float64)
    n_cat = counts.shape[1]
    pairs = (n[:, :, None] * n[:, None, :] - np.eye(n_cat)[None] * n[:, :, None]) / (m[keep] - 1.0)[:, None, None]
    flat = pairs.reshape(len(n), n_cat * n_cat)
    out = np.zeros((n_queries, n_cat * n_cat))
    for cell in np.flatnonzero(flat.any(axis=0)):
        out[:, cell] = np.bincount(query[keep], weights=flat[:, cell], minlength=n_queries)
    return out


def _overall_alpha(data: _Aligned, counts: NDArray[np.int64], weights: NDArray[np.float64], level: float,
                   undefined: dict[str, int]) -> tuple[float, tuple[float, float], int]:
    n_cat = len(data.categories)
    per_query = _coincidences(counts, data.query, data.n_queries)
    boot = (weights @ per_query).reshape(-1, n_cat, n_cat)
    interval, missed = _interval(alpha_from_coincidences(boot), level)
    undefined["all sets: alpha"] = missed
    return krippendorff_alpha(counts), interval, int((counts.sum(axis=1) >= 2).sum())


def _fleiss(data: _Aligned, counts: NDArray[np.int64], everyone: NDArray[np.bool_], m: int,
            weights: NDArray[np.float64], level: float, undefined: dict[str, int]
            ) -> tuple[float, tuple[float, float]]:
    n_cat = len(data.categories)
    n = counts[everyone].astype(np.float64)
    q = data.query[everyone]
    agree = ((n ** 2).sum(axis=1) - m) / (m * (m - 1))
    p_sum = np.bincount(q, weights=agree, minlength=data.n_queries)
    items = np.bincount(q, minlength=data.n_queries).astype(np.float64)
    totals = np.stack([np.bincount(q, weights=n[:, c], minlength=data.n_queries) for c in range(n_cat)], axis=1)
    value = fleiss_kappa(n)
    boot = fleiss_from_sums(weights @ p_sum, weights @ totals, weights @ items, m)
    interval, missed = _interval(boot, level)
    undefined["all sets: fleiss"] = missed
    return value, interval


def _load_runs(runs: Any) -> list[Any]:
    """Read the runs once (they are evaluated under every label set), named as evaluate names them."""
    from serpeval.evaluation.evaluate import iter_runs  # evaluate's one rule for "runs" arguments

    return list(iter_runs(runs))


def _stability(sets: Sequence[Qrels], labels: Sequence[str], runs: Any, measures: str | Iterable[str],
               test: str, correction: str, alpha: float, rng: np.random.Generator) -> RankingStability:
    """Evaluate the runs under every set on the queries all sets judge; compare orderings and decisions."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from serpeval.comparison.compare import compare_results
    from serpeval.core.data import Qrels
    from serpeval.evaluation.evaluate import evaluate

    judged = [set(pc.unique(q.query_ids.filter(pa.array(q.relevance >= 0))).to_pylist()) for q in sets]
    common = set.intersection(*judged)
    left_out = len(set.union(*judged) - common)
    if len(common) < 2:
        raise InputError(f"ranking stability needs at least 2 queries judged by every label set; "
                         f"{len(common)} are. Check that the label sets cover the same topics.")
    value_set = pa.array(sorted(common))
    loaded = _load_runs(runs)
    # One seed for every set: a randomized test (randomization, bootstrap) then draws the same
    # resamples under each label set, so a decision flips because of the labels, not the draws.
    seed = int(rng.integers(2**63))
    results, decisions = [], []
    for q in sets:
        mask = pc.is_in(q.query_ids, value_set=value_set)
        mask_np = mask.to_numpy(zero_copy_only=False)
        restricted = Qrels(q.query_ids.filter(mask), q.doc_ids.filter(mask), q.relevance[mask_np],
                           source=q.source)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)  # the same for every set
            res = evaluate(restricted, loaded, measures)
        results.append(res)
        c = compare_results(res, pairs="all", test=test, correction=correction, alpha=alpha, rng=seed)
        decisions.append(np.array([(1 if r.improved else -1) if r.significant and r.delta != 0 else 0
                                   for r in c.rows]).reshape(len(res.measures), -1))
    systems = tuple(results[0].run_names)
    if len(systems) < 2:
        raise InputError(f"ranking stability needs at least two runs; got {len(systems)}.")
    measure_names = tuple(str(m) for m in results[0].measures)
    means = np.array([[[res.aggregate(s, m) for m in measure_names] for s in systems] for res in results])
    rows = []
    for m, measure in enumerate(measure_names):
        for a in range(len(sets)):
            for b in range(a + 1, len(sets)):
                da, db = decisions[a][m], decisions[b][m]
                rows.append(StabilityRow(
                    measure, labels[a], labels[b], len(systems),
                    kendall_tau(means[a, :, m], means[b, :, m]), tau_ap(means[a, :, m], means[b, :, m]),
                    len(da), int(np.count_nonzero(da)), int(np.count_nonzero(db)),
                    int(np.count_nonzero(da != db)), int(np.count_nonzero(da * db < 0)),
                    tied_pairs(means[a, :, m]), tied_pairs(means[b, :, m])))
    missing = {run.name: len(run.coverage.missing) for run in results[0].runs}
    return RankingStability(tuple(labels), systems, measure_names, len(common), left_out, means, tuple(rows),
                            test, correction, float(alpha), missing)
