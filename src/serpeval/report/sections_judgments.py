"""Report section for run diffs: how the rankings of two runs differ, without judgments.

Input: ``RunDiff.to_json_dict()`` (:mod:`serpeval.judgments.diff`) in ``data.diffs``, one per
pair of runs. Every number shown is one of its numbers, formatted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from serpeval.report.formatting import number
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
from serpeval.report.svg import Bar, bar_chart

__all__ = ["diff_dicts", "run_diff"]

Data = Mapping[str, Any]


def run_diff(data: ReportData) -> Section | None:
    """One panel per diff: headline cards, RBO_ext per query (lowest first), the query table."""
    if not data.diffs:
        return None
    panels = [_panel(d, data.topics) for d in data.diffs]
    body = panels[0].body if len(panels) == 1 else fragment("switcher", "run-diff", "Runs", panels)
    return Section("run-diff", "How the rankings differ",
                   body, summary="Without judgments: the overlap of the top k, rank-biased overlap "
                                 "(RBO_ext, between RBO_min and RBO_min + RBO_res; Webber et al. 2010) "
                                 "and Kendall's τ on the documents both runs retrieve.")


def _panel(d: Data, topics: Mapping[str, str]) -> Panel:
    s, k, p = d["summary"], d["k"], d["p"]
    a, b = d["a"], d["b"]
    cards = [
        Card(f"overlap@{k}", number(s[f"overlap@{k}"]), [f"mean share of the top {k} both runs hold"]),
        Card(f"RBO (p = {p:g})", number(s["RBO_ext"]),
             [f"extrapolated; bounds {number(s['RBO_min'])} to {number(s['RBO_min'] + s['RBO_res'])}"]),
        Card("Kendall's τ", number(s["tau"]), ["on the shared documents, mean over queries"]),
        Card(f"changed in the top {k}", f"{s['entered']}",
             [f"documents entered {b}'s top {k}"]
             + ([f"{s['entered unjudged']} of them unjudged"] if "entered unjudged" in s else [])),
    ]
    rows = sorted(d["per_query"], key=lambda r: (r["RBO_ext"], r[f"overlap@{k}"], str(r["query_id"])))
    bars = [Bar(r["RBO_ext"], f"{r['query_id']}: RBO_ext {number(r['RBO_ext'])}, overlap@{k} "
                              f"{number(r[f'overlap@{k}'])}") for r in rows]
    chart = bar_chart(bars, y_label="RBO_ext", x_label=f"{len(bars)} queries, most changed first")
    judged = "entered unjudged" in (rows[0] if rows else {})
    columns = [TableColumn("query", numeric=False), *([TableColumn("text", numeric=False)] if topics else []),
               TableColumn(f"overlap@{k}"), TableColumn("RBO_min"), TableColumn("RBO_ext"),
               TableColumn("RBO_res", help="what the unseen ranks could add at most"),
               TableColumn("τ", help="Kendall's tau on the shared documents"), TableColumn("shared"),
               TableColumn("entered"), TableColumn("left"),
               *([TableColumn("entered unjudged")] if judged else [])]
    table = []
    for r in rows:
        cells = [text_cell(str(r["query_id"])),
                 *([text_cell(topics.get(r["query_id"], ""), "wrap")] if topics else []),
                 *[num_cell(r[c], number(r[c])) for c in (f"overlap@{k}", "RBO_min", "RBO_ext", "RBO_res", "tau")],
                 *[num_cell(r[c], str(r[c])) for c in ("shared", "entered", "left")],
                 *([num_cell(r["entered unjudged"], str(r["entered unjudged"]))] if judged else [])]
        table.append(Row(cells))
    body: Markup = (fragment("cards", cards) + fragment("figure", chart, "")
                    + fragment("table", Table(columns, table, scroll=True)))
    notes = d.get("notes") or []
    if notes:
        body += fragment("notes", notes)
    return Panel(f"{a} vs {b}", body, f"{a} vs {b}: mean RBO_ext {number(s['RBO_ext'])} over "
                                      f"{s['queries']} queries")


def diff_dicts(diffs: Sequence[Any]) -> list[dict[str, Any]]:
    """``to_json_dict()`` of each diff (dicts pass through)."""
    return [dict(d) if isinstance(d, Mapping) else d.to_json_dict() for d in diffs]
