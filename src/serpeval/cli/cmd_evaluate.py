"""``serpeval evaluate QRELS RUN [RUN...] -m nDCG@10 -m AP``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, split_measures, table_width, write_output
from serpeval.cli.offline import (
    add_group_options,
    add_subtopics_option,
    add_ties_option,
    coverage_notes,
    refuse_latex_groups,
    render_results,
    with_judged_column,
)
from serpeval.cli.progress import bar
from serpeval.core.errors import OptionError
from serpeval.report.table import FORMATS


def register(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate",
        help=summary("evaluate"),
        description="Evaluate one or more runs against relevance judgments. One row per run; "
                    "measures in any dialect (nDCG@10, ndcg_cut_10, MAP, P(rel=2)@5).",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("qrels", help="qrels file (TREC, JSONL, JSON, Parquet; .gz ok; - for stdin)")
    p.add_argument("runs", nargs="+", help="run files")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure to compute (repeatable or comma-separated); default: "
                        "nDCG@10, AP, P@10, R@100, RR")
    p.add_argument("-q", "--per-query", action="store_true", help="one row per run and query")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--missing", choices=("skip", "zero", "error"), default="skip",
                   help="judged queries absent from a run: skip (trec_eval default), "
                        "zero (trec_eval -c), error")
    p.add_argument("--depth", type=POSITIVE_INT, metavar="N", help="keep the top N docs per query (-M)")
    p.add_argument("--judged-only", action="store_true", help="drop unjudged docs first (-J)")
    add_ties_option(p)
    p.add_argument("--judged", nargs="?", const=0, type=POSITIVE_INT, metavar="K",
                   help="add a Judged@K column (the share of the top K that is judged; K defaults "
                        "to the deepest cutoff of the measures, else 10)")
    add_subtopics_option(p)
    p.add_argument("--stream", action="store_true",
                   help="read the runs (TREC text, .gz ok) piece by piece in bounded memory, for runs "
                        "larger than RAM (same values; a file not grouped by query is partitioned to "
                        "temporary files first); see docs/performance.md")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--backend", choices=("local", "spark"), default="local",
                   help="local (default), or spark: read the files (TREC, JSONL, Parquet; local "
                        "or object storage) and evaluate through Spark (needs the spark extra, pip install "
                        "'serpeval[spark]', and Java 17)")
    p.add_argument("--spark-master", metavar="URL",
                   help="Spark master for --backend spark (default: the active session, "
                        "spark-submit's setting, or local[*])")
    add_group_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.evaluation.evaluate import DEFAULT_MEASURES

    check_outputs({"-o": args.output}, [args.qrels, *args.runs])
    refuse_latex_groups(args)

    measures = with_judged_column(split_measures(args.measures) or list(DEFAULT_MEASURES), args.judged)
    if args.backend == "spark" and args.groups:
        raise OptionError("--groups works on the local backend; with --backend spark write the per-query "
                          "values (--per-query) and evaluate the groups locally, or drop --groups.")
    if args.stream and args.backend == "spark":
        raise OptionError("--stream works on the local backend; drop --stream or --backend spark.")
    if args.backend == "spark":
        if args.subtopics:
            raise OptionError("--subtopics works with the local backend only; drop --backend spark.")
        from serpeval.cli.spark_backend import evaluate_files

        # serpeval's own progress on a terminal (Spark's console progress and logs are off)
        with bar("Spark: start, read, evaluate") as progress:
            qrels, runs, results = evaluate_files(args, measures, progress)
    elif args.stream:
        from serpeval.cli.offline import stream_and_evaluate

        qrels, runs, results = stream_and_evaluate(args.qrels, args.runs, measures, args)
    else:
        from serpeval.cli.offline import load_and_evaluate

        # A progress bar on a terminal; the notes below report the missing-query counts.
        qrels, runs, results, _ = load_and_evaluate(args.qrels, args.runs, measures, args)
    notes = coverage_notes(results, qrels, runs)
    by_group = None
    if args.groups:
        from serpeval.cli.offline import resolve_cli_groups
        from serpeval.comparison.segments import group_means

        local: Any = results        # the local backend (spark refuses --groups above)
        first = local.runs[0]
        by_group = group_means(local, resolve_cli_groups(args, first.query_ids, qrels, first.values[:, 0],
                                                           first.name, str(results.measures[0])))
    if args.format == "json":
        from serpeval.core.strict_json import dumps

        payload = results.to_json_dict(per_query=args.per_query)
        payload["notes"] = notes
        if by_group is not None:
            payload["groups"] = {"grouping": by_group.grouping, "rows": by_group.to_dicts(),
                                 "notes": by_group.notes()}
        write_output(dumps(payload) + "\n", args.output)
    else:
        text = render_results(results, args.format, per_query=args.per_query, digits=args.digits,
                              notes=notes if args.format != "csv" and args.format != "tsv" else (),
                              color=args.output is None and sys.stdout.isatty(),
                              width=table_width(args.output))
        if by_group is not None:
            from serpeval.report.segments import render_group_means

            means = render_group_means(by_group, args.format, digits=args.digits, width=table_width(args.output))
            text = means if args.format in ("csv", "tsv") else text + "\n" + means
        write_output(text, args.output)
        if args.format in ("csv", "tsv"):
            for note in notes:
                print(note, file=sys.stderr)
    return 0
