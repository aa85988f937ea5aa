"""``serpeval demo [--data FOLDER]``: the main job on embedded, generated data."""

from __future__ import annotations

import argparse
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, integer
from serpeval.cli.commands import summary
from serpeval.cli.common import check_outputs
from serpeval.report import DEFAULT_HTML_PATH


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help=summary("demo"),
        description="Generate a deterministic graded test collection and two rankers, evaluate "
                    "and compare them. --data runs the same on a real collection folder "
                    "(qrels.txt[.gz], runs/, topics*.tsv), e.g. shared/data/trec/robust04.",
    )
    p.add_argument("--data", metavar="FOLDER", help="a collection folder instead of generated data")
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=2024, help="seed of the generated collection")
    p.add_argument("--queries", type=integer(2), default=200,
                   help="queries in the generated collection (at least 2: the rankers are compared "
                        "query by query)")
    p.add_argument("-o", "--output", metavar="FILE", default=DEFAULT_HTML_PATH,
                   help=f"where the demo writes its HTML report (default {DEFAULT_HTML_PATH})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.cli.demo.collection import load_collection, make_collection
    from serpeval.cli.demo.offline import run_demo

    check_outputs({"-o": args.output})
    if args.data:
        collection = load_collection(args.data)
    else:
        collection = make_collection(n_queries=args.queries, seed=args.seed)
    run_demo(collection, state={"report_path": args.output})
    return 0
