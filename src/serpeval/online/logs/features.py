"""Per-impression features, computed in the engine, and the count of every row left out.

:func:`prepare` turns a log (nested or events layout, see :mod:`~serpeval.online.logs.schema`)
into one lazy ibis table with one row per kept impression of one experiment:

==================== =========================================================================
column               value per impression
==================== =========================================================================
``experiment``       the experiment (as a string; ``""`` for a log without experiments)
``variant``, ``unit``  the arm (as a string) and the randomisation unit
``ts``               the page's timestamp (when the log has one)
``impressions``      1
``clicks``           valid clicks (positions ``1..n_shown``)
``abandoned``        1 if no valid click, else 0
``click_at_1``       1 if position 1 was clicked, else 0
``rr``               1 / position of the first click; 0 without clicks
``ttfc``, ``timed``  seconds to the first click (NULL if unknown) and 1 where known
``long_clicks``      valid clicks with dwell >= ``long_click_seconds``
``credit_a/_b``      clicked positions of team A / team B, each position once (interleaving
                     logs, which also keep ``n_shown`` and ``teams``)
==================== =========================================================================

Nothing is pulled into Python but one row of counts (:class:`Exclusions`) per query.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, OptionError
from serpeval.online.logs import sqlcache
from serpeval.online.logs.schema import LogSchema, check_columns
from serpeval.online.logs.sources import Logs, collect, count, first_row, on_spark

__all__ = ["ALL_EXPERIMENTS", "Exclusions", "Prepared", "prepare"]

#: ``prepare(logs, ALL_EXPERIMENTS)`` keeps every experiment (features get an ``experiment``
#: column): many A/A tests in one log are analysed in one query.
ALL_EXPERIMENTS = "*"

_OPTIONAL = (
    "variant",
    "query_id",
    "timestamp",
    "n_shown",
    "shown",
    "click_seconds",
    "dwell_seconds",
    "teams",
)


@dataclass(frozen=True)
class Exclusions:
    """Counts of what was read and what was left out, and why (all reported)."""

    rows: int = 0
    missing_keys: int = 0
    negative_n_shown: int = 0
    missing_trigger: int = 0
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
        return (
            self.rows
            - self.missing_keys
            - self.negative_n_shown
            - self.missing_trigger
            - self.duplicate_rows
            - self.mixed_unit_rows
        )

    def with_mixed(self, units: int, rows: int) -> Exclusions:
        """The same counts plus the units seen in more than one variant."""
        return Exclusions(**{**asdict(self), "mixed_units": units, "mixed_unit_rows": rows})

    def to_dict(self) -> dict[str, int]:
        """All counts, plus ``kept_rows``."""
        return {**asdict(self), "kept_rows": self.kept_rows}

    def notes(self) -> list[str]:
        """One sentence per non-zero exclusion."""
        said = [
            (
                self.missing_keys,
                "impression(s) with a missing impression id, unit or variant excluded",
            ),
            (self.negative_n_shown, "impression(s) with a missing or negative n_shown excluded"),
            (
                self.missing_trigger,
                "impression(s) with a missing trigger flag (triggered is NULL) excluded from "
                "both the whole and the triggered analysis",
            ),
            (self.duplicate_rows, "row(s) with a duplicated impression id excluded"),
            (self.invalid_clicks, "click(s) on positions that were not shown excluded"),
            (self.orphan_clicks, "click(s) whose impression is not in the log excluded"),
            (self.negative_times, "negative click time(s) treated as missing"),
            (self.negative_dwell, "negative dwell time(s) treated as missing"),
        ]
        notes = [f"{n:,} {text}" for n, text in said if n]
        if self.mixed_units:
            notes.append(
                f"{self.mixed_units:,} unit(s) seen in more than one variant excluded "
                f"({self.mixed_unit_rows:,} impressions)"
            )
        return notes


@dataclass(frozen=True, eq=False)
class Prepared:
    """Per-impression features of one experiment (lazy) and the exclusion counts.

    ``kept``: the values of :func:`prepare`'s ``kept_aggregates`` over the kept impressions,
    computed in its counting pass; None when rows were left out after that pass (repeated
    impression ids excluded), where a caller runs its own query over :attr:`features`.
    """

    features: Any
    exclusions: Exclusions
    experiment: str | None
    present: frozenset[str]
    logs: Logs
    kept: dict[str, Any] | None = None


def drop_mixed_units(features: Any, found: dict[str, Any] | None = None) -> tuple[Any, int, int]:
    """``(features without the units seen in more than one variant, those units, their rows)``.

    A unit whose impressions carry two variants was exposed to both arms: it belongs to
    neither, so all its impressions are left out (and counted, :meth:`Exclusions.with_mixed`).
    Decided over the unit's whole experiment, before any split by segment, look or trigger,
    so that a unit split across segments is not counted once per segment.

    ``found``: those units and rows (``{"units": ..., "rows": ...}``) when the caller counted
    them already (:func:`mixed_unit`, in a query of its own); else one query here.
    """
    mixed_units = (
        features.group_by("unit")
        .aggregate(m=mixed_unit(features), rows=features.count())
        .filter(lambda t: t.m)
    )
    if found is None:
        found = first_row(mixed_units.aggregate(units=mixed_units.count(), rows=mixed_units.rows.sum()))
    units, rows = int(found.get("units") or 0), int(found.get("rows") or 0)
    if not units:
        return features, 0, 0
    return features.anti_join(mixed_units.select("unit"), "unit"), units, rows


def mixed_unit(features: Any) -> Any:
    """Per unit (an aggregate of a ``GROUP BY unit``): whether it was seen in two variants."""
    return features.variant.min() != features.variant.max()


def parse_list(column: Any, value_type: str) -> Any:
    """A list column, parsing text (``1;3`` or ``[1, 3]``) when the file format has no lists.

    An element that is not a number becomes NULL (and then counts as an invalid click).
    """
    if column.type().is_array():
        return column
    return _text_items(column).map(lambda s: s.try_cast(value_type))


def _text_items(column: Any) -> Any:
    """The non-empty items of a text list (``1;3``, ``[1, 3]``, ``["a", "b"]``)."""
    text = column.re_replace(r"""[\[\]\s"']""", "").replace(";", ",")
    return text.split(",").filter(lambda s: s != "")


