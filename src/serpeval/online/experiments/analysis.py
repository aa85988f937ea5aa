"""Analyse an A/B experiment from its logs (:func:`analyze_ab`) and the shared helpers.

The engine (DuckDB or Spark, through ibis) turns impressions into per-unit sums and those
into per-variant moments in one query; the statistics run on those few numbers
(:mod:`~serpeval.stats.effects`). Which test each metric gets:

- ratio metrics (CTR, abandonment, ...): z-test with the delta-method variance, clustered
  by unit (``use_t=True``: Welch's t with the same variance);
- per-unit means (``clicks_per_user``, ...): Welch's t-test;
- a 0/1 metric when the unit *is* the impression (``unit="impression_id"``): the
  two-proportion z-test.

With a pre-period log, CUPED adjusts every metric by its own pre-period value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from serpeval.core.errors import InputError, OptionError, StatsError
from serpeval.online.experiments.options import ABDesign, resolve_design
from serpeval.online.experiments.results import ABResults, MetricComparison
from serpeval.online.logs.features import prepare
from serpeval.online.logs.metrics import DEFAULT_METRICS, ABMetric, get_metric
from serpeval.online.logs.moments import Moments, fetch_moments, unit_table
from serpeval.online.logs.sources import Logs, read_logs
from serpeval.stats.effects import NO_VARIANCE, Effect, compare_means, cuped, no_variance, two_proportion_ztest
from serpeval.stats.multiplicity import adjust
from serpeval.stats.srm import srm_check

__all__ = ["ABDesign", "analyze_ab", "compare_metric", "cuped_with", "moment_pairs", "pre_features", "split_arms"]


def chosen_metrics(metrics: Sequence[str | ABMetric] | str | None) -> list[ABMetric]:
    if metrics is None:
        metrics = DEFAULT_METRICS
    if isinstance(metrics, str):
        metrics = [metrics]
    chosen = [get_metric(m) for m in metrics]
    if not chosen:
        raise OptionError("choose at least one metric.")
    return list(dict.fromkeys(chosen))


def needed_columns(metrics: list[ABMetric]) -> tuple[str, ...]:
    return tuple(sorted({m.needs for m in metrics if m.needs}))


def split_arms(
    variants: Sequence[str],
    control: str | None,
    expected: Sequence[str] | None,
    experiment: str | None,
    source: str,
    mixed_units: int = 0,
) -> tuple[str, list[str]]:
    """The control arm and the treatments; a clear error for arms without units (saying how
    many units were left out for being seen in more than one variant, ``mixed_units``: an arm
    can be empty because every unit of it was)."""
    left_out = (f"; {mixed_units:,} unit(s) seen in more than one variant were left out (check how "
                "units are assigned to variants)") if mixed_units else ""
    found = list(variants)
    for name in [*(expected or ()), *([control] if control else [])]:
        if name not in found:
            raise InputError(
                f"{source}: variant {name!r} has no units in experiment "
                f"{experiment!r} (variants found: {', '.join(found) or 'none'}){left_out}. "
                "Check the variant names, the experiment, and the exclusions."
            )
    if len(found) < 2:
        raise InputError(
            f"{source}: experiment {experiment!r} has units in only one variant "
            f"({', '.join(found) or 'none'}){left_out}; an A/B test needs at least two."
        )
    if control is None:
        control = "control" if "control" in found else found[0]
    return control, [v for v in found if v != control]


def cuped_with(opened: Logs, cuped: bool | None) -> bool:
    """Whether an analysis or plan uses CUPED: the design's ``cuped`` (True requires a
    pre-period log, False ignores one), else whether the log has a pre-period."""
    if cuped is None:
        return opened.pre is not None
    if cuped and opened.pre is None:
        raise OptionError(
            "cuped=True needs a pre-period log (pre=..., --pre PATH, or pre.* in the log folder)."
        )
    return bool(cuped)


def moment_pairs(metrics: list[ABMetric], with_pre: bool) -> tuple[set[str], set[tuple[str, str]]]:
    variables: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for m in metrics:
        variables.update(m.variables)
        if m.denominator:
            pairs.add((m.numerator, m.denominator))
        if with_pre:
            mine = list(m.variables)
            pre = [f"pre_{v}" for v in m.variables]
            variables.update(pre)
            pairs.update((a, b) for a in mine for b in pre)
            if m.denominator:
                pairs.add((pre[0], pre[1]))
    return variables, pairs


def compare_metric(
    metric: ABMetric,
    c: Moments,
    t: Moments,
    *,
    alpha: float,
    use_t: bool,
    per_impression: bool,
    with_pre: bool,
) -> tuple[Effect, str, float | None]:
    """The effect of one metric between two single-group Moments, and the test's name."""
    num, den = metric.numerator, metric.denominator
    if with_pre:
        arms = cuped(c, t, num, den, f"pre_{num}", f"pre_{den}" if den else None)
        welch = use_t or den is None
        effect = compare_means(
            arms.mean_c, arms.var_c, c.n, arms.mean_t, arms.var_t, t.n, alpha=alpha, use_t=welch
        )
        name = "CUPED " + ("Welch t" if welch else "delta-method z")
        return effect, name, float(arms.variance_reduction)
    if per_impression and metric.binary:
        return (
            two_proportion_ztest(
                np.round(c.mean(num) * c.n), c.n, np.round(t.mean(num) * t.n), t.n, alpha=alpha
            ),
            "two-proportion z",
            None,
        )
    if den is None:
        return (
            compare_means(
                c.mean(num),
                c.cov(num, num),
                c.n,
                t.mean(num),
                t.cov(num, num),
                t.n,
                alpha=alpha,
                use_t=True,
            ),
            "Welch t",
            None,
        )
    return (
        compare_means(
            c.ratio(num, den),
            c.ratio_var(num, den),
            c.n,
            t.ratio(num, den),
            t.ratio_var(num, den),
            t.n,
            alpha=alpha,
            use_t=use_t,
        ),
        "delta-method " + ("t" if use_t else "z"),
        None,
    )


