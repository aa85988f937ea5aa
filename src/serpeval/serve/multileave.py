"""The pairwise analysis of a multileaving experiment that ``serpeval serve`` logged.

``serve`` multileaves three or more rankers by team draft; :func:`analyze_multileaved_events`
reads what the store (or a UBI export) holds and gives the preference matrix of
:func:`serpeval.online.interleaving.analysis.preference_matrix`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serpeval.online.events.logs import EventLogs, read_event_logs, team_credits

__all__ = ["MultileaveEvents", "analyze_multileaved_events"]


@dataclass(frozen=True)
class MultileaveEvents:
    """The pairwise analysis of multileaved impressions read from a store or export.

    Attributes:
        analysis: :class:`~serpeval.online.interleaving.analysis.MultileaveAnalysis` (one row
            per pair of rankers: wins, losses, ties, Delta, sign test, Holm, power).
        logs: the :class:`~serpeval.online.events.logs.EventLogs` it was computed from (the
            counts of what was read and left out).
        credits: ``[impressions, rankers]`` clicks credited to each ranker's team.
    """

    analysis: Any
    logs: EventLogs
    credits: Any

    def notes(self) -> list[str]:
        """What was read and left out, one line each."""
        return self.logs.notes()

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per pair of rankers."""
        rows: list[dict[str, Any]] = self.analysis.to_dicts()
        return rows


def analyze_multileaved_events(source: str | Path | EventLogs, experiment: str | None = None, *,
                               alpha: float = 0.05, plan_power: float = 0.8) -> MultileaveEvents:
    """Pairwise preferences among the rankers of a team draft multileaving experiment.

    ``credits[n, i]`` = clicks on ranker i's team in impression n
    (:func:`~serpeval.online.events.logs.team_credits`); the pairwise outcome of rankers i, j
    is ``sign(credits[n, i] - credits[n, j])`` (an impression without a click is a tie for
    every pair); :func:`~serpeval.online.interleaving.analysis.preference_matrix` then gives
    wins, Delta = mean outcome / 2, a sign test per pair and Holm's correction over the
    r(r-1)/2 pairs. Excluded impressions and clicks that cannot be placed are left out and
    counted, as in :func:`~serpeval.online.events.logs.read_event_logs`. Works for two
    rankers as well (one pair).
    """
    from serpeval.online.interleaving.analysis import preference_matrix

    logs = source if isinstance(source, EventLogs) else read_event_logs(source, experiment)
    credits = team_credits(logs)
    analysis = preference_matrix(credits, logs.rankers, alpha=alpha, plan_power=plan_power, method="team_draft")
    return MultileaveEvents(analysis, logs, credits)
