"""A :class:`~serpeval.evaluation.ties.TieSummary` as a table, markdown, CSV or JSON
(``serpeval ties``); nothing is recomputed here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.core.strict_json import dumps
from serpeval.report.table import render

if TYPE_CHECKING:
    from serpeval.evaluation.ties import TieSummary

__all__ = ["render_ties", "tie_notes"]

RANGE_COLUMNS = ("measure", "trec_eval", "pessimistic", "expected", "optimistic", "mean_range", "max_range",
                 "max_range_query")


def tie_notes(summary: TieSummary) -> list[str]:
    """The tie counts and how to read the ranges, in plain sentences."""
    s = summary
    notes = [
        f"{s.run}: {s.tied_queries_top_k:,} of {s.queries:,} queries have a tie group reaching the top {s.k}; "
        f"{s.tied_queries:,} have ties anywhere ({s.tie_groups:,} group{'' if s.tie_groups == 1 else 's'}, "
        f"{s.tied_rows:,} of {s.rows:,} rows)",
    ]
    if s.sizes:
        shown = ", ".join(f"{size}: {groups:,}" for size, groups in s.sizes[:12])
        more = f", ... ({len(s.sizes) - 12} more sizes)" if len(s.sizes) > 12 else ""
        notes.append(f"tie group sizes (size: groups): {shown}{more}; largest {s.largest} in query "
                     f"{s.largest_query!r}")
    if s.ranges:
        notes.append(f"over the {s.evaluated_queries:,} evaluated queries: pessimistic = lower grade first, "
                     "optimistic = higher grade first within each tie, expected = the exact mean over every order; "
                     "range = optimistic - pessimistic per query (mean, and the largest with its query)")
        loose = [r.measure for r in s.ranges if not r.bounds]
        if loose:
            notes.append(f"{', '.join(loose)}: moving a higher grade up can lower the value (the measure's "
                         "definition, or a gains table whose gains do not grow with the grade), so pessimistic "
                         "and optimistic are two orders, not bounds")
    return notes


def render_ties(summary: TieSummary, fmt: str = "table", *, digits: int = 4, width: int | None = None) -> str:
    """``summary`` in ``fmt`` (a format of :data:`serpeval.report.table.FORMATS`; ``json``
    writes :meth:`TieSummary.to_dict` with the notes)."""
    notes = tie_notes(summary)
    if fmt == "json":
        return dumps({**summary.to_dict(), "notes": notes}) + "\n"
    if summary.ranges:
        rows = [{c: r.to_dict()[c] for c in RANGE_COLUMNS} for r in summary.ranges]
        return render(rows, fmt, digits=digits, notes=notes if fmt not in ("csv", "tsv") else (), width=width)
    return render([summary.counts()], fmt, digits=digits, notes=notes if fmt not in ("csv", "tsv") else (),
                  width=width)