def unparsed_positions(column: Any) -> Any:
    """Per row, how many items of a text click list are not integer positions (NULL-safe 0).

    ``top``, ``1.5`` or ``x1`` are not positions; the engine's cast would turn the first into
    NULL and round the second to 2, so such a column is refused (:func:`prepare`) rather
    than read as clicks on positions that were not shown. A list column (Arrow, Parquet) is
    typed already: 0.
    """
    import ibis

    if column.type().is_array():
        return ibis.literal(0)
    number = lambda s: s.try_cast("float64")  # noqa: E731
    bad = _text_items(column).filter(lambda s: number(s).isnull() | (number(s) != number(s).floor()))
    return bad.length().fill_null(0)


#: What to do with rows whose impression id repeats.
Duplicates = Literal["error", "exclude", "unchecked"]
_DUPLICATES: tuple[Duplicates, ...] = get_args(Duplicates)


def prepare(
    logs: Logs,
    experiment: str | None,
    *,
    duplicates: Duplicates = "error",
    long_click_seconds: float = 30.0,
    teams: tuple[str, str] | None = None,
    need: tuple[str, ...] = (),
    segment: str | None = None,
    kept_aggregates: Mapping[str, Callable[[Any, Any], Any]] | None = None,
) -> Prepared:
    """Features of ``experiment`` (None: the log's only experiment; ``""``: a log without
    experiments, every row; :data:`ALL_EXPERIMENTS`: every experiment, with its name).

    Runs one query for the experiment names and one for the counts of
    :class:`Exclusions`; the features themselves stay lazy. On Spark, where each query
    costs a fixed ~0.3 s of planning and job scheduling whatever its size, the counts'
    query also counts the distinct kept ids (a log without repeated ids needs no query of
    its own for them), and for ``experiment=None`` it is the names' query too (grouped by
    experiment).

    Args:
        logs: the opened log.
        experiment: which experiment to analyse.
        duplicates: ``error`` (default) or ``exclude`` rows whose impression id repeats;
            ``unchecked`` skips the check (one more pass over the ids) for logs whose ids are
            unique by construction.
        long_click_seconds: dwell threshold of a long (satisfied) click.
        teams: the two team labels of an interleaving log (credit columns are added).
        need: optional roles the caller requires (``timestamp``, ``click_seconds``, ...).
        segment: a log column carried along as ``segment`` (as a string; NULL kept) for
            per-segment analyses (:mod:`~serpeval.online.experiments.segments`).
        kept_aggregates: ``{name: f(rows, keep)}``, more aggregates of the caller's over the
            kept impressions (``rows`` has the feature columns ``iid``, ``variant``, ``unit``,
            ``ts``, ``n_shown`` and ``teams``; ``keep`` is the aggregate's ``where=``), run in
            the counting pass rather than as queries of their own (on Spark each costs a
            fixed ~0.3 s); their values are :attr:`Prepared.kept`.
    """
    import ibis

    if duplicates not in _DUPLICATES:
        raise OptionError(
            f"duplicates must be one of {', '.join(_DUPLICATES)}; got {duplicates!r}."
        )
    s = logs.schema
    imp = logs.impressions
    if (
        experiment is None
        and s.experiment not in imp.columns
        and (s.variant not in imp.columns or teams is not None)
    ):
        experiment = ""  # a log without experiments (pre-period, pre-launch): all rows
    present = _check(logs, experiment, teams, need)
    nested = logs.clicks is None
    text_clicks = nested and "clicks" in present and not imp[s.clicks].type().is_array()
    spark = on_spark(imp)

    def checked(table: Any, experiment: str | None) -> tuple[Any, dict[str, Any]]:
        """The per-row base of ``table`` (``keep``: its row enters) and the checks' aggregates."""
        has_variant = experiment != "" and s.variant in table.columns
        base = table.select(
            iid=table[s.impression_id],
            experiment=table[s.experiment].cast("string") if experiment != "" else ibis.literal(""),
            variant=table[s.variant].cast("string") if has_variant else ibis.literal("all"),
            unit=table[s.unit],
            ts=table[s.timestamp] if "timestamp" in present else ibis.null("timestamp"),
            n_shown=table[s.n_shown] if "n_shown" in present else table[s.shown].length(),
            teams=parse_list(table[s.teams], "string")
            if teams is not None
            else ibis.null("array<string>"),
            **(_nested_lists(table, s, present) if nested else {}),
            **({"segment": table[segment].cast("string")} if segment is not None else {}),
            **({"unparsed": unparsed_positions(table[s.clicks])} if text_clicks else {}),
            **({"no_trigger": table[s.triggered].isnull()} if logs.known_trigger else {}),
        )
        bad_key = base.iid.isnull() | base.unit.isnull() | base.variant.isnull()
        bad_shown = ~bad_key & (base.n_shown.isnull() | (base.n_shown < 0))
        bad_trigger = ~bad_key & ~bad_shown & base.no_trigger if logs.known_trigger else None
        keep = ~bad_key & ~bad_shown
        base = base.mutate(keep=keep if bad_trigger is None else keep & ~bad_trigger)
        checks: dict[str, Any] = {
            "rows": base.count(),
            "missing_keys": count(bad_key),
            "negative_n_shown": count(bad_shown),
            **({"missing_trigger": count(bad_trigger)} if bad_trigger is not None else {}),
        }
        if nested:
            checks.update(_nested_checks(base, need))
        if text_clicks:
            checks["unparsed_clicks"] = base.unparsed.sum()
            checks["unparsed_rows"] = count(base.unparsed > 0)
        for name, aggregate in (kept_aggregates or {}).items():
            checks[f"kept__{name}"] = aggregate(base, base.keep)
        if duplicates != "unchecked" and spark:
            # Spark: the distinct kept ids counted in this same pass (exact COUNT(DISTINCT)),
            # not by a query of their own (each Spark query costs ~0.3 s however small)
            checks["distinct_ids"] = base.iid.nunique(where=base.keep)
        elif duplicates != "unchecked" and base.iid.type().is_integer():
            checks.update(
                id_min=base.iid.min(where=base.keep), id_max=base.iid.max(where=base.keep)
            )
        return base, checks

    found_counts = None
    if spark and experiment is None:
        # Spark, the log's only experiment: its name and the checks in one query, grouped
        # by experiment (a log of several is refused below, so no experiment is checked
        # in vain but on that error's way)
        every, every_checks = checked(imp, experiment)
        grouped = collect(every.group_by("experiment").aggregate(**every_checks)).to_pylist()
        by_name = {row.pop("experiment"): row for row in grouped}
        experiment = _choose_experiment({k: v["rows"] for k, v in by_name.items()}, experiment,
                                        logs.source)
        found_counts = by_name.get(experiment)  # (None for a NULL name: then checked below)
    else:
        experiment = _pick_experiment(imp, s, experiment, logs.source)
    if experiment and experiment != ALL_EXPERIMENTS:
        imp = imp.filter(imp[s.experiment].cast("string") == experiment)
    base, checks = checked(imp, experiment)
    row = dict(found_counts if found_counts is not None else first_row(base.aggregate(**checks)))
    kept_values = {k[len("kept__"):]: row.pop(k) for k in list(row) if k.startswith("kept__")}
    counts = {k: int(v or 0) for k, v in row.items()}
    if counts["rows"] == 0:
        raise EmptyInputError(
            f"{logs.source}: no impressions"
            + (f" for experiment {experiment!r}." if experiment else ".")
        )
    unparsed = counts.pop("unparsed_clicks", 0), counts.pop("unparsed_rows", 0)
    if unparsed[0]:
        _refuse_unparsed_clicks(imp, s, logs.source, *unparsed)
    kept = base.filter(base.keep)
    duplicate_rows = 0
    id_range = (counts.pop("id_min", None), counts.pop("id_max", None))
    distinct = counts.pop("distinct_ids") if spark and duplicates != "unchecked" else None
    missing_trigger = counts.pop("missing_trigger", 0)
    kept_rows = counts["rows"] - counts["missing_keys"] - counts["negative_n_shown"] - missing_trigger
    if distinct is None and duplicates != "unchecked":
        distinct = _distinct_ids(kept, id_range)
    if duplicates != "unchecked" and distinct != kept_rows:
        kept, duplicate_rows = _drop_duplicates(kept, duplicates, logs.source)
    if nested:
        features = _nested_features(
            kept, long_click_seconds, teams, all_valid=counts["invalid_clicks"] == 0
        )
        click_counts = {
            k: counts.pop(k, 0)
            for k in ("clicks", "invalid_clicks", "negative_times", "negative_dwell")
        }
    else:
        from serpeval.online.logs.events import events_features

        features, click_counts = events_features(kept, logs, long_click_seconds, teams)
    exclusions = Exclusions(
        rows=counts["rows"],
        missing_keys=counts["missing_keys"],
        negative_n_shown=counts["negative_n_shown"],
        missing_trigger=missing_trigger,
        duplicate_rows=duplicate_rows,
        **click_counts,
    )
    return Prepared(
        select_features(features), exclusions, experiment or None, frozenset(present), logs,
        kept_values if kept_aggregates and not duplicate_rows else None,
    )


