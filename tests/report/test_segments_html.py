"""The per-group sections of the HTML report: forest plot and table show the breakdown's numbers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

import serpeval
from serpeval.cli.demo.collection import make_collection
from serpeval.comparison.compare import compare_results
from serpeval.comparison.segments import with_segments
from serpeval.online.experiments.segments import analyze_ab_segments
from serpeval.online.simulation.generate import LogGenerator
from serpeval.report.formatting import interval, signed
from serpeval.report.html import html_report


def test_offline_breakdown_section(parse) -> None:
    collection = make_collection(n_queries=40, seed=7)
    results = serpeval.evaluate(collection.qrels, collection.runs, ["nDCG@10", "AP"])
    qids = results.runs[0].query_ids
    groups = {q: ("even" if i % 2 == 0 else "odd <b>") for i, q in enumerate(qids)}
    comparison = with_segments(compare_results(results), groups, rng=0)
    page = parse(html_report(results, comparison))
    section = page.sections["segments"]
    assert section.svgs == 2                              # one forest plot per measure
    table = section.tables[0]
    assert table.column("group") == ["even", "odd <b>"]  # escaped, shown as text
    rows = [r for r in comparison.segments.rows if r.measure == "nDCG@10"]
    assert table.column("Δ") == [signed(r.delta) for r in rows]
    assert table.column("95% CI") == [interval(r.ci_low, r.ci_high) for r in rows]
    kinds = ["better" if r.significant and r.improved else "worse" if r.significant else "" for r in rows]
    assert table.row_classes == kinds


def test_online_segments_section_from_ab_json(parse) -> None:
    log = LogGenerator(1500, effect=0.3).generate(rng=3).impressions
    users = log.column("user_id").to_numpy()
    log = log.append_column("device", pa.array(np.array(["desktop", "mobile"])[users % 2]))
    result = analyze_ab_segments(log, by="device", metrics=["ctr"])
    page = parse(html_report(online_results={"segments": result}))
    section = page.sections["segments-online"]
    assert section.svgs == 1
    assert section.tables[0].column("segment") == ["desktop", "mobile"]
    assert section.tables[0].column("Δ") == [signed(r.effect) for r in result.rows]


def test_online_interleaving_rows_are_coloured_by_who_is_preferred(parse) -> None:
    """A significant preference for A (the control) is 'worse', not 'better': only the
    treatment B being preferred is coloured green."""
    from serpeval.online.experiments.segments import analyze_interleaving_segments

    log = LogGenerator(1500, interleaving=True, noise_b=0.8).generate(rng=6).impressions  # B better
    users = log.column("user_id").to_numpy()
    log = log.append_column("device", pa.array(np.array(["desktop", "mobile"])[users % 2]))
    swapped = log.set_column(log.column_names.index("teams"), "teams", pa.array(
        [["B" if t == "A" else "A" if t == "B" else t for t in ts] for ts in log.column("teams").to_pylist()]))
    for table, want in ((log, "better"), (swapped, "worse")):
        result = analyze_interleaving_segments(table, by="device")
        page = parse(html_report(online_results={"segments": result}))
        kinds = page.sections["segments-online"].tables[0].row_classes
        assert kinds == [want if r.significant else "" for r in result.rows]
        assert any(r.significant for r in result.rows)
