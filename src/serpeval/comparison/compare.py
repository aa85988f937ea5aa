"""``compare(qrels, runs, measures)``: is the difference between systems real?

For every system and measure: the mean, the difference to the baseline (delta), its 95%
confidence interval, the p-value of a paired test, the p-value corrected for the number of
comparisons, the effect size d_z and the wins / ties / losses over queries. Built on
:func:`serpeval.evaluate` (the qrels work is shared by all runs) and the vectorized tests
of :mod:`serpeval.stats`: one call tests every (system, measure) pair at once.

Decisions, each a named option:

- ``pairs="baseline"`` (default) compares every system with the baseline (the first run
  unless ``baseline=`` names another); ``pairs="all"`` compares every pair.
- ``correction`` (default ``holm``) adjusts the p-values *within each measure* over the
  comparisons made (PyTerrier's convention): ``holm``, ``bonferroni``, ``bh``, ``tukey``
  (with ``test="t"``: Tukey HSD over all systems from the systems x queries ANOVA; with
  ``test="randomization"``: the randomized Tukey test), ``none``.
- A comparison is significant when its corrected p-value is ``<= alpha``.
- The interval is for the difference of means, from the t distribution (``ci="t"``, the
  default except for the bootstrap test) or the paired bootstrap (``"bca"``,
  ``"percentile"``); it is not widened for multiplicity.
- Runs evaluated on different queries (judged queries missing from a run are skipped by
  default) are compared on the queries common to all of them, and the counts are
  reported; ``strict=True`` refuses instead.
- Measures aggregated by a sum (``NumRet``...) report the delta of the sums; the tests use
  the per-query values either way. Geometric means (``GMAP``) are tested on the per-query
  ``log(max(x, 1e-5))`` they average; their delta has no interval (NaN).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.comparison.paired import (
    align_queries,
    canonical_test,
    check_evaluation_fields,
    p_value_method,
    paired_test,
    test_scale,
    wins_ties_losses,
)
from serpeval.comparison.results import (
    CI_METHODS,
    CORRECTION_NAMES,
    PAIRS,
    TEST_NAMES,
    TESTS,
    Comparison,
    IntervalMethod,
    PairResult,
    Pairs,
    SystemCoverage,
    Test,
    qrels_warning,
)
from serpeval.core.checks import RngLike, as_generator, check_level
from serpeval.core.errors import InputError, OptionError, StatsError
from serpeval.core.options import check_rng, resolve, set_field
from serpeval.core.ties import TiePolicy
from serpeval.stats import cohens_dz, paired_bootstrap, paired_t
from serpeval.stats.registry import PAIRED_TESTS
from serpeval.stats.validation import check_resamples

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.evaluation.results import Results
    from serpeval.measures import Measure
    from serpeval.ranking import Missing

__all__ = ["CI_METHODS", "CORRECTION_NAMES", "PAIRS", "TESTS", "TEST_NAMES", "CompareOptions", "Comparison",
           "IntervalMethod", "PairResult", "Pairs", "SystemCoverage", "Test",
           "align_queries", "canonical_test", "compare", "compare_results", "paired_test",
           "wins_ties_losses"]


@dataclass(frozen=True)
class CompareOptions:
    """The options of :func:`compare` and :func:`compare_results` (module docstring).

    Every field is checked when the object is built (:class:`OptionError` naming it) and
    stored in its canonical form (``test="student"`` is ``"t"``, ``correction=None`` is
    ``"none"``); vary one with :func:`dataclasses.replace`. ``compare_results`` reads the
    fields from ``baseline`` to ``strict``; ``compare`` reads them all. The old keywords
    (``compare(qrels, runs, test="wilcoxon")``) map onto these fields for one release.

    >>> from dataclasses import replace
    >>> o = CompareOptions(test="fisher", n_resamples=1000, rng=0)
    >>> o.test, replace(o, correction="BH").correction
    ('randomization', 'bh')
    """

    baseline: str | int | None = None
    """Name (or index) of the baseline run (None: the first run)."""

    test: str = "t"
    """The paired test: ``t`` (default), ``wilcoxon``, ``randomization`` (Fisher's sign-flip
    test) or ``bootstrap`` (studentized); aliases in any case, stored canonical."""

    correction: str | None = "holm"
    """Correction within each measure: ``holm``, ``bonferroni``, ``bh``, ``tukey`` (with the t
    or the randomization test) or ``none`` (None); stored canonical."""

    pairs: Pairs = "baseline"
    """``baseline`` (each system vs the baseline) or ``all`` (every pair)."""

    alpha: float = 0.05
    """Significance level of the corrected p-values, in (0, 1)."""

    confidence: float = 0.95
    """Level of the delta's interval, in (0, 1)."""

    ci: IntervalMethod | None = None
    """The interval: ``t``, ``bca`` or ``percentile`` (None: ``t``, ``bca`` for the bootstrap test)."""

    n_resamples: int = 10_000
    """Permutations / bootstrap resamples, 1 .. MAX_RESAMPLES."""

    rng: RngLike = None
    """Seed or generator of the resampling tests (never global state)."""

    strict: bool = False
    """Refuse runs evaluated on different queries instead of comparing the common ones."""

    missing: Missing = "skip"
    """Judged queries a run has no results for: ``skip`` (trec_eval), ``zero`` or ``error``
    (:func:`serpeval.evaluate`; ``compare`` only)."""

    depth: int | None = None
    """Evaluate each run's top ``depth`` documents only (None: all; ``compare`` only)."""

    judged_only: bool = False
    """Drop unjudged documents before ranking (condensed lists; ``compare`` only)."""

    ties: TiePolicy = "trec_eval"
    """The tie policy of the evaluation (:func:`serpeval.evaluate`; ``compare`` only)."""

    group_correction: str = "holm"
    """Correction across the groups of ``compare(groups=...)``; stored canonical."""

    group_column: str | None = None
    """The column of a JSONL or Parquet groups file that holds the group (None: ``group``/``groups``)."""

    def __post_init__(self) -> None:
        from serpeval.stats.multiplicity import canonical_correction

        if not (self.baseline is None or isinstance(self.baseline, (str, int))) or isinstance(self.baseline, bool):
            raise OptionError(f"baseline must be a run name, an index or None; got {self.baseline!r}.")
        set_field(self, "test", canonical_test(self.test))
        set_field(self, "correction", canonical_correction(self.correction, extra=("tukey",)))
        if self.pairs not in PAIRS:
            raise OptionError(f"pairs must be 'baseline' or 'all'; got {self.pairs!r}.")
        set_field(self, "alpha", check_level(self.alpha))
        set_field(self, "confidence", check_level(self.confidence, "confidence", example=0.95))
        if self.ci is not None and self.ci not in CI_METHODS:
            raise OptionError(f"ci must be one of {', '.join(CI_METHODS)}; got {self.ci!r}.")
        set_field(self, "n_resamples", check_resamples(self.n_resamples, "n_resamples"))
        check_rng(self.rng)
        set_field(self, "strict", bool(self.strict))
        check_evaluation_fields(self)
        set_field(self, "group_correction", canonical_correction(self.group_correction))
        if self.group_column is not None and not isinstance(self.group_column, str):
            raise OptionError(f"group_column must be a column name; got {self.group_column!r}.")