def _check(
    logs: Logs, experiment: str | None, teams: tuple[str, str] | None, need: tuple[str, ...]
) -> set[str]:
    """The roles present in the impressions; clear errors for what is missing or mistyped."""
    s = logs.schema
    imp = logs.impressions
    roles = ["impression_id", "unit"]
    if experiment != "":
        roles.append("experiment")
    if experiment != "" and teams is None:
        roles.append("variant")  # an interleaving log has no arms: every user sees both rankers
    if logs.clicks is None:
        roles.append("clicks")
    if logs.known_trigger:
        roles.append("triggered")
    present = check_columns(
        imp, s, roles, source=f"{logs.source} (impressions)", optional=_OPTIONAL
    )
    if not present & {"n_shown", "shown"}:
        raise InputError(
            f"{logs.source}: the log needs n_shown (how many results were shown) or "
            f"shown (the doc ids), to tell shown positions from others; found "
            f"{', '.join(imp.columns)}. Map yours with --column n_shown=..."
        )
    if teams is not None and "teams" not in present:
        raise InputError(
            f"{logs.source}: an interleaving log needs column {s.teams!r} (the team of "
            "each shown position)."
        )
    for role in need:
        in_clicks = logs.clicks is not None and getattr(s, role) in logs.clicks.columns
        if role not in present and not in_clicks:
            raise InputError(
                f"{logs.source}: this analysis needs column {getattr(s, role)!r} ({role}); "
                f"found {', '.join(imp.columns)}."
            )
    return present


