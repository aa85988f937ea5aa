"""``serpeval counterfactual LOG --candidate C.run [--candidate D.run ...] [--against A]``."""

from __future__ import annotations

import argparse
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT, PROBABILITY
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, table_width, write_output
from serpeval.report.table import FORMATS

_ESTIMATORS = ("interleaved", "ips", "snips", "iips", "cascade_ips", "pseudo_inverse", "pbm_ips", "dr")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "counterfactual",
        help=summary("counterfactual"),
        description="Estimate rankers that were never shown from a randomised log (a probabilistic "
                    "interleaving or an A/B split whose rows carry logging_design and logging_rankings: "
                    "docs/explanation/counterfactual-logs.md): the interleaved comparison of each "
                    "candidate against a logging ranker (importance sampling, Hofmann et al. 2012) and "
                    "its expected clicks or CTR on the top k by IPS, self-normalised IPS, independent, "
                    "cascade and position-based IPS, the pseudo-inverse slate estimator and cascade doubly "
                    "robust, each with a "
                    "cluster-robust interval. Support diagnostics come first: where the log cannot "
                    "answer, the estimate is refused with a one-line reason.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("log", help="the log: Parquet or JSON lines, one row per impression")
    p.add_argument("-c", "--candidate", action="append", required=True, metavar="RUN",
                   help="a candidate's run file (TREC, JSONL, Parquet...; repeatable)")
    p.add_argument("--against", default="A", help="the logging ranker effects are measured against: A "
                   "(the first of logging_rankings, default) or B")
    p.add_argument("-e", "--experiment", help="the experiment to read (needed when the log holds several)")
    p.add_argument("--metric", choices=("clicks", "ctr"), default="clicks",
                   help="clicks on the top k per search (default) or the share of searches with a click")
    p.add_argument("-k", type=POSITIVE_INT, default=None,
                   help="cutoff of the metric (default: every shown position); smaller k, better support")
    p.add_argument("--estimator", action="append", choices=_ESTIMATORS, dest="estimators",
                   help="estimator to run (repeatable; default: all that apply)")
    p.add_argument("--confidence", type=PROBABILITY, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--rank-by", choices=("interleaved", "metric"), default="interleaved",
                   help="rank by the interleaved comparison (default, where the log allows it) or by the "
                        "click metric's effect (doubly robust, cascade IPS, SNIPS, IPS: the first that answers)")
    p.add_argument("--ranking-only", action="store_true", help="print the ranking table only")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.online.counterfactual import counterfactual
    from serpeval.report.counterfactual import counterfactual_json, counterfactual_text

    check_outputs({"-o": args.output}, [args.log, *args.candidate])
    against: str | int = int(args.against) if args.against.isdigit() else args.against
    result = counterfactual(args.log, list(args.candidate), against=against, metric=args.metric,
                            estimators=args.estimators, experiment=args.experiment,
                            confidence=args.confidence, k=args.k)
    if args.format == "json":
        from serpeval.core.strict_json import dumps

        write_output(dumps(counterfactual_json(result, args.rank_by)) + "\n", args.output)
        return 0
    text = counterfactual_text(result, args.format, digits=args.digits, width=table_width(args.output),
                               all_estimators=not args.ranking_only, rank_by=args.rank_by)
    write_output(text, args.output)
    return 0
