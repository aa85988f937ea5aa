"""Report sections for offline evaluation: headline, metric table, per-query deltas,
distributions, and the rules used.

Inputs are ``Results.to_json_dict(per_query=True)`` (``data.evaluation``) and
``Comparison.to_json_dict(per_query=True)`` (``data.comparison``, its rows carrying the
``marker`` of :attr:`serpeval.comparison.PairResult.marker`). Every number shown is one of
theirs, formatted; the only decisions made here are presentational (order, colour, bold).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from serpeval.report.formatting import interval, number, p_value, signed, sort_key
from serpeval.report.page import Card, Cell, Column, Panel, ReportData, Row, Section, Table, fragment
from serpeval.report.svg import Bar, Interval, StripPoint, StripRow, bar_chart, interval_chart, strip_chart

__all__ = ["distributions", "metric_table", "overview", "per_query", "rules"]

#: Headline cards shown before the page falls back to one measure's cards.
MAX_CARDS = 12


def query_label(query_id: str, topics: Mapping[str, str]) -> str:
    """``301 — International Organized Crime`` (or the id alone without topics)."""
    text = topics.get(query_id)
    return f"{query_id} — {text}" if text else str(query_id)


@cache
def measure_spec(name: str) -> Any:
    """The registry spec of a canonical measure name (direction, bounds, aggregate)."""
    from serpeval.measures import parse_measure

    return parse_measure(name).spec


def direction(delta: float | None, measure: str) -> str:
    """``better``, ``worse`` or ``tie`` for a per-query delta, as W/T/L counts them."""
    from serpeval.comparison import TIE_TOLERANCE

    if delta is None or math.isnan(delta) or abs(delta) <= TIE_TOLERANCE:
        return "tie"
    return "better" if (delta > 0) == measure_spec(measure).higher_is_better else "worse"


def _row_kind(row: Mapping[str, Any]) -> str:
    """Colour of a comparison row: only significant differences are coloured."""
    if not row["significant"] or not row["marker"]:
        return ""
    return "better" if row["improved"] else "worse"


def _correction_label(comparison: Mapping[str, Any]) -> str:
    from serpeval.comparison import CORRECTION_NAMES

    name = comparison["correction"]
    return "uncorrected" if name == "none" else CORRECTION_NAMES.get(name, name)


# ----------------------------------------------------------------------------- overview


def overview(data: ReportData) -> Section | None:
    """Headline cards: per measure and system, the delta to the baseline and its evidence."""
    comparison, evaluation = data.comparison, data.evaluation
    if comparison is not None:
        rows = list(comparison["comparisons"])
        if len(rows) > MAX_CARDS:
            rows = [r for r in rows if r["measure"] == rows[0]["measure"]]
        cards = [_comparison_card(r, comparison) for r in rows]
        return Section("overview", "Overview", fragment("cards", cards),
                       summary=f"{comparison_sentence(comparison)}.")
    if evaluation is not None and evaluation["results"]:
        measures = evaluation["measures"]
        cards = [Card(title=f"{m}: {row['run']}", value=number(row[m]),
                      lines=[f"over {row['queries']} queries"])
                 for row in evaluation["results"] for m in measures][:MAX_CARDS]
        return Section("overview", "Overview", fragment("cards", cards),
                       summary=f"{len(evaluation['results'])} run(s) evaluated; no comparison.")
    return None


def comparison_sentence(comparison: Mapping[str, Any]) -> str:
    """``paired t-test against baseline bm25; Holm correction ...; 249 queries`` (from the data)."""
    from serpeval.comparison import TEST_NAMES

    against = (f"against baseline {comparison['baseline']}" if comparison["pairs"] == "baseline"
               else "all pairs")
    return (f"{TEST_NAMES.get(comparison['test'], comparison['test'])} {against}; "
            f"{_correction_label(comparison)} correction within each measure; significant when "
            f"corrected p ≤ {comparison['alpha']:g}; {comparison['queries']} queries")


def _comparison_card(row: Mapping[str, Any], comparison: Mapping[str, Any]) -> Card:
    level = f"{comparison['confidence']:.0%}"
    significance = "" if row["marker"] else " · not significant"
    return Card(
        title=f"{row['measure']}: {row['system']} vs {row['baseline']}",
        value=signed(row["delta"]),
        marker=row["marker"],
        kind=_row_kind(row),
        lines=[f"{row['baseline']} {number(row['baseline_mean'])} → {row['system']} {number(row['mean'])}",
               f"{level} CI {interval(row['ci_low'], row['ci_high'])}",
               f"p {p_value(row['p_value'])} · {_correction_label(comparison)} "
               f"{p_value(row['p_value_corrected'])}{significance}",
               f"won {row['wins']} · tied {row['ties']} · lost {row['losses']} queries"],
    )


# ----------------------------------------------------------------------------- metric table


def metric_table(data: ReportData) -> Section | None:
    """Means per system and measure (with significance markers), then every comparison."""
    evaluation, comparison = data.evaluation, data.comparison
    if evaluation is None and comparison is None:
        return None
    parts = [fragment("table", _means_table(evaluation, comparison))]  # type: ignore[arg-type]
    summary = "Mean of each measure over the evaluated queries; the best value per column in bold."
    if comparison is not None:
        summary = (f"Means over the {comparison['queries']} queries every run was evaluated on; "
                   "best in bold.")
        if comparison["pairs"] == "baseline":
            summary += (f" ▲ / ▼: significantly better / worse than {comparison['baseline']} "
                        f"(corrected p ≤ {comparison['alpha']:g}).")
        parts.append(fragment("table", _differences_table(comparison)))
        chart = _interval_chart(comparison)
        if chart is not None:
            parts.append(chart)
    from markupsafe import Markup

    return Section("metrics", "Metrics", Markup("").join(parts), summary=summary)


def _means_table(evaluation: Mapping[str, Any], comparison: Mapping[str, Any] | None) -> Table:
    """Systems x measures: the comparison's means (common queries) or the evaluation's."""
    if comparison is not None:
        measures = list(comparison["measures"])
        counts = {c["system"]: c["compared"] for c in comparison["coverage"]}
        means = comparison["means"]
        rows_in = [{"run": s, "queries": counts[s], **means[s]} for s in comparison["systems"]]
    else:
        measures = list(evaluation["measures"])
        rows_in = list(evaluation["results"])
    markers: dict[tuple[str, str], Mapping[str, Any]] = {}
    if comparison is not None and comparison["pairs"] == "baseline":
        markers = {(r["system"], r["measure"]): r for r in comparison["comparisons"]}
    best = {}
    for m in measures:
        spec = measure_spec(m)
        values = [r[m] for r in rows_in if r[m] is not None and not math.isnan(r[m])]
        if spec.bounds is not None and len(rows_in) > 1 and values:
            best[m] = max(values) if spec.higher_is_better else min(values)
    columns = [Column("run", numeric=False), Column("queries"),
               *[Column(m, help=measure_spec(m).summary) for m in measures]]
    rows = []
    for r in rows_in:
        cells = [Cell(r["run"], cls="text"), Cell(str(r["queries"]), r["queries"], "num")]
        for m in measures:
            pair = markers.get((r["run"], m))
            marker = pair["marker"] if pair else ""
            text = number(r[m]) + (f" {marker}" if marker else "")
            classes = " ".join(c for c in ("num", "best" if r[m] == best.get(m) else "",
                                           _row_kind(pair) if pair else "") if c)
            tip = (f"{r['run']} vs {pair['baseline']}: Δ {signed(pair['delta'])}, corrected p "
                   f"{p_value(pair['p_value_corrected'])}") if pair else ""
            cells.append(Cell(text, sort=sort_key(r[m]), cls=classes, tip=tip))
        rows.append(Row(cells))
    return Table(columns, rows)


def _differences_table(comparison: Mapping[str, Any]) -> Table:
    level = f"{comparison['confidence']:.0%}"
    all_pairs = comparison["pairs"] == "all"
    columns = [Column("measure", numeric=False), Column("system", numeric=False),
               *([Column("vs", numeric=False)] if all_pairs else []),
               Column("mean"), Column("vs mean" if all_pairs else "baseline mean"),
               Column("Δ"), Column(f"{level} CI", help=f"{level} confidence interval of Δ"),
               Column("p", help="p-value of the paired test"),
               Column(f"p ({_correction_label(comparison)})", help="corrected for multiple comparisons"),
               Column("d_z", help="effect size: mean Δ / sd of the per-query Δ"),
               Column("W/T/L", help="queries won / tied / lost"), Column("sig", numeric=False)]
    rows = []
    previous = None
    for r in comparison["comparisons"]:
        cells = [Cell(r["measure"], cls="text"), Cell(r["system"], cls="text"),
                 *([Cell(r["baseline"], cls="text")] if all_pairs else []),
                 Cell(number(r["mean"]), sort_key(r["mean"]), "num"),
                 Cell(number(r["baseline_mean"]), sort_key(r["baseline_mean"]), "num"),
                 Cell(signed(r["delta"]), sort_key(r["delta"]), f"num delta {_row_kind(r)}".strip()),
                 Cell(interval(r["ci_low"], r["ci_high"]), sort_key(r["ci_low"]), "num"),
                 Cell(p_value(r["p_value"]), sort_key(r["p_value"]), "num"),
                 Cell(p_value(r["p_value_corrected"]), sort_key(r["p_value_corrected"]),
                      "num sig" if r["significant"] else "num"),
                 Cell(signed(r["effect_size"], 2), sort_key(r["effect_size"]), "num"),
                 Cell(f"{r['wins']}/{r['ties']}/{r['losses']}", sort_key(r["wins"] - r["losses"]), "num"),
                 Cell(r["marker"], r["marker"], f"text {_row_kind(r)}".strip())]
        kind = "group-start" if previous is not None and r["measure"] != previous else ""
        previous = r["measure"]
        rows.append(Row(cells, kind))
    return Table(columns, rows, caption=f"Each system against {comparison['baseline']}"
                 if not all_pairs else "Every pair of systems")


def _interval_chart(comparison: Mapping[str, Any]) -> Any:
    """Δ with its CI per comparison, for measures on a bounded scale (counts differ in size)."""
    level = f"{comparison['confidence']:.0%}"
    rows = []
    for r in comparison["comparisons"]:
        if measure_spec(r["measure"]).bounds is None:
            continue
        vs = f" vs {r['baseline']}" if comparison["pairs"] == "all" else ""
        tip = (f"{r['measure']}: {r['system']} vs {r['baseline']}\n"
               f"Δ {signed(r['delta'])}, {level} CI {interval(r['ci_low'], r['ci_high'])}\n"
               f"p {p_value(r['p_value'])}, corrected {p_value(r['p_value_corrected'])} {r['marker']}")
        rows.append(Interval(f"{r['measure']}: {r['system']}{vs}", r["delta"], r["ci_low"],
                             r["ci_high"], tip, _row_kind(r)))
    if not rows:
        return None
    chart = interval_chart(rows, x_label=f"Δ with {level} CI", width=760,
                           label_width=min(320, 60 + 7 * max(len(r.label) for r in rows)))
    return fragment("figure", chart, f"Difference to the baseline and its {level} confidence "
                                     "interval; coloured where significant after correction.")


# ----------------------------------------------------------------------------- per query


def per_query(data: ReportData) -> Section | None:
    """Which queries won and lost: per comparison, the per-query deltas sorted."""
    if data.comparison is not None:
        return _per_query_deltas(data.comparison, data.topics)
    if data.evaluation is not None:
        return _per_query_values(data.evaluation, data.topics)
    return None


def _per_query_deltas(comparison: Mapping[str, Any], topics: Mapping[str, str]) -> Section:
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in comparison["per_query"]:
        groups.setdefault((row["measure"], row["system"], row["baseline"]), []).append(row)
    panels = []
    for pair in comparison["comparisons"]:
        key = (pair["measure"], pair["system"], pair["baseline"])
        panels.append(_delta_panel(pair, groups.get(key, []), topics))
    summary = ("Per query: the system's value minus the baseline's, best first. Hover a bar for "
               "the query; sort the table by any column.")
    return Section("per-query", "Per-query differences",
                   fragment("switcher", "per-query", "Comparison", panels), summary=summary)


def _delta_panel(pair: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                 topics: Mapping[str, str]) -> Panel:
    measure, system, baseline = pair["measure"], pair["system"], pair["baseline"]
    up = measure_spec(measure).higher_is_better
    ordered = sorted(rows, key=lambda r: (-r["delta"] if up else r["delta"], r["query_id"]))
    bars = [Bar(r["delta"], f"{query_label(r['query_id'], topics)}\n{baseline} {number(r['baseline_value'])}"
                            f" → {system} {number(r['value'])}  (Δ {signed(r['delta'])})",
                direction(r["delta"], measure)) for r in ordered]
    chart = bar_chart(bars, y_label=f"Δ {measure}", x_label=f"{len(bars)} queries, sorted by Δ")
    with_text = bool(topics)
    columns = [Column("#"), Column("query", numeric=False),
               *([Column("text", numeric=False)] if with_text else []),
               Column(baseline), Column(system), Column("Δ")]
    table_rows = []
    for i, r in enumerate(ordered, 1):
        kind = direction(r["delta"], measure)
        cells = [Cell(str(i), i, "num"), Cell(str(r["query_id"]), cls="text"),
                 *([Cell(topics.get(r["query_id"], ""), cls="text wrap")] if with_text else []),
                 Cell(number(r["baseline_value"]), sort_key(r["baseline_value"]), "num"),
                 Cell(number(r["value"]), sort_key(r["value"]), "num"),
                 Cell(signed(r["delta"]), sort_key(r["delta"]), "num delta")]
        table_rows.append(Row(cells, kind if kind != "tie" else ""))
    from markupsafe import Markup

    body = Markup("").join([fragment("figure", chart, ""),
                            fragment("table", Table(columns, table_rows, scroll=True))])
    summary = (f"{system} vs {baseline} on {measure}: better on {pair['wins']} queries, worse on "
               f"{pair['losses']}, tied on {pair['ties']}; mean Δ {signed(pair['delta'])} "
               f"{pair['marker']}".rstrip())
    return Panel(f"{measure}: {system} vs {baseline}", body, summary)


def _per_query_values(evaluation: Mapping[str, Any], topics: Mapping[str, str]) -> Section | None:
    measures = list(evaluation["measures"])
    by_run: dict[str, list[Mapping[str, Any]]] = {}
    for row in evaluation.get("per_query", []):
        by_run.setdefault(row["run"], []).append(row)
    if not by_run or not measures:
        return None
    first = measures[0]
    panels = []
    for run, rows in by_run.items():
        up = measure_spec(first).higher_is_better
        ordered = sorted(rows, key=lambda r: (r[first] if up else -r[first], r["query_id"]))
        columns = [Column("query", numeric=False),
                   *([Column("text", numeric=False)] if topics else []),
                   *[Column(m) for m in measures]]
        table_rows = [Row([Cell(str(r["query_id"]), cls="text"),
                           *([Cell(topics.get(r["query_id"], ""), cls="text wrap")] if topics else []),
                           *[Cell(number(r[m]), sort_key(r[m]), "num") for m in measures]])
                      for r in ordered]
        panels.append(Panel(run, fragment("table", Table(columns, table_rows, scroll=True)),
                            f"{run}: {len(rows)} queries, worst on {first} first"))
    return Section("per-query", "Per-query values", fragment("switcher", "per-query", "Run", panels),
                   summary="Per-query values of each run; sort the table by any column.")


# ----------------------------------------------------------------------------- distributions


def distributions(data: ReportData) -> Section | None:
    """Per measure, every query's value for every run as a dot; the mean as a tick."""
    evaluation = data.evaluation
    if evaluation is None or not evaluation.get("per_query"):
        return None
    measures = list(evaluation["measures"])
    by_run: dict[str, list[Mapping[str, Any]]] = {}
    for row in evaluation["per_query"]:
        by_run.setdefault(row["run"], []).append(row)
    aggregates = {row["run"]: row for row in evaluation["results"]}
    charts = []
    for m in measures:
        spec = measure_spec(m)
        rows = []
        for run, values in by_run.items():
            points = [StripPoint(r[m], f"{run} · {query_label(r['query_id'], data.topics)}\n"
                                       f"{m} = {number(r[m])}") for r in values]
            mean = aggregates[run][m] if spec.aggregate == "mean" else None
            rows.append(StripRow(run, points, mean,
                                 f"{run}: mean {m} = {number(mean)} over {len(values)} queries"))
        domain = spec.bounds if spec.bounds is not None and all(map(math.isfinite, spec.bounds)) else None
        chart = strip_chart(rows, x_label=m, domain=domain)
        charts.append(fragment("figure", chart, f"{m}: one dot per query" +
                               ("; the bar is the mean" if spec.aggregate == "mean" else "")))
    return Section("distributions", "Distributions", fragment("grid", charts),
                   summary="How each run's per-query values spread: one dot per evaluated query.")


