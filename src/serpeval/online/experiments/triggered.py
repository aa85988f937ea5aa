"""Triggered analysis: the standard variance reduction of A/B tests and interleaving.

A ranking change usually alters the page of only some requests. On the others both arms
show the same page, so they add noise and no signal. With **counterfactual logging** the
serving system computes both arms' top k for every request and logs whether they differ
(the ``triggered`` column of :mod:`~serpeval.online.logs.schema`). The analysis then runs
on the triggered impressions only and scales the effect back to the whole population:

* **A/B** (:func:`analyze_ab_triggered`): for a metric averaged over impressions (CTR,
  abandonment, clicks@1, MRR, long clicks) the population effect is ``Δ_triggered · r``
  with ``r`` = triggered impressions / all impressions; for a per-unit mean (clicks per
  user, impressions per user) ``r`` = units with a triggered impression / all units (an
  untriggered impression has the same distribution in both arms, so it contributes zero
  effect in expectation). The CI scales with ``r``; the p-value is the triggered test's
  (the same null hypothesis, tested with less noise). Metrics that are not sums over
  impressions or units (``user_ctr``, ``time_to_first_click``) are refused.
* **Interleaving** (:func:`analyze_interleaving_triggered`): only impressions whose two
  rankings differ are credited (on the others team draft's outcome is a coin flip);
  ``Δ_all = Δ_triggered · r`` with ``r`` the triggered share of impressions. Drafting with
  ``ignore_shared`` (shared picks on no team, their clicks ignored) is the in-list version
  of the same idea; the teams of the log say which was used.

Both also run the untriggered analysis on every impression, so each result shows the two
estimates side by side with the ratio of their standard errors (below 1: triggering helped).
The rates come from the engine's per-variant counts of the two analyses (same exclusions).
The trigger must not depend on the arm: a triggered share that differs between arms means
the counterfactual logging is broken (:attr:`TriggeredAB.rates` shows each arm's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from serpeval.core.errors import InputError, OptionError
from serpeval.core.tabular import Tabular
from serpeval.online.experiments.analysis import analyze_ab, chosen_metrics
from serpeval.online.experiments.options import ABDesign, resolve_design
from serpeval.online.experiments.results import ABResults
from serpeval.online.logs.schema import LogSchema, check_columns
from serpeval.online.logs.sources import Logs, read_logs

__all__ = ["TriggeredAB", "TriggeredInterleaving", "analyze_ab_triggered",
           "analyze_interleaving_triggered", "triggered_logs"]

#: denominators whose triggered share scales a metric: impressions, or units (None)
_SCALABLE = ("impressions", None)


def triggered_logs(logs: Any, *, backend: str = "duckdb", schema: LogSchema | None = None,
                   clicks: Any = None, pre: Any = None, keep_mixed: bool = False) -> tuple[Logs, Logs]:
    """``(every impression, triggered impressions only)`` of a log with a ``triggered`` column.

    The filter stays in the engine (an ibis expression); a clicks table (events layout) is
    restricted to the triggered impressions too, so that clicks on untriggered pages are not
    counted as clicks without impressions.

    An impression whose ``triggered`` flag is NULL is in neither part: the whole log's
    analysis leaves it out and counts it (``Exclusions.missing_trigger``, with a note), so
    the two analyses and the trigger rate are over the same impressions.

    ``keep_mixed`` (A/B logs): the triggered part also keeps every impression of a unit seen
    in more than one variant of an experiment. Such a unit is excluded from both analyses
    (and counted); were only its triggered pages kept, those could all lie in one arm and
    the unit would enter the triggered analysis, and the trigger rate, as a clean unit.
    """
    opened = read_logs(logs, clicks=clicks, pre=pre, backend=backend, schema=schema)
    check_columns(opened.impressions, opened.schema, ["triggered"], source=opened.source)
    # a NULL flag says neither triggered nor untriggered: such an impression is left out of
    # both parts, and counted once, in the whole log's exclusions (Logs.known_trigger)
    opened = replace(opened, known_trigger=True)
    table = opened.impressions
    flag = opened.schema.triggered
    known = table.filter(table[flag].notnull())
    kept = known.filter(known[flag])
    if keep_mixed and opened.schema.variant in table.columns:
        # the flag as a column first: ibis's Spark SQL cannot filter on a window directly;
        # decided over the pages with a known flag, as the whole analysis sees the unit
        flagged = known.mutate(__serpeval_mixed=_in_mixed_unit(known, opened.schema))
        kept = flagged.filter(flagged[flag] | flagged.__serpeval_mixed).drop("__serpeval_mixed")
    events = opened.clicks
    if events is not None:
        ids = kept.select(_iid=kept[opened.schema.impression_id])
        events = events.semi_join(ids, events[opened.schema.impression_id] == ids._iid)
    return opened, replace(opened, impressions=kept, clicks=events, clicks_matched=events is not None,
                           unrestricted_clicks=opened.clicks, known_trigger=False,
                           source=f"{opened.source} (triggered impressions)")


def _unit_keys(table: Any, s: LogSchema) -> list[str]:
    """A unit within its experiment: the columns that identify it."""
    return [s.unit, *([s.experiment] if s.experiment in table.columns else [])]


def _in_mixed_unit(table: Any, s: LogSchema) -> Any:
    """Per row: whether its unit (within its experiment) has impressions of more than one
    variant (NULL variants ignored; a row whose unit or experiment is NULL belongs to no
    unit: False).

    A window over the unit's rows, so that the triggered part is one filter of one scan
    (on Spark each extra scan, join and shuffle of the log is a stage, a job, of each query
    that reads it: the triggered A/B ran 44 jobs with a union and a semi-join here).
    """
    keys = _unit_keys(table, s)
    variant = table[s.variant].cast("string")
    by = [table[k] for k in keys]
    mixed = (variant.min().over(group_by=by) != variant.max().over(group_by=by)).fill_null(False)
    for key in by:
        mixed = mixed & key.notnull()
    return mixed


def _share(part: float, whole: float) -> float:
    return part / whole if whole else math.nan


@dataclass(frozen=True, eq=False)
class TriggeredAB(Tabular):
    """A/B results on every impression and on the triggered ones, scaled.

    Attributes:
        untriggered: :class:`~serpeval.online.experiments.results.ABResults` on every impression.
        triggered: the same analysis on the triggered impressions only (unscaled effects:
            the effect among triggered impressions/units).
        trigger_rate: triggered impressions / impressions (all arms).
        unit_trigger_rate: units with a triggered impression / units.
        rates: per variant, its triggered share of impressions (equal in expectation).
        scales: per metric, the factor r its triggered effect is multiplied by.
    """

    untriggered: ABResults
    triggered: ABResults
    trigger_rate: float
    unit_trigger_rate: float
    rates: dict[str, float]
    scales: dict[str, float]

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per metric and treatment: both estimates, and the SE ratio."""
        rows = []
        triggered = {(c.metric, c.treatment): c for c in self.triggered.comparisons}
        for full in self.untriggered.comparisons:
            trig = triggered.get((full.metric, full.treatment))
            if trig is None:  # pragma: no cover - both analyses ran the same metrics and arms
                continue
            r = self.scales[full.metric]
            e, t = full.estimate, trig.estimate
            rows.append({
                "metric": full.metric, "control": full.control, "treatment": full.treatment,
                "effect": float(e.effect), "ci_lower": float(e.ci_lower), "ci_upper": float(e.ci_upper),
                "p_value": float(e.p_value),
                "triggered_effect": float(t.effect) * r, "triggered_ci_lower": float(t.ci_lower) * r,
                "triggered_ci_upper": float(t.ci_upper) * r, "triggered_p_value": float(t.p_value),
                "triggered_p_value_adjusted": float(trig.p_value_adjusted),
                "scale": r, "se_ratio": float(t.se) * r / float(e.se) if float(e.se) else math.nan,
                "verdict": trig.verdict,
            })
        return rows

    def notes(self) -> list[str]:
        """The trigger rates and how the effect was scaled."""
        arms = ", ".join(f"{v} {rate:.2%}" for v, rate in self.rates.items())
        return [
            f"triggered impressions: {self.trigger_rate:.2%} of all ({arms}); units with a triggered "
            f"impression: {self.unit_trigger_rate:.2%}",
            "triggered effect = effect among triggered impressions x the triggered share of the "
            "metric's denominator (impressions; units for per-unit metrics); p from the triggered test",
            "se_ratio = scaled triggered SE / untriggered SE (below 1: triggering reduced the variance)",
            *self.srm_messages(),
            *[n for n in self.untriggered.notes if n != self.untriggered.srm.message()],
        ]

    def srm_messages(self) -> list[str]:
        """The sample-ratio check of the whole log and of its triggered part, each labelled.

        Both matter: the whole log's split tests the assignment; the triggered part's tests
        the counterfactual logging too (a trigger that depends on the arm skews only it).
        """
        return [f"every impression: {self.untriggered.srm.message()}",
                f"triggered impressions: {self.triggered.srm.message()}"]


