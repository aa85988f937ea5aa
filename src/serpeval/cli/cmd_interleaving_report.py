"""``serpeval interleaving-report LOGS [--experiment NAME] [--unit user]``."""

from __future__ import annotations

import argparse
from typing import Any

from serpeval.cli.cmd_ab import _emit, engine_status
from serpeval.report.table import FORMATS


def register(sub: Any) -> None:
    p = sub.add_parser(
        "interleaving-report",
        help="decide between two rankers from an interleaving log",
        description="Credit every click to the team that supplied the result (in DuckDB or Spark), "
        "then report wins/losses/ties, the preference Delta with a bootstrap CI over "
        "users, the sign test, per-user preference and team-balance checks.",
    )
    p.add_argument(
        "logs", help="impressions with a 'teams' column (Parquet, CSV, DuckDB, log folder)"
    )
    p.add_argument("-e", "--experiment", help="experiment name (default: the log's only one)")
    p.add_argument(
        "--teams",
        default="A,B",
        metavar="A,B",
        help="labels of ranker A's and B's results in the teams column (default A,B)",
    )
    p.add_argument(
        "--unit",
        choices=("user", "query", "user_query", "impression"),
        default="user",
        help="what the bootstrap resamples (default user)",
    )
    p.add_argument("--confidence", type=float, default=0.95, help="CI level (default 0.95)")
    p.add_argument(
        "--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)"
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--backend", choices=("duckdb", "spark"), default="duckdb", help="query engine")
    p.add_argument("--clicks", metavar="PATH", help="separate clicks table (events layout)")
    p.add_argument(
        "--duplicates",
        choices=("error", "exclude", "unchecked"),
        default="error",
        help="repeated impression ids: error (default), exclude their rows, or unchecked "
        "(skip the duplicate-id check when ids are unique by construction)",
    )
    p.add_argument(
        "--column", action="append", metavar="ROLE=NAME", help="map a column, e.g. teams=arm"
    )
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=int, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.errors import OptionError
    from serpeval.online.ab.interleaving import analyze_interleaving_logs
    from serpeval.online.ab.schema import LogSchema

    teams = tuple(t.strip() for t in args.teams.split(","))
    if len(teams) != 2:
        raise OptionError(f"--teams needs two labels separated by a comma; got {args.teams!r}.")
    with engine_status(args.backend):
        report = analyze_interleaving_logs(
            args.logs,
            args.experiment,
            teams=(teams[0], teams[1]),
            unit=args.unit,
            confidence=args.confidence,
            n_resamples=args.resamples,
            rng=args.seed,
            duplicates=args.duplicates,
            backend=args.backend,
            schema=LogSchema.from_pairs(args.column),
            clicks=args.clicks,
        )
    checks = [
        f"check {c['check']}: {'ok' if c['ok'] else 'FAILED'} ({c['detail']})"
        for c in report.check_rows()
    ]
    title = f"{report.experiment or report.source}: interleaving, {report.backend}"
    return _emit(args, report.to_dicts(), [*report.notes(), *checks], title, report.to_json_dict())
