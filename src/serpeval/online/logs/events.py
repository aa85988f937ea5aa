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
from serpeval.online.logs.sources import Logs, count, first_row

__all__ = ["events_features"]


def events_features(
    kept: Any, logs: Logs, long_click_seconds: float, teams: tuple[str, str] | None
) -> tuple[Any, dict[str, int]]:
    """(features of the kept impressions, click counts for the exclusions)."""
    import ibis

    s = logs.schema
    # clicks restricted to the impressions: the inner join below restricts them to the kept
    # pages (a subset) anyway, so they are joined unrestricted (no second read of the pages)
    c = logs.joined_clicks()
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
    page = kept.select("iid", "n_shown", "ts", "teams")

    def checked(t: Any) -> Any:
        """Clicks joined to their pages: the seconds to each, and whether it was shown."""
        if t.click_secs.type().is_timestamp():
            secs = t.click_secs.epoch_seconds().cast("float64") - t.ts.epoch_seconds().cast("float64")
        else:
            secs = t.click_secs.cast("float64")
        return t.mutate(secs=secs, ok=(t.position >= 1) & (t.position <= t.n_shown))

    joined = checked(clicks.inner_join(page, "iid"))
    # the kept pages' click counts and the orphans (clicks on no impression): one query
    if logs.clicks_matched:  # clicks restricted to the impressions: no orphan to count
        counted, on_page, orphans = joined, None, {}
    else:
        ids = logs.impressions.select(_known=logs.impressions[s.impression_id]).distinct()
        with_ids = clicks.left_join(ids, clicks.iid == ids._known)
        pages = page.rename(_page="iid")
        counted = checked(with_ids.left_join(pages, with_ids.iid == pages._page))
        on_page = counted._page.notnull()  # a click on a kept page (the others: NULL columns)
        orphans = {"orphans": count(counted._known.isnull())}
    counts = first_row(
        counted.aggregate(
            clicks=counted.count(where=on_page),
            invalid_clicks=count(~counted.ok.fill_null(False), where=on_page),
            negative_times=count(counted.secs < 0, where=on_page),
            negative_dwell=count(counted.dwell < 0, where=on_page),
            **orphans,
        )
    )
    orphans_found = counts.pop("orphans", 0)
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
    result["orphan_clicks"] = int(orphans_found or 0)
    return out, result
