"""Replay an A/B experiment look by look with always-valid p-values: :func:`monitor_ab`."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

from serpeval.core.errors import InputError, OptionError
from serpeval.online.experiments.analysis import (
    compare_metric,
    moment_pairs,
    needed_columns,
    split_arms,
)
from serpeval.online.experiments.options import MONITOR_FIELDS, ABDesign, resolve_design
from serpeval.online.experiments.results import SequentialResults
from serpeval.online.logs.features import drop_mixed_units, prepare
from serpeval.online.logs.metrics import ABMetric, get_metric
from serpeval.online.logs.moments import Moments, fetch_moments, unit_table
from serpeval.online.logs.sources import collect, count, read_logs

__all__ = ["monitor_ab"]


def _looks(start: Any, end: Any, looks: str | int) -> list[Any]:
    """Ends of the looks: midnight UTC after each day (``daily``) or ``looks`` equal steps."""

    if looks == "daily":
        day0 = dt.datetime(start.year, start.month, start.day, tzinfo=start.tzinfo)
        days = (end - day0).days + 1
        return [day0 + dt.timedelta(days=k) for k in range(1, days + 1)]
    if isinstance(looks, bool) or not isinstance(looks, int) or not 1 <= looks <= 200:
        raise OptionError(f"looks must be 'daily' or a number of looks in 1..200; got {looks!r}.")
    step = (end - start) / looks
    edges = [start + step * k for k in range(1, looks)]
    return [*edges, end + dt.timedelta(microseconds=1)]


def utc_wall_time(moment: Any) -> Any:
    """``moment`` as a naive datetime in UTC: the looks' ends read the same from every engine
    and input (DuckDB gives a zone-aware timestamp column back aware, Spark, whose sessions
    run in UTC, naive; a naive timestamp is taken as UTC, as the daily looks take it).

    >>> utc_wall_time(dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))))
    datetime.datetime(2026, 1, 2, 1, 0)
    """
    if getattr(moment, "tzinfo", None) is None:
        return moment
    return moment.astimezone(dt.UTC).replace(tzinfo=None)


def _one_metric(metric: Any) -> tuple[Any, ...]:
    """The old ``metric=`` keyword as the design's ``metrics``."""
    return (metric,)


def monitor_ab(
    logs: Any,
    experiment: str | None = None,
    design: ABDesign | None = None,
    *,
    looks: str | int = "daily",
    tuning_n: float | None = None,
    clicks: Any = None,
    **keywords: Any,
) -> SequentialResults:
    """Replay an experiment look by look with always-valid p-values (mSPRT).

    At look k every unit's impressions up to the look's end count (cumulative; impressions
    without a timestamp are in no look, and counted in the notes); the
    effect and its delta-method variance come from the same moments as :func:`analyze_ab`,
    and :func:`~serpeval.stats.sequential.always_valid` turns them into p-values and a
    confidence sequence that stay valid under continuous monitoring. The fixed-horizon
    p-value of each look is shown next to it: stopping at its first dip below alpha is the
    peeking error the always-valid one avoids. Each row's ``end`` is the look's end as a
    naive datetime in UTC, from either engine and whether the timestamps carry a zone or not
    (naive timestamps are taken as UTC).

    Args:
        design: the :class:`~serpeval.online.experiments.options.ABDesign`; read: metrics
            (exactly one is followed; None: ctr), control, alpha, use_t, duplicates,
            long_click_seconds, backend, schema. The old keyword ``metric="ctr"`` maps to
            ``metrics=("ctr",)``.
        looks: ``daily`` (a look at each midnight UTC) or a number of equally spaced looks.
        tuning_n: units at which the confidence sequence is narrowest (default: the units at
            the last look; pass the planned sample size when monitoring live).
        clicks, keywords: as in :func:`analyze_ab`.
    """
    import ibis

    from serpeval.stats.sequential import always_valid

    d = resolve_design(design, experiment, keywords, "monitor_ab", allowed=MONITOR_FIELDS,
                       renamed={"metric": ("metrics", _one_metric)})
    if d.metrics is not None and len(d.metrics) != 1:
        raise OptionError(f"monitor_ab follows one metric; the design has {len(d.metrics)} "
                          f"({', '.join(get_metric(m).name for m in d.metrics)}). Choose one: "
                          "dataclasses.replace(design, metrics=('ctr',)).")
    metric = "ctr" if d.metrics is None else d.metrics[0]
    control, alpha, use_t, duplicates, long_click_seconds, backend, schema = (
        d.control, d.alpha, d.use_t, d.duplicates, d.long_click_seconds, d.backend, d.schema)
    chosen = get_metric(metric)
    opened = read_logs(logs, clicks=clicks, backend=backend, schema=schema)
    prepared = prepare(
        opened,
        experiment,
        duplicates=duplicates,
        long_click_seconds=long_click_seconds,
        need=("timestamp", *needed_columns([chosen])),
        kept_aggregates=_SPAN,  # in the counting pass, not a query of its own
    )
    f = prepared.features
    span = prepared.kept or collect(
        f.aggregate(start=f.ts.min(), end=f.ts.max(), untimed=count(f.ts.isnull()))
    ).to_pylist()[0]
    if span["start"] is None:
        raise InputError(
            f"{opened.source}: every timestamp is missing; sequential looks need them."
        )
    ends = _looks(span["start"], span["end"], looks)
    # an impression without a timestamp belongs to no look: left out of all (and counted),
    # before the units seen in two variants are found, so that the last look is the
    # fixed-horizon analysis of the impressions with a timestamp
    untimed = int(span.get("untimed") or 0)
    if untimed:
        f = f.filter(f.ts.notnull())
    look = ibis.cases(
        *[(f.ts < ibis.literal(end), k) for k, end in enumerate(ends, 1)], else_=len(ends)
    )
    f = f.mutate(look=look)
    f, mixed_units, mixed_rows = drop_mixed_units(f)
    exclusions = prepared.exclusions.with_mixed(mixed_units, mixed_rows)
    variables, pairs = moment_pairs([chosen], with_pre=False)
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
    ctrl, treatments = split_arms(names, control, None, prepared.experiment, opened.source)
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
    notes = [*exclusions.notes(), *opened.notes]
    if untimed:
        notes.insert(len(exclusions.notes()),
                     f"{untimed:,} impression(s) without a timestamp left out of every look")
    return SequentialResults(
        prepared.experiment or "",
        chosen.name,
        ctrl,
        tuple(rows),
        alpha,
        float(tuning),
        tuple(notes),
    )


#: prepare's ``kept_aggregates`` for the first and last timestamps of the kept impressions
_SPAN = {
    "start": lambda rows, keep: rows.ts.min(where=keep),
    "end": lambda rows, keep: rows.ts.max(where=keep),
    "untimed": lambda rows, keep: count(rows.ts.isnull(), where=keep),
}


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
    group = {(key["k"], key["variant"]): i for i, key in enumerate(keys)}
    common = sorted(k for k, v in group if v == ctrl and (k, treatment) in group)
    c_idx = np.array([group[(k, ctrl)] for k in common], dtype=int)
    t_idx = np.array([group[(k, treatment)] for k in common], dtype=int)
    ok = (moments.n[c_idx] >= 2) & (moments.n[t_idx] >= 2)
    c_idx, t_idx = c_idx[ok], t_idx[ok]
    if len(c_idx) == 0:
        return []
    effect, _, _ = compare_metric(
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
        k = int(keys[ci]["k"])
        rows.append(
            {
                "look": k,
                "end": utc_wall_time(ends[k - 1]),
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
