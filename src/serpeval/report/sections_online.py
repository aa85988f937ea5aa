"""Report sections for online experiments (filled in as the online features land)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from serpeval.report.page import ReportData, Section

__all__ = ["BUILDERS", "DEMO_STATE_KEYS", "online_dicts"]

#: ``serpeval demo`` state keys whose results have an online section: ``{state key: kind}``.
DEMO_STATE_KEYS: dict[str, str] = {}


def online_dicts(online: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """``{kind: [json dict, ...]}`` from result objects (``to_json_dict()``) or their dicts."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for kind, value in online.items():
        items = value if isinstance(value, (list, tuple)) else [value]
        out[kind] = [item if isinstance(item, Mapping) else item.to_json_dict() for item in items]
    return out


BUILDERS: list[Callable[[ReportData], Section | None]] = []
