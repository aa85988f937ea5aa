"""Report sections for online experiments: interleaving, A/B tests (effects, monitoring over
time, sample sizes) and the sensitivity simulator.

Each builder reads ``data.online[kind]``: the JSON-ready data of one or more results of a
kind (:mod:`serpeval.report.online_inputs`). Builders format and draw those numbers; a
kind not given is a section not shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from markupsafe import Markup

from serpeval.report.formatting import count, interval, number, p_value, percent, signed, sort_key
from serpeval.report.formatting import level as confidence_level
from serpeval.report.page import (
    Card,
    Cell,
    ReportData,
    Row,
    Section,
    Table,
    TableColumn,
    fragment,
    num_cell,
    text_cell,
)
from serpeval.report.simulation import display_rows
from serpeval.report.svg import (
    Interval,
    LinePoint,
    Series,
    interval_chart,
    label_width_for,
    line_chart,
)

__all__ = ["BUILDERS", "ab", "ab_monitor", "ab_plan", "interleaving", "simulation"]

Data = Mapping[str, Any]

# ----------------------------------------------------------------------------- helpers


def _join(parts: Iterable[Markup]) -> Markup:
    return Markup("").join(parts)


def _section(data: ReportData, kind: str, key: str, heading: str, summary: str,
             title: Callable[[Data], str], body: Callable[[Data], Markup]) -> Section | None:
    """The section of one online kind (None when not given): the body of each of its
    results, each under its own ``title`` when there are several."""
    items = data.online.get(kind, [])
    if not items:
        return None
    if len(items) == 1:
        content = body(items[0])
    else:
        content = _join(fragment("heading", title(item)) + body(item) for item in items)
    return Section(key, heading, content, summary=summary)


def _figure(chart: Markup, caption: str) -> Markup:
    return fragment("figure", chart, caption)


# ----------------------------------------------------------------------------- interleaving


def interleaving(data: ReportData) -> Section | None:
    """Who won the interleaving experiment: Δ with its CI, the counts, the checks."""
    return _section(data, "interleaving", "interleaving", "Interleaving",
                    "A is the baseline, B the candidate. Δ (B − A) = (wins B + ties / 2) / "
                    "impressions − 1/2: positive when users prefer B. CI: bootstrap over units; "
                    "p: exact sign test. Over time (logs with timestamps): cumulative Δ per "
                    "period with a delta-method CI clustered by unit.",
                    lambda d: str(d.get("experiment", "")), _interleaving_body)


def _role(role: str, name: str) -> str:
    """``B = candidate``: a ranker's role and its name; the role alone when the name is it."""
    return role if name == role else f"{role} = {name}"


def _named(role: str, name: str) -> str:
    """``candidate (B)``: a ranker's name and its role; the role alone when the name is it."""
    return role if name == role else f"{name} ({role})"