def _pick_experiment(imp: Any, s: LogSchema, experiment: str | None, source: str) -> str:
    """The experiment to analyse; a clear error when it is not in the log."""
    if experiment in ("", ALL_EXPERIMENTS):
        return experiment
    names = imp.group_by(exp=imp[s.experiment].cast("string")).aggregate(rows=imp.count())
    found = {row["exp"]: row["rows"] for row in collect(names).to_pylist()}
    return _choose_experiment(found, experiment, source)


def _choose_experiment(found: dict[Any, int], experiment: str | None, source: str) -> str:
    """The experiment to analyse among ``found`` (``{name: rows}`` of the log)."""
    if not found:
        raise EmptyInputError(f"{source}: the log has no impressions.")
    if experiment is None:
        if len(found) == 1:
            return str(next(iter(found)))
        raise InputError(
            f"{source}: the log holds {len(found)} experiments "
            f"({', '.join(sorted(map(str, found))[:10])}); choose one with "
            "experiment=... (--experiment NAME)."
        )
    if experiment not in found:
        import difflib

        close = difflib.get_close_matches(experiment, [str(k) for k in found], n=3)
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise InputError(
            f"{source}: experiment {experiment!r} is not in the log.{hint} "
            f"Experiments: {', '.join(sorted(map(str, found))[:20])}."
        )
    return experiment


