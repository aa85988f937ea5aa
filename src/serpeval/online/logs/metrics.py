"""The A/B metrics: each is a ratio of two per-unit sums (or a per-unit mean), one table.

A search A/B test randomises *units* (users) but most metrics are per impression, so a
user's impressions are correlated. Every metric is therefore written as

    R = sum_u Y_u / sum_u X_u = mean(Y) / mean(X)

over units u, with Y_u and X_u the unit's sums of per-impression features
(:mod:`~serpeval.online.logs.features`); its variance comes from the delta method on the
per-unit moments (Deng, Knoblich & Lu, KDD 2018), never from treating impressions as
independent. A metric with ``denominator=None`` is a plain per-unit mean (Welch t-test).

======================== =================== =============== ==================================
metric                   numerator Y_u       denominator X_u meaning
======================== =================== =============== ==================================
``ctr``                  clicks              impressions     clicks per impression
``abandonment``          abandoned           impressions     share of pages with no click
``clicks_at_1``          click_at_1          impressions     share of pages with a click on 1
``mrr``                  rr                  impressions     reciprocal rank of the first click
                                                             (0 if none), averaged
``time_to_first_click``  ttfc                timed           seconds to the first click, over
                                                             pages with a click time
``long_click_rate``      long_clicks         impressions     clicks with dwell >= 30 s per page
``clicks_per_user``      clicks              (unit mean)     clicks per unit
``impressions_per_user`` impressions         (unit mean)     searches per unit
``user_ctr``             clicks/impressions  (unit mean)     each unit's CTR, averaged over units
======================== =================== =============== ==================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from serpeval.core.errors import OptionError

if TYPE_CHECKING:
    import ibis

__all__ = ["DEFAULT_METRICS", "METRICS", "ABMetric", "get_metric", "unit_sums"]


@dataclass(frozen=True)
class ABMetric:
    """One A/B metric.

    Attributes:
        name: canonical name.
        numerator: per-unit column summed over the unit's impressions.
        denominator: per-unit column, or None for a per-unit mean.
        description: one line for listings and reports.
        higher_is_better: direction of improvement.
        binary: the numerator is 0/1 per impression (a proportion: the two-proportion
            z-test applies when the unit is the impression).
        needs: the optional log column it needs (``click_seconds``, ``dwell_seconds``).
    """

    name: str
    numerator: str
    denominator: str | None
    description: str
    higher_is_better: bool = True
    binary: bool = False
    needs: str | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        """The per-unit columns it reads."""
        return (self.numerator,) if self.denominator is None else (self.numerator, self.denominator)


METRICS: dict[str, ABMetric] = {
    m.name: m
    for m in (
        ABMetric("ctr", "clicks", "impressions", "clicks per impression (clustered by unit)"),
        ABMetric(
            "abandonment",
            "abandoned",
            "impressions",
            "share of impressions without a click",
            higher_is_better=False,
            binary=True,
        ),
        ABMetric(
            "clicks_at_1",
            "click_at_1",
            "impressions",
            "share of impressions with a click on result 1",
            binary=True,
        ),
        ABMetric("mrr", "rr", "impressions", "mean reciprocal rank of the first click (0 if none)"),
        ABMetric(
            "time_to_first_click",
            "ttfc",
            "timed",
            "mean seconds to the first click, over impressions with a click time",
            higher_is_better=False,
            needs="click_seconds",
        ),
        ABMetric(
            "long_click_rate",
            "long_clicks",
            "impressions",
            "clicks with a long dwell per impression",
            needs="dwell_seconds",
        ),
        ABMetric("clicks_per_user", "clicks", None, "clicks per unit (unit mean)"),
        ABMetric("impressions_per_user", "impressions", None, "impressions per unit (unit mean)"),
        ABMetric("user_ctr", "user_ctr", None, "each unit's own CTR, averaged over units"),
    )
}

DEFAULT_METRICS: tuple[str, ...] = ("ctr", "abandonment", "clicks_at_1", "mrr")

_ALIASES = {
    "click_through_rate": "ctr",
    "abandonment_rate": "abandonment",
    "clicks@1": "clicks_at_1",
    "ttfc": "time_to_first_click",
    "reciprocal_rank": "mrr",
}


def get_metric(name: str | ABMetric) -> ABMetric:
    """The metric called ``name`` (case and ``-``/``_`` ignored); "did you mean" otherwise."""
    if isinstance(name, ABMetric):
        return name
    key = str(name).strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key in METRICS:
        return METRICS[key]
    import difflib

    close = difflib.get_close_matches(key, list(METRICS), n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
    raise OptionError(f"unknown A/B metric {name!r}.{hint} Known: {', '.join(METRICS)}.")


#: per-unit column -> how it is computed from the per-impression features
_SUMS = ("impressions", "clicks", "abandoned", "click_at_1", "rr", "ttfc", "timed", "long_clicks")


def unit_sums(features: ibis.Table, columns: set[str]) -> dict[str, ibis.Value]:
    """Aggregations over a unit's impressions for the per-unit ``columns``."""
    out: dict[str, ibis.Value] = {}
    for column in sorted(columns):
        if column == "user_ctr":
            continue
        if column not in _SUMS:
            raise AssertionError(column)  # pragma: no cover - internal table
        out[column] = (
            features.count()
            if column == "impressions"
            else features[column].sum().fill_null(0)
        )
    return out
