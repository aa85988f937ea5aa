"""``serpeval interleaving-report LOGS [--experiment NAME] [--unit user] [--over-time]``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT, PROBABILITY
from serpeval.cli.commands import summary
from serpeval.cli.common import add_duplicates_option, check_outputs, emit, engine_status, table_width, write_output
from serpeval.cli.segments import add_by_option, refuse_latex_by, segment_text
from serpeval.cli.teardown import finishing
from serpeval.core.errors import InputError, OptionError
from serpeval.report.table import FORMATS, render


def register(sub: Any) -> None:
    p = sub.add_parser(
        "interleaving-report",
        help=summary("interleaving-report"),
        description="Credit every click to the team that supplied the result (in DuckDB or Spark), "
        "then report wins/losses/ties, the preference Delta (B-A: positive when users prefer "
        "ranker B, the candidate, over ranker A, the baseline) with a bootstrap CI over "
        "users, the sign test, per-user preference and team-balance checks; with "
        "--over-time, the cumulative Delta per day with its CI.",
    )
    p.add_argument(
        "logs", help="impressions with a 'teams' column (Parquet, CSV, DuckDB, log folder), or what "
        "serpeval serve stored: its DuckDB file, a postgresql:// URL, UBI exports (ubi_queries/ubi_events NDJSON)"
    )
    p.add_argument("-e", "--experiment", help="experiment name (default: the log's only one)")
    p.add_argument(
        "--teams",
        default="A,B",
        metavar="A,B",
        help="labels of ranker A's (the baseline's) and B's (the candidate's) results in the "
        "teams column (default A,B)",
    )
    p.add_argument(
        "--unit",
        choices=("user", "query", "user_query", "impression"),
        default="user",
        help="what the bootstrap resamples (default user)",
    )
    p.add_argument("--confidence", type=PROBABILITY, default=0.95, help="CI level (default 0.95)")
    p.add_argument(
        "--resamples", type=POSITIVE_INT, default=10_000, help="bootstrap resamples (default 10000)"
    )
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--over-time",
        action="store_true",
        help="also print the cumulative Delta per period with its CI (the JSON output "
        "always has it; csv/tsv print only this table)",
    )
    p.add_argument(
        "--period",
        default="day",
        help="periods of the preference over time, from the timestamp column (UTC): day "
        "(default), hour, week, or a length such as 6h or 2d",
    )
    p.add_argument(
        "--triggered",
        action="store_true",
        help="also credit only impressions whose two rankings differ (the log's 'triggered' "
        "column), Delta scaled by the trigger rate, next to the analysis of every impression",
    )
    p.add_argument("--backend", choices=("duckdb", "spark"), default="duckdb", help="query engine")
    p.add_argument("--clicks", metavar="PATH", help="separate clicks table (events layout)")
    add_duplicates_option(p)
    p.add_argument(
        "--column", action="append", metavar="ROLE=NAME", help="map a column, e.g. teams=arm"
    )
    add_by_option(p)
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=finishing(run))


def run(args: argparse.Namespace) -> int:
    from serpeval.online.experiments.interleaving_analysis import analyze_interleaving_logs
    from serpeval.online.logs.schema import LogSchema

    check_outputs({"-o": args.output}, [args.logs, args.clicks])
    refuse_latex_by(args)
    teams = tuple(t.strip() for t in args.teams.split(","))
    if len(teams) != 2:
        raise OptionError(f"--teams needs two labels separated by a comma; got {args.teams!r}.")
    if args.triggered:
        return _run_triggered(args, (teams[0], teams[1]))
    store_notes = _event_store(args)
    if getattr(args, "store_multileave", None) is not None:
        return _emit_multileave(args, store_notes)
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
            period=args.period,
        )
        if args.by:
            from serpeval.online.experiments.segments import analyze_interleaving_segments

            args.segment_result = analyze_interleaving_segments(
                args.logs, args.experiment, by=args.by, teams=(teams[0], teams[1]),
                alpha=1 - args.confidence, correction=args.by_correction, duplicates=args.duplicates,
                backend=args.backend, schema=LogSchema.from_pairs(args.column), clicks=args.clicks)
    checks = [
        f"check {c['check']}: {'ok' if c['ok'] else 'FAILED'} ({c['detail']})"
        for c in report.check_rows()
    ]
    title = (f"{report.experiment or report.source}: interleaving, A = team {report.teams[0]!r} "
             f"(baseline) vs B = team {report.teams[1]!r} (candidate), {report.backend}")
    notes = [*store_notes, *report.notes(), *checks]
    payload = report.to_json_dict()
    if store_notes:
        payload = {**payload, "store": args.store_counts}
    if not args.over_time or args.format == "json":
        return emit(args, report.to_dicts(), notes, title, payload)
    return _emit_over_time(args, report, notes, title)


def _event_store(args: argparse.Namespace) -> list[str]:
    """When ``logs`` is serve's event store or a UBI export: its impressions and clicks in the
    log layout replace it (args.logs, args.clicks); the counts read and left out are notes."""
    from serpeval.online.events.logs import is_event_source, read_event_logs

    if not is_event_source(args.logs):
        return []
    if args.clicks:
        raise OptionError("--clicks does not apply to an event store: its clicks are the stored UBI events.")
    read = read_event_logs(args.logs, args.experiment)
    args.logs, args.clicks = read.impressions, read.clicks
    args.store_counts = read.counts
    args.store_multileave = read if len(read.rankers) > 2 else None
    return read.notes()


def _emit_multileave(args: argparse.Namespace, store_notes: list[str]) -> int:
    """A store whose experiment multileaves 3+ rankers: the pairwise preference matrix."""
    from serpeval.serve.multileave import analyze_multileaved_events

    if args.by or args.over_time:
        raise OptionError("--by and --over-time apply to two rankers; this experiment multileaves "
                          f"{len(args.store_multileave.rankers)} ({', '.join(args.store_multileave.rankers)}).")
    result = analyze_multileaved_events(args.store_multileave, alpha=1 - args.confidence)
    rows = result.to_dicts()
    read = args.store_multileave
    experiment = read.impressions.column("experiment")[0].as_py() if read.impressions.num_rows else None
    title = (f"{experiment or read.source}: multileaving ({', '.join(read.methods)}) of "
             f"{', '.join(read.rankers)}: pairwise preferences, sign tests with Holm's correction")
    notes = [*store_notes, "each row is ranker against vs: the wins are ranker's, and delta is positive when "
                           "ranker is preferred (as compare --all-pairs gives system against vs)"]
    payload = {"experiment": experiment, "rankers": list(read.rankers), "methods": list(read.methods),
               "impressions": result.analysis.impressions, "pairs": rows, "notes": notes,
               "store": read.counts}
    return emit(args, rows, notes, title, payload)


def _run_triggered(args: argparse.Namespace, teams: tuple[str, str]) -> int:
    """``--triggered``: every impression and the triggered ones, side by side."""
    from serpeval.online.experiments.triggered import analyze_interleaving_triggered
    from serpeval.online.logs.schema import LogSchema

    if args.over_time:
        raise OptionError("--triggered and --over-time cannot be combined; run them separately.")
    with engine_status(args.backend):
        res = analyze_interleaving_triggered(
            args.logs, args.experiment, teams=teams, unit=args.unit, confidence=args.confidence,
            n_resamples=args.resamples, rng=args.seed, duplicates=args.duplicates,
            backend=args.backend, schema=LogSchema.from_pairs(args.column), clicks=args.clicks,
            period=None,
        )
    rows = res.to_dicts()
    title = f"{res.untriggered.experiment or res.untriggered.source}: triggered interleaving, " \
            f"{res.untriggered.backend}"
    payload = {"results": rows, "trigger_rate": res.trigger_rate, "notes": res.notes(),
               "untriggered": res.untriggered.to_json_dict(), "triggered": res.triggered.to_json_dict()}
    return emit(args, rows if args.format in ("csv", "tsv", "json") else _triggered_digest(rows, args.digits),
                res.notes(), title, payload)


def _triggered_digest(rows: list[dict[str, Any]], digits: int) -> list[dict[str, Any]]:
    """The triggered row for reading: Delta [CI] on every impression and triggered x rate."""
    def interval(r: dict[str, Any], prefix: str) -> str:
        return (f"{r[prefix + 'delta']:+.{digits}f} [{r[prefix + 'ci_low']:+.{digits}f}, "
                f"{r[prefix + 'ci_high']:+.{digits}f}]")

    return [{"A": r["A"], "B": r["B"], "impressions": r["impressions"],
             "all: delta [CI]": interval(r, ""), "p": r["p"],
             "triggered x rate [CI]": interval(r, "triggered "), "p trig.": r["triggered p"],
             "rate": f"{r['trigger rate']:.1%}", "CI ratio": f"{r['ci width ratio']:.2f}",
             "winner": r["winner"]} for r in rows]


def _emit_over_time(args: argparse.Namespace, report: Any, notes: list[str], title: str) -> int:
    """``--over-time``: the outcome table and the per-period table (csv/tsv: the latter only)."""

    over = report.over_time
    if over is None:
        raise InputError(
            f"{report.source}: --over-time needs impression timestamps (column "
            "'timestamp'; map yours with --column timestamp=NAME)."
        )
    if args.format in ("csv", "tsv"):
        return emit(args, report.over_time_rows(), notes, title, None)
    color = args.output is None and sys.stdout.isatty()
    compact = over_time_rows(report.over_time_rows(), over.period, over.confidence, args.digits)
    parts = [
        render(
            report.to_dicts(),
            args.format,
            digits=args.digits,
            title=title,
            notes=notes,
            color=color,
            width=table_width(args.output),
        ),
        render(
            compact,
            args.format,
            digits=args.digits,
            title=f"preference over time: {over.method()}",
            color=color,
            width=table_width(args.output),
        ),
    ]
    by_segment = segment_text(args, table_width(args.output), color)
    if by_segment:
        parts.append(by_segment)
    write_output("\n".join(part.rstrip("\n") for part in parts) + "\n", args.output)
    return 0


def over_time_rows(
    rows: list[dict[str, Any]], period: str, confidence: float, digits: int = 4
) -> list[dict[str, Any]]:
    """The compact per-period table: the period's counts, then the cumulative Delta [CI]."""

    def signed(value: float | None) -> str:
        return "-" if value is None else f"{value:+.{digits}f}"

    whole_days = period in ("day", "week") or period.endswith(("d", "w"))
    header = period if period in ("hour", "day", "week") else "period"
    out = []
    for r in rows:
        start = r["start"][:10] if whole_days else r["start"][:16].replace("T", " ")
        out.append(
            {
                header: r["period"],
                "start (UTC)": start,
                "impressions": r["impressions"],
                "wins A": r["wins_a"],
                "wins B": r["wins_b"],
                "ties": r["ties"],
                "units so far": r["cum_units"],
                f"cumulative delta B-A [{_level(confidence)} CI]": f"{signed(r['delta'])} "
                f"[{signed(r['ci_low'])}, {signed(r['ci_high'])}]",
            }
        )
    return out


def _level(confidence: float) -> str:
    """The level as every label says it (``97.5%``, never rounded)."""
    from serpeval.stats.validation import confidence_label

    return confidence_label(confidence)