def _interleaving_body(d: Data) -> Markup:
    parts = []
    for row in d["results"]:
        low_key = next(k for k in row if k.startswith("CI ") and k.endswith(" low"))
        level = low_key[3:-4]                                   # "CI 95% low" -> "95%"
        low, high = row[low_key], row[f"CI {level} high"]
        a, b = str(row.get("A", "A")), str(row.get("B", "B"))
        winner = {"A": f"{_role('A', a)} (the baseline)", "B": f"{_role('B', b)} (the candidate)"}.get(
            row["winner"], "none")
        kind = {"B": "better", "A": "worse"}.get(row["winner"], "")
        ci = interval(low, high)
        delta = row["delta (B-A)"]
        parts.append(fragment("cards", [
            Card(f"{_role('B', b)} vs {_role('A', a)}: preference Δ (B − A)", signed(delta),
                 [f"{level} CI {ci}", f"sign test p {p_value(row['p (sign test)'])}",
                  f"winner: {winner}"], kind=kind),
            Card("impressions", count(row["impressions"]),
                 [f"{_named('B', b)} won {count(row['wins B'])}, {_named('A', a)} won "
                  f"{count(row['wins A'])}, ties {count(row['ties'])}"]),
            Card(f"per {row['unit']}: preference (B − A)", signed(row["preference (B-A)"]),
                 [f"{count(row['prefer B'])} prefer {_named('B', b)}, {count(row['prefer A'])} "
                  f"prefer {_named('A', a)} of {count(row['units'])}",
                  f"sign test p {p_value(row['p (units)'])}"]),
        ]))
        tip = f"Δ ({b} − {a}) {signed(delta)}, {level} CI {ci}"
        chart = interval_chart([Interval(f"Δ ({b} − {a})", delta, low, high, tip, kind)],
                               x_label=f"Δ (B − A) with {level} CI", width=760, label_width=160)
        parts.append(_figure(chart, f"Positive: {_role('B', b)} (the candidate) preferred; "
                                    f"negative: {_role('A', a)} (the baseline)."))
    checks = [Row([text_cell(c["check"]), num_cell(c.get("value"), number(c.get("value"))),
                   num_cell(c.get("p"), p_value(c.get("p"))),
                   text_cell("ok" if c["ok"] else "FAILED", "" if c["ok"] else "worse"),
                   text_cell(str(c.get("detail", "")), "wrap")], "" if c["ok"] else "worse")
              for c in d.get("checks", [])]
    if checks:
        columns = [TableColumn("check", False), TableColumn("value"), TableColumn("p"), TableColumn("result", False),
                   TableColumn("detail", False)]
        parts.append(fragment("table", Table(columns, checks,
                                             caption="Validity checks of the interleaving")))
    if (d.get("over_time") or {}).get("rows"):
        teams = d.get("teams") or ["A", "B"]
        parts += _over_time_parts(d["over_time"], str(teams[0]), str(teams[1]))
    parts.append(fragment("notes", list(d.get("notes", []))))
    return _join(parts)


_PLURAL = {"user": "users", "query": "queries", "user_query": "user-query pairs",
           "impression": "impressions"}


def _period_start(r: Data, seconds: int) -> str:
    """A period's start: the date for whole days, else date and time (UTC)."""
    text = str(r["start"]).replace("T", " ").rstrip("Z")
    return text[:10] if seconds % 86400 == 0 else text[:16]


def _period_tip(r: Data, period: str, start: str, units: str, level: str) -> str:
    ci = interval(r["ci_low"], r["ci_high"]) or "— (fewer than two units)"
    return (f"{period} {r['period']}: {start} (UTC)\n"
            f"N = {count(r['cum_impressions'])} impressions, {count(r['cum_units'])} {units} "
            "so far\n"
            f"Δ (B − A) {signed(r['delta'])}, {level} CI {ci}\n"
            f"this {period}: {count(r['impressions'])} impressions, Δ {signed(r['delta_period'])}")


def _over_time_parts(over: Data, a: str, b: str) -> list[Markup]:
    """Cumulative Δ (B − A) per period with its CI band (a line), and the periods as a table."""
    period = str(over.get("period", "period"))
    unit = str(over.get("unit", "unit"))
    units = _PLURAL.get(unit, f"{unit}s")
    level = confidence_level(over.get("confidence") or 0.95)
    rows = list(over["rows"])
    starts = [_period_start(r, int(over.get("seconds", 1))) for r in rows]
    points = [LinePoint(r["period"], r["delta"], _period_tip(r, period, start, units, level),
                        r.get("ci_low"), r.get("ci_high"))
              for r, start in zip(rows, starts, strict=True)]
    chart = line_chart([Series(f"cumulative Δ ({b} − {a})", points)],
                       x_label=f"{period} (UTC; 1 = {starts[0]})",
                       y_label=f"cumulative Δ ({b} − {a})", width=1080, reference=0.0)
    table = [Row([num_cell(r["period"], str(r["period"])), text_cell(start),
                  num_cell(r["impressions"], count(r["impressions"])),
                  num_cell(r["wins_a"], count(r["wins_a"])),
                  num_cell(r["wins_b"], count(r["wins_b"])), num_cell(r["ties"], count(r["ties"])),
                  num_cell(r["cum_impressions"], count(r["cum_impressions"])),
                  num_cell(r["cum_units"], count(r["cum_units"])),
                  num_cell(r["delta"], signed(r["delta"])),
                  num_cell(r.get("ci_low"), interval(r.get("ci_low"), r.get("ci_high")))])
             for r, start in zip(rows, starts, strict=True)]
    columns = [TableColumn(period), TableColumn("start (UTC)", False), TableColumn("impressions"),
               TableColumn(f"wins {a}"), TableColumn(f"wins {b}"), TableColumn("ties"),
               TableColumn("impressions so far"), TableColumn(f"{units} so far"),
               TableColumn(f"cumulative Δ ({b} − {a})"), TableColumn(f"{level} CI")]
    caption = (f"Line and band: Δ ({b} − {a}) of all impressions up to the end of each {period}, "
               f"positive when {_role('B', b)} (the candidate) is preferred, with "
               f"its {level} CI (delta method on per-{unit} sums, clustered by {unit}). "
               "Read each point as a fixed-horizon estimate, not as a stopping rule.")
    return [_figure(chart, caption),
            fragment("table", Table(columns, table, caption="Preference over time",
                                    scroll=len(table) > 15))]