#: The fields :func:`compare_results` reads (an evaluation is already done).
RESULTS_FIELDS = ("baseline", "test", "correction", "pairs", "alpha", "confidence", "ci", "n_resamples", "rng",
                  "strict")


def _pairs(systems: tuple[str, ...], pairs: str, baseline: str | int | None
           ) -> tuple[list[tuple[int, int]], str | None]:
    """Index pairs ``(system, reference)`` and the baseline's name."""
    if pairs == "all":
        if baseline is not None:
            raise OptionError("baseline= and pairs='all' exclude each other: all pairs have no "
                              "baseline. Drop one of them.")
        return [(j, i) for i in range(len(systems)) for j in range(i + 1, len(systems))], None
    if baseline is None:
        base = 0
    elif isinstance(baseline, int) and not isinstance(baseline, bool):
        if not 0 <= baseline < len(systems):
            raise OptionError(f"baseline index {baseline} is out of range for {len(systems)} runs.")
        base = baseline
    elif baseline in systems:
        base = systems.index(str(baseline))
    else:
        raise OptionError(f"no run named {baseline!r} to use as the baseline; runs: "
                          f"{', '.join(systems)}.")
    return [(i, base) for i in range(len(systems)) if i != base], systems[base]


def _tukey_p(values: NDArray[np.float64], index: list[tuple[int, int]], test: str,
             n_permutations: int, rng: np.random.Generator) -> tuple[NDArray[np.float64], str]:
    """Tukey-adjusted p-values ``[n_measures, n_pairs]`` for the pairs in ``index``."""
    from serpeval.stats.tukey import randomized_tukey, tukey_hsd

    scores = values.transpose(1, 0, 2)                       # [measures, systems, queries]
    if PAIRED_TESTS[test].tukey == "randomized_tukey":
        result = randomized_tukey(scores, n_permutations=n_permutations, rng=rng)
        how = f"randomized Tukey HSD ({n_permutations} permutations)"
    else:
        result = tukey_hsd(scores, blocked=True)
        how = f"Tukey HSD (systems x queries ANOVA, df = {result.df})"
    rows = np.array([i for i, _ in index])
    cols = np.array([j for _, j in index])
    return np.asarray(result.p_value)[:, rows, cols], how


