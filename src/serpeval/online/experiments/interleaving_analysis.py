"""Interleaving experiments analysed from logs: team credit in the engine, then the statistics.

Each logged impression carries the team of every shown position (``teams``: ``A``, ``B``,
or anything else for a shared/neutral result) and the clicked positions. In the engine:

1. credit per impression: ``credit_a`` / ``credit_b`` = the valid clicked positions of team
   A / B results, a position clicked twice counted once, as by the serving side's ``credit()``
   (:mod:`~serpeval.online.logs.features`); outcome = sign(credit_a - credit_b): +1 A wins,
   -1 B wins, 0 tie (no click, or equal credit);
2. per unit (user, query, or user-query pair): wins, losses, ties;
3. per pattern: how many units share each (wins, losses, ties) triple.

Only that small pattern table reaches Python; it becomes per-unit count arrays for
:func:`serpeval.online.interleaving.analysis.analyze_counts` (preference Delta, positive when
ranker B, the candidate, is preferred; sign test, bootstrap CI
resampling units, per-unit preference), the same statistics the serving-side API uses
(:func:`~serpeval.online.interleaving.analysis.analyze_outcomes` on the same impressions gives identical
numbers). The engine also counts, per position, how often each team supplied the result
(the interleaving analogue of a sample-ratio check), and, from the impression timestamps,
the cumulative Delta per day with its CI (:mod:`~serpeval.online.experiments.interleaving_over_time`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from serpeval.core.errors import InputError, OptionError
from serpeval.core.tabular import Tabular
from serpeval.online.experiments.interleaving_over_time import (
    SPAN,
    PreferenceOverTime,
    period_seconds,
    preference_over_time,
)
from serpeval.online.logs.features import Duplicates, Exclusions, prepare
from serpeval.online.logs.schema import LogSchema
from serpeval.online.logs.sources import collect, collect_sorted, count, read_logs
from serpeval.stats.validation import confidence_label

__all__ = ["InterleavingLogReport", "analyze_interleaving_logs"]

#: What the bootstrap resamples and the preference counts.
LogUnit = Literal["user", "query", "user_query", "impression"]
_UNITS: tuple[LogUnit, ...] = get_args(LogUnit)


@dataclass(frozen=True, eq=False)
class InterleavingLogReport(Tabular):
    """The analysis of an interleaving log.

    Attributes:
        analysis: :class:`serpeval.online.interleaving.analysis.InterleavingAnalysis` (wins, Delta
            (positive: B preferred), tests).
        checks: :class:`serpeval.online.interleaving.analysis.Check` list (first-pick and position balance).
        clicks: click totals ``{"team A": .., "team B": .., "other": ..}``.
        exclusions: rows and clicks left out, and why.
        experiment, source, backend, teams: what was analysed; ``teams`` are the labels of
            ranker A (the baseline) and ranker B (the candidate).
        over_time: :class:`~serpeval.online.experiments.interleaving_over_time.PreferenceOverTime`, the
            cumulative Delta per period with its CI (None without timestamps or when not
            asked for).
        source_notes: how the log was read (:attr:`~serpeval.online.logs.sources.Logs.notes`).
    """

    analysis: Any
    checks: tuple[Any, ...]
    clicks: dict[str, int]
    exclusions: Exclusions
    experiment: str
    source: str
    backend: str
    teams: tuple[str, str]
    over_time: PreferenceOverTime | None = None
    source_notes: tuple[str, ...] = ()

    def to_dicts(self) -> list[dict[str, Any]]:
        """The outcome row of :meth:`InterleavingAnalysis.to_dicts`, with A and B named."""
        rows = self.analysis.to_dicts()
        return [
            {"experiment": self.experiment, "A": self.teams[0], "B": self.teams[1], **row}
            for row in rows
        ]

    def over_time_rows(self) -> list[dict[str, Any]]:
        """One row per period (:meth:`PreferenceOverTime.to_dicts`); empty without a series."""
        return self.over_time.to_dicts() if self.over_time is not None else []

    def check_rows(self) -> list[dict[str, Any]]:
        """One row per validity check."""
        return [c.to_dict() for c in self.checks]

    def notes(self) -> list[str]:
        """The verdict (runs named), exclusions, click totals and failed checks, one sentence each."""
        a, b = self.teams
        d = self.analysis
        winner = {"B": f"winner: B, team {b!r} (the candidate)",
                  "A": f"winner: A, team {a!r} (the baseline)"}.get(
            d.winner, f"no winner at the {confidence_label(d.confidence)} level")
        notes = [
            f"delta (B-A) = (wins B + ties/2) / impressions - 1/2 = {d.delta:+.4f}, positive when "
            f"users prefer B, team {b!r} (the candidate), over A, team {a!r} (the baseline); {winner}",
            f"clicks on team {self.teams[0]}: {self.clicks['team A']:,}, team {self.teams[1]}: "
            f"{self.clicks['team B']:,}, shared or unassigned results (no credit): "
            f"{self.clicks['other']:,}",
            *self.exclusions.notes(),
            *self.source_notes,
        ]
        if self.over_time is not None and self.over_time.without_timestamp:
            notes.append(
                f"{self.over_time.without_timestamp:,} impression(s) without a timestamp "
                "left out of the preference over time"
            )
        notes += [f"CHECK FAILED: {c.name}: {c.detail}" for c in self.checks if not c.ok]
        return notes

    def to_json_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready (non-finite numbers as None with ``null_reasons``)."""
        from serpeval.core.strict_json import json_ready

        return json_ready({
            "experiment": self.experiment,
            "source": self.source,
            "backend": self.backend,
            "teams": list(self.teams),
            "results": self.to_dicts(),
            "checks": self.check_rows(),
            "clicks": self.clicks,
            "exclusions": self.exclusions.to_dict(),
            "notes": self.notes(),
            "over_time": self.over_time.to_json_dict() if self.over_time is not None else None,
        })


