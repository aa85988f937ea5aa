"""``serpeval retrieve --corpus DOCS.jsonl --topics TOPICS -o RUN``: run topics through an engine."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli._args import POSITIVE_INT
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs


def register(sub: Any) -> None:
    p = sub.add_parser(
        "retrieve",
        help=summary("retrieve"),
        description="Run every topic through a search engine and write a TREC run. Default engine: "
                    "BM25 over a JSONL corpus, embedded (no server; Lucene's BM25, k1=1.2 b=0.75; "
                    "--param k1=0.9 --param b=0.4 --param method=bm25+ to change). --engine CONFIG "
                    "queries an HTTP engine (Elasticsearch/OpenSearch, Solr, Vespa or a generic "
                    "JSON endpoint; docs/how-to/retrieve-and-sweep.md). The run's tag is "
                    "ENGINE:CONFIGHASH:TIME and RUN.json records the engine, its parameters and "
                    "every count (empty topics skipped, queries with no hit, short lists, "
                    "duplicates removed, failures).",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("--topics", required=True, metavar="TOPICS",
                   help="topics: TSV qid<TAB>text, JSONL, or a TREC <top> file (.gz ok)")
    p.add_argument("--corpus", metavar="DOCS", help="JSONL corpus for the embedded BM25 engine")
    p.add_argument("--engine", metavar="CONFIG", help="HTTP engine config (TOML or JSON) instead of --corpus")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="engine parameter (repeatable): k1, b, method, delta; or an HTTP template parameter")
    p.add_argument("-k", "--depth", type=POSITIVE_INT, default=1000, help="documents per query (default 1000)")
    p.add_argument("--fields", help="corpus fields to index, comma-separated (default: title,text... present)")
    p.add_argument("--id-field", help="corpus doc id field (default: docid, doc_id, docno, _id or id)")
    p.add_argument("--name", help="run name (default: the engine's name)")
    p.add_argument("--skip-failed", action="store_true",
                   help="HTTP: skip queries whose request fails after retries (counted, listed) instead of stopping")
    p.add_argument("-o", "--output", required=True, metavar="RUN",
                   help="the run file to write (atomically); RUN.json gets the provenance")
    p.add_argument("--no-sidecar", action="store_true", help="do not write RUN.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.cli.progress import bar
    from serpeval.core.errors import OptionError
    from serpeval.engines.retrieve import parse_assignments, retrieve

    check_outputs({"-o": args.output}, [args.topics, args.corpus, args.engine])
    if bool(args.corpus) == bool(args.engine):
        raise OptionError("give --corpus DOCS.jsonl (the embedded BM25 engine) or --engine CONFIG (an HTTP "
                          "engine), one of the two.")
    params = parse_assignments(args.param)
    fields = [f.strip() for f in args.fields.split(",") if f.strip()] if args.fields else None
    with bar("retrieving") as progress:
        result = retrieve(args.topics, args.engine, corpus=args.corpus, params=params, k=args.depth,
                          fields=fields, id_field=args.id_field, name=args.name,
                          on_error="skip" if args.skip_failed else "raise", progress=progress)
    result.write(args.output, sidecar=not args.no_sidecar)
    row = result.to_dicts()[0]
    shown = ", ".join(f"{k}={v}" for k, v in result.params.items())
    print(f"{args.output}: {row['rows']:,} lines, {row['retrieved_queries']} of {row['queries']} queries, "
          f"engine {result.engine} ({shown}), config {result.config_hash}, {row['seconds']:.2f} s")
    for note in result.notes():
        print(f"note: {note}", file=sys.stderr)
    return 0
