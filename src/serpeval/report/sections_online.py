"""Report sections for online experiments: interleaving, A/B tests (effects, monitoring over
time, sample sizes) and the sensitivity simulator.

Each builder reads ``data.online[kind]``: the JSON-ready data of one or more results of a
kind (:mod:`serpeval.report.online_inputs`). Builders format and draw those numbers; a
kind not given is a section not shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from markupsafe import Markup

from serpeval.report.formatting import count, interval, number, p_value, percent, signed, sort_key
from serpeval.report.page import Card, Cell, Column, ReportData, Row, Section, Table, fragment
from serpeval.report.svg import Interval, LinePoint, Series, interval_chart, line_chart

__all__ = ["BUILDERS", "ab", "ab_monitor", "ab_plan", "interleaving", "simulation"]

# ----------------------------------------------------------------------------- helpers


def _join(parts: Iterable[Markup]) -> Markup:
    return Markup("").join(parts)


def _each(items: Sequence[Mapping[str, Any]], title: Callable[[Mapping[str, Any]], str],
          body: Callable[[Mapping[str, Any]], Markup]) -> Markup:
    """The bodies of several results of one kind, each under its own heading when many."""
    if len(items) == 1:
        return body(items[0])
    return _join(fragment("heading", title(item)) + body(item) for item in items)


def _warning(text: str) -> Markup:
    return fragment("paragraph", text, "warning")


# ----------------------------------------------------------------------------- interleaving


def interleaving(data: ReportData) -> Section | None:
    """Who won the interleaving experiment: Δ_AB with its CI, the counts, the checks."""
    items = data.online.get("interleaving", [])
    if not items:
        return None
    body = _each(items, lambda d: str(d.get("experiment", "")), _interleaving_body)
    return Section("interleaving", "Interleaving", body,
                   summary="Δ_AB = (wins A + ties / 2) / impressions − 1/2: positive when users "
                           "prefer A. CI: bootstrap over units; p: exact sign test.")


def _interleaving_body(d: Mapping[str, Any]) -> Markup:
    parts = []
    for row in d["results"]:
        low_key = next(k for k in row if k.startswith("CI ") and k.endswith(" low"))
        level = low_key[3:-4]
        low, high = row[low_key], row[low_key[:-4] + " high"]
        a, b = row.get("A", "A"), row.get("B", "B")
        winner = {"A": a, "B": b}.get(row["winner"], "none")
        kind = "" if row["winner"] not in ("A", "B") else "better"
        parts.append(fragment("cards", [
            Card(f"{a} vs {b}: preference Δ_AB", signed(row["delta"]),
                 [f"{level} CI {interval(low, high)}", f"sign test p {p_value(row['p (sign test)'])}",
                  f"winner: {winner}"], kind=kind),
            Card("impressions", count(row["impressions"]),
                 [f"{a} won {count(row['wins A'])}, {b} won {count(row['wins B'])}, "
                  f"ties {count(row['ties'])}"]),
            Card(f"per {row['unit']}: preference", signed(row["preference"]),
                 [f"{count(row['prefer A'])} prefer {a}, {count(row['prefer B'])} prefer {b} "
                  f"of {count(row['units'])}", f"sign test p {p_value(row['p (units)'])}"]),
        ]))
        tip = f"Δ_AB {signed(row['delta'])}, {level} CI {interval(low, high)}"
        chart = interval_chart([Interval(f"Δ_AB ({a} − {b})", row["delta"], low, high, tip, kind)],
                               x_label=f"Δ_AB with {level} CI", width=760, label_width=160)
        parts.append(fragment("figure", chart, f"Positive: {a} preferred; negative: {b}."))
    checks = [Row([Cell(c["check"], cls="text"), Cell(number(c.get("value")), sort_key(c.get("value")), "num"),
                   Cell(p_value(c.get("p")), sort_key(c.get("p")), "num"),
                   Cell("ok" if c["ok"] else "FAILED", cls="text" if c["ok"] else "text worse"),
                   Cell(str(c.get("detail", "")), cls="text wrap")], "" if c["ok"] else "worse")
              for c in d.get("checks", [])]
    if checks:
        parts.append(fragment("table", Table([Column("check", False), Column("value"), Column("p"),
                                              Column("result", False), Column("detail", False)],
                                             checks, caption="Validity checks of the interleaving")))
    parts.append(fragment("notes", list(d.get("notes", []))))
    return _join(parts)


# ----------------------------------------------------------------------------- A/B


def ab(data: ReportData) -> Section | None:
    """A/B effects with confidence intervals, per metric and treatment."""
    items = data.online.get("ab", [])
    if not items:
        return None
    body = _each(items, lambda d: str(d.get("experiment", "")), _ab_body)
    return Section("ab", "A/B test", body,
                   summary="Effect of each treatment on each metric, with its confidence interval; "
                           "▲ / ▼ significantly better / worse after the multiple-testing correction.")


def _ab_marker(row: Mapping[str, Any]) -> tuple[str, str]:
    return {"better": ("▲", "better"), "worse": ("▼", "worse")}.get(row["verdict"], ("", ""))


def _ab_body(d: Mapping[str, Any]) -> Markup:
    level = f"{1 - float(d.get('alpha', 0.05)):.0%}"
    parts = []
    srm = d["srm"]
    if srm.get("mismatch"):
        counts = ", ".join(f"{v} {count(o)} (expected {count(e)})"
                           for v, o, e in zip(srm["variants"], srm["observed"], srm["expected"], strict=True))
        parts.append(_warning(f"Sample ratio mismatch: {counts}; p = {srm['p_value']:.2e} < "
                              f"{srm['threshold']:g}. Do not trust the effects below until the cause "
                              "is found."))
    rows = list(d["results"])
    several = len({r["treatment"] for r in rows}) > 1   # else the treatment is in every title
    cards, intervals, table = [], [], []
    for r in rows:
        marker, kind = _ab_marker(r)
        label = f"{r['metric']}: {r['treatment']} vs {r['control']}"
        cards.append(Card(label, percent(r["rel_effect"]), [
            f"{r['control']} {number(r['value_control'])} → {r['treatment']} {number(r['value_treatment'])}",
            f"effect {signed(r['effect'])}, {level} CI {interval(r['ci_lower'], r['ci_upper'])}",
            f"relative {level} CI {interval(r['rel_ci_lower'], r['rel_ci_upper'], as_percent=True)}",
            f"p {p_value(r['p_value'])}, adjusted {p_value(r['p_value_adjusted'])}: {r['verdict']}",
            r["test"]], marker=marker, kind=kind))
        intervals.append(Interval(f"{r['metric']}: {r['treatment']}", 100 * r["rel_effect"], 100 * r["rel_ci_lower"],
                                  100 * r["rel_ci_upper"],
                                  f"{label}\nrelative effect {percent(r['rel_effect'])}, {level} CI "
                                  f"{interval(r['rel_ci_lower'], r['rel_ci_upper'], as_percent=True)}\n"
                                  f"adjusted p {p_value(r['p_value_adjusted'])}: {r['verdict']}", kind))
        table.append(Row([
            Cell(r["metric"], cls="text"), *([Cell(r["treatment"], cls="text")] if several else []),
            Cell(number(r["value_control"]), sort_key(r["value_control"]), "num"),
            Cell(number(r["value_treatment"]), sort_key(r["value_treatment"]), "num"),
            Cell(signed(r["effect"]), sort_key(r["effect"]), f"num {kind}".strip()),
            Cell(interval(r["ci_lower"], r["ci_upper"]), sort_key(r["ci_lower"]), "num"),
            Cell(percent(r["rel_effect"]), sort_key(r["rel_effect"]), f"num {kind}".strip()),
            Cell(interval(r["rel_ci_lower"], r["rel_ci_upper"], as_percent=True), sort_key(r["rel_ci_lower"]), "num"),
            Cell(p_value(r["p_value"]), sort_key(r["p_value"]), "num"),
            Cell(p_value(r["p_value_adjusted"]), sort_key(r["p_value_adjusted"]), "num"),
            Cell(f"{r['verdict']} {marker}".strip(), cls=f"text nowrap {kind}".strip(), tip=r["test"]),
            Cell(percent(r.get("variance_reduction"), 1, sign=False), sort_key(r.get("variance_reduction")), "num")]))
    parts.append(fragment("cards", cards))
    chart = interval_chart(intervals, x_label=f"relative effect (%) with {level} CI", width=760,
                           label_width=min(320, 60 + 7 * max(len(i.label) for i in intervals)))
    parts.append(fragment("figure", chart, "Relative effect of the treatment; coloured where "
                                           "significant (green: better for users, red: worse)."))
    columns = [Column("metric", False), *([Column("treatment", False)] if several else []),
               Column("control value"),
               Column("treatment value"), Column("effect"), Column(f"{level} CI"),
               Column("relative"), Column(f"relative {level} CI"), Column("p"), Column("p adj."),
               Column("verdict", False, help="hover a verdict for its test"),
               Column("variance reduction", help="CUPED")]
    parts.append(fragment("table", Table(columns, table)))
    variants = [Row([Cell(v["variant"], cls="text"), Cell(count(v["units"]), v["units"], "num"),
                     Cell(count(v.get("impressions")), sort_key(v.get("impressions")), "num")])
                for v in d["variants"]]
    parts.append(fragment("table", Table([Column("variant", False), Column("units"), Column("impressions")],
                                         variants, caption=f"Units of analysis: {d.get('unit', 'units')}")))
    parts.append(fragment("notes", [*d.get("notes", []), *d.get("rules", [])]))
    return _join(parts)


def ab_monitor(data: ReportData) -> Section | None:
    """An A/B effect look by look, with its always-valid confidence sequence."""
    items = data.online.get("ab_monitor", [])
    if not items:
        return None
    body = _each(items, lambda d: f"{d.get('experiment', '')}: {d.get('metric', '')}", _monitor_body)
    return Section("ab-over-time", "A/B test over time", body,
                   summary="The effect at each look with its always-valid confidence sequence "
                           "(valid however often one looks) and the fixed-horizon CI (valid only "
                           "at a planned end).")


def _monitor_body(d: Mapping[str, Any]) -> Markup:
    by_treatment: dict[str, list[Mapping[str, Any]]] = {}
    for row in d["rows"]:
        by_treatment.setdefault(row["treatment"], []).append(row)
    series, table = [], []
    for i, (treatment, rows) in enumerate(by_treatment.items()):
        def tip(r: Mapping[str, Any]) -> str:
            return (f"{treatment}, look {r['look']} (to {r.get('end', '')})\n"
                    f"units {count(r['units_control'])} + {count(r['units_treatment'])}\n"
                    f"effect {signed(r['effect'])}; sequence {interval(r['cs_lower'], r['cs_upper'])}; "
                    f"CI {interval(r['ci_lower'], r['ci_upper'])}\n"
                    f"always-valid p {p_value(r['always_valid_p'])}, fixed p {p_value(r['p_value'])}")
        series.append(Series(f"{treatment}: confidence sequence", [
            LinePoint(r["look"], r["effect"], tip(r), r["cs_lower"], r["cs_upper"]) for r in rows], 2 * i))
        series.append(Series(f"{treatment}: fixed-horizon CI", [
            LinePoint(r["look"], r["effect"], tip(r), r["ci_lower"], r["ci_upper"]) for r in rows],
            2 * i + 1, style="points"))
        table += [Row([Cell(str(r["look"]), r["look"], "num"), Cell(str(r.get("end", "")), cls="text"),
                       Cell(treatment, cls="text"),
                       Cell(count(r["units_control"] + r["units_treatment"]),
                            r["units_control"] + r["units_treatment"], "num"),
                       Cell(signed(r["effect"]), sort_key(r["effect"]), "num"),
                       Cell(interval(r["cs_lower"], r["cs_upper"]), sort_key(r["cs_lower"]), "num"),
                       Cell(interval(r["ci_lower"], r["ci_upper"]), sort_key(r["ci_lower"]), "num"),
                       Cell(p_value(r["always_valid_p"]), sort_key(r["always_valid_p"]), "num"),
                       Cell(p_value(r["p_value"]), sort_key(r["p_value"]), "num")]) for r in rows]
    y_label = f"effect on {d['metric']}" if d.get("metric") else "effect"
    chart = line_chart(series, x_label="look", y_label=y_label, width=1080, reference=0.0)
    parts = [fragment("figure", chart, "Line and band: effect and always-valid confidence sequence; "
                                       "dots and bars: the fixed-horizon CI at each look.")]
    if d.get("first_decision") is not None:
        parts.append(fragment("paragraph", f"The always-valid p-value first fell below "
                                           f"{d['alpha']:g} at look {d['first_decision']}."))
    columns = [Column("look"), Column("end", False), Column("treatment", False), Column("units"),
               Column("effect"), Column("confidence sequence"), Column("fixed CI"),
               Column("always-valid p"), Column("fixed p")]
    parts += [fragment("table", Table(columns, table, scroll=len(table) > 15)),
              fragment("notes", list(d.get("notes", [])))]
    return _join(parts)


def ab_plan(data: ReportData) -> Section | None:
    """Units per arm an A/B test needs per metric, and what the units at hand can detect."""
    items = data.online.get("ab_plan", [])
    if not items:
        return None
    return Section("ab-plan", "A/B sample sizes", _each(items, lambda d: "", _plan_body),
                   summary="Units per arm to detect the minimum effect at the planned power, and "
                           "the smallest effect detectable with the units observed.")


def _plan_body(d: Mapping[str, Any]) -> Markup:
    rows = []
    for r in d["rows"]:
        mde = percent(r["mde"], sign=False) if r.get("relative") else number(r["mde"])
        rows.append(Row([Cell(r["metric"], cls="text"), Cell(number(r["baseline"]), sort_key(r["baseline"]), "num"),
                         Cell(number(r["sd_per_unit"]), sort_key(r["sd_per_unit"]), "num"),
                         Cell(mde, sort_key(r["mde"]), "num"),
                         Cell(count(r["units_per_arm"]), sort_key(r["units_per_arm"]), "num"),
                         Cell(count(r["units_observed"]), sort_key(r["units_observed"]), "num"),
                         Cell(number(r["mde_at_observed"]), sort_key(r["mde_at_observed"]), "num"),
                         Cell(percent(r.get("rel_mde_at_observed"), sign=False),
                              sort_key(r.get("rel_mde_at_observed")), "num"),
                         Cell(percent(r.get("variance_reduction"), 1, sign=False),
                              sort_key(r.get("variance_reduction")), "num")]))
    columns = [Column("metric", False), Column("baseline"), Column("sd per unit"), Column("MDE"),
               Column("units per arm"), Column("units observed"), Column("MDE now"),
               Column("relative MDE now"), Column("variance reduction")]
    return _join([fragment("table", Table(columns, rows)), fragment("notes", list(d.get("notes", [])))])


# ----------------------------------------------------------------------------- simulator


def simulation(data: ReportData) -> Section | None:
    """Interleaving vs A/B metrics: impressions each needs, power curves, agreement."""
    items = data.online.get("simulation", [])
    if not items:
        return None
    return Section("sensitivity", "Sensitivity: interleaving vs A/B",
                   _each(items, lambda d: str(d.get("title", "")), _simulation_body),
                   summary="Simulated users (click model) on the two rankers: how many impressions "
                           "each method needs to detect the difference, with bootstrap-over-queries "
                           "CIs, and whether it points the same way as offline nDCG.")


def _simulation_body(d: Mapping[str, Any]) -> Markup:
    parts = []
    methods = d.get("methods") or []
    label = {m["metric"]: ("interleaving (team draft)" if m["method"] == "interleaving"
                           else f"A/B: {m['metric']}") for m in methods}
    level = f"{d.get('confidence', 0.95):.0%}"
    if methods:
        rows = [Interval(label[m["metric"]], m["required"], m["required_low"], m["required_high"],
                         f"{label[m['metric']]}: {count(m['required'])} impressions, {level} CI "
                         f"[{count(m['required_low'])}, {count(m['required_high'])}]"
                         + (f"; {m['ratio']:.3g}x interleaving" if m.get("ratio") else ""),
                         "" if m["agrees"] is not False else "worse") for m in methods]
        chart = interval_chart(rows, x_label=f"impressions needed for {d.get('power', 0.8):.0%} power "
                                             f"({level} CI, log scale)", width=760, label_width=190, log=True)
        parts.append(fragment("figure", chart, "Fewer is more sensitive; red: the metric moves "
                                               "against the offline nDCG difference."))
    curves = d.get("curves") or []
    if curves:
        series = []
        for i, m in enumerate(methods):
            for source, style in (("analytic", "line"), ("monte carlo", "points")):
                points = [LinePoint(c["impressions"], c["power"],
                                    f"{label[m['metric']]} ({source})\n{count(c['impressions'])} "
                                    f"impressions: power {number(c['power'], 3)}"
                                    + (f" [{number(c['low'], 3)}, {number(c['high'], 3)}]"
                                       if c["low"] is not None else ""), c["low"], c["high"])
                          for c in curves if c["metric"] == m["metric"] and c["source"] == source]
                if points:
                    series.append(Series(label[m["metric"]], points, i, style, legend=style == "line"))
        chart = line_chart(series, x_label="impressions (log scale)", y_label="power", width=1080,
                           height=300, reference=d.get("power"), y_domain=(0.0, 1.0), x_log=True)
        parts.append(fragment("figure", chart, "Lines: power from the exact click-model moments; "
                                               "dots with bars: simulated experiments (Wilson CIs); "
                                               "dashed: the target power."))
    columns = list(d["rows"][0]) if d["rows"] else []
    text_columns = ("click model", "method", "metric")
    table = [Row([Cell(_cell_text(row.get(c)), _cell_key(row.get(c)),
                       "text" if c in text_columns else "num") for c in columns]) for row in d["rows"]]
    parts.append(fragment("table", Table([Column(c, c not in text_columns) for c in columns], table)))
    parts.append(fragment("notes", list(d.get("notes", []))))
    return _join(parts)


def _cell_text(value: Any) -> str:
    if isinstance(value, float):
        return number(value)
    return "—" if value is None else str(value)


def _cell_key(value: Any) -> str | None:
    """Sort key of a simulator cell: numbers, and counts the simulator wrote as ``12,345``."""
    if isinstance(value, (int, float)):
        return sort_key(value)
    try:
        return sort_key(float(str(value).replace(",", "")))
    except ValueError:
        return None


#: The online builders, in page order (after the offline sections, before the rules).
BUILDERS: list[Callable[[ReportData], Section | None]] = [interleaving, ab, ab_monitor, ab_plan,
                                                           simulation]
