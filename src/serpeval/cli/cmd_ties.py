"""``serpeval ties RUN [--qrels QRELS] [-m MEASURE] [-k 10]``: a run's score ties and how far
they move each measure (pessimistic to optimistic, and the exact expectation)."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, split_measures, table_width, write_output
from serpeval.core.errors import MissingQueriesWarning
from serpeval.report.table import FORMATS


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ties",
        help=summary("ties"),
        description="How many queries of a run have equal scores reaching the top k, how large the tie "
                    "groups are and, with --qrels, each measure under the tie policies: pessimistic (lower "
                    "grade first within a tie), expected (the exact mean over every order of each tie group) "
                    "and optimistic (higher grade first), next to trec_eval's doc id rule; the mean and the "
                    "largest per-query range (optimistic - pessimistic). See docs/how-to/ties.md.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("run", metavar="RUN", help="run file (TREC, JSONL, Parquet; .gz ok)")
    p.add_argument("--qrels", metavar="QRELS", help="qrels file: adds how far each measure can move")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure (repeatable or comma-separated); default: nDCG@10, AP, P@10, R@100, RR")
    p.add_argument("-k", type=POSITIVE_INT, default=10, metavar="K",
                   help="count the queries whose ties reach the top K (default 10)")
    p.add_argument("--missing", choices=("skip", "zero"), default="skip",
                   help="judged queries absent from the run: skip (default) or zero")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.evaluation.evaluate import DEFAULT_MEASURES
    from serpeval.evaluation.ties import tie_summary
    from serpeval.io import read_qrels, read_run
    from serpeval.report.ties import render_ties

    check_outputs({"-o": args.output}, [args.run, args.qrels])
    the_run = read_run(args.run)
    qrels = read_qrels(args.qrels) if args.qrels else None
    measures = split_measures(args.measures) or list(DEFAULT_MEASURES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)  # the note below gives the count
        result = tie_summary(the_run, qrels, measures, k=args.k, missing=args.missing)
    text = render_ties(result, args.format, digits=args.digits, width=table_width(args.output))
    c = result.coverage
    notes = [] if c is None or not c.missing else [
        f"{c.run}: {len(c.missing)} of {c.judged_queries} judged queries have no results "
        f"({'skipped' if c.missing_policy == 'skip' else 'counted as 0'})"]
    if args.format == "table":
        from serpeval.report.table import fit_text

        text += fit_text(notes, table_width(args.output))
    elif args.format == "markdown":
        text += "".join(f"_{note}_  \n" for note in notes)
    write_output(text, args.output)
    if args.format in ("csv", "tsv"):
        from serpeval.report.ties import tie_notes

        notes = [*tie_notes(result), *notes]   # the rows carry no counts of the tie groups
    if args.format not in ("table", "markdown"):
        for note in notes:
            print(note, file=sys.stderr)
    return 0