#: widest integer id range checked with a DuckDB bitmap (2^31 bits = 256 MiB)
_BITMAP_RANGE = 2**31


def _distinct_ids(kept: Any, id_range: tuple[int | None, int | None]) -> int | None:
    """Exact number of distinct impression ids, cheaply, or None (then GROUP BY decides).

    Integer ids on DuckDB within a range of :data:`_BITMAP_RANGE`: one pass of
    ``bit_count(bitstring_agg(iid, lo, hi))`` (5 s for 100M ids here, where a 100M-key
    GROUP BY takes about 70 s and gigabytes of memory).
    """
    import ibis

    low, high = id_range
    if low is None or high is None or high - low >= _BITMAP_RANGE:
        return None
    backend = kept.get_backend()
    if backend.name != "duckdb":
        return None
    selected = kept.select("iid")
    inner = sqlcache.sql(selected) or ibis.to_sql(selected, dialect="duckdb")
    sql = f"SELECT bit_count(bitstring_agg(iid, {int(low)}, {int(high)})) FROM ({inner})"
    return int(backend.raw_sql(sql).fetchall()[0][0])


def _drop_duplicates(kept: Any, duplicates: Duplicates, source: str) -> tuple[Any, int]:
    """Raise on repeated impression ids, or leave all their rows out (and count them).

    One ``GROUP BY iid`` counts the repeated ids and their rows (in DuckDB about twice as
    fast as ``COUNT(DISTINCT iid)``, which would tell only whether there are any); used
    when :func:`_distinct_ids` cannot rule duplicates out.
    """
    ids = kept.group_by("iid").aggregate(copies=kept.count())
    found = first_row(
        ids.aggregate(
            ids=count(ids.copies > 1), rows=ids.copies.sum(where=ids.copies > 1).fill_null(0)
        )
    )
    if not found["ids"]:
        return kept, 0
    repeated = ids.filter(ids.copies > 1)
    if duplicates == "error":
        examples = (
            collect(repeated.order_by("iid").limit(3).select("iid")).column("iid").to_pylist()
        )
        raise DuplicateError(
            f"{source}: {found['ids']:,} impression id(s) appear more than once "
            f"({found['rows']:,} rows), e.g. {', '.join(map(repr, examples))}. Each page view "
            "needs its own id; fix the logging, or pass duplicates='exclude' "
            "(--duplicates exclude) to leave all their rows out."
        )
    return kept.anti_join(repeated.select("iid"), "iid"), int(found["rows"] or 0)


# ----------------------------------------------------------------------------- nested layout


def _nested_lists(imp: Any, s: LogSchema, present: set[str]) -> dict[str, Any]:
    """Click positions, times and dwell as lists (NULL when absent: every use is NULL-safe,
    which spares the engine a copy of every list that COALESCE would make)."""
    import ibis

    def as_list(role: str, value_type: str) -> Any:
        if role not in present:
            return ibis.null(f"array<{value_type}>")
        return parse_list(imp[getattr(s, role)], value_type)

    return {
        "pos": as_list("clicks", "int64"),
        "secs": as_list("click_seconds", "float64"),
        "dwell": as_list("dwell_seconds", "float64"),
    }


def _refuse_unparsed_clicks(imp: Any, s: LogSchema, source: str, items: int, rows: int) -> None:
    """An :class:`InputError` when a text click column holds items that are not integer
    positions (``items`` of them in ``rows`` rows, counted in prepare's pass), with the counts
    and the first such value (one query)."""
    column = imp[s.clicks]
    bad = unparsed_positions(column)
    found = {"items": items, "rows": rows}
    if not found["rows"]:
        return
    example = collect(imp.filter(bad > 0).select(v=column).limit(1)).column("v")[0].as_py()
    raise InputError(
        f"{source}: column {s.clicks!r} (clicks) holds {int(found['items']):,} item(s) in "
        f"{int(found['rows']):,} row(s) that are not integer positions, e.g. {example!r}; "
        "expected a list of integer positions (1 = top) in click order, written 1;3 or "
        "[1, 3] in text formats. Fix the column, or map another one with --column clicks=NAME."
    )


