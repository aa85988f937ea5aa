"""Per-impression features, computed in the engine, and the count of every row left out.

:func:`prepare` turns a log (nested or events layout, see :mod:`~serpeval.online.ab.schema`)
into one lazy ibis table with one row per kept impression of one experiment:

==================== =========================================================================
column               value per impression
==================== =========================================================================
``variant``, ``unit``  the arm (as a string) and the randomisation unit
``ts``               the page's timestamp (when the log has one)
``impressions``      1
``clicks``           valid clicks (positions ``1..n_shown``)
``abandoned``        1 if no valid click, else 0
``click_at_1``       1 if position 1 was clicked, else 0
``rr``               1 / position of the first click; 0 without clicks
``ttfc``, ``timed``  seconds to the first click (NULL if unknown) and 1 where known
``long_clicks``      valid clicks with dwell >= ``long_click_seconds``
``credit_a/_b``      clicks on results of team A / team B (interleaving logs)
==================== =========================================================================

Nothing is pulled into Python but one row of counts (:class:`Exclusions`) per query.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from serpeval.errors import DuplicateError, EmptyInputError, InputError, OptionError
from serpeval.online.ab.schema import LogSchema, check_columns
from serpeval.online.ab.sources import Logs

__all__ = ["Exclusions", "Prepared", "prepare"]

_KEYS = ["impression_id", "variant", "unit"]
_OPTIONAL = ("query_id", "timestamp", "n_shown", "shown", "click_seconds", "dwell_seconds", "teams")


@dataclass(frozen=True)
class Exclusions:
    """Counts of what was read and what was left out, and why (all reported)."""

    rows: int = 0
    missing_keys: int = 0
    negative_n_shown: int = 0
    duplicate_rows: int = 0
    clicks: int = 0
    invalid_clicks: int = 0
    orphan_clicks: int = 0
    negative_times: int = 0
    negative_dwell: int = 0
    mixed_units: int = 0
    mixed_unit_rows: int = 0

    @property
    def kept_rows(self) -> int:
        """Impressions that enter the analysis."""
        return (self.rows - self.missing_keys - self.negative_n_shown - self.duplicate_rows
                - self.mixed_unit_rows)

    def with_mixed(self, units: int, rows: int) -> Exclusions:
        """The same counts plus the units seen in more than one variant."""
        return Exclusions(**{**asdict(self), "mixed_units": units, "mixed_unit_rows": rows})

    def to_dict(self) -> dict[str, int]:
        """All counts, plus ``kept_rows``."""
        return {**asdict(self), "kept_rows": self.kept_rows}

    def notes(self) -> list[str]:
        """One sentence per non-zero exclusion."""
        said = [
            (self.missing_keys, "impression(s) with a missing impression id, unit or variant excluded"),
            (self.negative_n_shown, "impression(s) with a missing or negative n_shown excluded"),
            (self.duplicate_rows, "row(s) with a duplicated impression id excluded"),
            (self.invalid_clicks, "click(s) on positions that were not shown excluded"),
            (self.orphan_clicks, "click(s) whose impression is not in the log excluded"),
            (self.negative_times, "negative click time(s) treated as missing"),
            (self.negative_dwell, "negative dwell time(s) treated as missing"),
        ]
        notes = [f"{n:,} {text}" for n, text in said if n]
        if self.mixed_units:
            notes.append(f"{self.mixed_units:,} unit(s) seen in more than one variant excluded "
                         f"({self.mixed_unit_rows:,} impressions)")
        return notes


@dataclass(frozen=True, eq=False)
class Prepared:
    """Per-impression features of one experiment (lazy) and the exclusion counts."""

    features: Any
    exclusions: Exclusions
    experiment: str | None
    variants: tuple[str, ...]
    present: frozenset[str]
    logs: Logs


def _list(column: Any, value_type: str) -> Any:
    """A list column, parsing text (``1;3`` or ``[1, 3]``) when the file format has no lists."""
    if column.type().is_array():
        return column
    text = column.re_replace(r"""[\[\]\s"']""", "").replace(";", ",")
    return text.split(",").filter(lambda s: s != "").map(lambda s: s.cast(value_type))


def _count(expr: Any) -> Any:
    return expr.cast("int64").sum().fill_null(0)