def analyze_interleaving_logs(
    logs: Any,
    experiment: str | None = None,
    *,
    teams: tuple[str, str] = ("A", "B"),
    unit: LogUnit = "user",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: int | np.random.Generator | None = None,
    alpha_checks: float = 0.001,
    duplicates: Duplicates = "error",
    backend: str = "duckdb",
    schema: LogSchema | None = None,
    clicks: Any = None,
    period: str | dt.timedelta | None = "day",
) -> InterleavingLogReport:
    """Decide between rankers A (the baseline) and B (the candidate) from an interleaving log
    (see the module docstring); the preference Δ is positive when B is preferred.

    Args:
        logs, experiment, duplicates, backend, schema, clicks: as in
            :func:`~serpeval.online.experiments.analyze_ab` (the log needs a ``teams`` column).
        teams: the labels of ranker A's (the baseline's) and ranker B's (the candidate's)
            results in ``teams``.
        unit: what the bootstrap resamples and the preference counts: ``user``, ``query``,
            ``user_query`` (pairs) or ``impression`` (independent impressions).
        confidence, n_resamples, rng: the bootstrap CI.
        alpha_checks: a balance check fails below this (Holm-corrected) p-value.
        period: the periods of the preference over time (``day``, ``hour``, ``week``,
            ``6h``... or a timedelta; UTC), from the ``timestamp`` column; None skips it
            (it is also skipped for a log without timestamps).
    """
    from serpeval.online.interleaving.analysis import analyze_counts

    if unit not in _UNITS:
        raise OptionError(f"unit must be one of {', '.join(_UNITS)}; got {unit!r}.")
    if len(teams) != 2 or teams[0] == teams[1]:
        raise OptionError(f"teams must be two different labels; got {teams!r}.")
    labels = (teams[0], teams[1])  # a list from untyped callers becomes the tuple
    if period is not None:
        period_seconds(period)  # a bad period is an error before any query runs
    opened = read_logs(logs, clicks=clicks, backend=backend, schema=schema)
    # whether the team labels occur, the balance check's width and the series' time span
    # ride along in prepare's counting pass (each a Spark query of its own otherwise); the
    # last two for the units whose rows are its rows (a query unit joins the query ids)
    along = unit in ("user", "impression")
    timed = period is not None and opened.schema.timestamp in opened.impressions.columns
    prepared = prepare(opened, experiment, duplicates=duplicates, teams=labels,
                       kept_aggregates={**_labels_seen(labels),
                                        **(_WIDTH if along else {}),
                                        **(SPAN if along and timed else {})})
    kept = prepared.kept or {}
    if unit in ("query", "user_query") and "query_id" not in prepared.present:
        raise OptionError(f"unit={unit!r} needs the query_id column ({opened.schema.query_id!r}).")
    f = prepared.features
    if not (kept.get("seen_a") and kept.get("seen_b")):  # (both seen: nothing to refuse)
        _check_team_labels(f, teams, opened.source, opened.schema.teams)
    if unit in ("query", "user_query"):
        query = opened.impressions.select(
            iid=opened.impressions[opened.schema.impression_id],
            query=opened.impressions[opened.schema.query_id],
        )
        f = f.inner_join(query, "iid")
    f = f.mutate(
        win=(f.credit_a > f.credit_b).cast("int64"), loss=(f.credit_a < f.credit_b).cast("int64")
    )
    keys = {
        "user": ["unit"],
        "query": ["query"],
        "user_query": ["unit", "query"],
        "impression": ["iid"],
    }[unit]
    # the balance checks' sums ride along, summed per unit, then per pattern (a query less)
    width = kept.get("width", -1)
    if width == -1:
        width = collect(f.aggregate(k=f.n_shown.max())).column("k")[0].as_py()
    width = int(width or 0)
    balance = _balance_sums(f, teams, width)
    per_unit = f.group_by(keys).aggregate(w=f.win.sum(), l=f.loss.sum(), n=f.count(),
                                          **{f"bal__{k}": v for k, v in balance.items()})
    patterns = (
        per_unit.group_by(["w", "l", "n"])
        .aggregate(units=per_unit.count(),
                   **{f"bal__{k}": per_unit[f"bal__{k}"].sum() for k in balance})
    )
    table = collect_sorted(patterns, ["w", "l", "n"])
    sums = {k: sum(v or 0 for v in table.column(f"bal__{k}").to_pylist()) for k in balance}
    wins, losses, counts, multiplicity = (
        np.asarray(table.column(c).to_numpy(), dtype=np.int64) for c in ("w", "l", "n", "units")
    )
    analysis = analyze_counts(
        np.repeat(wins, multiplicity),
        np.repeat(losses, multiplicity),
        np.repeat(counts - wins - losses, multiplicity),
        unit=unit,
        confidence=confidence,
        n_resamples=n_resamples,
        rng=rng,
    )
    over_time = None
    if period is not None and "timestamp" in prepared.present:
        over_time = preference_over_time(f, keys, period=period, confidence=confidence, unit=unit,
                                         span=kept if "first" in kept else None)
    checks, totals = _balance(sums, teams, alpha_checks, width)
    return InterleavingLogReport(
        analysis,
        tuple(checks),
        totals,
        prepared.exclusions,
        prepared.experiment or "",
        opened.source,
        opened.backend,
        labels,
        over_time,
        opened.notes,
    )


