"""Analyse an A/B experiment from its logs: :func:`analyze_ab`, :func:`monitor_ab`, :func:`plan_ab`.

The engine (DuckDB or Spark, through ibis) turns impressions into per-unit sums and those
into per-variant moments in one query; the statistics run on those few numbers
(:mod:`~serpeval.online.ab.effects`). Which test each metric gets:

- ratio metrics (CTR, abandonment, ...): z-test with the delta-method variance, clustered
  by unit (``use_t=True``: Welch's t with the same variance);
- per-unit means (``clicks_per_user``, ...): Welch's t-test;
- a 0/1 metric when the unit *is* the impression (``unit="impression_id"``): the
  two-proportion z-test.

With a pre-period log, CUPED adjusts every metric by its own pre-period value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from serpeval.errors import InputError, OptionError, StatsError
from serpeval.online.ab.effects import Effect, compare_means, cuped, two_proportion_ztest
from serpeval.online.ab.features import prepare
from serpeval.online.ab.metrics import DEFAULT_METRICS, ABMetric, get_metric
from serpeval.online.ab.moments import Moments, fetch_moments, unit_table
from serpeval.online.ab.results import ABResults, Comparison, PowerPlan, SequentialResults
from serpeval.online.ab.schema import LogSchema
from serpeval.online.ab.sources import collect, read_logs
from serpeval.online.ab.srm import srm_check

__all__ = ["analyze_ab", "monitor_ab", "plan_ab"]


def _metrics(metrics: Sequence[str | ABMetric] | str | None) -> list[ABMetric]:
    if metrics is None:
        metrics = DEFAULT_METRICS
    if isinstance(metrics, str):
        metrics = [metrics]
    chosen = [get_metric(m) for m in metrics]
    if not chosen:
        raise OptionError("choose at least one metric.")
    return list(dict.fromkeys(chosen))


def _needs(metrics: list[ABMetric]) -> tuple[str, ...]:
    return tuple(sorted({m.needs for m in metrics if m.needs}))


def _control(
    variants: Sequence[str],
    control: str | None,
    expected: Sequence[str] | None,
    experiment: str | None,
    source: str,
) -> tuple[str, list[str]]:
    """The control arm and the treatments; a clear error for arms without units."""
    found = list(variants)
    for name in [*(expected or ()), *([control] if control else [])]:
        if name not in found:
            raise InputError(
                f"{source}: variant {name!r} has no units in experiment "
                f"{experiment!r} (variants found: {', '.join(found) or 'none'}). "
                "Check the variant names, the experiment, and the exclusions."
            )
    if len(found) < 2:
        raise InputError(
            f"{source}: experiment {experiment!r} has units in only one variant "
            f"({', '.join(found) or 'none'}); an A/B test needs at least two."
        )
    if control is None:
        control = "control" if "control" in found else found[0]
    return control, [v for v in found if v != control]


def _pairs(metrics: list[ABMetric], with_pre: bool) -> tuple[set[str], set[tuple[str, str]]]:
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


def _compare(
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
    *,
    metrics: Sequence[str | ABMetric] | str | None = None,
    control: str | None = None,
    variants: Sequence[str] | None = None,
    split: Mapping[str, float] | Sequence[float] | None = None,
    pre: Any = None,
    cuped: bool | None = None,
    alpha: float = 0.05,
    correction: str = "holm",
    use_t: bool = False,
    srm_threshold: float = 0.001,
    duplicates: str = "error",
    long_click_seconds: float = 30.0,
    backend: str = "duckdb",
    schema: LogSchema | None = None,
    clicks: Any = None,
) -> ABResults:
    """Analyse one A/B experiment.

    Args:
        logs: a path, DataFrame, Arrow or ibis table, Spark DataFrame or
            :class:`~serpeval.online.ab.sources.Logs` (:func:`read_logs`).
        experiment: the experiment's name (None: the log's only experiment).
        metrics: names from :data:`~serpeval.online.ab.metrics.METRICS` (default: ctr,
            abandonment, clicks_at_1, mrr).
        control: the control arm (default: ``control`` if present, else the first name).
        variants: arms that must be present (an arm without units is an error).
        split: planned shares per variant for the sample-ratio check (default: equal).
        pre: pre-period impressions (same schema) for CUPED; also read from a log folder's
            ``pre.*``. ``cuped``: use it (default: when there is one).
        alpha, correction: level and multiple-testing correction across all comparisons
            (``holm``, ``bonferroni``, ``bh``, ``none``).
        use_t: Welch t (instead of z) for ratio metrics too.
        srm_threshold: p-value below which the split counts as a mismatch (warns).
        duplicates: ``error`` or ``exclude`` rows with a repeated impression id.
        long_click_seconds: dwell threshold of ``long_click_rate``.
        backend: ``duckdb`` or ``spark`` for paths and in-memory tables.
        schema: column names; clicks: a separate clicks table (events layout).
    """
    from serpeval.stats.multiplicity import adjust, canonical_correction

    correction = canonical_correction(correction)
    chosen = _metrics(metrics)
    opened = read_logs(logs, clicks=clicks, pre=pre, backend=backend, schema=schema)
    prepared = prepare(
        opened,
        experiment,
        duplicates=duplicates,
        long_click_seconds=long_click_seconds,
        need=_needs(chosen),
    )
    with_pre = opened.pre is not None if cuped is None else bool(cuped)
    if with_pre and opened.pre is None:
        raise OptionError(
            "cuped=True needs a pre-period log (pre=..., --pre PATH, or pre.* in the log folder)."
        )
    per_impression = opened.schema.unit == opened.schema.impression_id
    pre_features = None
    variables, pairs = _pairs(chosen, with_pre)
    variables.add("impressions")
    columns = {v for v in variables if not v.startswith("pre_")}
    if with_pre:
        pre_features = _pre_features(opened, chosen, long_click_seconds)
    units = unit_table(
        prepared.features, columns, pre=pre_features, pre_columns=columns if with_pre else None
    )
    keys, moments, mixed = fetch_moments(units, variables, pairs)
    names = [k["variant"] for k in keys]
    ctrl, treatments = _control(names, control, variants, prepared.experiment, opened.source)
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
        for treatment in treatments:
            effect, test, reduction = _compare(
                metric,
                by_name[ctrl],
                by_name[treatment],
                alpha=alpha,
                use_t=use_t,
                per_impression=per_impression,
                with_pre=with_pre,
            )
            found.append((metric, treatment, effect.scalar(), test, reduction))
    adjusted = adjust(np.array([float(e.p_value) for _, _, e, _, _ in found]), correction)
    comparisons = tuple(
        Comparison(
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
    notes = [srm.message(), *exclusions.notes()]
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


def _impressions(m: Moments) -> int:
    return round(float(m.n) * float(m.mean("impressions"))) if "impressions" in m.means else 0


def _pre_features(opened: Any, metrics: list[ABMetric], long_click_seconds: float) -> Any:
    """Per-impression features of the pre-period log (every row: no experiment filter)."""
    from serpeval.online.ab.sources import Logs

    pre_logs = Logs(
        opened.pre, None, None, opened.backend, f"{opened.source} (pre-period)", opened.schema
    )
    return prepare(
        pre_logs, "", need=_needs(metrics), long_click_seconds=long_click_seconds
    ).features


def _looks(start: Any, end: Any, looks: str | int) -> list[Any]:
    """Ends of the looks: midnight UTC after each day (``daily``) or ``looks`` equal steps."""
    import datetime as dt

    if looks == "daily":
        day0 = dt.datetime(start.year, start.month, start.day, tzinfo=start.tzinfo)
        days = (end - day0).days + 1
        return [day0 + dt.timedelta(days=k) for k in range(1, days + 1)]
    if isinstance(looks, bool) or not isinstance(looks, int) or not 1 <= looks <= 200:
        raise OptionError(f"looks must be 'daily' or a number of looks in 1..200; got {looks!r}.")
    step = (end - start) / looks
    edges = [start + step * k for k in range(1, looks)]
    return [*edges, end + dt.timedelta(microseconds=1)]


def monitor_ab(
    logs: Any,
    experiment: str | None = None,
    *,
    metric: str | ABMetric = "ctr",
    looks: str | int = "daily",
    control: str | None = None,
    alpha: float = 0.05,
    tuning_n: float | None = None,
    use_t: bool = False,
    duplicates: str = "error",
    long_click_seconds: float = 30.0,
    backend: str = "duckdb",
    schema: LogSchema | None = None,
    clicks: Any = None,
) -> SequentialResults:
    """Replay an experiment look by look with always-valid p-values (mSPRT).

    At look k every unit's impressions up to the look's end count (cumulative); the
    effect and its delta-method variance come from the same moments as :func:`analyze_ab`,
    and :func:`~serpeval.online.ab.sequential.always_valid` turns them into p-values and a
    confidence sequence that stay valid under continuous monitoring. The fixed-horizon
    p-value of each look is shown next to it: stopping at its first dip below alpha is the
    peeking error the always-valid one avoids.

    Args:
        looks: ``daily`` (a look at each midnight UTC) or a number of equally spaced looks.
        tuning_n: units at which the confidence sequence is narrowest (default: the units at
            the last look; pass the planned sample size when monitoring live).
        Others as in :func:`analyze_ab`.
    """
    import ibis

    from serpeval.online.ab.sequential import always_valid

    chosen = get_metric(metric)
    opened = read_logs(logs, clicks=clicks, backend=backend, schema=schema)
    prepared = prepare(
        opened,
        experiment,
        duplicates=duplicates,
        long_click_seconds=long_click_seconds,
        need=("timestamp", *_needs([chosen])),
    )
    f = prepared.features
    span = collect(f.aggregate(start=f.ts.min(), end=f.ts.max())).to_pylist()[0]
    if span["start"] is None:
        raise InputError(
            f"{opened.source}: every timestamp is missing; sequential looks need them."
        )
    ends = _looks(span["start"], span["end"], looks)
    look = ibis.cases(
        *[(f.ts < ibis.literal(end), k) for k, end in enumerate(ends, 1)], else_=len(ends)
    )
    f = f.mutate(look=look)
    mixed_units = (
        f.group_by("unit").aggregate(m=f.variant.min() != f.variant.max()).filter(lambda t: t.m)
    )
    f = f.anti_join(mixed_units, "unit")
    variables, pairs = _pairs([chosen], with_pre=False)
    variables.add("impressions")
    per_look = unit_table(f, variables, keys=["look"])
    ks = per_look.select(k="look").distinct()
    joined = per_look.inner_join(ks, per_look.look <= ks.k)
    sums = [
        c for c in per_look.columns if c not in ("unit", "look", "variant", "mixed", "user_ctr")
    ]
    cumulative = (
        joined.group_by(["unit", "k"])
        .aggregate(variant=joined.variant.min(), **{c: joined[c].sum() for c in sums})
        .mutate(mixed=ibis.literal(False))
    )
    if "user_ctr" in variables:
        cumulative = cumulative.mutate(user_ctr=cumulative.clicks / cumulative.impressions)
    keys, moments, _ = fetch_moments(cumulative, variables, pairs, by=("k", "variant"))
    names = sorted({k["variant"] for k in keys})
    ctrl, treatments = _control(names, control, None, prepared.experiment, opened.source)
    rows = []
    for treatment in treatments:
        rows.extend(
            _monitor_rows(
                chosen,
                keys,
                moments,
                ctrl,
                treatment,
                ends,
                alpha=alpha,
                use_t=use_t,
                tuning_n=tuning_n,
                always_valid=always_valid,
            )
        )
    rows.sort(key=lambda r: (r["look"], r["treatment"]))
    tuning = (
        tuning_n
        if tuning_n is not None
        else (rows[-1]["units_control"] + rows[-1]["units_treatment"] if rows else float("nan"))
    )
    notes = prepared.exclusions.notes()
    return SequentialResults(
        prepared.experiment or "",
        chosen.name,
        ctrl,
        tuple(rows),
        alpha,
        float(tuning),
        tuple(notes),
    )


def _monitor_rows(
    metric: ABMetric,
    keys: list[dict[str, Any]],
    moments: Moments,
    ctrl: str,
    treatment: str,
    ends: list[Any],
    *,
    alpha: float,
    use_t: bool,
    tuning_n: float | None,
    always_valid: Any,
) -> list[dict[str, Any]]:
    """Rows of one treatment: looks where both arms have at least 2 units."""
    looks = np.array([k["k"] for k in keys])
    variant = np.array([k["variant"] for k in keys])
    common = sorted(set(looks[variant == ctrl]) & set(looks[variant == treatment]))
    c_idx = np.array(
        [np.flatnonzero((looks == k) & (variant == ctrl))[0] for k in common], dtype=int
    )
    t_idx = np.array(
        [np.flatnonzero((looks == k) & (variant == treatment))[0] for k in common], dtype=int
    )
    ok = (moments.n[c_idx] >= 2) & (moments.n[t_idx] >= 2)
    c_idx, t_idx = c_idx[ok], t_idx[ok]
    if len(c_idx) == 0:
        return []
    effect, _, _ = _compare(
        metric,
        moments.take(c_idx),
        moments.take(t_idx),
        alpha=alpha,
        use_t=use_t,
        per_impression=False,
        with_pre=False,
    )
    n = moments.n[c_idx] + moments.n[t_idx]
    seq = always_valid(effect.effect, effect.se**2, n, alpha=alpha, tuning_n=tuning_n)
    rows = []
    for j, (ci, ti) in enumerate(zip(c_idx, t_idx, strict=True)):
        k = int(looks[ci])
        rows.append(
            {
                "look": k,
                "end": ends[k - 1],
                "treatment": treatment,
                "units_control": int(moments.n[ci]),
                "units_treatment": int(moments.n[ti]),
                "value_control": float(effect.control[j]),
                "value_treatment": float(effect.treatment[j]),
                "effect": float(effect.effect[j]),
                "ci_lower": float(effect.ci_lower[j]),
                "ci_upper": float(effect.ci_upper[j]),
                "p_value": float(effect.p_value[j]),
                "cs_lower": float(seq.ci_lower[j]),
                "cs_upper": float(seq.ci_upper[j]),
                "always_valid_p": float(seq.p_value[j]),
            }
        )
    return rows


def plan_ab(
    logs: Any,
    experiment: str | None = None,
    *,
    metrics: Sequence[str | ABMetric] | str | None = None,
    mde: float = 0.01,
    relative: bool = True,
    power: float = 0.8,
    alpha: float = 0.05,
    ratio: float = 1.0,
    control: str | None = None,
    pre: Any = None,
    backend: str = "duckdb",
    schema: LogSchema | None = None,
    clicks: Any = None,
) -> PowerPlan:
    """Units per arm needed to detect ``mde``, and the MDE of the units at hand, per metric.

    The baseline (value and per-unit delta-method variance) is the control arm of
    ``experiment``, or every unit of a log without experiments (a pre-launch log). With a
    pre-period log the plan is CUPED-aware: the variance shrinks by the observed ``rho^2``.

    Args:
        mde: the effect to detect: relative to the baseline (``relative=True``, 0.01 = 1%) or
            absolute.
        power, alpha, ratio: target power, level, treatment units per control unit.
    """
    from serpeval.online.ab import power as pw

    chosen = _metrics(metrics)
    opened = read_logs(logs, clicks=clicks, pre=pre, backend=backend, schema=schema)
    prepared = prepare(opened, experiment, need=_needs(chosen))
    with_pre = opened.pre is not None
    variables, pairs = _pairs(chosen, with_pre)
    variables.add("impressions")
    columns = {v for v in variables if not v.startswith("pre_")}
    pre_features = _pre_features(opened, chosen, 30.0) if with_pre else None
    units = unit_table(
        prepared.features, columns, pre=pre_features, pre_columns=columns if with_pre else None
    )
    keys, moments, _ = fetch_moments(units, variables, pairs)
    names = [k["variant"] for k in keys]
    base_name = (
        names[0]
        if len(names) == 1
        else _control(names, control, None, prepared.experiment, opened.source)[0]
    )
    base = moments.take(names.index(base_name))
    rows = []
    for m in chosen:
        value = float(base.ratio(m.numerator, m.denominator))
        variance = float(base.ratio_var(m.numerator, m.denominator))
        reduction = 0.0
        if with_pre:
            pre_num, pre_den = (
                f"pre_{m.numerator}",
                f"pre_{m.denominator}" if m.denominator else None,
            )
            var_z = float(base.ratio_var(pre_num, pre_den))
            cov = float(base.ratio_cov(m.numerator, m.denominator, pre_num, pre_den))
            reduction = cov * cov / (variance * var_z) if variance > 0 and var_z > 0 else 0.0
        delta = mde * value if relative else mde
        n_now = float(base.n)
        mde_now = pw.mde(
            variance, n_now, power=power, ratio=ratio, alpha=alpha, variance_reduction=reduction
        )
        rows.append(
            {
                "metric": m.name,
                "baseline": value,
                "sd_per_unit": math.sqrt(variance),
                "units_observed": int(n_now),
                "mde": mde,
                "relative": relative,
                "units_per_arm": math.ceil(
                    pw.sample_size(
                        delta,
                        variance,
                        power=power,
                        ratio=ratio,
                        alpha=alpha,
                        variance_reduction=reduction,
                    )
                ),
                "mde_at_observed": mde_now,
                "rel_mde_at_observed": mde_now / value if value else float("nan"),
                **({"variance_reduction": reduction} if with_pre else {}),
            }
        )
    notes = [
        f"baseline: {'all units' if len(names) == 1 else f'variant {base_name!r}'} of "
        f"{opened.source}",
        f"two-sided alpha = {alpha}, power = {power}, treatment/control = {ratio}",
    ]
    return PowerPlan(tuple(rows), alpha, power, tuple(notes))
