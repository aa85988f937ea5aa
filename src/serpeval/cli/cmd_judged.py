"""``serpeval judged QRELS RUN... [-k 10] [-k 100] [-q]``: how much of each run is judged."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, table_width, write_output
from serpeval.cli.offline import add_grades_option
from serpeval.core.errors import MissingQueriesWarning
from serpeval.report.table import FORMATS, render


def register(sub: Any) -> None:
    p = sub.add_parser(
        "judged",
        help=summary("judged"),
        description="Per run (and per query with -q): Graded@k, the share of the k ranks holding "
                    "a document with a grade >= 0 (a negative grade, what serpeval pool writes for "
                    "a row still to judge, is not a grade; empty ranks of a shorter ranking hold "
                    "nothing graded), and Unjudged@k (trec_eval's unj), the share holding a "
                    "document not in the qrels or with a negative grade, which every measure "
                    "counts as non-relevant. Graded@k + Unjudged@k = min(k, retrieved) / k. "
                    "(Judged@k, the measure, is ir_measures': over min(k, retrieved), any qrels "
                    "entry judged.) The notes give how many documents a depth-k pool of these "
                    "runs would still need (serpeval pool).",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("qrels", help="qrels file (TREC, JSONL, JSON, CSV, Parquet; .gz ok)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files")
    add_grades_option(p)
    p.add_argument("-k", "--cutoff", type=POSITIVE_INT, action="append", dest="cutoffs", metavar="K",
                   help="depth k (repeatable; default 10)")
    p.add_argument("-q", "--per-query", action="store_true", help="one row per run and query")
    p.add_argument("--missing", choices=("skip", "zero"), default="skip",
                   help="judged queries absent from a run: skip (default) or zero")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.io import read_qrels, read_run
    from serpeval.judgments.judged import judged

    check_outputs({"-o": args.output}, [args.qrels, *args.runs])
    qrels = read_qrels(args.qrels, grades=args.grades)
    runs = [read_run(path) for path in args.runs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)  # a note below gives the counts
        rates = judged(qrels, runs, args.cutoffs or [10], missing=args.missing)
    notes = [f"{c.run}: {len(c.missing)} of {c.judged_queries} judged queries have no results "
             f"({'skipped' if c.missing_policy == 'skip' else 'counted as 0'})"
             for c in rates.coverage if c.missing]
    notes += [f"a depth-{k} pool of these runs needs {n:,} more judgments in the judged queries" for k, n in
              zip(rates.cutoffs, rates.pool_needed, strict=True)]
    notes.append("Graded@k: documents with a grade >= 0 in the top k, over k; Unjudged@k (trec_eval unj): "
                 "not in the qrels or a negative grade (-1: still to judge), over k; the rest of the k "
                 "ranks are empty (a shorter ranking)")
    if args.format == "json":
        from serpeval.core.strict_json import dumps

        payload = rates.to_json_dict(per_query=args.per_query)
        payload["notes"] = notes
        write_output(dumps(payload) + "\n", args.output)
        return 0
    text = render(rates.to_dicts(per_query=args.per_query), args.format, digits=args.digits,
                  notes=notes if args.format not in ("csv", "tsv") else (),
                  width=table_width(args.output))
    write_output(text, args.output)
    if args.format in ("csv", "tsv"):
        for note in notes:
            print(note, file=sys.stderr)
    return 0