# ----------------------------------------------------------------------------- A/B


def ab(data: ReportData) -> Section | None:
    """A/B effects with confidence intervals, per metric and treatment."""
    return _section(data, "ab", "ab", "A/B test",
                    "Effect of each treatment on each metric, with its confidence "
                    "interval; ▲ / ▼ significantly better / worse after the "
                    "multiple-testing correction.",
                    lambda d: str(d.get("experiment", "")), _ab_body)


def _ab_marker(row: Data) -> tuple[str, str]:
    """The marker and colour of a verdict (``better``, ``worse``, no significant difference)."""
    return {"better": ("▲", "better"), "worse": ("▼", "worse")}.get(row["verdict"], ("", ""))


def _srm_warning(srm: Data) -> Markup:
    counts = ", ".join(f"{v} {count(o)} (expected {count(e)})" for v, o, e in
                       zip(srm["variants"], srm["observed"], srm["expected"], strict=True))
    p, threshold = srm.get("p_value"), srm.get("threshold")      # null in JSON: undefined
    test = ("p undefined" if p is None else f"p = {p:.2e}"
            + ("" if threshold is None else f" < {threshold:g}"))
    return fragment("paragraph", f"Sample ratio mismatch: {counts}; {test}. Do not trust the "
                                 "effects below until the cause is found.", "warning")


def _ab_card(r: Data, level: str) -> Card:
    marker, kind = _ab_marker(r)
    relative_ci = interval(r["rel_ci_lower"], r["rel_ci_upper"], as_percent=True)
    return Card(f"{r['metric']}: {r['treatment']} vs {r['control']}", percent(r["rel_effect"]), [
        f"{r['control']} {number(r['value_control'])} → {r['treatment']} "
        f"{number(r['value_treatment'])}",
        f"effect {signed(r['effect'])}, {level} CI {interval(r['ci_lower'], r['ci_upper'])}",
        f"relative {level} CI {relative_ci}",
        f"p {p_value(r['p_value'])}, adjusted {p_value(r['p_value_adjusted'])}: {r['verdict']}",
        r["test"]], marker=marker, kind=kind)


def _ab_interval(r: Data, level: str) -> Interval:
    """The relative effect in percent with its CI."""
    relative_ci = interval(r["rel_ci_lower"], r["rel_ci_upper"], as_percent=True)
    tip = (f"{r['metric']}: {r['treatment']} vs {r['control']}\nrelative effect "
           f"{percent(r['rel_effect'])}, {level} CI {relative_ci}\n"
           f"adjusted p {p_value(r['p_value_adjusted'])}: {r['verdict']}")
    def in_percent(value: float | None) -> float | None:
        return None if value is None else 100 * value   # null in JSON: undefined (zero control)

    estimate = in_percent(r["rel_effect"])
    return Interval(f"{r['metric']}: {r['treatment']}", math.nan if estimate is None else estimate,
                    in_percent(r["rel_ci_lower"]), in_percent(r["rel_ci_upper"]), tip,
                    _ab_marker(r)[1])


