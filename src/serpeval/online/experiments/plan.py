"""Plan an A/B test from a log: units needed for an effect, the MDE of the units at hand."""

from __future__ import annotations

import math
from typing import Any

from serpeval.online.experiments.analysis import (
    chosen_metrics,
    cuped_with,
    moment_pairs,
    needed_columns,
    pre_features,
    split_arms,
)
from serpeval.online.experiments.options import PLAN_FIELDS, ABDesign, resolve_design
from serpeval.online.experiments.results import PowerPlan
from serpeval.online.logs.features import prepare
from serpeval.online.logs.moments import fetch_moments, unit_table
from serpeval.online.logs.sources import read_logs
from serpeval.stats import power as pw

__all__ = ["plan_ab"]


def plan_ab(
    logs: Any,
    experiment: str | None = None,
    design: ABDesign | None = None,
    *,
    mde: float = 0.01,
    relative: bool = True,
    power: float = 0.8,
    ratio: float = 1.0,
    pre: Any = None,
    clicks: Any = None,
    **keywords: Any,
) -> PowerPlan:
    """Units per arm needed to detect ``mde``, and the MDE of the units at hand, per metric.

    The baseline (value and per-unit delta-method variance) is the control arm of
    ``experiment``, or every unit of a log without experiments (a pre-launch log). With a
    pre-period log the plan is CUPED-aware (as :func:`~serpeval.online.experiments.analyze_ab`
    analyses it, by the design's ``cuped``): the variance shrinks by the observed ``rho^2``.

    Args:
        design: the :class:`~serpeval.online.experiments.options.ABDesign` of the experiment
            to plan; read: metrics, alpha (two-sided), control, cuped (True requires a
            pre-period log, False plans without one, None uses one when there is one),
            duplicates, long_click_seconds, backend, schema. The same design then analyses it.
        mde: the effect to detect: relative to the baseline (``relative=True``, 0.01 = 1%) or
            absolute.
        power, ratio: target power, treatment units per control unit.
        pre, clicks: as in :func:`~serpeval.online.experiments.analyze_ab`.
        keywords: the design's fields as keywords, kept for one release
            (:func:`serpeval.core.options.resolve`).
    """

    d = resolve_design(design, experiment, keywords, "plan_ab", allowed=PLAN_FIELDS)
    metrics, alpha, control, duplicates, backend, schema = (
        d.metrics, d.alpha, d.control, d.duplicates, d.backend, d.schema)
    chosen = chosen_metrics(metrics)
    opened = read_logs(logs, clicks=clicks, pre=pre, backend=backend, schema=schema)
    prepared = prepare(opened, experiment, duplicates=duplicates, long_click_seconds=d.long_click_seconds,
                       need=needed_columns(chosen))
    with_pre = cuped_with(opened, d.cuped)
    variables, pairs = moment_pairs(chosen, with_pre)
    variables.add("impressions")
    columns = {v for v in variables if not v.startswith("pre_")}
    pre_table = pre_features(opened, chosen, d.long_click_seconds) if with_pre else None
    units = unit_table(
        prepared.features, columns, pre=pre_table, pre_columns=columns if with_pre else None
    )
    keys, moments, mixed = fetch_moments(units, variables, pairs)
    names = [k["variant"] for k in keys]
    base_name = (
        names[0]
        if len(names) == 1
        else split_arms(names, control, None, prepared.experiment, opened.source, mixed["units"])[0]
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
        "CUPED with the pre-period log: the variance shrinks by the observed rho^2 (variance_reduction)"
        if with_pre else "without CUPED: no pre-period log" if opened.pre is None
        else "without CUPED: the pre-period log is not used (cuped=False, --no-cuped)",
        *prepared.exclusions.with_mixed(mixed["units"], mixed["rows"]).notes(),
        *opened.notes,
    ]
    return PowerPlan(tuple(rows), alpha, power, tuple(notes))
