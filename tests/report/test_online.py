"""Online sections of the report: the numbers are those of the analyses that wrote them."""

from __future__ import annotations

import json

import pytest

from serpeval.cli import main
from serpeval.core.errors import InputError, OptionError
from serpeval.report.formatting import count, interval, p_value, percent, signed
from serpeval.report.html import html_report
from serpeval.report.online_inputs import KINDS, online_dicts, read_online_json


@pytest.fixture(scope="module")
def online(online_files) -> dict[str, dict]:
    return {kind: read_online_json(kind.removesuffix("_srm"), path)
            for kind, path in online_files.items()}


@pytest.fixture(scope="module")
def report(online, simulation_result) -> str:
    inputs = {kind: online[kind] for kind in ("ab", "ab_monitor", "ab_plan", "interleaving")}
    return html_report(online_results={**inputs, "simulation": simulation_result})


def test_online_sections_in_order(report, parse) -> None:
    assert list(parse(report).sections) == ["interleaving", "ab", "ab-over-time", "ab-plan",
                                            "sensitivity"]


def test_ab_effects_and_intervals(report, parse, online) -> None:
    section = parse(report).sections["ab"]
    effects, variants = section.tables
    rows = online["ab"]["results"]
    assert effects.column("metric") == [r["metric"] for r in rows]
    assert "treatment" not in effects.header              # one treatment: named in the titles
    for i, r in enumerate(rows):
        def shown(column: str, i: int = i) -> str:
            return effects.column(column)[i]
        assert shown("effect") == signed(r["effect"])
        assert shown("95% CI") == interval(r["ci_lower"], r["ci_upper"])
        assert shown("relative") == percent(r["rel_effect"])
        assert shown("p adj.") == p_value(r["p_value_adjusted"])
        marker = {"better": " ▲", "worse": " ▼"}.get(r["verdict"], "")
        assert shown("verdict") == r["verdict"] + marker
    # The injected effect (+0.5 on the logit scale) lifts CTR significantly.
    ctr = next(r for r in rows if r["metric"] == "ctr")
    assert ctr["verdict"] == "better"
    # One interval per (metric, treatment), its tooltip stating the relative CI.
    assert section.marks["circle"] == len(rows)
    tip = next(t for t in section.tips if t.startswith("ctr: treatment vs control"))
    assert interval(ctr["rel_ci_lower"], ctr["rel_ci_upper"], as_percent=True) in tip
    assert variants.column("units") == [count(v["units"]) for v in online["ab"]["variants"]]
    assert set(online["ab"]["rules"]) <= set(section.items)


def test_ab_at_alpha_0025_is_a_975_percent_interval(online_files, parse, tmp_path) -> None:
    """``serpeval ab --alpha 0.025`` writes 97.5% intervals; the report called them "98% CI".
    Oracle: the interval at alpha 0.025 is wider than the one at 0.05 by z(0.9875) / z(0.975)
    = 2.2414 / 1.9600 = 1.1436 (no --pre, so both are the same delta-method interval)."""
    impressions = str(online_files["ab"].parent / "ab-logs" / "impressions.parquet")
    paths = {alpha: tmp_path / f"ab-{alpha}.json" for alpha in ("0.05", "0.025")}
    for alpha, path in paths.items():
        assert main(["ab", impressions, "--alpha", alpha, "-f", "json", "-o", str(path)]) == 0
    wide, narrow = (read_online_json("ab", paths[a]) for a in ("0.025", "0.05"))
    ratio = ((wide["results"][0]["ci_upper"] - wide["results"][0]["ci_lower"])
             / (narrow["results"][0]["ci_upper"] - narrow["results"][0]["ci_lower"]))
    assert ratio == pytest.approx(2.241403 / 1.959964, rel=1e-4)
    effects = parse(html_report(online_results={"ab": wide})).sections["ab"].tables[0]
    assert "97.5% CI" in effects.header
    assert "relative 97.5% CI" in effects.header
    assert effects.column("97.5% CI")[0] == interval(wide["results"][0]["ci_lower"],
                                                     wide["results"][0]["ci_upper"])


def test_undefined_numbers_are_gaps_not_a_crash(online, parse) -> None:
    """The schema reads null as an undefined number (strict JSON writes NaN as null): a look
    whose arm had no unit yet, a day without a CI. The report stopped with "internal error:
    TypeError: must be real number, not NoneType" (exit 70) instead of leaving a gap."""
    import copy

    monitor = copy.deepcopy(online["ab_monitor"])
    for key in ("effect", "cs_lower", "cs_upper", "ci_lower", "ci_upper", "always_valid_p", "p_value"):
        monitor["rows"][0][key] = None
    section = parse(html_report(online_results={"ab_monitor": monitor})).sections["ab-over-time"]
    looks = len(monitor["rows"])
    assert section.marks["circle"] == 2 * (looks - 1)            # each series skips look 1
    assert section.tables[0].rows[0][4:8] == ["—", "", "", "—"]  # effect, sequence, CI, p
    assert section.tables[0].rows[1][4] == signed(monitor["rows"][1]["effect"])

    il = copy.deepcopy(online["interleaving"])
    il["results"][0]["delta (B-A)"] = None
    day = il["over_time"]["rows"][0]
    day["delta"] = day["ci_low"] = day["ci_high"] = None
    section = parse(html_report(online_results={"interleaving": il})).sections["interleaving"]
    days = section.tables[1]
    assert days.column("cumulative Δ (B − A)")[0] == "—"
    assert days.column("cumulative Δ (B − A)")[1] == signed(il["over_time"]["rows"][1]["delta"])
    assert section.marks["circle"] == len(il["over_time"]["rows"]) - 1   # no Δ dot, one day less

    srm = copy.deepcopy(online["ab_srm"])
    srm["srm"]["p_value"] = None
    html = html_report(online_results={"ab": srm})
    assert "Sample ratio mismatch: control" in html
    assert "p undefined. Do not trust the effects" in html


