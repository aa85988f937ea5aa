"""``serpeval agreement QRELS_A QRELS_B [QRELS...] [--runs RUN...]``: assessor agreement."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, PROBABILITY
from serpeval.cli.commands import summary
from serpeval.cli.common import (
    EXIT_CODES_HELP,
    RESAMPLES,
    check_outputs,
    split_measures,
    table_width,
    write_output,
)
from serpeval.core.errors import InputError
from serpeval.stats.registry import PAIRED_TESTS, correction_names

FORMATS = ("table", "markdown", "latex", "json", "csv", "tsv")
TESTS = tuple(PAIRED_TESTS)
CORRECTIONS = correction_names()


def register(sub: Any) -> None:
    p = sub.add_parser(
        "agreement",
        help=summary("agreement"),
        description="Agreement of two or more label sets (qrels) on the documents both judged: "
                    "Cohen's kappa (unweighted, linear, quadratic), Krippendorff's alpha (ordinal), "
                    "Fleiss' kappa for 3+ sets, the confusion matrices, bootstrap CIs over queries; "
                    "documents judged by one set only are counted, not compared. With --runs: "
                    "Kendall's tau and tau_AP between the system orderings under each set, and how "
                    "many pairwise significance decisions flip.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("qrels", nargs="+", metavar="QRELS", help="two or more label sets (TREC, JSONL, Parquet; .gz ok)")
    p.add_argument("--names", help="comma-separated names of the label sets (default: the file names)")
    p.add_argument("--runs", nargs="+", metavar="RUN", help="runs to evaluate under every label set")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure of the ranking stability (repeatable or comma-separated; default nDCG@10 and AP)")
    p.add_argument("-t", "--test", choices=TESTS, default="t", help="paired test of the decisions (default t)")
    p.add_argument("-c", "--correction", choices=CORRECTIONS, default="holm",
                   help="multiple-comparison correction of the decisions (default holm)")
    p.add_argument("--alpha", type=PROBABILITY, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--resamples", type=RESAMPLES, default=1000, metavar="N",
                   help="bootstrap resamples over queries (default 1000)")
    p.add_argument("--confidence", type=PROBABILITY, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=0, help="bootstrap seed (default 0)")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.judgments.agreement import agreement
    from serpeval.report.agreement import render_agreement

    check_outputs({"-o": args.output}, [*args.qrels, *(args.runs or [])])
    if len(args.qrels) < 2:
        raise InputError(f"agreement needs at least two label sets (QRELS_A QRELS_B ...); got {len(args.qrels)}.")
    names = [n.strip() for n in args.names.split(",")] if args.names else None
    result = agreement(args.qrels, names=names, runs=args.runs,
                       measures=split_measures(args.measures) or ["nDCG@10", "AP"], resamples=args.resamples,
                       confidence=args.confidence, test=args.test, correction=args.correction, alpha=args.alpha,
                       rng=args.seed)
    write_output(render_agreement(result, args.format, digits=args.digits, width=table_width(args.output)),
                 args.output)
    if args.format in ("csv", "tsv"):
        # The rows are the statistics only: what was not compared, and where the rest is, on stderr.
        notes = [*result.notes(),
                 *(f"{p.a} vs {p.b}: {p.both} documents compared; not compared: {p.only_a} judged by {p.a} "
                   f"only, {p.only_b} by {p.b} only" for p in result.pairs),
                 f"{args.format}: the agreement statistics only; the confusion matrices"
                 + (" and the ranking stability" if result.stability is not None else "")
                 + " are in -f table or -f json"]
        for note in notes:
            print(note, file=sys.stderr)
    return 0