# ----------------------------------------------------------------------------- rules


def rules(data: ReportData) -> Section | None:
    """The evaluation rules applied, the test's notes, and what was skipped or ignored."""
    source = data.evaluation or data.comparison
    if source is None:
        return None
    from markupsafe import Markup

    parts = [fragment("notes", list(source["rules"]))]
    if data.comparison is not None:
        parts.append(Markup("<h3>Significance tests</h3>"))
        parts.append(fragment("notes", [comparison_sentence(data.comparison),
                                        *data.comparison["notes"]]))
    if data.evaluation is not None:
        parts.append(Markup("<h3>Coverage</h3>"))
        parts.append(fragment("table", _coverage_table(data.evaluation["coverage"])))
    if data.notes:
        parts.append(Markup("<h3>Notes</h3>"))
        parts.append(fragment("notes", list(data.notes)))
    return Section("rules", "Evaluation rules", Markup("").join(parts),
                   summary="How the numbers above were computed, and what was left out.")


def _coverage_table(coverage: Sequence[Mapping[str, Any]]) -> Table:
    columns = [Column("run", numeric=False), Column("judged queries"), Column("run queries"),
               Column("evaluated"), Column("missing", help="judged queries the run has no results for"),
               Column("missing queries", numeric=False), Column("unjudged run queries"),
               Column("tie groups", help="groups of equal scores, broken by doc id descending")]
    rows = []
    for c in coverage:
        missing = list(c["missing"])
        shown = ", ".join(missing[:8]) + (", …" if len(missing) > 8 else "")
        action = {"skip": "skipped", "zero": "counted as 0", "error": "refused"}.get(c["missing_policy"], "")
        rows.append(Row([Cell(c["run"], cls="text"),
                         *[Cell(str(c[k]), c[k], "num") for k in ("judged_queries", "run_queries", "evaluated")],
                         Cell(str(len(missing)), len(missing), "num"),
                         Cell(f"{shown} ({action})" if missing else "", cls="text wrap",
                              tip=", ".join(missing)),
                         Cell(str(c["unjudged_queries"]), c["unjudged_queries"], "num"),
                         Cell(str(c["ties"]), c["ties"], "num")]))
    return Table(columns, rows)
