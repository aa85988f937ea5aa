"""What :func:`serpeval.compare` returns: :class:`Comparison`, one :class:`PairResult` per row.

Frozen dataclasses with ``to_dicts()``; every renderer (:mod:`serpeval.report.comparison`)
derives from them and nothing here recomputes a statistic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from serpeval.core.strict_json import json_ready as ready
from serpeval.core.tabular import Tabular
from serpeval.measures import parse_measure
from serpeval.measures.spec import GMEAN_FLOOR  # the floor of geometric means (GMAP)
from serpeval.stats.registry import CORRECTIONS, PAIRED_TESTS, TESTS, Test
from serpeval.stats.validation import confidence_label

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.evaluation.results import Settings
    from serpeval.measures import Measure

__all__ = ["CI_METHODS", "CORRECTION_NAMES", "GMEAN_FLOOR", "PAIRS", "TESTS", "TEST_NAMES", "Comparison",
           "IntervalMethod", "PairResult", "Pairs", "SystemCoverage", "Test", "against_baseline",
           "json_ready"]

#: The paired tests (:data:`serpeval.stats.registry.PAIRED_TESTS`; aliases such as "ttest"
#: are resolved by ``canonical_test``).
#: Which pairs are compared: every run against the baseline, or all pairs.
Pairs = Literal["baseline", "all"]
PAIRS: tuple[Pairs, ...] = get_args(Pairs)
#: How confidence intervals of the mean difference are made.
IntervalMethod = Literal["t", "bca", "percentile"]
CI_METHODS: tuple[IntervalMethod, ...] = get_args(IntervalMethod)

#: The tests' and corrections' names in sentences, from the registry.
TEST_NAMES = {name: spec.label for name, spec in PAIRED_TESTS.items()}
CORRECTION_NAMES = {name: spec.label for name, spec in CORRECTIONS.items()}


@dataclass(frozen=True)
class SystemCoverage:
    """Which of a system's evaluated queries entered the comparison.

    Attributes:
        system: the run's name.
        evaluated: queries the run was evaluated on.
        compared: queries common to all runs (the ones compared).
        dropped: evaluated queries left out because another run lacks them.
    """

    system: str
    evaluated: int
    compared: int
    dropped: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"system": self.system, "evaluated": self.evaluated, "compared": self.compared,
                "dropped": list(self.dropped)}


def qrels_warning(signatures: dict[str, str], runs: list[str]) -> str | None:
    """The warning when ``runs`` were evaluated against different qrels (``signatures``:
    ``{run: qrels signature}``, :func:`~serpeval.evaluation.results.qrels_signatures`), or
    None when they share one (or none is known). A difference between such runs mixes the
    change of system with the change of judgments."""
    known = {run: signatures[run] for run in runs if signatures.get(run)}
    if len(set(known.values())) < 2:
        return None
    listed = ", ".join(f"{run}: qrels {sig}" for run, sig in known.items())
    return (f"the runs were evaluated against different qrels ({listed}); their difference mixes the change of "
            "system with the change of judgments. Evaluate them against the same qrels file.")


@dataclass(frozen=True)
class PairResult:
    """One comparison: ``system`` against ``baseline`` on one measure.

    In ``pairs="all"`` mode ``baseline`` is the row's reference system (the earlier run).

    Attributes:
        measure: canonical measure name.
        system, baseline: run names; ``delta = mean - baseline_mean``.
        queries: queries compared.
        mean, baseline_mean: aggregates (means, or sums for count measures).
        delta: difference of the aggregates.
        ci_low, ci_high: confidence interval of ``delta``.
        statistic: the test statistic (see :class:`serpeval.stats.PairedTest`).
        p_value: two-sided p-value of the paired test.
        p_value_corrected: after the multiple-comparison correction.
        significant: ``p_value_corrected <= alpha``.
        effect_size: paired Cohen's d_z of the per-query differences.
        wins, ties, losses: queries where ``system`` is better, equal, worse (by the
            measure's direction).
        improved: the delta is an improvement (by the measure's direction).
    """

    measure: str
    system: str
    baseline: str
    queries: int
    mean: float
    baseline_mean: float
    delta: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    p_value_corrected: float
    significant: bool
    effect_size: float
    wins: int
    ties: int
    losses: int
    improved: bool

    @property
    def marker(self) -> str:
        """``▲`` significantly better, ``▼`` significantly worse, ``""`` otherwise."""
        if not self.significant or self.delta == 0:
            return ""
        return "▲" if self.improved else "▼"

    def to_dict(self) -> dict[str, Any]:
        """All fields as a dict (p-value fields are named ``p_value*``)."""
        return {field: getattr(self, field) for field in self.__dataclass_fields__}


@dataclass(frozen=True, eq=False)
class Comparison(Tabular):
    """What :func:`compare` returns; every renderer derives from :meth:`to_dicts`.

    Attributes:
        measures: the measures compared.
        systems: run names, in the order given.
        baseline: the baseline's name (None when ``pairs="all"``).
        pairs: ``"baseline"`` or ``"all"``.
        test: ``t``, ``wilcoxon``, ``randomization`` or ``bootstrap``.
        method: how the p-values were obtained, in words.
        correction: ``holm``, ``bonferroni``, ``bh``, ``tukey`` or ``none``.
        alpha: significance level for the corrected p-values.
        confidence: level of the intervals.
        ci: interval method (``t``, ``bca``, ``percentile``).
        resamples: permutations / bootstrap resamples (0 for analytic tests).
        rows: one :class:`PairResult` per (measure, comparison), measure-major.
        query_ids: the compared queries (common to all runs).
        values: per-query values ``float64[n_systems, n_measures, n_queries]``.
        coverage: per system, evaluated vs compared queries.
        settings: the evaluation options (``Settings.rules()`` states them).
        segments: the per-group breakdown
            (:class:`~serpeval.comparison.segments.SegmentBreakdown`) when groups were given.
    """

    measures: tuple[Measure, ...]
    systems: tuple[str, ...]
    baseline: str | None
    pairs: Pairs
    test: Test
    method: str
    correction: str
    alpha: float
    confidence: float
    ci: IntervalMethod
    resamples: int
    rows: tuple[PairResult, ...]
    query_ids: NDArray[Any]
    values: NDArray[np.float64]
    coverage: tuple[SystemCoverage, ...]
    settings: Settings
    segments: Any = None   # a SegmentBreakdown (compare(..., groups=...)), or None
    inputs: dict[str, Any] | None = None
    """What the numbers were computed from (:func:`~serpeval.evaluation.results.input_signatures`)."""
    warnings: tuple[str, ...] = ()
    """Counted warnings about the inputs (runs evaluated against different qrels, :func:`qrels_warning`)."""

    # ------------------------------------------------------------------ access
    def row(self, system: str, measure: str | Measure, baseline: str | None = None) -> PairResult:
        """How ``system`` did on ``measure`` against ``baseline`` (default the baseline)."""

        name = str(parse_measure(measure))
        for row in self.rows:
            if row.measure == name and row.system == system and baseline in (None, row.baseline):
                return row
        raise KeyError(f"no comparison of {system!r} on {name}"
                       + (f" against {baseline!r}" if baseline else ""))

    def means(self) -> dict[str, dict[str, float]]:
        """``{system: {measure: aggregate}}`` over the compared queries."""
        return {system: {str(m): m.aggregate(self.values[i, j])
                         for j, m in enumerate(self.measures)}
                for i, system in enumerate(self.systems)}

    def significant(self) -> list[PairResult]:
        """The comparisons whose corrected p-value is ``<= alpha``."""
        return [row for row in self.rows if row.significant]

    def description(self) -> str:
        """One line: the test, the correction, alpha and the number of queries."""
        against = against_baseline(self.baseline) if self.pairs == "baseline" else "all pairs"
        return (f"{TEST_NAMES[self.test]} {against}; {CORRECTION_NAMES[self.correction]} "
                f"correction within each measure; significant: corrected p <= {self.alpha:g}; "
                f"{len(self.query_ids)} queries")

    def notes(self) -> list[str]:
        """What a reader must know: the input warnings first, the method, the interval, dropped queries."""
        notes = [f"warning: {w}" for w in self.warnings]
        notes.append(f"p-values: {self.method}")
        interval = {"t": "t distribution", "bca": "paired bootstrap, BCa",
                    "percentile": "paired bootstrap, percentile"}[self.ci]
        notes.append(f"{confidence_label(self.confidence)} CI of the delta from the {interval} (not adjusted "
                     "for multiple comparisons); d_z = mean delta / sd of the per-query deltas")
        geometric = [str(m) for m in self.measures if m.spec.aggregate == "gmean"]
        if geometric:
            notes.append(f"{', '.join(geometric)}: tested on per-query "
                         f"log(max(x, {GMEAN_FLOOR:g})), the scale a geometric mean averages; "
                         "no interval for its delta")
        if self.correction == "tukey" and self.pairs == "baseline":
            notes.append("Tukey HSD adjusts over all pairs of systems (conservative for "
                         "comparisons with one baseline)")
        for c in self.coverage:
            if c.dropped:
                shown = ", ".join(c.dropped[:5]) + (", ..." if len(c.dropped) > 5 else "")
                notes.append(f"{c.system}: {len(c.dropped)} of {c.evaluated} evaluated queries are "
                             f"not in every run and were left out ({shown})")
        if any(c.dropped for c in self.coverage):
            notes.append(f"compared on the {len(self.query_ids)} queries common to all runs "
                         "(strict=True / --strict refuses instead)")
        return notes

    # ------------------------------------------------------------------ export
    def to_dicts(self, per_query: bool = False) -> list[dict[str, Any]]:
        """Rows as dicts: one per comparison, or (``per_query``) one per comparison and query.

        Per-query rows: ``measure, query_id, system, baseline, value, baseline_value, delta``.
        """
        if not per_query:
            return [row.to_dict() for row in self.rows]
        index = {name: i for i, name in enumerate(self.systems)}
        measure_index = {str(m): j for j, m in enumerate(self.measures)}
        out = []
        qids = self.query_ids.tolist()
        for row in self.rows:
            j = measure_index[row.measure]
            mine = self.values[index[row.system], j].tolist()
            theirs = self.values[index[row.baseline], j].tolist()
            for qid, value, reference in zip(qids, mine, theirs, strict=True):
                out.append({"measure": row.measure, "query_id": qid, "system": row.system,
                            "baseline": row.baseline, "value": value, "baseline_value": reference,
                            "delta": value - reference})
        return out

    def _html_caption(self) -> str:
        return repr(self)

    def to_json_dict(self, per_query: bool = False) -> dict[str, Any]:
        """Everything as JSON-ready data (non-finite numbers become None)."""
        out: dict[str, Any] = {
            "test": self.test, "method": self.method, "correction": self.correction,
            "alpha": self.alpha, "confidence": self.confidence, "ci": self.ci,
            "pairs": self.pairs, "baseline": self.baseline, "resamples": self.resamples,
            "systems": list(self.systems), "measures": [str(m) for m in self.measures],
            "queries": len(self.query_ids), "means": self.means(),
            "comparisons": self.to_dicts(), "coverage": [c.to_dict() for c in self.coverage],
            "notes": self.notes(), "rules": self.settings.rules(),
            "inputs": self.inputs, "warnings": list(self.warnings), "warning_count": len(self.warnings),
        }
        if per_query:
            out["per_query"] = self.to_dicts(per_query=True)
        if self.segments is not None:
            out["segments"] = self.segments.to_json_dict()
        return json_ready(out)

    def __repr__(self) -> str:
        return (f"Comparison({len(self.systems)} systems x {len(self.measures)} measures, "
                f"{TEST_NAMES[self.test]}, {self.correction}, "
                f"{len(self.significant())} significant)")


def against_baseline(name: str | None) -> str:
    """``against baseline bm25``; a run itself named ``baseline`` is not said twice."""
    return "against the baseline run" if name == "baseline" else f"against baseline {name}"


def json_ready(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by None and the reason recorded, recursively
    (strict JSON has none): :func:`serpeval.core.strict_json.json_ready`."""

    return ready(value)