def _ab_table(rows: Sequence[Data], level: str) -> Table:
    several = len({r["treatment"] for r in rows}) > 1   # else the treatment is in every title
    columns = [TableColumn("metric", False), *([TableColumn("treatment", False)] if several else []),
               TableColumn("control value"), TableColumn("treatment value"), TableColumn("effect"),
               TableColumn(f"{level} CI"), TableColumn("relative"), TableColumn(f"relative {level} CI"),
               TableColumn("p"), TableColumn("p adj."),
               TableColumn("verdict", False, help="hover a verdict for its test"),
               TableColumn("variance reduction", help="CUPED")]
    table = []
    for r in rows:
        marker, kind = _ab_marker(r)
        table.append(Row([
            text_cell(r["metric"]), *([text_cell(r["treatment"])] if several else []),
            num_cell(r["value_control"], number(r["value_control"])),
            num_cell(r["value_treatment"], number(r["value_treatment"])),
            num_cell(r["effect"], signed(r["effect"]), kind),
            num_cell(r["ci_lower"], interval(r["ci_lower"], r["ci_upper"])),
            num_cell(r["rel_effect"], percent(r["rel_effect"]), kind),
            num_cell(r["rel_ci_lower"],
                     interval(r["rel_ci_lower"], r["rel_ci_upper"], as_percent=True)),
            num_cell(r["p_value"], p_value(r["p_value"])),
            num_cell(r["p_value_adjusted"], p_value(r["p_value_adjusted"])),
            text_cell(f"{r['verdict']} {marker}".strip(), f"nowrap {kind}".strip(), r["test"]),
            num_cell(r.get("variance_reduction"),
                     percent(r.get("variance_reduction"), 1, sign=False))]))
    return Table(columns, table)


def _ab_body(d: Data) -> Markup:
    level = confidence_level(1 - float(d.get("alpha") or 0.05))
    rows = list(d["results"])
    parts = [_srm_warning(d["srm"])] if d["srm"].get("mismatch") else []
    parts.append(fragment("cards", [_ab_card(r, level) for r in rows]))
    intervals = [_ab_interval(r, level) for r in rows]
    chart = interval_chart(intervals, x_label=f"relative effect (%) with {level} CI", width=760,
                           label_width=label_width_for(i.label for i in intervals))
    parts.append(_figure(chart, "Relative effect of the treatment; coloured where significant "
                                "(green: better for users, red: worse)."))
    parts.append(fragment("table", _ab_table(rows, level)))
    variants = [Row([text_cell(v["variant"]), num_cell(v["units"], count(v["units"])),
                     num_cell(v.get("impressions"), count(v.get("impressions")))])
                for v in d["variants"]]
    columns = [TableColumn("variant", False), TableColumn("units"), TableColumn("impressions")]
    parts.append(fragment("table", Table(columns, variants,
                                         caption=f"Units of analysis: {d.get('unit', 'units')}")))
    parts.append(fragment("notes", [*d.get("notes", []), *d.get("rules", [])]))
    return _join(parts)


def ab_monitor(data: ReportData) -> Section | None:
    """An A/B effect look by look, with its always-valid confidence sequence."""
    return _section(data, "ab_monitor", "ab-over-time", "A/B test over time",
                    "The effect at each look with its always-valid confidence sequence "
                    "(valid however often one looks) and the fixed-horizon CI (valid only "
                    "at a planned end).",
                    lambda d: f"{d.get('experiment', '')}: {d.get('metric', '')}", _monitor_body)


def _look_tip(treatment: str, r: Data) -> str:
    return (f"{treatment}, look {r['look']} (to {r.get('end', '')})\n"
            f"units {count(r['units_control'])} + {count(r['units_treatment'])}\n"
            f"effect {signed(r['effect'])}; sequence {interval(r['cs_lower'], r['cs_upper'])}; "
            f"CI {interval(r['ci_lower'], r['ci_upper'])}\n"
            f"always-valid p {p_value(r['always_valid_p'])}, fixed p {p_value(r['p_value'])}")


def _look_row(treatment: str, r: Data) -> Row:
    units = r["units_control"] + r["units_treatment"]
    return Row([num_cell(r["look"], str(r["look"])), text_cell(str(r.get("end", ""))),
                text_cell(treatment), num_cell(units, count(units)),
                num_cell(r["effect"], signed(r["effect"])),
                num_cell(r["cs_lower"], interval(r["cs_lower"], r["cs_upper"])),
                num_cell(r["ci_lower"], interval(r["ci_lower"], r["ci_upper"])),
                num_cell(r["always_valid_p"], p_value(r["always_valid_p"])),
                num_cell(r["p_value"], p_value(r["p_value"]))])


