"""Report sections for offline evaluation: headline, metric table, per-query deltas,
distributions, and the rules used.

Inputs are ``Results.to_json_dict(per_query=True)`` (``data.evaluation``) and
``Comparison.to_json_dict(per_query=True)`` (``data.comparison``, its rows carrying the
``marker`` of :attr:`serpeval.comparison.compare.PairResult.marker`). Every number shown is one of
theirs, formatted; the only decisions made here are presentational (order, colour, bold).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from markupsafe import Markup

from serpeval.report.bidi import isolate
from serpeval.report.formatting import interval, number, p_value, signed
from serpeval.report.formatting import level as confidence_level
from serpeval.report.page import (
    Card,
    Panel,
    ReportData,
    Row,
    Section,
    Table,
    TableColumn,
    fragment,
    num_cell,
    text_cell,
)
from serpeval.report.svg import (
    Bar,
    Interval,
    StripPoint,
    StripRow,
    bar_chart,
    interval_chart,
    label_width_for,
    strip_chart,
)

__all__ = ["comparison_sentence", "direction", "distributions", "measure_spec", "metric_table",
           "overview", "per_query", "query_label", "rules"]

Data = Mapping[str, Any]

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
    from serpeval.comparison.paired import TIE_TOLERANCE

    if delta is None or math.isnan(delta) or abs(delta) <= TIE_TOLERANCE:
        return "tie"
    return "better" if (delta > 0) == measure_spec(measure).higher_is_better else "worse"


def _row_kind(row: Data) -> str:
    """Colour of a comparison row: only significant differences are coloured."""
    if not row["significant"] or not row["marker"]:
        return ""
    return "better" if row["improved"] else "worse"


def _correction_label(comparison: Data) -> str:
    from serpeval.comparison.results import CORRECTION_NAMES

    name = comparison["correction"]
    return "uncorrected" if name == "none" else CORRECTION_NAMES.get(name, str(name))


def _by(rows: Sequence[Data], *keys: str) -> dict[Any, list[Data]]:
    """Rows grouped by the value of ``keys`` (one key: the value itself), in order."""
    groups: dict[Any, list[Data]] = {}
    for row in rows:
        key = row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys)
        groups.setdefault(key, []).append(row)
    return groups


# ----------------------------------------------------------------------------- overview


def overview(data: ReportData) -> Section | None:
    """Headline cards: per measure and system, the delta to the baseline and its evidence
    (without a comparison: each run's mean). Were there more than :data:`MAX_CARDS`, only the
    first measure's are shown, one per comparison or run; the metrics section has them all."""
    comparison, evaluation = data.comparison, data.evaluation
    if comparison is not None:
        rows = list(comparison["comparisons"])
        if len(rows) > MAX_CARDS:
            rows = [r for r in rows if r["measure"] == rows[0]["measure"]]
        cards = [_comparison_card(r, comparison) for r in rows]
        return Section("overview", "Overview", fragment("cards", cards),
                       summary=f"{comparison_sentence(comparison)}.")
    if evaluation is not None and evaluation["results"]:
        results, measures = evaluation["results"], list(evaluation["measures"])
        summary = f"{len(results)} run(s) evaluated; no comparison."
        if len(results) * len(measures) > MAX_CARDS:   # as for comparisons: the first measure,
            measures = measures[:1]                    # every run (never half of a run's cards)
            summary += f" {measures[0]} shown; the metrics table has every measure."
        cards = [Card(f"{m}: {row['run']}", number(row[m]), [f"over {row['queries']} queries"])
                 for row in results for m in measures]
        return Section("overview", "Overview", fragment("cards", cards), summary=summary)
    return None


def comparison_sentence(comparison: Data) -> str:
    """``paired t-test against baseline bm25; Holm correction ...; 249 queries``."""
    from serpeval.comparison.results import TEST_NAMES, against_baseline

    against = against_baseline(comparison["baseline"]) if comparison["pairs"] == "baseline" else "all pairs"
    return (f"{TEST_NAMES.get(comparison['test'], comparison['test'])} {against}; "
            f"{_correction_label(comparison)} correction within each measure; significant when "
            f"corrected p ≤ {comparison['alpha']:g}; {comparison['queries']} queries")


def _comparison_card(row: Data, comparison: Data) -> Card:
    level = confidence_level(comparison["confidence"])
    significance = "" if row["marker"] else " · not significant"
    return Card(
        title=f"{row['measure']}: {row['system']} vs {row['baseline']}",
        value=signed(row["delta"]),
        marker=row["marker"],
        kind=_row_kind(row),
        lines=[f"{row['baseline']} {number(row['baseline_mean'])} → {row['system']} "
               f"{number(row['mean'])}",
               f"{level} CI {interval(row['ci_low'], row['ci_high'])}",
               f"p {p_value(row['p_value'])} · {_correction_label(comparison)} "
               f"{p_value(row['p_value_corrected'])}{significance}",
               f"won {row['wins']} · tied {row['ties']} · lost {row['losses']} queries"],
    )


# ----------------------------------------------------------------------------- metric table


def metric_table(data: ReportData) -> Section | None:
    """Means per system and measure (with significance markers), then every comparison."""
    evaluation, comparison = data.evaluation, data.comparison
    if comparison is not None:
        summary = (f"Means over the {comparison['queries']} queries every run was evaluated on; "
                   "best in bold.")
        if comparison["pairs"] == "baseline":
            summary += (f" ▲ / ▼: significantly better / worse than {comparison['baseline']} "
                        f"(corrected p ≤ {comparison['alpha']:g}).")
        parts = [fragment("table", _means_table(_comparison_means(comparison),
                                                comparison["measures"], comparison)),
                 fragment("table", _differences_table(comparison))]
        chart = _interval_chart(comparison)
        if chart is not None:
            parts.append(chart)
    elif evaluation is not None:
        summary = "Mean of each measure over the evaluated queries; the best per column in bold."
        parts = [fragment("table", _means_table(evaluation["results"], evaluation["measures"]))]
    else:
        return None
    return Section("metrics", "Metrics", Markup("").join(parts), summary=summary)


def _comparison_means(comparison: Data) -> list[Data]:
    """One row per system: the queries compared and the means over them."""
    counts = {c["system"]: c["compared"] for c in comparison["coverage"]}
    return [{"run": s, "queries": counts[s], **comparison["means"][s]}
            for s in comparison["systems"]]


def _best(rows: Sequence[Data], measure: str) -> float | None:
    """The best mean of a measure on a bounded scale (shown in bold), when there is a choice."""
    spec = measure_spec(measure)
    values = [r[measure] for r in rows if r[measure] is not None and not math.isnan(r[measure])]
    if spec.bounds is None or len(rows) < 2 or not values:
        return None
    return max(values) if spec.higher_is_better else min(values)


def _means_table(rows: Sequence[Data], measures: Sequence[str], comparison: Data | None = None
                 ) -> Table:
    """Systems x measures, the best in bold and, against a baseline, ▲ / ▼ markers."""
    pairs: dict[tuple[str, str], Data] = {}
    if comparison is not None and comparison["pairs"] == "baseline":
        pairs = {(r["system"], r["measure"]): r for r in comparison["comparisons"]}
    best = {m: _best(rows, m) for m in measures}
    columns = [TableColumn("run", numeric=False), TableColumn("queries"),
               *[TableColumn(m, help=measure_spec(m).summary) for m in measures]]
    table = []
    for r in rows:
        cells = [text_cell(r["run"]), num_cell(r["queries"], str(r["queries"]))]
        for m in measures:
            pair = pairs.get((r["run"], m))
            text, kind, tip = number(r[m]), "best" if r[m] == best[m] else "", ""
            if pair is not None:
                text = f"{text} {pair['marker']}".strip()
                kind = f"{kind} {_row_kind(pair)}".strip()
                tip = (f"{r['run']} vs {pair['baseline']}: Δ {signed(pair['delta'])}, "
                       f"corrected p {p_value(pair['p_value_corrected'])}")
            cells.append(num_cell(r[m], text, kind, tip))
        table.append(Row(cells))
    return Table(columns, table)


def _differences_table(comparison: Data) -> Table:
    level = confidence_level(comparison["confidence"])
    all_pairs = comparison["pairs"] == "all"
    columns = [TableColumn("measure", numeric=False), TableColumn("system", numeric=False),
               *([TableColumn("vs", numeric=False)] if all_pairs else []),
               TableColumn("mean"), TableColumn("vs mean" if all_pairs else "baseline mean"),
               TableColumn("Δ"), TableColumn(f"{level} CI", help=f"{level} confidence interval of Δ"),
               TableColumn("p", help="p-value of the paired test"),
               TableColumn(f"p ({_correction_label(comparison)})",
                      help="corrected for multiple comparisons"),
               TableColumn("d_z", help="effect size: mean Δ / sd of the per-query Δ"),
               TableColumn("W/T/L", help="queries won / tied / lost"), TableColumn("sig", numeric=False)]
    rows = []
    previous = None
    for r in comparison["comparisons"]:
        kind = _row_kind(r)
        cells = [text_cell(r["measure"]), text_cell(r["system"]),
                 *([text_cell(r["baseline"])] if all_pairs else []),
                 num_cell(r["mean"], number(r["mean"])),
                 num_cell(r["baseline_mean"], number(r["baseline_mean"])),
                 num_cell(r["delta"], signed(r["delta"]), f"delta {kind}"),
                 num_cell(r["ci_low"], interval(r["ci_low"], r["ci_high"])),
                 num_cell(r["p_value"], p_value(r["p_value"])),
                 num_cell(r["p_value_corrected"], p_value(r["p_value_corrected"]),
                          "sig" if r["significant"] else ""),
                 num_cell(r["effect_size"], signed(r["effect_size"], 2)),
                 num_cell(r["wins"] - r["losses"], f"{r['wins']}/{r['ties']}/{r['losses']}"),
                 text_cell(r["marker"], kind)]
        rows.append(Row(cells, "group-start" if previous not in (None, r["measure"]) else ""))
        previous = r["measure"]
    caption = ("Every pair of systems" if all_pairs
               else f"Each system against {comparison['baseline']}")
    return Table(columns, rows, caption=caption)


def _interval_chart(comparison: Data) -> Markup | None:
    """Δ with its CI per comparison, for measures on a bounded scale (counts differ in size)."""
    level = confidence_level(comparison["confidence"])
    rows = []
    for r in comparison["comparisons"]:
        if measure_spec(r["measure"]).bounds is None:
            continue
        vs = f" vs {r['baseline']}" if comparison["pairs"] == "all" else ""
        tip = (f"{r['measure']}: {r['system']} vs {r['baseline']}\n"
               f"Δ {signed(r['delta'])}, {level} CI {interval(r['ci_low'], r['ci_high'])}\n"
               f"p {p_value(r['p_value'])}, corrected {p_value(r['p_value_corrected'])} "
               f"{r['marker']}".rstrip())
        rows.append(Interval(f"{r['measure']}: {r['system']}{vs}", r["delta"], r["ci_low"],
                             r["ci_high"], tip, _row_kind(r)))
    if not rows:
        return None
    chart = interval_chart(rows, x_label=f"Δ with {level} CI", width=760,
                           label_width=label_width_for(r.label for r in rows))
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


def _per_query_deltas(comparison: Data, topics: Mapping[str, str]) -> Section:
    groups = _by(comparison["per_query"], "measure", "system", "baseline")
    key = ("measure", "system", "baseline")
    panels = [_delta_panel(pair, groups.get(tuple(pair[k] for k in key), []), topics)
              for pair in comparison["comparisons"]]
    return Section("per-query", "Per-query differences",
                   fragment("switcher", "per-query", "Comparison", panels),
                   summary="Per query: the system's value minus the baseline's, best first. Hover "
                           "a bar for the query; sort the table by any column.")


def _delta_panel(pair: Data, rows: Sequence[Data], topics: Mapping[str, str]) -> Panel:
    measure, system, baseline = pair["measure"], pair["system"], pair["baseline"]
    up = measure_spec(measure).higher_is_better
    ordered = sorted(rows, key=lambda r: (-r["delta"] if up else r["delta"], r["query_id"]))
    bars = [Bar(r["delta"], f"{query_label(r['query_id'], topics)}\n"
                            f"{baseline} {number(r['baseline_value'])} → {system} "
                            f"{number(r['value'])}  (Δ {signed(r['delta'])})",
                direction(r["delta"], measure)) for r in ordered]
    chart = bar_chart(bars, y_label=f"Δ {measure}", x_label=f"{len(bars)} queries, sorted by Δ")
    columns = [TableColumn("#"), TableColumn("query", numeric=False),
               *([TableColumn("text", numeric=False)] if topics else []),
               TableColumn(baseline), TableColumn(system), TableColumn("Δ")]
    table = []
    for i, r in enumerate(ordered, 1):
        kind = direction(r["delta"], measure)
        table.append(Row([num_cell(i, str(i)), text_cell(str(r["query_id"])),
                          *([text_cell(topics.get(r["query_id"], ""), "wrap")] if topics else []),
                          num_cell(r["baseline_value"], number(r["baseline_value"])),
                          num_cell(r["value"], number(r["value"])),
                          num_cell(r["delta"], signed(r["delta"]), "delta")],
                         kind if kind != "tie" else ""))
    body = fragment("figure", chart, "") + fragment("table", Table(columns, table, scroll=True))
    summary = (f"{system} vs {baseline} on {measure}: better on {pair['wins']} queries, worse on "
               f"{pair['losses']}, tied on {pair['ties']}; mean Δ {signed(pair['delta'])} "
               f"{pair['marker']}".rstrip())
    return Panel(f"{measure}: {system} vs {baseline}", body, summary)


def _per_query_values(evaluation: Data, topics: Mapping[str, str]) -> Section | None:
    measures = list(evaluation["measures"])
    by_run = _by(evaluation.get("per_query", []), "run")
    if not by_run or not measures:
        return None
    first = measures[0]
    up = measure_spec(first).higher_is_better
    columns = [TableColumn("query", numeric=False), *([TableColumn("text", numeric=False)] if topics else []),
               *[TableColumn(m) for m in measures]]
    panels = []
    for run, rows in by_run.items():
        ordered = sorted(rows, key=lambda r: (r[first] if up else -r[first], r["query_id"]))
        table = [Row([text_cell(str(r["query_id"])),
                      *([text_cell(topics.get(r["query_id"], ""), "wrap")] if topics else []),
                      *[num_cell(r[m], number(r[m])) for m in measures]]) for r in ordered]
        panels.append(Panel(run, fragment("table", Table(columns, table, scroll=True)),
                            f"{run}: {len(rows)} queries, worst on {first} first"))
    return Section("per-query", "Per-query values",
                   fragment("switcher", "per-query", "Run", panels),
                   summary="Per-query values of each run; sort the table by any column.")


# ----------------------------------------------------------------------------- distributions


def distributions(data: ReportData) -> Section | None:
    """Per measure, every query's value for every run as a dot; the mean as a tick."""
    evaluation = data.evaluation
    if evaluation is None or not evaluation.get("per_query"):
        return None
    by_run = _by(evaluation["per_query"], "run")
    aggregates = {row["run"]: row for row in evaluation["results"]}
    charts = []
    for m in evaluation["measures"]:
        spec = measure_spec(m)
        averaged = spec.aggregate == "mean"          # a sum is not on the per-query scale
        rows = []
        for run, values in by_run.items():
            points = [StripPoint(r[m], f"{run} · {query_label(r['query_id'], data.topics)}\n"
                                       f"{m} = {number(r[m])}") for r in values]
            mean = aggregates[run][m] if averaged else None
            rows.append(StripRow(run, points, mean,
                                 f"{run}: mean {m} = {number(mean)} over {len(values)} queries"))
        bounded = spec.bounds is not None and all(map(math.isfinite, spec.bounds))
        chart = strip_chart(rows, x_label=m, domain=spec.bounds if bounded else None)
        caption = f"{m}: one dot per query" + ("; the bar is the mean" if averaged else "")
        charts.append(fragment("figure", chart, caption))
    return Section("distributions", "Distributions", fragment("grid", charts),
                   summary="How each run's per-query values spread: one dot per evaluated query.")


# ----------------------------------------------------------------------------- rules


def rules(data: ReportData) -> Section | None:
    """The evaluation rules applied, the test's notes, and what was skipped or ignored."""
    source = data.evaluation or data.comparison
    if source is None:
        return None
    parts = [fragment("notes", list(source["rules"]))]
    if data.comparison is not None:
        parts += [fragment("heading", "Significance tests"),
                  fragment("notes", [comparison_sentence(data.comparison),
                                     *data.comparison["notes"]])]
    if data.evaluation is not None:
        parts += [fragment("heading", "Coverage"),
                  fragment("table", _coverage_table(data.evaluation["coverage"],
                                                    data.evaluation.get("ties")))]
    inputs = source.get("inputs")
    if inputs:
        parts += [fragment("heading", "Inputs"), fragment("notes", input_lines(inputs))]
    if data.notes:
        parts += [fragment("heading", "Notes"), fragment("notes", list(data.notes))]
    return Section("rules", "Evaluation rules", Markup("").join(parts),
                   summary="How the numbers above were computed, and what was left out.")


def input_lines(inputs: Data) -> list[str]:
    """The signature block (:func:`~serpeval.evaluation.results.input_signatures`) in words:
    equal signatures mean the same parsed judgments, runs and rules."""
    qrels = inputs.get("qrels") or {}
    lines = [f"qrels {isolate(qrels.get('source', ''))}: content signature {qrels.get('signature') or 'not recorded'}"]
    lines += [f"run {isolate(r['run'])}: content signature {r.get('signature') or 'not recorded'}"
              + (f" (evaluated against qrels {r['qrels_signature']})"
                 if r.get("qrels_signature") and r["qrels_signature"] != qrels.get("signature") else "")
              for r in inputs.get("runs", [])]
    lines.append(f"tie policy {inputs.get('ties')}; grades {inputs.get('grades', 'int')}; "
                 f"rules signature {inputs.get('rules')}; "
                 f"serpeval {inputs.get('serpeval')}")
    return lines


MISSING_ACTIONS = {"skip": "skipped", "zero": "counted as 0", "error": "refused"}


def _coverage_table(coverage: Sequence[Data], ties: str | None = None) -> Table:
    """Per run: queries judged, in the run, evaluated, missing; tie groups, and what the tie
    policy ``ties`` (the evaluation's) did with them."""
    from serpeval.core.ties import TIE_RULES

    tie_rule = TIE_RULES.get(ties or "trec_eval", f"tie policy {ties}")
    columns = [TableColumn("run", numeric=False), TableColumn("judged queries"), TableColumn("run queries"),
               TableColumn("evaluated"),
               TableColumn("missing", help="judged queries the run has no results for"),
               TableColumn("missing queries", numeric=False), TableColumn("unjudged run queries"),
               TableColumn("tie groups", help=f"groups of equal scores; {tie_rule}")]
    rows = []
    for c in coverage:
        missing = list(c["missing"])
        shown = ", ".join(missing[:8]) + (", …" if len(missing) > 8 else "")
        action = MISSING_ACTIONS.get(c["missing_policy"], "")
        counts = [num_cell(c[k], str(c[k])) for k in ("judged_queries", "run_queries", "evaluated")]
        rows.append(Row([text_cell(c["run"]), *counts, num_cell(len(missing), str(len(missing))),
                         text_cell(f"{shown} ({action})" if missing else "", "wrap",
                                   ", ".join(missing)),
                         num_cell(c["unjudged_queries"], str(c["unjudged_queries"])),
                         num_cell(c["ties"], str(c["ties"]))]))
    return Table(columns, rows)