#: How many of the labels that do occur an error about absent team labels lists.
_LABELS_SHOWN = 12


def _labels_seen(teams: tuple[str, str]) -> dict[str, Any]:
    """prepare's ``kept_aggregates`` counting the kept impressions whose teams hold each label
    (both non-zero: :func:`_check_team_labels` has nothing to refuse and need not run)."""

    if not all(isinstance(label, str) for label in teams):  # (then the check's own query says)
        return {}
    return {
        "seen_a": lambda rows, keep: count(rows.teams.contains(teams[0]), where=keep),
        "seen_b": lambda rows, keep: count(rows.teams.contains(teams[1]), where=keep),
    }


def _check_team_labels(f: Any, teams: tuple[str, str], source: str, column: str) -> None:
    """Refuse team labels that never occur in the log, naming the labels that do.

    A label that never occurs earns no credit: with both absent every impression is a tie
    and the report says "no preference", with one absent the other ranker wins every
    clicked impression, and the balance checks pass on zero counts. One engine query counts
    the results per label (the given labels first, then the most frequent others); at most
    :data:`_LABELS_SHOWN` + 1 rows reach Python.

    Raises:
        InputError: the teams column holds no label at all (every list null or empty).
        OptionError: a given label never occurs.
    """
    import ibis

    slots = f.select(label=f.teams.unnest())
    slots = slots.filter(slots.label.notnull())
    per_label = slots.group_by("label").aggregate(n=slots.count())
    ours = per_label.label.isin(list(teams)).cast("int8")
    top = per_label.order_by([ibis.desc(ours), ibis.desc(per_label.n), per_label.label])
    rows = collect(top.limit(len(teams) + _LABELS_SHOWN)).to_pylist()
    counts = {r["label"]: int(r["n"]) for r in rows}
    absent = [t for t in teams if t not in counts]
    if not absent:
        return
    if not counts:
        raise InputError(
            f"{source}: column {column!r} holds no team label (every value is null, an empty "
            "list or a list of nulls), so no click can be credited to a ranker. An interleaving "
            f"log needs the team of every shown result there (e.g. [{teams[0]!r}, {teams[1]!r}, "
            "...])."
        )
    found = list(counts.items())
    shown = ", ".join(f"{label!r} ({n:,} results)" for label, n in found[:_LABELS_SHOWN])
    more = " and more" if len(found) > _LABELS_SHOWN else ""
    if len(found) == 2:
        (a, _), (b, _) = found
        fix = f"Did you mean teams=({a!r}, {b!r}) (--teams {a},{b})?"
    else:
        fix = "Give the labels of rankers A and B (teams=, --teams)."
    one = len(absent) == 1
    raise OptionError(
        f"{source}: team label{'' if one else 's'} {' and '.join(repr(t) for t in absent)} "
        f"(teams {teams[0]!r}, {teams[1]!r}) never occur{'s' if one else ''} in column "
        f"{column!r}, so no click could be credited to {'that ranker' if one else 'either ranker'}; "
        f"the labels there: {shown}{more}. {fix}"
    )