def test_sample_ratio_mismatch_is_a_warning(online, parse) -> None:
    srm = online["ab_srm"]["srm"]
    assert srm["mismatch"]
    html = html_report(online_results={"ab": online["ab_srm"]})
    assert '<p class="warning">Sample ratio mismatch: control' in html
    assert "Sample ratio mismatch" not in html_report(online_results={"ab": online["ab"]})


def test_monitor_shows_every_look(report, parse, online) -> None:
    section = parse(report).sections["ab-over-time"]
    table = section.tables[0]
    rows = online["ab_monitor"]["rows"]
    assert len(table.rows) == len(rows) == 7                        # daily looks over 7 days
    for shown, r in zip(table.rows, rows, strict=True):
        assert shown[0] == str(r["look"])
        assert shown[4] == signed(r["effect"])
        assert shown[5] == interval(r["cs_lower"], r["cs_upper"])
        assert shown[7] == p_value(r["always_valid_p"])
    # Line with the confidence-sequence band, and points with fixed-horizon whiskers.
    assert section.marks["polygon"] == 1
    assert section.marks["polyline"] == 1
    assert section.marks["circle"] == 2 * len(rows)


def test_plan_shows_units_per_arm(report, parse, online) -> None:
    table = parse(report).sections["ab-plan"].tables[0]
    expected = [count(r["units_per_arm"]) for r in online["ab_plan"]["rows"]]
    assert table.column("units per arm") == expected


def test_interleaving_preference(report, parse, online) -> None:
    section = parse(report).sections["interleaving"]
    row = online["interleaving"]["results"][0]
    assert row["winner"] == "B"                                     # B is the better ranker
    assert row["delta (B-A)"] > 0                                   # ... so Δ (B - A) is positive
    tip = next(t for t in section.tips if t.startswith("Δ (B − A) ") and "CI" in t)
    ci = interval(row["CI 95% low"], row["CI 95% high"])
    assert tip == f"Δ (B − A) {signed(row['delta (B-A)'])}, 95% CI {ci}"
    # the log's teams are named A and B: the page says "B", not "B = B" (nor "B (B) won")
    assert "winner: B (the candidate)" in report
    assert "B = B" not in report
    assert "(B) won" not in report
    won = f"B won {count(row['wins B'])}, A won {count(row['wins A'])}, ties {count(row['ties'])}"
    assert won in report
    checks = section.tables[0]
    assert checks.column("check") == [c["check"] for c in online["interleaving"]["checks"]]
    results = ["ok" if c["ok"] else "FAILED" for c in online["interleaving"]["checks"]]
    assert checks.column("result") == results


def test_simulation_from_the_object_has_both_charts(report, parse, simulation_result) -> None:
    section = parse(report).sections["sensitivity"]
    assert section.svgs == 2
    table = section.tables[0]
    from serpeval.online.simulation.simulator import count_text  # rounded up, thousands separated

    needed = [f"{count_text(m.required)} [{count_text(m.required_low)}, {count_text(m.required_high)}]"
              for m in simulation_result.methods]
    assert table.column("impressions [95% CI]") == needed
    assert table.column("method") == ["team draft", "A/B: CTR", "A/B: abandonment", "A/B: clicks@1",
                                      "team draft (triggered)", "team draft (ignore shared)",
                                      "A/B: CTR (triggered)", "A/B: abandonment (triggered)",
                                      "A/B: clicks@1 (triggered)"]
    assert simulation_result.bottom_line() in section.items
    # Every analytic curve point and every Monte Carlo point is a hoverable dot.
    # (the power chart draws the classic designs; the triggered / ignore-shared rows are in the
    # table and the impressions chart)
    classic = {m.metric for m in simulation_result.methods if m.design == "all impressions"}
    points = len([c for c in simulation_result.power_curves() if c["metric"] in classic]) + len(classic)
    assert section.marks["circle"] >= points
    # The impressions chart's tooltips say what the table says: a size of 285.7 impressions is
    # 286 (rounded up, count_text) in both; the tooltips had it rounded (286 vs 285 for a
    # size of 285.3, "[148, 725]" beside the table's "[149, 725]" in the demo).
    for m, cell in zip(simulation_result.methods, needed, strict=True):
        label = "interleaving (team draft)" if m.method == "interleaving" and \
            m.design == "all impressions" else None
        if label is None:
            continue
        tip = f"{label}: {cell.replace(' [', ' impressions, 95% CI [', 1)}"
        assert any(t.startswith(tip) for t in section.tips), (tip, section.tips[:3])
    shown = [t.split(" impressions, ")[0].rsplit(": ", 1)[1] for t in section.tips
             if " impressions, 95% CI [" in t and "\n" not in t]
    assert shown == [count_text(m.required) for m in simulation_result.methods]