def prepare(
    logs: Logs,
    experiment: str | None,
    *,
    duplicates: str = "error",
    long_click_seconds: float = 30.0,
    teams: tuple[str, str] | None = None,
    need: tuple[str, ...] = (),
) -> Prepared:
    """Features of ``experiment`` (None: the log's only experiment; ``""``: no filter).

    Args:
        logs: the opened log.
        experiment: which experiment to analyse.
        duplicates: ``error`` (default) or ``exclude`` rows whose impression id repeats.
        long_click_seconds: dwell threshold of a long (satisfied) click.
        teams: the two team labels of an interleaving log (credit columns are added).
        need: optional roles the caller requires (``timestamp``, ``click_seconds``, ...).
    """
    import ibis

    if duplicates not in ("error", "exclude"):
        raise OptionError(f"duplicates must be 'error' or 'exclude'; got {duplicates!r}.")
    s = logs.schema
    imp = logs.impressions
    if experiment is None and s.experiment not in imp.columns and s.variant not in imp.columns:
        experiment = ""  # a log without experiments (pre-period, pre-launch): all rows
    roles = ["impression_id", "unit"] if experiment == "" else ["impression_id", "experiment",
                                                                  "variant", "unit"]
    if logs.clicks is None:
        roles.append("clicks")
    present = check_columns(imp, s, roles, source=f"{logs.source} (impressions)", optional=_OPTIONAL)
    if not present & {"n_shown", "shown"}:
        raise InputError(f"{logs.source}: the log needs n_shown (how many results were shown) or "
                         f"shown (the doc ids), to tell shown positions from others; found "
                         f"{', '.join(imp.columns)}. Map yours with --column n_shown=...")
    if teams is not None and "teams" not in present:
        raise InputError(f"{logs.source}: an interleaving log needs column {s.teams!r} (the team of "
                         "each shown position).")
    for role in need:
        if role not in present and not (logs.clicks is not None and role in ("click_seconds", "dwell_seconds")
                                        and getattr(s, role) in logs.clicks.columns):
            raise InputError(f"{logs.source}: this analysis needs column {getattr(s, role)!r} ({role}); "
                             f"found {', '.join(imp.columns)}.")

    experiment = _pick_experiment(imp, s, experiment, logs.source)
    if experiment:
        imp = imp.filter(imp[s.experiment].cast("string") == experiment)

    n_shown = imp[s.n_shown] if "n_shown" in present else imp[s.shown].length()
    variant = imp[s.variant].cast("string") if experiment != "" else ibis.literal("all")
    base = imp.select(
        iid=imp[s.impression_id],
        variant=variant,
        unit=imp[s.unit],
        ts=imp[s.timestamp] if "timestamp" in present else ibis.null("timestamp"),
        n_shown=n_shown,
        teams=_list(imp[s.teams], "string") if teams is not None else ibis.null("array<string>"),
        **({} if logs.clicks is not None else _nested_click_columns(imp, s, present)),
    ).mutate(
        bad_key=lambda t: t.iid.isnull() | t.unit.isnull() | t.variant.isnull(),
    ).mutate(bad_shown=lambda t: ~t.bad_key & (t.n_shown.isnull() | (t.n_shown < 0)))

    counts = _first_row(base.aggregate(
        rows=base.count(),
        missing_keys=_count(base.bad_key),
        negative_n_shown=_count(base.bad_shown),
        distinct_ids=base.iid.nunique(),
    ))
    if counts["rows"] == 0:
        raise EmptyInputError(f"{logs.source}: no impressions"
                              + (f" for experiment {experiment!r}." if experiment else "."))
    kept = base.filter(~base.bad_key & ~base.bad_shown)
    duplicate_rows = 0
    if counts["distinct_ids"] + counts["missing_keys"] < counts["rows"]:
        repeated = kept.group_by("iid").aggregate(copies=kept.count()).filter(lambda t: t.copies > 1)
        if duplicates == "error":
            found = _first_row(repeated.aggregate(ids=repeated.count(), rows=repeated.copies.sum()))
            examples = repeated.order_by("iid").limit(3).iid.to_pyarrow().to_pylist()
            raise DuplicateError(
                f"{logs.source}: {found['ids']:,} impression id(s) appear more than once "
                f"({found['rows']:,} rows), e.g. {', '.join(map(repr, examples))}. Each page view "
                "needs its own id; fix the logging, or pass duplicates='exclude' "
                "(--duplicates exclude) to leave all their rows out."
            )
        duplicate_rows = int(_first_row(repeated.aggregate(rows=repeated.copies.sum()))["rows"] or 0)
        kept = kept.anti_join(repeated.select("iid"), "iid")

    if logs.clicks is not None:
        kept, click_counts = _events_features(kept, logs, long_click_seconds, teams)
    else:
        kept, click_counts = _nested_features(kept, long_click_seconds, teams)
    exclusions = Exclusions(
        rows=int(counts["rows"]),
        missing_keys=int(counts["missing_keys"]),
        negative_n_shown=int(counts["negative_n_shown"]),
        duplicate_rows=duplicate_rows,
        **click_counts,
    )
    variants = tuple(sorted(v for v in kept.select("variant").distinct().variant.to_pyarrow().to_pylist()
                            if v is not None))
    return Prepared(kept, exclusions, experiment or None, variants, frozenset(present), logs)