def _valid_positions(t: Any) -> Any:
    """The clicked positions that were shown (``1..n_shown``; NULL elements drop out)."""
    return t.pos.filter(lambda p: (p >= 1) & (p <= t.n_shown))


def _nested_checks(base: Any, need: tuple[str, ...]) -> dict[str, Any]:
    """Counts of clicks and clicks on positions not shown (kept rows); negative click times
    and dwell only when an asked metric reads them (else their lists are never scanned)."""
    keep = base.keep

    def negatives(values: Any) -> Any:
        return values.filter(lambda x: x < 0).length().sum(where=keep).fill_null(0)

    checks = {
        "clicks": base.pos.length().sum(where=keep).fill_null(0),
        "invalid_clicks": (base.pos.length() - _valid_positions(base).length())
        .sum(where=keep)
        .fill_null(0),
    }
    if "click_seconds" in need:
        checks["negative_times"] = negatives(base.secs)
    if "dwell_seconds" in need:
        checks["negative_dwell"] = negatives(base.dwell)
    return checks


def _nested_features(
    t: Any, long_click_seconds: float, teams: tuple[str, str] | None, *, all_valid: bool
) -> Any:
    """Per-impression features from the click lists (see the module docstring)."""
    import ibis

    if all_valid:  # the counting pass found no bad click: the lists are used as they are
        valid = t.pos
        first_secs = ibis.ifelse(t.secs.length() > 0, t.secs[0], ibis.null("float64"))
        long_clicks = t.dwell.filter(lambda d: d >= long_click_seconds).length().fill_null(0)
    else:  # times and dwell stay aligned with the kept clicks through a (costlier) zip
        shown = lambda e: (e.f1 >= 1) & (e.f1 <= t.n_shown)  # noqa: E731
        valid = _valid_positions(t)
        timed_clicks = t.pos.zip(t.secs).filter(shown)
        first_secs = ibis.ifelse(
            timed_clicks.length() > 0, timed_clicks[0].f2, ibis.null("float64")
        )
        long_clicks = (
            t.pos.zip(t.dwell)
            .filter(lambda e: shown(e) & (e.f2 >= long_click_seconds))
            .length()
            .fill_null(0)
        )
    n_valid = valid.length().fill_null(0)
    ttfc = ibis.ifelse((n_valid > 0) & (first_secs >= 0), first_secs, ibis.null("float64"))
    credit = {}
    if teams is not None:

        # each clicked position credits its team once, as the serving side's credit() does:
        # a result clicked twice (a repeated click, common in real logs) is one click for it
        distinct = valid.unique()

        def team_clicks(label: str) -> Any:
            return (
                distinct.filter(
                    lambda p: (p <= t.teams.length()) & (t.teams[(p - 1).cast("int32")] == label)
                )
                .length()
                .fill_null(0)
            )

        credit = {"credit_a": team_clicks(teams[0]), "credit_b": team_clicks(teams[1])}
    return t.mutate(
        impressions=ibis.literal(1, "int64"),
        clicks=n_valid,
        abandoned=(n_valid == 0).cast("int64"),
        click_at_1=valid.contains(1).fill_null(False).cast("int64"),
        rr=ibis.ifelse(n_valid > 0, 1.0 / valid[0].cast("float64"), 0.0),
        ttfc=ttfc,
        timed=ttfc.notnull().cast("int64"),
        long_clicks=long_clicks,
        **credit,
    )


_FEATURES = [
    "iid",
    "experiment",
    "variant",
    "unit",
    "ts",
    "impressions",
    "clicks",
    "abandoned",
    "click_at_1",
    "rr",
    "ttfc",
    "timed",
    "long_clicks",
]


def select_features(t: Any) -> Any:
    """The feature columns (interleaving logs also keep credit, ``n_shown`` and ``teams``)."""
    extra = ["credit_a", "credit_b", "n_shown", "teams"] if "credit_a" in t.columns else []
    if "segment" in t.columns:
        extra.append("segment")
    return t.select(*_FEATURES, *extra)