def test_simulation_from_json_has_the_table(online, parse) -> None:
    html = html_report(online_results={"simulation": online["simulation"]})
    section = parse(html).sections["sensitivity"]
    assert section.svgs == 0                                       # no curves in the command's JSON
    methods = [r["metric"].replace("interleaving", "team draft") if r["method"] == "interleaving"
               else f"A/B: {r['metric']}" for r in online["simulation"]["rows"]]
    assert "team draft (triggered)" in methods  # the designs keep their names
    assert section.tables[0].column("method") == methods


def test_cli_report_from_online_files(online_files, tmp_path, capsys, parse) -> None:
    out = tmp_path / "online.html"
    assert main(["report", "--ab", str(online_files["ab"]),
                 "--ab-monitor", str(online_files["ab_monitor"]),
                 "--interleaving", str(online_files["interleaving"]), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"included {KINDS['ab']}: {online_files['ab']}" in printed
    assert f"wrote {out}" in printed
    sections = parse(out.read_text(encoding="utf-8")).sections
    assert list(sections) == ["interleaving", "ab", "ab-over-time"]


def test_wrong_or_unknown_inputs_are_clear_errors(online_files, tmp_path, capsys) -> None:
    with pytest.raises(InputError, match="no results, variants, srm in it; expected an A/B"):
        read_online_json("ab", online_files["ab_monitor"])
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not a JSON file"):
        read_online_json("interleaving", broken)
    with pytest.raises(OptionError, match="unknown online result kind 'abtest'"):
        online_dicts({"abtest": {}})
    assert main(["report", "--ab-plan", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: file not found" in capsys.readouterr().err
    assert main(["report"]) == 2
    assert "nothing to report" in capsys.readouterr().err


def test_result_objects_of_each_kind(online, simulation_result, parse) -> None:
    from serpeval.online.interleaving.analysis import analyze_outcomes

    analysis = analyze_outcomes([1, 1, -1, 0, 1, 1, -1, 1] * 50, n_resamples=500, rng=0)
    html = html_report(online_results={"interleaving": analysis})
    section = parse(html).sections["interleaving"]
    assert section.tables == []                                  # a bare analysis has no checks
    assert analysis.delta < 0                                    # A won more impressions
    assert any(t.startswith(f"Δ (B − A) {signed(analysis.delta)}") for t in section.tips)
    with pytest.raises(OptionError, match=r"online_results\['ab'\] needs an A/B analysis"):
        online_dicts({"ab": simulation_result})
    with pytest.raises(OptionError, match="without rows"):
        online_dicts({"ab_plan": {"metric": "ctr"}})


def test_online_json_round_trips_through_objects(online_files, simulation_result) -> None:
    data = online_dicts({"simulation": simulation_result})["simulation"][0]
    json.dumps(data)                                               # JSON-ready
    assert data["rows"] == simulation_result.to_dicts()
    assert data["notes"] == [simulation_result.bottom_line(), *simulation_result.notes()]
    assert data["curves"] == simulation_result.power_curves()


def test_interleaving_preference_over_time(report, parse, online) -> None:
    """The cumulative Δ (B − A) per day as a line with its CI band, one hoverable dot and one
    table row per day, each showing the numbers of the JSON."""
    section = parse(report).sections["interleaving"]
    over = online["interleaving"]["over_time"]
    rows = over["rows"]
    assert len(rows) == 14                                    # generate-logs: 14 days
    assert section.svgs == 2                                  # Δ interval, then over time
    assert section.marks["polygon"] == 1
    assert section.marks["polyline"] == 1
    assert section.marks["circle"] == 1 + len(rows)           # the Δ estimate + one per day
    tips = [t for t in section.tips if t.startswith("day ")]
    assert len(tips) == len(rows)
    for tip, r in zip(tips, rows, strict=True):
        assert tip.startswith(f"day {r['period']}: {r['start'][:10]} (UTC)\n")
        assert f"N = {count(r['cum_impressions'])} impressions" in tip
        assert f"Δ (B − A) {signed(r['delta'])}, 95% CI {interval(r['ci_low'], r['ci_high'])}" in tip
    table = section.tables[1]
    assert table.column("cumulative Δ (B − A)") == [signed(r["delta"]) for r in rows]
    assert table.column("95% CI") == [interval(r["ci_low"], r["ci_high"]) for r in rows]
    assert table.column("users so far") == [count(r["cum_units"]) for r in rows]
    # the last day is the whole log: the Δ of the outcome row
    assert rows[-1]["delta"] == online["interleaving"]["results"][0]["delta (B-A)"]
