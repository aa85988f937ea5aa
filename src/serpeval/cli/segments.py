"""What ``ab --by`` and ``interleaving-report --by`` share: the option, and the per-segment
output appended to the command's own (tables and markdown), set into its JSON, or in place of
its rows (csv/tsv: one table per file)."""

from __future__ import annotations

import argparse
from typing import Any

from serpeval.stats.registry import correction_names

__all__ = ["add_by_option", "refuse_latex_by", "segment_json", "segment_text"]


def add_by_option(p: argparse.ArgumentParser) -> None:
    """``--by COLUMN`` and ``--by-correction``."""
    p.add_argument("--by", metavar="COLUMN",
                   help="per-segment effects by this impressions-log column (country, device...): "
                        "CIs clustered by user within each segment, the correction across segments, "
                        "an interaction test and (A/B) a Simpson's paradox check")
    p.add_argument("--by-correction", choices=correction_names(all_pairs=False), default="holm",
                   help="correction across the --by segments (default holm)")


def refuse_latex_by(args: argparse.Namespace) -> None:
    """``--by`` with ``-f latex`` is refused before the log is read: the per-segment analysis has
    no LaTeX layout (it was appended to the LaTeX output as a text table)."""
    if getattr(args, "by", None) and getattr(args, "format", None) == "latex":
        from serpeval.core.errors import OptionError

        raise OptionError("--by has no LaTeX layout; use -f table, markdown, csv, tsv or json for the "
                          "per-segment analysis (and a separate run without --by for the LaTeX table).")


def segment_text(args: argparse.Namespace, width: int | None, color: bool = False) -> str:
    """The rendered per-segment analysis (``args.segment_result``), or ``""``."""
    result = getattr(args, "segment_result", None)
    if result is None:
        return ""
    from serpeval.report.segments import render_online_segments

    return render_online_segments(result, args.format, digits=args.digits, color=color, width=width)


def segment_json(args: argparse.Namespace, payload: Any) -> Any:
    """``payload`` with the per-segment analysis under ``segments`` (a dict payload only)."""
    result = getattr(args, "segment_result", None)
    if result is None or not isinstance(payload, dict):
        return payload
    return {**payload, "segments": result.to_json_dict()}
