"""Per-impression features of the events layout: a separate clicks table, one row per click.

Clicks are joined to their impressions (to learn ``n_shown``, the page's time and, for
interleaving, the teams), validated, and aggregated back per impression; impressions
without clicks come in through a left join. The first click is the earliest by
``click_seconds`` (ties: the higher position); without times, the top-most click. Clicks
whose impression id is in no impression row are counted as orphans and left out.
"""

from __future__ import annotations

from typing import Any

from serpeval.online.logs.schema import check_columns
from serpeval.online.logs.sources import Logs, count, first_row, first_rows

__all__ = ["events_features"]


def events_features(
    kept: Any, logs: Logs, long_click_seconds: float, teams: tuple[str, str] | None
) -> tuple[Any, dict[str, int]]:
    """(features of the kept impressions, click counts for the exclusions)."""
    import ibis

    s = logs.schema
    c = logs.clicks
    present = check_columns(
        c,
        s,
        ["impression_id", "position"],
        source=f"{logs.source} (clicks)",
        optional=("click_seconds", "dwell_seconds"),
    )
    clicks = c.select(
        iid=c[s.impression_id],
        position=c[s.position],
        click_secs=c[s.click_seconds] if "click_seconds" in present else ibis.null("float64"),
        dwell=c[s.dwell_seconds].cast("float64")
        if "dwell_seconds" in present
        else ibis.null("float64"),
    )
    all_ids = logs.impressions.select(iid=logs.impressions[s.impression_id]).distinct()
    orphan_count = clicks.anti_join(all_ids, "iid").aggregate(n=lambda t: t.count())
    joined = clicks.inner_join(kept.select("iid", "n_shown", "ts", "teams"), "iid")
    if clicks.click_secs.type().is_timestamp():
        secs = joined.click_secs.epoch_seconds().cast("float64") - joined.ts.epoch_seconds().cast(
            "float64"
        )
    else:
        secs = joined.click_secs.cast("float64")
    joined = joined.mutate(
        secs=secs, ok=(joined.position >= 1) & (joined.position <= joined.n_shown)
    )
    click_counts = joined.aggregate(
        clicks=joined.count(),
        invalid_clicks=count(~joined.ok.fill_null(False)),
        negative_times=count(joined.secs < 0),
        negative_dwell=count(joined.dwell < 0),
    )
    if logs.clicks_matched:  # clicks restricted to the impressions: none is an orphan
        orphans, counts = 0, first_row(click_counts)
    else:  # the orphans and the click counts: one query on Spark (sources.first_rows)
        orphan_row, counts = first_rows(orphan_count, click_counts)
        orphans = orphan_row["n"]
    valid = joined.filter(joined.ok).mutate(
        secs=lambda t: ibis.ifelse(t.secs >= 0, t.secs, None),
        dwell=lambda t: ibis.ifelse(t.dwell >= 0, t.dwell, None),
    )
    valid = valid.mutate(first_secs=valid.secs.min().over(group_by=valid.iid))
    is_first = (valid.secs == valid.first_secs) | valid.first_secs.isnull()
    credit = {}
    if teams is not None:
        in_range = valid.position <= valid.teams.length()
        team = valid.teams[(valid.position - 1).cast("int32")]
        credit = {
            "credit_a": count(in_range & (team == teams[0])),
            "credit_b": count(in_range & (team == teams[1])),
        }
    per_impression = valid.group_by("iid").aggregate(
        clicks=valid.count(),
        click_at_1=count(valid.position == 1),
        first_pos=valid.position.min(where=is_first),
        ttfc=valid.first_secs.min(),
        long_clicks=count(valid.dwell >= long_click_seconds),
        **credit,
    )
    out = kept.left_join(per_impression, "iid")
    out = out.mutate(clicks=out.clicks.fill_null(0))
    out = out.mutate(
        impressions=ibis.literal(1, "int64"),
        abandoned=(out.clicks == 0).cast("int64"),
        click_at_1=(out.click_at_1.fill_null(0) > 0).cast("int64"),
        rr=ibis.ifelse(out.clicks > 0, 1.0 / out.first_pos.cast("float64"), 0.0),
        timed=out.ttfc.notnull().cast("int64"),
        long_clicks=out.long_clicks.fill_null(0),
        **(
            {}
            if teams is None
            else {"credit_a": out.credit_a.fill_null(0), "credit_b": out.credit_b.fill_null(0)}
        ),
    )
    result = {k: int(v or 0) for k, v in counts.items()}
    result["orphan_clicks"] = int(orphans or 0)
    return out, result
