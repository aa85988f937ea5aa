"""``serpeval import-judgments FILE -o PREFIX``: other tools' judgment files as qrels + topics."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP


def register(sub: Any) -> None:
    p = sub.add_parser(
        "import-judgments",
        help=summary("import-judgments"),
        description="Read an Elasticsearch/OpenSearch _rank_eval request body, OpenSearch Search Relevance "
                    "Workbench judgments (with --query-set for its topics), a Quepid case CSV export (basic "
                    "or detailed) or RRE ratings JSON, and write PREFIX.qrels (TREC), PREFIX.topics.tsv, "
                    "PREFIX.groups.tsv (RRE query groups) and PREFIX.hints.json (index, metric, templates). "
                    "The format is recognised from the content unless --format names it.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("file", help="the judgments file")
    p.add_argument("--format", choices=("rank_eval", "srw", "quepid", "rre"), help="the format (default: recognised)")
    p.add_argument("--query-set", metavar="FILE", help="SRW: the query set (JSON or NDJSON) giving the topics")
    p.add_argument("-o", "--output", required=True, metavar="PREFIX", help="prefix of the files written")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.engines.imports import read_external

    imported = read_external(args.file, format=args.format, query_set=args.query_set)
    written = imported.write(args.output)
    queries = len(imported.topics)
    print(f"{args.file}: {imported.format}, {len(imported.qrels):,} judgments of {queries} queries -> "
          + ", ".join(str(p) for p in written))
    for note in imported.notes():
        print(f"note: {note}", file=sys.stderr)
    return 0
