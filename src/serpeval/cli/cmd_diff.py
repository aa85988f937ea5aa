"""``serpeval diff RUN_A RUN_B [--qrels FILE] [-k 10] [-p 0.9]``: how two runs differ, without
judgments."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT, real
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, table_width, write_output
from serpeval.cli.offline import add_grades_option
from serpeval.core.errors import OptionError
from serpeval.report.table import FORMATS, render


def register(sub: Any) -> None:
    p = sub.add_parser(
        "diff",
        help=summary("diff"),
        description="Per query: overlap@k, rank-biased overlap (RBO_ext with its RBO_min / "
                    "RBO_res bounds, Webber et al. 2010), Kendall's tau on the shared documents, "
                    "and the documents that entered or left the top k; with --qrels, how many of "
                    "those nobody judged. Prints the means and the queries that changed most "
                    "(lowest RBO_ext); -q prints every query. Compared on the queries both runs "
                    "answer; the queries only one run answers are counted and named "
                    "(--missing zero scores them as empty rankings instead).",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("run_a", metavar="RUN_A", help="the first run (baseline)")
    p.add_argument("run_b", metavar="RUN_B", help="the second run (candidate)")
    p.add_argument("-k", type=POSITIVE_INT, help="depth of overlap@k and changed docs (default 10, or --depth "
                                                 "when smaller; deeper than --depth is refused)")
    p.add_argument("-p", "--persistence", type=real(above=0.0, below=1.0), default=0.9, metavar="P",
                   help="RBO persistence p (default 0.9: 86%% of the weight on the top 10)")
    p.add_argument("--depth", type=POSITIVE_INT, metavar="N", help="cut both runs at N docs first")
    p.add_argument("--qrels", metavar="FILE", help="count (and list) the changed documents nobody judged")
    add_grades_option(p)
    p.add_argument("--missing", choices=("skip", "zero"), default="skip",
                   help="a query only one run answers: skip (default: left out, counted and named in the "
                        "notes) or zero (an empty ranking on the other side: overlap 0, RBO 0)")
    p.add_argument("--top", type=NON_NEGATIVE_INT, default=10, metavar="N",
                   help="queries that changed most to list (default 10)")
    p.add_argument("-q", "--per-query", action="store_true", help="every query, not only the most changed")
    p.add_argument("--unjudged", metavar="FILE",
                   help="write the changed, unjudged documents as a TREC judging list (needs --qrels)")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.io import read_qrels, read_run
    from serpeval.judgments.diff import diff_runs

    if args.unjudged and not args.qrels:
        raise OptionError("--unjudged needs --qrels: which documents are unjudged depends on them.")
    check_outputs({"-o": args.output, "--unjudged": args.unjudged}, [args.run_a, args.run_b, args.qrels])
    a, b = read_run(args.run_a), read_run(args.run_b)
    qrels = read_qrels(args.qrels, grades=args.grades) if args.qrels else None
    result = diff_runs(a, b, k=args.k, p=args.persistence, depth=args.depth, qrels=qrels, missing=args.missing)
    if args.unjudged:
        write_output("".join(f"{q} 0 {d} -1\n" for q, d, _ in result.unjudged), args.unjudged)
    if args.format == "json":
        from serpeval.core.strict_json import dumps

        write_output(dumps(result.to_json_dict()) + "\n", args.output)
        return 0
    width = table_width(args.output)
    summary = result.summary()
    label = {"a": "A", "b": "B"}
    head = [{"": label.get(key, key), "value": value} for key, value in summary.items()]
    rows = result.to_dicts() if args.per_query else result.most_changed(args.top)
    notes = [f"A = {result.a}, B = {result.b}; RBO p = {result.p:g}"
             + (f", both cut at depth {result.depth}" if result.depth else ""),
             "entered / left: documents that entered / left the top "
             f"{result.k} from A to B", *result.notes()]
    if qrels is not None:
        notes.append(f"{len(result.unjudged)} changed documents are unjudged in {qrels.source}")
    if args.format in ("csv", "tsv"):
        write_output(render(result.to_dicts(), args.format), args.output)
        for note in notes:
            print(note, file=sys.stderr)
        return 0
    title = "all queries" if args.per_query else f"the {len(rows)} queries that changed most (lowest RBO_ext)"
    text = render(head, args.format, digits=args.digits, title=f"{result.a} vs {result.b}", width=width)
    text += "\n" + render(rows, args.format, digits=args.digits, title=title, notes=notes, width=width)
    write_output(text, args.output)
    return 0