def compare_results(
    results: Results,
    options: CompareOptions | None = None,
    **keywords: Any,
) -> Comparison:
    """Compare the runs of an evaluation already done (see :func:`compare` for the options).

    Reads ``options``'s fields from ``baseline`` to ``strict``; the evaluation options
    (missing, depth, judged_only) were the evaluation's. ``keywords``: those fields as
    keywords, kept for one release (:func:`serpeval.core.options.resolve`).
    """
    o = resolve(CompareOptions, options, keywords, "compare_results", allowed=RESULTS_FIELDS)
    baseline, test, correction, pairs, alpha, confidence, ci, n_resamples, rng, strict = (
        o.baseline, o.test, o.correction, o.pairs, o.alpha, o.confidence, o.ci, o.n_resamples, o.rng, o.strict)
    return _compare(results, baseline, test, correction, pairs, alpha, confidence, ci, n_resamples, rng, strict)


def _compare(results: Results, baseline: str | int | None, test: str, correction: str | None, pairs: Pairs,
             alpha: float, confidence: float, ci: IntervalMethod | None, n_resamples: int, rng: RngLike,
             strict: bool) -> Comparison:
    from serpeval.evaluation.results import qrels_signatures
    from serpeval.stats.multiplicity import adjust, canonical_correction

    test = canonical_test(test)
    correction = canonical_correction(correction, extra=("tukey",))
    if pairs not in PAIRS:
        raise OptionError(f"pairs must be 'baseline' or 'all'; got {pairs!r}.")
    level = check_level(confidence, "confidence", example=0.95)
    alpha = check_level(alpha)
    ci = ci or ("bca" if test == "bootstrap" else "t")
    if ci not in CI_METHODS:
        raise OptionError(f"ci must be one of {', '.join(CI_METHODS)}; got {ci!r}.")
    resamples = check_resamples(n_resamples, "n_resamples")
    systems = tuple(results.run_names)
    if len(systems) < 2:
        raise StatsError(f"comparing needs at least two runs; got {len(systems)} "
                         f"({', '.join(systems) or 'none'}). Pass a baseline and a candidate.")
    if len(set(systems)) != len(systems):
        raise InputError(f"run names must differ to tell the systems apart; got "
                         f"{', '.join(systems)}.")
    if correction == "tukey" and PAIRED_TESTS[test].tukey is None:
        raise OptionError(f"correction='tukey' goes with test='t' (Tukey HSD) or "
                          f"test='randomization' (randomized Tukey HSD), not {test!r}; choose "
                          "holm, bonferroni or bh for that test.")
    index, base = _pairs(systems, pairs, baseline)
    query_ids, values, coverage = align_queries(results, strict=strict)
    generator = as_generator(rng)

    tested_values = test_scale(results.measures, values)
    x = tested_values[[i for i, _ in index]].transpose(1, 0, 2)   # [measures, pairs, queries]
    y = tested_values[[j for _, j in index]].transpose(1, 0, 2)
    tested = paired_test(test, x, y, confidence=level, n_resamples=resamples,
                         ci=ci if ci != "t" else "bca", rng=generator)
    if ci == "t":
        interval = tested if test == "t" else paired_t(x, y, confidence=level)
    elif test == "bootstrap":
        interval = tested
    else:
        interval = paired_bootstrap(x, y, n_resamples=resamples, ci=ci, confidence=level,
                                    rng=generator)
    # The bootstrap names its interval in its method; with ci="t" the interval shown is not it.
    method = p_value_method(tested.method) if ci == "t" else tested.method
    p = np.asarray(tested.p_value).reshape(len(results.measures), len(index))
    if correction == "tukey":
        corrected, how = _tukey_p(tested_values, index, test, resamples, generator)
        method += f"; corrected by {how}"
    else:
        corrected = adjust(p, correction)
    effect = np.asarray(cohens_dz(x, y))
    low, high = np.asarray(interval.ci_low), np.asarray(interval.ci_high)
    statistic = np.asarray(tested.statistic)

    n = len(query_ids)
    rows = []
    for j, m in enumerate(results.measures):
        # The interval is in the measure's units: times n for sums, none for geometric means.
        scale = {"sum": n, "gmean": np.nan}.get(m.spec.aggregate, 1.0)
        wins, ties, losses = wins_ties_losses(x[j] - y[j], m.spec.higher_is_better)
        aggregates = [m.aggregate(values[i, j]) for i in range(len(systems))]
        for k, (a, b) in enumerate(index):
            mean_a, mean_b = aggregates[a], aggregates[b]
            delta = mean_a - mean_b
            rows.append(PairResult(
                measure=str(m), system=systems[a], baseline=systems[b], queries=n,
                mean=mean_a, baseline_mean=mean_b, delta=delta,
                ci_low=float(low[j, k]) * scale, ci_high=float(high[j, k]) * scale,
                statistic=float(statistic[j, k]), p_value=float(p[j, k]),
                p_value_corrected=float(corrected[j, k]),
                significant=bool(corrected[j, k] <= alpha), effect_size=float(effect[j, k]),
                wins=int(wins[k]), ties=int(ties[k]), losses=int(losses[k]),
                improved=(delta > 0) == m.spec.higher_is_better and delta != 0,
            ))
    warning = qrels_warning(qrels_signatures(results.settings, results.runs), list(systems))
    return Comparison(
        measures=tuple(results.measures), systems=systems, baseline=base, pairs=pairs, test=test,
        method=method, correction=correction, alpha=float(alpha), confidence=level, ci=ci,
        resamples=0 if PAIRED_TESTS[test].resamples is None else tested.resamples, rows=tuple(rows),
        query_ids=query_ids, values=values, coverage=coverage, settings=results.settings,
        inputs=results.inputs(), warnings=() if warning is None else (warning,),
    )


