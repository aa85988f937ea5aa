"""How often do the tests reject? Many experiments in one log, analysed in one query.

An A/A log (many experiments whose arms are identical) checks the false-positive rate: at
alpha = 0.05 a calibrated test rejects about 5% of them. A log where every experiment
carries the same injected effect checks power. :func:`rejection_rates` runs every
experiment of a log as its own A/B test, vectorized: the engine computes the moments of all
(experiment, variant) groups in one ``GROUP BY``, the statistics run as array operations
over experiments, no Python loop per test.

It reports each metric twice: the analysis :func:`~serpeval.online.experiments.analyze_ab` does
(clustered by unit, delta method) and the naive one that treats impressions as independent
(the mistake the delta method prevents: with users that differ, it rejects too often).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from serpeval.core.errors import InputError
from serpeval.online.experiments.analysis import chosen_metrics, compare_metric, moment_pairs, needed_columns
from serpeval.online.logs.features import ALL_EXPERIMENTS, prepare
from serpeval.online.logs.metrics import ABMetric
from serpeval.online.logs.moments import Moments, fetch_moments, unit_table
from serpeval.online.logs.schema import LogSchema
from serpeval.online.logs.sources import read_logs

__all__ = ["rejection_rates"]


def _pairs_by_experiment(keys: list[dict[str, Any]], control: str) -> tuple[Any, Any]:
    """Indices of the control and the (single) treatment group of every experiment."""
    experiments = np.array([k["experiment"] for k in keys])
    variants = np.array([k["variant"] for k in keys])
    names = np.unique(experiments)
    is_control = variants == control
    treated, arms = np.unique(experiments[~is_control], return_counts=True)
    if np.any(arms > 1):
        several = ", ".join(map(repr, treated[arms > 1][:5].tolist()))
        raise InputError(
            f"experiment(s) {several} have more than one arm besides the control {control!r}; "
            "each experiment must have the control and one other arm."
        )
    c_pos = dict(zip(experiments[is_control], np.flatnonzero(is_control), strict=True))
    t_pos = dict(zip(experiments[~is_control], np.flatnonzero(~is_control), strict=True))
    both = [e for e in names if e in c_pos and e in t_pos]
    if not both:
        raise InputError(f"no experiment has both the control {control!r} and another variant.")
    return np.array([c_pos[e] for e in both]), np.array([t_pos[e] for e in both])


def _rates(
    metric: ABMetric,
    m: Moments,
    keys: list[dict[str, Any]],
    control: str,
    alpha: float,
    per_impression: bool,
    label: str,
) -> dict[str, Any]:
    from scipy.stats import binomtest

    c_idx, t_idx = _pairs_by_experiment(keys, control)
    ok = (m.n[c_idx] >= 2) & (m.n[t_idx] >= 2)
    if not np.any(ok):
        raise InputError(
            f"no experiment has at least 2 units in both arms ({len(ok)} with the control "
            f"{control!r} and another arm); a test needs a variance in each arm."
        )
    c_idx, t_idx = c_idx[ok], t_idx[ok]
    effect, test, _ = compare_metric(
        metric,
        m.take(c_idx),
        m.take(t_idx),
        alpha=alpha,
        use_t=False,
        per_impression=per_impression,
        with_pre=False,
    )
    rejected = int(np.count_nonzero(np.asarray(effect.p_value) < alpha))
    tests = len(c_idx)
    ci = binomtest(rejected, tests).proportion_ci(0.95, method="wilson")
    return {
        "metric": metric.name,
        "analysis": label,
        "test": test,
        "experiments": tests,
        "rejections": rejected,
        "rate": rejected / tests,
        "ci_lower": float(ci.low),
        "ci_upper": float(ci.high),
        "mean_effect": float(np.mean(effect.effect)),
        "units_per_arm": float(np.mean(m.n[c_idx])),
    }


def rejection_rates(
    logs: Any,
    *,
    metrics: Sequence[str | ABMetric] | str | None = ("ctr",),
    alpha: float = 0.05,
    control: str = "control",
    naive: bool = True,
    backend: str = "duckdb",
    schema: LogSchema | None = None,
) -> list[dict[str, Any]]:
    """Share of a log's experiments whose test rejects at ``alpha``, per metric.

    Each experiment must have the ``control`` arm and one other arm. Returns one row per
    (metric, analysis) with the count of experiments, rejections, the rate and its 95%
    Wilson interval, the mean effect and the mean units per arm.
    """
    chosen = chosen_metrics(metrics)
    opened = read_logs(logs, backend=backend, schema=schema)
    prepared = prepare(opened, ALL_EXPERIMENTS, need=needed_columns(chosen))
    variables, pairs = moment_pairs(chosen, with_pre=False)
    variables.add("impressions")
    units = unit_table(prepared.features, variables, keys=["experiment"])
    keys, moments, _ = fetch_moments(units, variables, pairs, by=("experiment", "variant"))
    rows = [
        _rates(m, moments, keys, control, alpha, False, f"clustered by {opened.schema.unit}")
        for m in chosen
    ]
    if naive:
        impressions = prepared.features.mutate(mixed=False, user_ctr=prepared.features.clicks)
        keys, moments, _ = fetch_moments(
            impressions, variables, pairs, by=("experiment", "variant")
        )
        rows += [
            _rates(m, moments, keys, control, alpha, True, "naive: impressions independent")
            for m in chosen
        ]
    return rows
