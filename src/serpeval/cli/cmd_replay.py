"""``serpeval replay LOG``: redraw every interleaved impression from its logged seed."""

from __future__ import annotations

import argparse
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT
from serpeval.cli.commands import summary
from serpeval.cli.common import check_outputs, emit
from serpeval.report.table import FORMATS


def register(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help=summary("replay"),
        description="Recompute the teams of every interleaved impression that serpeval serve logged (the "
        "input rankings, method, k and the seed derived from experiment and query_id) and list every row "
        "whose shown list or teams differ. Exit status 1 when one differs.",
    )
    p.add_argument("log", metavar="LOG", help="serve's DuckDB store, a postgresql:// URL or UBI exports (NDJSON)")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.serve.replay import replay

    check_outputs({"-o": args.output}, [args.log])
    report = replay(args.log)
    notes = [f"replayed {report.checked} interleaved impressions from {report.source}: {report.equal} equal, "
             f"{len(report.differing)} differ; {report.skipped} impressions not interleaved (A/B or excluded) "
             "not checked"]
    rows = report.to_dicts() or [{"query_id": "-", "difference": "none"}]
    emit(args, rows, notes, "replay of the interleaving coins", report.to_json_dict())
    return 1 if report.differing else 0