def _monitor_body(d: Data) -> Markup:
    by_treatment: dict[str, list[Data]] = {}
    for row in d["rows"]:
        by_treatment.setdefault(row["treatment"], []).append(row)
    series, table = [], []
    for i, (treatment, rows) in enumerate(by_treatment.items()):
        series.append(Series(f"{treatment}: confidence sequence", [
            LinePoint(r["look"], r["effect"], _look_tip(treatment, r), r["cs_lower"], r["cs_upper"])
            for r in rows], 2 * i))
        series.append(Series(f"{treatment}: fixed-horizon CI", [
            LinePoint(r["look"], r["effect"], _look_tip(treatment, r), r["ci_lower"], r["ci_upper"])
            for r in rows], 2 * i + 1, style="points"))
        table += [_look_row(treatment, r) for r in rows]
    y_label = f"effect on {d['metric']}" if d.get("metric") else "effect"
    chart = line_chart(series, x_label="look", y_label=y_label, width=1080, reference=0.0)
    parts = [_figure(chart, "Line and band: effect and always-valid confidence sequence; dots "
                            "and bars: the fixed-horizon CI at each look.")]
    if d.get("first_decision") is not None:
        parts.append(fragment("paragraph", f"The always-valid p-value first fell below "
                                           f"{d['alpha']:g} at look {d['first_decision']}."))
    columns = [TableColumn("look"), TableColumn("end", False), TableColumn("treatment", False), TableColumn("units"),
               TableColumn("effect"), TableColumn("confidence sequence"), TableColumn("fixed CI"),
               TableColumn("always-valid p"), TableColumn("fixed p")]
    parts += [fragment("table", Table(columns, table, scroll=len(table) > 15)),
              fragment("notes", list(d.get("notes", [])))]
    return _join(parts)


def ab_plan(data: ReportData) -> Section | None:
    """Units per arm an A/B test needs per metric, and what the units at hand can detect."""
    return _section(data, "ab_plan", "ab-plan", "A/B sample sizes",
                    "Units per arm to detect the minimum effect at the planned power, and "
                    "the smallest effect detectable with the units observed.",
                    lambda d: "", _plan_body)


def _plan_body(d: Data) -> Markup:
    rows = []
    for r in d["rows"]:
        mde = percent(r["mde"], sign=False) if r.get("relative") else number(r["mde"])
        rows.append(Row([
            text_cell(r["metric"]), num_cell(r["baseline"], number(r["baseline"])),
            num_cell(r["sd_per_unit"], number(r["sd_per_unit"])), num_cell(r["mde"], mde),
            num_cell(r["units_per_arm"], count(r["units_per_arm"])),
            num_cell(r["units_observed"], count(r["units_observed"])),
            num_cell(r["mde_at_observed"], number(r["mde_at_observed"])),
            num_cell(r.get("rel_mde_at_observed"),
                     percent(r.get("rel_mde_at_observed"), sign=False)),
            num_cell(r.get("variance_reduction"),
                     percent(r.get("variance_reduction"), 1, sign=False))]))
    columns = [TableColumn("metric", False), TableColumn("baseline"), TableColumn("sd per unit"), TableColumn("MDE"),
               TableColumn("units per arm"), TableColumn("units observed"), TableColumn("MDE now"),
               TableColumn("relative MDE now"), TableColumn("variance reduction")]
    return _join([fragment("table", Table(columns, rows)),
                  fragment("notes", list(d.get("notes", [])))])


# ----------------------------------------------------------------------------- simulator


def simulation(data: ReportData) -> Section | None:
    """Interleaving vs A/B metrics: impressions each needs, power curves, agreement."""
    return _section(data, "simulation", "sensitivity", "Sensitivity: interleaving vs A/B",
                    "Simulated users (click model) on the two rankers, A the baseline and B "
                    "the candidate: how many impressions each method needs to detect the "
                    "difference, with bootstrap-over-queries CIs, and whether it points the "
                    "same way as offline nDCG. Effects are B − A.",
                    lambda d: str(d.get("title", "")), _simulation_body)


def _method_label(m: Data) -> str:
    if m["method"] != "interleaving":
        return f"A/B: {m['metric']}"
    design = m.get("design", "all impressions")
    return "interleaving (team draft)" if design == "all impressions" else f"team draft ({design})"