#: prepare's ``kept_aggregates`` for :func:`_balance`: the widest page of the kept impressions
_WIDTH = {"width": lambda rows, keep: rows.n_shown.max(where=keep)}


def _balance_sums(f: Any, teams: tuple[str, str], width: int) -> dict[str, Any]:
    """The sums :func:`_balance` reads (aggregates of ``f``): credit and clicks, and per
    position ``p < width`` how often team A / B holds it (``a{p}``, ``b{p}``)."""
    aggs: dict[str, Any] = {
        "credit_a": f.credit_a.sum(),
        "credit_b": f.credit_b.sum(),
        "clicks": f.clicks.sum(),
    }
    for p in range(width):
        label = f.teams[p]
        inside = f.teams.length() > p
        aggs[f"a{p}"] = (inside & (label == teams[0])).cast("int64").sum()
        aggs[f"b{p}"] = (inside & (label == teams[1])).cast("int64").sum()
    return aggs


def _balance(
    row: dict[str, Any], teams: tuple[str, str], alpha: float, width: int
) -> tuple[list[Any], dict[str, int]]:
    """First-pick and per-position team balance, and click totals, from the sums of
    :func:`_balance_sums` (``row``, counted in the engine with the unit patterns).

    ``width``: the largest ``n_shown`` of the kept impressions (0: no rows).
    """
    from scipy.stats import binomtest

    from serpeval.online.interleaving.analysis import Check
    from serpeval.stats.multiplicity import holm

    a = np.array([row[f"a{p}"] or 0 for p in range(width)], dtype=np.int64)
    b = np.array([row[f"b{p}"] or 0 for p in range(width)], dtype=np.int64)

    def p_value(x: int, y: int) -> float:
        return 1.0 if x + y == 0 else float(binomtest(int(x), int(x + y), 0.5).pvalue)

    checks = []
    if width:
        p_first = p_value(a[0], b[0])
        checks.append(
            Check(
                "first-pick balance",
                float(a[0] / max(a[0] + b[0], 1)),
                p_first,
                p_first >= alpha,
                f"team {teams[0]} holds position 1 in {a[0]:,} of {a[0] + b[0]:,} impressions",
            )
        )
        adjusted = holm(np.array([p_value(x, y) for x, y in zip(a, b, strict=True)]))
        worst = int(np.argmin(adjusted))
        share = a / np.maximum(a + b, 1)
        checks.append(
            Check(
                "per-position team balance",
                float(share[worst]),
                float(adjusted[worst]),
                bool(adjusted.min() >= alpha),
                f"share of team {teams[0]} per position {np.round(share, 3).tolist()}; most "
                f"unbalanced: position {worst + 1} (Holm-corrected)",
            )
        )
    totals = {"team A": int(row["credit_a"] or 0), "team B": int(row["credit_b"] or 0)}
    totals["other"] = int(row["clicks"] or 0) - totals["team A"] - totals["team B"]
    return checks, totals