def _pick_experiment(imp: Any, s: LogSchema, experiment: str | None, source: str) -> str:
    """The experiment to analyse; a clear error when it is not in the log."""
    if experiment == "":
        return ""
    names = imp.group_by(exp=imp[s.experiment].cast("string")).aggregate(rows=imp.count())
    found = {row["exp"]: row["rows"] for row in names.to_pyarrow().to_pylist()}
    if experiment is None:
        if len(found) == 1:
            return str(next(iter(found)))
        raise InputError(f"{source}: the log holds {len(found)} experiments "
                         f"({', '.join(sorted(map(str, found))[:10])}); choose one with "
                         "experiment=... (--experiment NAME).")
    if experiment not in found:
        import difflib

        close = difflib.get_close_matches(experiment, [str(k) for k in found], n=3)
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise InputError(f"{source}: experiment {experiment!r} is not in the log.{hint} "
                         f"Experiments: {', '.join(sorted(map(str, found))[:20])}.")
    return experiment


def _first_row(expr: Any) -> dict[str, Any]:
    rows = expr.to_pyarrow().to_pylist()
    return rows[0] if rows else {}


def _nested_click_columns(imp: Any, s: LogSchema, present: set[str]) -> dict[str, Any]:
    """The click lists of the nested layout, zipped with their times and dwell."""
    import ibis

    clicks = _list(imp[s.clicks], "int64")
    secs = _list(imp[s.click_seconds], "float64") if "click_seconds" in present else None
    dwell = _list(imp[s.dwell_seconds], "float64") if "dwell_seconds" in present else None
    if secs is None:
        secs = clicks.map(lambda p: ibis.null("float64"))
    if dwell is None:
        dwell = clicks.map(lambda p: ibis.null("float64"))
    return {"events": clicks.zip(secs, dwell), "raw_clicks": clicks.length().fill_null(0)}


def _team_credit(valid: Any, teams: Any, label: str, position: Any) -> Any:
    """Valid clicks whose position belongs to team ``label``."""
    return valid.filter(lambda e: (position(e) <= teams.length())
                        & (teams[(position(e) - 1).cast("int32")] == label)).length()


def _nested_features(t: Any, long_click_seconds: float,
                     teams: tuple[str, str] | None) -> tuple[Any, dict[str, int]]:
    import ibis

    valid = t.events.filter(lambda e: (e.f1 >= 1) & (e.f1 <= t.n_shown))
    n_valid = valid.length().fill_null(0)
    first = ibis.ifelse(n_valid > 0, valid[0], ibis.null(valid.type().value_type))
    ttfc = ibis.ifelse(first.f2 >= 0, first.f2, ibis.null("float64"))
    out = t.mutate(
        impressions=ibis.literal(1, "int64"),
        clicks=n_valid,
        abandoned=(n_valid == 0).cast("int64"),
        click_at_1=(valid.filter(lambda e: e.f1 == 1).length().fill_null(0) > 0).cast("int64"),
        rr=ibis.ifelse(n_valid > 0, 1.0 / first.f1.cast("float64"), 0.0),
        ttfc=ttfc,
        timed=ttfc.notnull().cast("int64"),
        long_clicks=valid.filter(lambda e: e.f3 >= long_click_seconds).length().fill_null(0),
        invalid=t.raw_clicks - n_valid,
        neg_times=valid.filter(lambda e: e.f2 < 0).length().fill_null(0),
        neg_dwell=valid.filter(lambda e: e.f3 < 0).length().fill_null(0),
        **_credit_columns(t, valid, teams, lambda e: e.f1),
    )
    sums = _first_row(out.aggregate(clicks=out.raw_clicks.sum(), invalid_clicks=out.invalid.sum(),
                                    negative_times=out.neg_times.sum(),
                                    negative_dwell=out.neg_dwell.sum()))
    return _features(out), {k: int(v or 0) for k, v in sums.items()}


