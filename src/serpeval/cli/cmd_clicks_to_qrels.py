"""``serpeval clicks-to-qrels LOG... --model dcm --grades 0,1,2,3 -o FILE``: qrels inferred from clicks."""

from __future__ import annotations

import argparse
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT, real
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, table_width, write_output
from serpeval.core.errors import OptionError
from serpeval.judgments.click_defaults import DEFAULT_MODEL, ITERATIONS, MIN_IMPRESSIONS, MODELS, TOL

FORMATS = ("table", "markdown", "latex", "json", "csv", "tsv")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "clicks-to-qrels",
        help=summary("clicks-to-qrels"),
        description="Fit a click model (dcm, the default, and pbm: relevance = attractiveness; dbn: "
                    "attractiveness x satisfaction) on a click log (JSON lines or Parquet with query, docs, "
                    "clicked_ranks per impression; the Yandex format) and cut each (query, document)'s "
                    "estimated relevance into grades: by quantiles of the estimates (default equal "
                    "shares, or --quantiles), or by thresholds calibrated to existing judgments "
                    "(--calibrate). Writes the qrels (-o: TREC text, or .jsonl or .parquet by the name); "
                    "--counts writes every pair with its estimate, impressions and clicks as JSON lines. "
                    "Pairs seen in fewer than --min-impressions impressions (default 10) get no grade and "
                    "are counted.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("logs", nargs="+", metavar="LOG", help="click log file(s): JSON lines (.gz ok) or Parquet; "
                                                         "several files are one log")
    p.add_argument("--model", choices=tuple(MODELS), default=DEFAULT_MODEL,
                   help=f"click model (default {DEFAULT_MODEL}: it follows the clicks of a real log best)")
    p.add_argument("--grades", default="0,1,2,3", help="grades to assign, lowest first (default 0,1,2,3)")
    p.add_argument("--min-impressions", type=POSITIVE_INT, default=MIN_IMPRESSIONS, metavar="N",
                   help=f"label only pairs seen in at least N impressions (default {MIN_IMPRESSIONS}); the "
                        "others are counted in the summary and written to --counts with relevance null")
    p.add_argument("--quantiles", metavar="SHARES",
                   help="cumulative grade shares of the quantile thresholds, one per boundary "
                        "(e.g. 0.5,0.8,0.95; default equal shares)")
    p.add_argument("--calibrate", metavar="QRELS",
                   help="choose the thresholds that maximise agreement with these judgments")
    p.add_argument("--calibrate-by", choices=("quadratic", "linear", "kappa"), default="quadratic",
                   help="agreement maximised by --calibrate: weighted Cohen's kappa (default quadratic)")
    p.add_argument("--iterations", type=POSITIVE_INT, default=ITERATIONS,
                   help=f"EM iterations at most (default {ITERATIONS:,})")
    p.add_argument("--tol", type=real(above=0.0), default=TOL,
                   help=f"EM stops when the log-likelihood changes by less than this per impression "
                        f"(default {TOL:g})")
    p.add_argument("-o", "--output", metavar="FILE", required=True,
                   help="write the qrels to FILE: TREC text, or JSON lines (.jsonl) or Parquet (.parquet) by "
                        "its name (these hold query ids with spaces, such as query texts)")
    p.add_argument("--counts", metavar="FILE",
                   help="write every (query, document) with estimate, impressions, clicks and grade (JSON lines)")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="format of the summary on stdout")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.io.outputs import write_text
    from serpeval.io.trec import write_qrels
    from serpeval.judgments.clicks import clicks_to_qrels
    from serpeval.report.click_qrels import item_lines, render_click_qrels

    check_outputs({"-o": args.output, "--counts": args.counts}, [*args.logs, args.calibrate])
    if args.output == "-" or args.counts == "-":
        raise OptionError("-o and --counts take file names; the summary goes to standard output.")
    quantiles = None
    if args.quantiles:
        try:
            quantiles = [float(v) for v in args.quantiles.split(",") if v.strip()]
        except ValueError:
            raise OptionError(f"--quantiles: comma-separated shares such as 0.5,0.8,0.95; got "
                              f"{args.quantiles!r}.") from None
    result = clicks_to_qrels(args.logs, model=args.model, grades=args.grades, min_impressions=args.min_impressions,
                             quantiles=quantiles, calibrate=args.calibrate, objective=args.calibrate_by,
                             iterations=args.iterations, tol=args.tol)
    write_qrels(result.qrels, args.output)
    if args.counts:
        write_text(args.counts, item_lines(result))
    write_output(render_click_qrels(result, args.format, digits=args.digits, width=table_width(None)), None)
    return 0