def analyze_ab_triggered(logs: Any, experiment: str | None = None, design: ABDesign | None = None, *,
                         clicks: Any = None, pre: Any = None, **keywords: Any) -> TriggeredAB:
    """Analyse an A/B test on the triggered impressions, scaled to the population (module docstring).

    Args:
        logs, experiment, design, clicks, pre: as in
            :func:`~serpeval.online.experiments.analysis.analyze_ab` (every field of the
            :class:`~serpeval.online.experiments.options.ABDesign` is read); the log needs the
            ``triggered`` column.
        keywords: the design's fields as keywords, kept for one release.
    """
    d = resolve_design(design, experiment, keywords, "analyze_ab_triggered")
    chosen = chosen_metrics(d.metrics)
    refused = [m.name for m in chosen if m.denominator not in _SCALABLE or m.name == "user_ctr"]
    if refused:
        raise OptionError(
            f"triggered analysis cannot scale {', '.join(refused)} back to all impressions (not a "
            "sum over impressions or units); choose among ctr, abandonment, clicks_at_1, mrr, "
            "long_click_rate, clicks_per_user, impressions_per_user."
        )
    every, kept = triggered_logs(logs, backend=d.backend, schema=d.schema, clicks=clicks, pre=pre,
                                 keep_mixed=True)
    opened = replace(d, metrics=tuple(chosen), schema=None)      # the logs are open, with their schema
    full = analyze_ab(every, experiment, opened)
    part = analyze_ab(kept, experiment, opened)
    if not part.comparisons:  # pragma: no cover - analyze_ab raises first
        raise InputError(f"{every.source}: no triggered impressions.")
    imps = {v: (part.variants.get(v, {}).get("impressions", 0), c["impressions"])
            for v, c in full.variants.items()}
    units = (sum(c["units"] for c in part.variants.values()), sum(c["units"] for c in full.variants.values()))
    rate = _share(sum(p for p, _ in imps.values()), sum(a for _, a in imps.values()))
    unit_rate = _share(*units)
    scales = {m.name: unit_rate if m.denominator is None else rate for m in chosen}
    return TriggeredAB(full, part, rate, unit_rate, {v: _share(*pa) for v, pa in imps.items()}, scales)