def compare(
    qrels: Any,
    runs: Any,
    measures: str | Measure | Iterable[str | Measure] = ("nDCG@10", "AP"),
    options: CompareOptions | None = None,
    *,
    groups: Any = None,
    topics: Any = None,
    **keywords: Any,
) -> Comparison:
    """Compare runs with paired significance tests, corrected for multiple comparisons.

    Args:
        qrels: judgments (anything :func:`serpeval.evaluate` accepts).
        runs: two or more runs: a list (names from the files) or ``{name: run}``.
        measures: measure names in any dialect.
        options: a :class:`CompareOptions` (default ``CompareOptions()``): the fields below
            from ``baseline`` to ``judged_only``, ``group_correction`` and ``group_column``.
        keywords: those fields as keywords (``test="wilcoxon"``), kept for one release; one
            that conflicts with ``options`` is a :class:`TypeError`
            (:func:`serpeval.core.options.resolve`).
        baseline: name (or index) of the baseline run; default the first.
        test: ``"t"`` (paired t-test, default), ``"wilcoxon"``, ``"randomization"``
            (Fisher's sign-flip test, p = (b+1)/(m+1)) or ``"bootstrap"`` (studentized).
        correction: ``"holm"`` (default), ``"bonferroni"``, ``"bh"``, ``"tukey"``,
            ``"none"``/None; applied within each measure.
            ``test`` and ``correction`` are typed ``str``, not ``Literal``: aliases in any
            case (``student``, ``fisher``, ``permutation``, ``signed-rank``; ``fdr_bh``,
            ``benjamini-hochberg``, ``bonf``) are accepted.
        pairs: ``"baseline"`` (each system vs the baseline) or ``"all"`` (every pair).
        alpha: significance level of the corrected p-values.
        confidence: level of the delta's interval.
        ci: ``"t"``, ``"bca"`` or ``"percentile"``; default ``"t"`` (``"bca"`` for the
            bootstrap test).
        n_resamples: permutations / bootstrap resamples.
        groups: a per-group breakdown (``comparison.segments``, see
            :mod:`serpeval.comparison.segments`): a groups file (TSV ``qid<TAB>group``,
            JSONL, Parquet), ``{query: group or [groups]}``, a
            :class:`~serpeval.comparison.segments.Groups` or a built-in name
            (``"builtin:relevant"``, ``"builtin:difficulty"``, ``"builtin:length"``).
        group_correction: the correction across groups (``"holm"`` default, ``"bh"``...).
        topics: ``{query: text}`` for ``groups="builtin:length"``.
        group_column: the column of a JSONL or Parquet groups file that holds the group
            (default ``group``/``groups``); one the file lacks is refused, naming its columns.
        rng: seed or generator for the resampling tests (never global state).
        strict: refuse runs evaluated on different queries instead of comparing on the
            common ones.
        missing, depth, judged_only: evaluation options (see :func:`serpeval.evaluate`).

    Returns:
        :class:`Comparison`: ``.rows``, ``.to_dicts()``; rendered by
        :func:`serpeval.report.comparison.render_comparison`.

    Raises:
        StatsError: fewer than two runs, fewer than two common queries.
        InputError: ``strict`` and different query sets; duplicate run names.
        OptionError: an unknown test, correction, baseline or interval method.

    Examples:
        >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
        >>> good = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 2.0, "x": 1.0},
        ...         "q3": {"x": 2.0, "c": 1.0}}
        >>> bad = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"x": 2.0, "b": 1.0},
        ...        "q3": {"x": 2.0, "c": 1.0}}
        >>> c = compare(qrels, {"bad": bad, "good": good}, ["RR"])
        >>> row = c.row("good", "RR")
        >>> round(row.delta, 4), (row.wins, row.ties, row.losses)
        (0.3333, (2, 1, 0))
    """
    from serpeval.evaluation.evaluate import evaluate

    o = resolve(CompareOptions, options, keywords, "compare")
    if groups is not None:
        from serpeval.io import as_qrels

        qrels = as_qrels(qrels)          # read once: builtin:relevant counts its judgments
    results = evaluate(qrels, runs, measures, missing=o.missing, depth=o.depth, judged_only=o.judged_only,
                       ties=o.ties)
    comparison = _compare(results, o.baseline, o.test, o.correction, o.pairs, o.alpha, o.confidence, o.ci,
                          o.n_resamples, o.rng, o.strict)
    if groups is None:
        return comparison
    from serpeval.comparison.segments import with_segments

    return with_segments(comparison, groups, qrels=qrels, topics=topics, correction=o.group_correction,
                         rng=o.rng, column=o.group_column)
