"""Replay: redraw every logged interleaved impression from its seed and compare.

For each ``ubi_queries`` row whose ``query_attributes.interleaving`` is present, the input
rankings, method, k, options and seed are fed to
:func:`serpeval.online.interleaving.interleave` again; the shown list and the teams must be
identical. Rows without interleaving (A/B impressions, excluded ones) are counted, not checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serpeval.online.events.logs import read_records
from serpeval.serve.design import replay_impression

__all__ = ["ReplayReport", "replay"]


@dataclass(frozen=True)
class ReplayReport:
    """What :func:`replay` found: rows checked, equal, skipped, and each differing row."""

    source: str
    checked: int
    equal: int
    skipped: int
    differing: list[tuple[str, str]] = field(default_factory=list)

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per differing impression (query_id, what differs)."""
        return [{"query_id": q, "difference": d} for q, d in self.differing]

    def to_json_dict(self) -> dict[str, Any]:
        """The summary and the differing rows."""
        return {"source": self.source, "checked": self.checked, "equal": self.equal, "skipped": self.skipped,
                "differing": self.to_dicts()}


def replay(source: str | Path) -> ReplayReport:
    """Replay every interleaved impression of a store or UBI export (see the module docstring)."""
    label, queries, _ = read_records(source)
    checked = equal = skipped = 0
    differing: list[tuple[str, str]] = []
    for q in queries:
        inter = (q.get("query_attributes") or {}).get("interleaving")
        if inter is None:
            skipped += 1
            continue
        checked += 1
        problem = replay_impression(q.get("query_response_hit_ids") or [], inter)
        if problem is None:
            equal += 1
        else:
            differing.append((str(q.get("query_id")), problem))
    return ReplayReport(label, checked, equal, skipped, differing)