@dataclass(frozen=True, eq=False)
class TriggeredInterleaving(Tabular):
    """An interleaving log analysed on every impression and on the triggered ones.

    Attributes:
        untriggered, triggered: :class:`~serpeval.online.experiments.interleaving_analysis.InterleavingLogReport`
            on every impression / on the triggered impressions only.
        trigger_rate: triggered impressions / impressions (after the same exclusions).
    """

    untriggered: Any
    triggered: Any
    trigger_rate: float

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row: Δ on every impression, and the triggered Δ scaled by the trigger rate."""
        a, t, r = self.untriggered.analysis, self.triggered.analysis, self.trigger_rate
        half = [(x.ci_high - x.ci_low) / 2 for x in (a, t)]
        return [{
            "experiment": self.untriggered.experiment, "A": self.untriggered.teams[0],
            "B": self.untriggered.teams[1], "impressions": a.impressions, "delta": a.delta,
            "ci_low": a.ci_low, "ci_high": a.ci_high, "p": a.p_value,
            "triggered impressions": t.impressions, "trigger rate": r,
            "triggered delta": t.delta * r, "triggered ci_low": t.ci_low * r,
            "triggered ci_high": t.ci_high * r, "triggered p": t.p_value,
            "ci width ratio": half[1] * r / half[0] if half[0] else math.nan,
            "winner": t.winner,
        }]

    def notes(self) -> list[str]:
        return [
            f"triggered impressions (the two rankings differ in the top k): {self.trigger_rate:.2%}; "
            "triggered delta = delta among them x the trigger rate; p from the triggered sign test",
            "ci width ratio = scaled triggered CI width / untriggered CI width (below 1: triggering helped)",
            *[f"every impression: {note}" for note in self.untriggered.notes()],
            *[f"triggered impressions only, unscaled (not x the trigger rate): {note}"
              for note in self.triggered.notes()],
        ]


def analyze_interleaving_triggered(logs: Any, experiment: str | None = None, *,
                                   backend: str = "duckdb", schema: LogSchema | None = None,
                                   clicks: Any = None, **options: Any) -> TriggeredInterleaving:
    """Credit only impressions whose rankings differ, scaled by the trigger rate (module docstring).

    ``options`` go to :func:`~serpeval.online.experiments.interleaving_analysis.analyze_interleaving_logs`
    (teams, unit, confidence, n_resamples, rng, duplicates, period, ...); both analyses use
    the same seed.
    """
    from serpeval.online.experiments.interleaving_analysis import analyze_interleaving_logs

    every, kept = triggered_logs(logs, backend=backend, schema=schema, clicks=clicks)
    full = analyze_interleaving_logs(every, experiment, **options)
    part = analyze_interleaving_logs(kept, experiment, **options)
    rate = _share(part.analysis.impressions, full.analysis.impressions)
    return TriggeredInterleaving(full, part, rate)