def analyze_ab(
    logs: Any,
    experiment: str | None = None,
    design: ABDesign | None = None,
    *,
    pre: Any = None,
    clicks: Any = None,
    **keywords: Any,
) -> ABResults:
    """Analyse one A/B experiment.

    Args:
        logs: a path, DataFrame, Arrow or ibis table, Spark DataFrame or
            :class:`~serpeval.online.logs.sources.Logs` (:func:`read_logs`).
        experiment: the experiment's name (None: the log's only experiment).
        design: the :class:`~serpeval.online.experiments.options.ABDesign` (metrics,
            control, variants, split, alpha, correction, use_t, cuped, srm_threshold,
            duplicates, long_click_seconds, backend, schema); all its fields are read.
            Default ``ABDesign()``: ctr, abandonment, clicks_at_1 and mrr at alpha 0.05,
            Holm-corrected across all comparisons.
        pre: pre-period impressions (same schema) for CUPED; also read from a log folder's
            ``pre.*``. ``design.cuped``: use it (default: when there is one).
        clicks: a separate clicks table (events layout).
        keywords: the design's fields as keywords (``alpha=0.01``), the spelling before
            :class:`ABDesign`, kept for one release; one that conflicts with ``design`` is a
            :class:`TypeError` (:func:`serpeval.core.options.resolve`).

    The tests: ratio metrics get the delta-method z (Welch's t with ``use_t``), per-unit
    means Welch's t, 0/1 metrics of an impression-level unit the two-proportion z; the
    p-values are adjusted by ``correction`` over every (metric, treatment) pair.
    """

    d = resolve_design(design, experiment, keywords, "analyze_ab")
    metrics, control, variants, split, cuped, alpha, correction, use_t = (
        d.metrics, d.control, d.variants, d.split, d.cuped, d.alpha, d.correction, d.use_t)
    srm_threshold, duplicates, long_click_seconds, backend, schema = (
        d.srm_threshold, d.duplicates, d.long_click_seconds, d.backend, d.schema)
    chosen = chosen_metrics(metrics)
    opened = read_logs(logs, clicks=clicks, pre=pre, backend=backend, schema=schema)
    prepared = prepare(
        opened,
        experiment,
        duplicates=duplicates,
        long_click_seconds=long_click_seconds,
        need=needed_columns(chosen),
    )
    with_pre = cuped_with(opened, cuped)
    per_impression = opened.schema.unit == opened.schema.impression_id
    pre_table = None
    variables, pairs = moment_pairs(chosen, with_pre)
    variables.add("impressions")
    columns = {v for v in variables if not v.startswith("pre_")}
    if with_pre:
        pre_table = pre_features(opened, chosen, long_click_seconds)
    units = unit_table(
        prepared.features, columns, pre=pre_table, pre_columns=columns if with_pre else None
    )
    keys, moments, mixed = fetch_moments(units, variables, pairs)
    names = [k["variant"] for k in keys]
    ctrl, treatments = split_arms(names, control, variants, prepared.experiment, opened.source, mixed["units"])
    exclusions = prepared.exclusions.with_mixed(mixed["units"], mixed["rows"])
    by_name = {name: moments.take(i) for i, name in enumerate(names)}
    counts = {name: int(by_name[name].n) for name in names}
    for name, n in counts.items():
        if n < 2:
            raise StatsError(
                f"variant {name!r} has {n} unit(s) after exclusions; at least 2 are needed."
            )
    srm = srm_check(counts, split, threshold=srm_threshold)

    found = []
    for metric in chosen:
        _refuse_undefined(metric, {name: by_name[name] for name in (ctrl, *treatments)}, opened.source)
        for treatment in treatments:
            effect, test, reduction = compare_metric(
                metric,
                by_name[ctrl],
                by_name[treatment],
                alpha=alpha,
                use_t=use_t,
                per_impression=per_impression,
                with_pre=with_pre,
            )
            found.append((metric, treatment, effect.scalar(), test, reduction))
    adjusted = adjust_tested(np.array([float(e.p_value) for _, _, e, _, _ in found]), correction)
    untested = [f"{metric.name}, {treatment} vs {ctrl}: {NO_VARIANCE}; left out of the {correction} "
                "correction" for metric, treatment, e, _, _ in found if no_variance(e)]
    comparisons = tuple(
        MetricComparison(
            metric.name,
            ctrl,
            treatment,
            test,
            counts[ctrl],
            counts[treatment],
            effect,
            float(p_adj),
            alpha,
            metric.higher_is_better,
            reduction,
        )
        for (metric, treatment, effect, test, reduction), p_adj in zip(found, adjusted, strict=True)
    )
    variant_counts = {
        name: {"units": counts[name], "impressions": _impressions(by_name[name])} for name in names
    }
    notes = [srm.message(), *untested, *exclusions.notes(), *opened.notes]
    return ABResults(
        experiment=prepared.experiment or "",
        source=opened.source,
        backend=opened.backend,
        unit=opened.schema.unit,
        comparisons=comparisons,
        variants=variant_counts,
        srm=srm,
        exclusions=exclusions,
        alpha=alpha,
        correction=correction,
        cuped=with_pre,
        notes=tuple(notes),
    )