def _credit_columns(t: Any, valid: Any, teams: tuple[str, str] | None, position: Any) -> dict[str, Any]:
    if teams is None:
        return {}
    a = _team_credit(valid, t.teams, teams[0], position).fill_null(0)
    b = _team_credit(valid, t.teams, teams[1], position).fill_null(0)
    return {"credit_a": a, "credit_b": b}


_FEATURES = ["iid", "variant", "unit", "ts", "impressions", "clicks", "abandoned", "click_at_1",
             "rr", "ttfc", "timed", "long_clicks"]


def _features(t: Any) -> Any:
    extra = [c for c in ("credit_a", "credit_b") if c in t.columns]
    return t.select(*_FEATURES, *extra)


def _events_features(kept: Any, logs: Logs, long_click_seconds: float,
                     teams: tuple[str, str] | None) -> tuple[Any, dict[str, int]]:
    """Features of the events layout: clicks joined to their impressions, then per impression."""
    import ibis

    s = logs.schema
    c = logs.clicks
    present = check_columns(c, s, ["impression_id", "position"], source=f"{logs.source} (clicks)",
                            optional=("click_seconds", "dwell_seconds"))
    all_ids = logs.impressions.select(iid=logs.impressions[s.impression_id]).distinct()
    clicks = c.select(
        iid=c[s.impression_id],
        position=c[s.position],
        click_secs=c[s.click_seconds] if "click_seconds" in present else ibis.null("float64"),
        dwell=c[s.dwell_seconds].cast("float64") if "dwell_seconds" in present else ibis.null("float64"),
    )
    orphans = _first_row(clicks.anti_join(all_ids, "iid").aggregate(n=lambda t: t.count()))["n"]
    cols = ["iid", "n_shown", "ts", "teams"]
    joined = clicks.inner_join(kept.select(*cols), "iid")
    if clicks.click_secs.type().is_timestamp():
        secs = joined.click_secs.epoch_seconds().cast("float64") - joined.ts.epoch_seconds().cast("float64")
    else:
        secs = joined.click_secs.cast("float64")
    joined = joined.mutate(secs=secs, ok=(joined.position >= 1) & (joined.position <= joined.n_shown))
    counts = _first_row(joined.aggregate(
        clicks=joined.count(),
        invalid_clicks=_count(~joined.ok.fill_null(False)),
        negative_times=_count(joined.ok & (joined.secs < 0)),
        negative_dwell=_count(joined.ok & (joined.dwell < 0)),
    ))
    valid = joined.filter(joined.ok).mutate(secs=lambda t: ibis.ifelse(t.secs >= 0, t.secs, None))
    valid = valid.mutate(first_secs=valid.secs.min().over(group_by=valid.iid))
    is_first = (valid.secs == valid.first_secs) | valid.first_secs.isnull()
    team = (valid.teams[(valid.position - 1).cast("int32")]
            if teams is not None else None)
    in_range = valid.position <= valid.teams.length()
    per_click = valid.group_by("iid").aggregate(
        clicks=valid.count(),
        click_at_1=_count(valid.position == 1),
        first_pos=valid.position.min(where=is_first),
        ttfc=valid.first_secs.min(),
        long_clicks=_count(valid.dwell >= long_click_seconds),
        **({} if team is None else {
            "credit_a": _count(in_range & (team == teams[0])),
            "credit_b": _count(in_range & (team == teams[1])),
        }),
    )
    out = kept.left_join(per_click, "iid").mutate(
        impressions=ibis.literal(1, "int64"),
        clicks=lambda t: t.clicks.fill_null(0),
    )
    out = out.mutate(
        abandoned=(out.clicks == 0).cast("int64"),
        click_at_1=(out.click_at_1.fill_null(0) > 0).cast("int64"),
        rr=ibis.ifelse(out.clicks > 0, 1.0 / out.first_pos.cast("float64"), 0.0),
        timed=out.ttfc.notnull().cast("int64"),
        long_clicks=out.long_clicks.fill_null(0),
        **({} if teams is None else {"credit_a": out.credit_a.fill_null(0),
                                     "credit_b": out.credit_b.fill_null(0)}),
    )
    result = {k: int(v or 0) for k, v in counts.items()}
    result["orphan_clicks"] = int(orphans or 0)
    return _features(out), result
