"""``serpeval report QRELS RUN [RUN...] [-m ...] [--baseline NAME] [--topics FILE] -o report.html``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli.app import split_measures
from serpeval.cli.cmd_compare import CORRECTIONS, TESTS, add_evaluation_options
from serpeval.report import DEFAULT_HTML_PATH



def register(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="write a self-contained HTML report (tables, plots, significance)",
        description="Evaluate and compare runs, then write one self-contained HTML file (no "
                    "network needed to view it): means with significance markers and CIs, the "
                    "per-query differences sorted (with the query text from --topics), the "
                    "distribution of every measure per run, and the evaluation rules used.",
    )
    p.add_argument("qrels", help="qrels file (TREC, JSONL, JSON, Parquet; .gz ok)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files (the first is the baseline "
                                                          "unless --baseline says otherwise)")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure (repeatable or comma-separated); default nDCG@10, AP, P@10, "
                        "R@100, RR")
    p.add_argument("-b", "--baseline", metavar="NAME", help="baseline run: name or path")
    p.add_argument("--topics", metavar="FILE",
                   help="query texts: TSV 'qid<TAB>text' or JSONL (.gz ok), shown per query")
    p.add_argument("-t", "--test", choices=TESTS, default="t", help="paired test (default t)")
    p.add_argument("-c", "--correction", choices=CORRECTIONS, default="holm",
                   help="multiple-comparison correction within each measure (default holm)")
    p.add_argument("--all-pairs", action="store_true", help="compare every pair of runs")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--confidence", type=float, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--resamples", type=int, default=10_000, metavar="N",
                   help="permutations / bootstrap resamples (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling tests (default 0)")
    add_evaluation_options(p)
    p.add_argument("--title", help="page title (default: the run names)")
    p.add_argument("-o", "--output", metavar="FILE", default=DEFAULT_HTML_PATH,
                   help=f"the HTML file to write (default {DEFAULT_HTML_PATH})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from serpeval.cli.cmd_compare import load_and_evaluate, resolve_run
    from serpeval.cli.cmd_evaluate import coverage_notes
    from serpeval.comparison import compare_results
    from serpeval.evaluate import DEFAULT_MEASURES
    from serpeval.report.html import save_html
    from serpeval.report.topics import read_topics

    measures = split_measures(args.measures) or list(DEFAULT_MEASURES)
    topics = read_topics(args.topics) if args.topics else {}

    def test(results: Any) -> Any:
        if len(results.runs) < 2:
            return None
        return compare_results(results, baseline=resolve_run(args.baseline, args.runs, results.run_names),
                               test=args.test, correction=args.correction,
                               pairs="all" if args.all_pairs else "baseline", alpha=args.alpha,
                               confidence=args.confidence, n_resamples=args.resamples,
                               rng=args.seed)

    qrels, runs, results, comparison = load_and_evaluate(args.qrels, args.runs, measures, args, test)
    notes = [n for n in coverage_notes(results, qrels, runs) if not n.startswith("rules:")]
    path = save_html(args.output, results, comparison, topics=topics, title=args.title,
                     notes=notes)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    print_summary(console, results, comparison, notes)
    console.print(f"wrote {path} ({path.stat().st_size / 1024:,.0f} KB)", markup=False)
    return 0


def print_summary(console: Any, results: Any, comparison: Any, notes: list[str]) -> None:
    """The terminal's share of the report: the comparison (or results) table and the notes."""
    from serpeval.cli.cmd_evaluate import results_rows
    from serpeval.report.table import rich_table

    if comparison is not None:
        from serpeval.report.comparison import human_rows, legend, rich_comparison_table

        console.print(comparison.description(), markup=False)
        console.print(rich_comparison_table(*human_rows(comparison)))
        notes = [*notes, legend(comparison)]
    else:
        rows, styles = results_rows(results)
        console.print(rich_table(rows, styles=styles))
    for note in notes:
        console.print(note, markup=False)