def _needed_chart(d: Data, methods: Sequence[Data], level: str) -> Markup:
    """Impressions each method needs, with the bootstrap CI, on a log axis. The tooltips write
    the sizes as the table below does (the simulator's ``count_text``: rounded up, a size
    of 285.7 impressions needs 286) and the ratio as its ``ratio_text``."""
    from serpeval.online.simulation.simulator import count_text, ratio_text

    rows = []
    for m in methods:
        ratio = (f"; {ratio_text(m['ratio'])}x interleaving" if m.get("ratio") and m["agrees"] is True
                 else "; points the wrong way" if m["agrees"] is False else "")
        tip = (f"{_method_label(m)}: {count_text(m['required'])} impressions, {level} CI "
               f"[{count_text(m['required_low'])}, {count_text(m['required_high'])}]{ratio}")
        rows.append(Interval(_method_label(m), m["required"], m["required_low"],
                             m["required_high"], tip, "worse" if m["agrees"] is False else ""))
    power = confidence_level(d.get("power") or 0.8)
    chart = interval_chart(rows, x_label=f"impressions needed for {power} power ({level} CI, "
                                         "log scale)", width=760, label_width=190, log=True)
    return _figure(chart, "Fewer is more sensitive; red: the metric moves against the offline "
                          "nDCG difference.")


def _power_chart(d: Data, methods: Sequence[Data]) -> Markup:
    """Power against impressions: analytic lines, simulated points with Wilson CIs."""
    series = []
    for i, m in enumerate(methods):
        for source, style in (("analytic", "line"), ("monte carlo", "points")):
            points = []
            for c in d["curves"]:
                if c["metric"] != m["metric"] or c["source"] != source:
                    continue
                ci = "" if c["low"] is None else f" [{number(c['low'], 3)}, {number(c['high'], 3)}]"
                tip = (f"{_method_label(m)} ({source})\n{count(c['impressions'])} impressions: "
                       f"power {number(c['power'], 3)}{ci}")
                points.append(LinePoint(c["impressions"], c["power"], tip, c["low"], c["high"]))
            if points:
                series.append(Series(_method_label(m), points, i, style, legend=style == "line"))
    chart = line_chart(series, x_label="impressions (log scale)", y_label="power", width=1080,
                       height=300, reference=d.get("power"), y_domain=(0.0, 1.0), x_log=True)
    return _figure(chart, "Lines: power from the exact click-model moments; dots with bars: "
                          "simulated experiments (Wilson CIs); dashed: the target power.")


def _simulation_body(d: Data) -> Markup:
    methods = d.get("methods") or []          # from the object; the command's JSON has rows only
    level = confidence_level(d.get("confidence") or 0.95)
    parts = [_needed_chart(d, methods, level)] if methods else []
    if methods and d.get("curves"):  # the classic designs (the others have no simulated curve)
        parts.append(_power_chart(d, [m for m in methods if m.get("design", "all impressions")
                                      == "all impressions"]))
    rows = display_rows(d["rows"], float(d.get("confidence") or 0.95))
    columns = list(rows[0]) if rows else []
    text_columns = ("click model", "method", *(c for c in columns if c.startswith("agrees with ")))
    table = [Row([text_cell(_cell_text(row.get(c))) if c in text_columns
                  else Cell(_cell_text(row.get(c)), _cell_key(row.get(c)), "num")
                  for c in columns]) for row in rows]
    columns_shown = [TableColumn(c, c not in text_columns) for c in columns]
    parts += [fragment("table", Table(columns_shown, table)),
              fragment("notes", list(d.get("notes", [])))]
    return _join(parts)


def _cell_text(value: Any) -> str:
    if isinstance(value, (int, float)):
        return number(value)
    return "—" if value is None else str(value)


def _cell_key(value: Any) -> str | None:
    """Sort key of a simulator cell: numbers, and text cells by their first number
    (``12,345 [9,000, 20,000]`` by 12345, ``+1.30%`` by 1.30)."""
    if isinstance(value, (int, float)):
        return sort_key(value)
    first = str(value).split(" ")[0].replace(",", "").rstrip("%")
    try:
        return sort_key(float(first))
    except ValueError:
        return None


#: The online builders, in page order (after the offline sections, before the rules).
BUILDERS: list[Callable[[ReportData], Section | None]] = [interleaving, ab, ab_monitor, ab_plan,
                                                           simulation]
