"""What :func:`serpeval.online.counterfactual.counterfactual` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from serpeval.core.tabular import Tabular

__all__ = ["PREFERENCE", "CounterfactualResult", "Estimate"]

#: Which estimator's effect ranks the candidates (the first that gave a number): the
#: interleaved comparison where the log allows it, then the click estimators that need no
#: click-model assumption beyond the cascade (the doubly robust one has the smallest variance
#: of them in the bench). Independent IPS, the pseudo-inverse and position-based IPS are never
#: used to rank: they are biased when clicks depend on the results above (cascade users), and
#: they are shown only with their assumption in the table of every estimator.
PREFERENCE = ("interleaved", "dr", "cascade_ips", "snips", "ips")
_VERDICT_ORDER = {"better": 0, "undecided": 1, "worse": 2, "no estimate": 3}


@dataclass(frozen=True)
class Estimate:
    """One estimator's answer for one candidate.

    ``value`` is C's estimated metric (or, for ``interleaved``, the expected interleaving
    outcome of C against the ``against`` ranker, in [-1, 1]); ``effect`` is ``value`` minus
    the same estimator's value for the ``against`` ranker (for ``interleaved``: the outcome
    itself), with a paired interval. ``refused`` is the one-line reason when no number is
    given; ``warning`` qualifies a number.
    """

    candidate: str
    estimator: str
    value: float | None
    se: float | None
    low: float | None
    high: float | None
    effect: float | None
    effect_low: float | None
    effect_high: float | None
    diagnostics: dict[str, Any]
    refused: str | None = None
    warning: str | None = None
    assumption: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"candidate": self.candidate, "estimator": self.estimator, "value": self.value, "se": self.se,
                "ci_low": self.low, "ci_high": self.high, "effect": self.effect,
                "effect_low": self.effect_low, "effect_high": self.effect_high,
                **{k: v for k, v in self.diagnostics.items()}, "refused": self.refused,
                "warning": self.warning, "assumption": self.assumption}


@dataclass(frozen=True)
class CounterfactualResult(Tabular):
    """Candidates estimated from one randomised log.

    Attributes:
        source: the log.
        design: the logging design (``probabilistic`` or ``ab``).
        experiment: its experiment name, when logged.
        metric: ``clicks`` (expected clicks on the top k per query) or ``ctr``.
        against: the logging ranker the effects are measured against.
        logged_value: the metric observed in the log (the logging design's own value).
        estimates: one :class:`Estimate` per candidate and estimator.
        impressions, units: the log's size; ``confidence``: the intervals' level.
        skipped: what was left out, by reason.
    """

    source: str
    design: str
    experiment: str | None
    metric: str
    against: str
    logged_value: float
    estimates: tuple[Estimate, ...]
    impressions: int
    units: int
    confidence: float = 0.95
    k: int = 10
    skipped: dict[str, int] = field(default_factory=dict)

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per candidate and estimator."""
        return [{"metric": self.metric, "against": self.against, **e.to_dict()} for e in self.estimates]

    def _html_caption(self) -> str | None:
        return f"counterfactual estimates from {self.source} ({self.design}, {self.metric}@{self.k})"

    @property
    def candidates(self) -> list[str]:
        return list(dict.fromkeys(e.candidate for e in self.estimates))

    def get(self, candidate: str, estimator: str) -> Estimate:
        """The estimate of ``candidate`` by ``estimator`` (KeyError if absent)."""
        for e in self.estimates:
            if e.candidate == candidate and e.estimator == estimator:
                return e
        raise KeyError(f"no estimate of {candidate!r} by {estimator!r}")

    def headline(self, candidate: str, rank_by: str = "interleaved") -> Estimate | None:
        """The candidate's ranking estimate: the first estimator of :data:`PREFERENCE` that
        gave a number (None when all refused); ``rank_by="metric"`` skips the interleaved
        comparison (rank by the click metric's effect)."""
        if rank_by not in ("interleaved", "metric"):
            from serpeval.core.errors import OptionError

            raise OptionError(f"rank_by must be 'interleaved' or 'metric'; got {rank_by!r}.")
        mine = {e.estimator: e for e in self.estimates if e.candidate == candidate}
        for name in PREFERENCE if rank_by == "interleaved" else PREFERENCE[1:]:
            e = mine.get(name)
            if e is not None and e.refused is None and e.effect is not None:
                return e
        return None

    def ranking(self, rank_by: str = "interleaved") -> list[dict[str, Any]]:
        """Candidates by verdict (better, undecided, worse, no estimate), then by estimated
        effect; refused candidates last, with their reason."""
        rows: list[dict[str, Any]] = []
        for c in self.candidates:
            e = self.headline(c, rank_by)
            if e is None:
                reasons = [x.refused for x in self.estimates if x.candidate == c and x.refused]
                rows.append({"candidate": c, "estimator": None, "effect": None, "effect_low": None,
                             "effect_high": None, "verdict": "no estimate", "reason": reasons[0] if reasons else None})
                continue
            lo, hi = e.effect_low, e.effect_high
            verdict = ("better" if lo is not None and lo > 0 else
                       "worse" if hi is not None and hi < 0 else "undecided")
            rows.append({"candidate": c, "estimator": e.estimator, "effect": e.effect, "effect_low": lo,
                         "effect_high": hi, "verdict": verdict, "ess": e.diagnostics.get("ess"),
                         "support": e.diagnostics.get("support"), "reason": e.warning})
        rows.sort(key=lambda r: (_VERDICT_ORDER[r["verdict"]], -(r["effect"] or 0.0)))
        return rows

    def recommendation(self, rank_by: str = "interleaved") -> str:
        """A plain sentence on which candidates deserve a live test."""
        rows = self.ranking(rank_by)
        better = [r["candidate"] for r in rows if r["verdict"] == "better"]
        undecided = [r["candidate"] for r in rows if r["verdict"] == "undecided"]
        none = [r["candidate"] for r in rows if r["verdict"] == "no estimate"]
        parts = []
        if better:
            parts.append(f"{_names(better)} {'is' if len(better) == 1 else 'are'} estimated better than "
                         f"{self.against} ({self.confidence:.0%} interval above 0) and deserve"
                         f"{'s' if len(better) == 1 else ''} a live test, {better[0]} first")
        elif undecided:
            parts.append(f"No candidate is estimated better than {self.against}; {_names(undecided)} "
                         f"cannot be told apart from it with this log: a live test would need more traffic")
        else:
            parts.append(f"No candidate is estimated better than {self.against}")
        if none:
            parts.append(f"{_names(none)} cannot be judged from this log (see the reasons)")
        return "; ".join(parts) + "."  # a candidate's name keeps its case


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
