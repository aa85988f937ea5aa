"""``serpeval pool RUN... [--qrels FILE] --depth K | --method rrf|rbp|mtf --budget N [-o FILE]``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT, integer, real
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, table_width, write_output
from serpeval.report.judging import JUDGING_FORMATS as FORMATS  # one list: what judging_file writes
from serpeval.report.judging import format_for, judging_file
from serpeval.report.table import render


def register(sub: Any) -> None:
    p = sub.add_parser(
        "pool",
        help=summary("pool"),
        description="Pool the runs to compare: the (query, document) pairs to judge next. "
                    "depth: every document in some run's top K; rrf / rbp: the documents with the "
                    "largest fused weight (reciprocal rank fusion, RBP weight) under a budget; "
                    "mtf: move-to-front (Cormack et al. 1998), adaptive: judgments in --qrels "
                    "(or the --simulate oracle) steer which run is pooled next. Documents already "
                    "judged in --qrels are skipped. Writes a judging file (TREC qrels with -1 to "
                    "fill in, CSV, JSON lines, Quepid ratings CSV, or an Elasticsearch/OpenSearch "
                    "_rank_eval body) that reads back as qrels once filled in; prints a summary.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files to pool")
    p.add_argument("--method", choices=("depth", "rrf", "rbp", "mtf"), default="depth",
                   help="pooling method (default depth)")
    p.add_argument("-k", "--depth", type=POSITIVE_INT, metavar="K",
                   help="pool each run's top K (required for depth; a cut for the others)")
    p.add_argument("--budget", type=POSITIVE_INT, metavar="N", help="at most N documents in all")
    p.add_argument("--per-query", type=POSITIVE_INT, metavar="N", help="at most N documents per query")
    p.add_argument("--qrels", metavar="FILE", help="judgments so far: judged documents are skipped")
    p.add_argument("--simulate", metavar="QRELS",
                   help="simulate the assessor with these qrels: the file is written judged (0 "
                        "where they have no grade), and mtf adapts to their grades")
    p.add_argument("--rrf-k", type=real(above=0.0), default=60.0, metavar="K",
                   help="reciprocal rank fusion constant (default 60)")
    p.add_argument("--rbp-p", type=real(above=0.0, below=1.0), default=0.8, metavar="P",
                   help="RBP persistence for --method rbp (default 0.8)")
    p.add_argument("--rel", type=integer(1), default=1, metavar="GRADE",
                   help="grade that counts as relevant for mtf (default 1)")
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=0, help="breaks ties in priority (default 0)")
    p.add_argument("--topics", metavar="FILE", help="query texts (TSV qid<TAB>text or JSONL), written "
                                                    "next to each query")
    p.add_argument("-f", "--format", choices=FORMATS,
                   help="judging file format (default from the -o name: .csv csv, .tsv tsv, .jsonl jsonl, "
                        ".json rank-eval, else trec)")
    p.add_argument("--index", default="index", help="the _index of every rating (rank-eval; default index)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the judging file (default: standard output, the summary on stderr)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.io import read_qrels, read_run
    from serpeval.io.topics import read_topics
    from serpeval.judgments.pool import pool

    check_outputs({"-o": args.output}, [*args.runs, args.qrels, args.simulate, args.topics])
    fmt = args.format or format_for(args.output)
    topics = read_topics(args.topics) if args.topics else None
    runs = [read_run(path) for path in args.runs]
    qrels = read_qrels(args.qrels) if args.qrels else None
    oracle = read_qrels(args.simulate) if args.simulate else None
    result = pool(runs, method=args.method, depth=args.depth, budget=args.budget,
                  per_query=args.per_query, qrels=qrels, oracle=oracle, rrf_k=args.rrf_k,
                  rbp_p=args.rbp_p, rel=args.rel, seed=args.seed)
    text = judging_file(result, fmt, topics=topics, index=args.index, k=args.depth or 10)
    to_stdout = not args.output or args.output == "-"
    rows = [{"": key, "value": value} for key, value in result.summary().items()]
    notes = [f"wrote {len(result)} (query, document) pairs as {fmt}"
             + ("" if to_stdout else f" to {args.output}")]
    summary = render(rows, "table", title="pool", notes=notes, width=None if to_stdout else table_width())
    write_output(text, args.output)
    if to_stdout:
        sys.stderr.write(summary)
    else:
        write_output(summary, None)
    return 0