def adjust_tested(p_values: Any, correction: str) -> Any:
    """``correction`` over the finite p-values only (the comparisons with a test); a comparison
    without one (NaN: no variance, too few units) stays NaN and is not in the family."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = adjust(p[ok], correction)
    return out


def _refuse_undefined(metric: ABMetric, arms: dict[str, Moments], source: str) -> None:
    """A ratio metric whose denominator sums to 0 over an arm's units (no impression of the
    arm with a click time, for ``time_to_first_click``) has no value there: refused, naming
    the metric and the arm, rather than a NaN that no test can take."""
    if metric.denominator is None:
        return
    empty = [name for name, m in arms.items() if not float(m.mean(metric.denominator)) > 0]
    if empty:
        column = f", or check the log's {metric.needs} column" if metric.needs else ""
        raise StatsError(
            f"{source}: metric {metric.name!r} ({metric.description}) has no value in variant "
            f"{empty[0]!r}: its denominator ({metric.denominator}) is 0 in every unit of that variant. "
            f"Leave it out of the metrics (-m){column}."
        )


def _impressions(m: Moments) -> int:
    return round(float(m.n) * float(m.mean("impressions"))) if "impressions" in m.means else 0


def pre_features(opened: Any, metrics: list[ABMetric], long_click_seconds: float) -> Any:
    """Per-impression features of the pre-period log (every row: no experiment filter)."""

    pre_logs = Logs(
        opened.pre, None, None, opened.backend, f"{opened.source} (pre-period)", opened.schema
    )
    return prepare(
        pre_logs, "", need=needed_columns(metrics), long_click_seconds=long_click_seconds
    ).features
