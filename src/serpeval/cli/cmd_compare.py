"""``serpeval compare QRELS RUN RUN... [--baseline NAME] -m nDCG@10 -m AP [--test ...]``."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, PROBABILITY
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, RESAMPLES, check_outputs, split_measures, table_width, write_output
from serpeval.cli.offline import (
    add_evaluation_options,
    add_group_options,
    add_judged_options,
    add_subtopics_option,
    coverage_notes,
    judged_gap_notes,
    load_and_evaluate,
    refuse_latex_groups,
    resolve_run,
    with_judged_column,
)
from serpeval.stats.registry import PAIRED_TESTS, correction_names

FORMATS = ("table", "markdown", "latex", "json", "csv", "tsv")
TESTS = tuple(PAIRED_TESTS)
CORRECTIONS = correction_names()


def register(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help=summary("compare"),
        description="Compare two or more runs: per measure and system the mean, the delta to "
                    "the baseline with its 95% CI, the p-value of a paired test, the p-value "
                    "corrected for multiple comparisons, the effect size d_z and wins/ties/losses "
                    "over queries. Runs evaluated on different queries are compared on the common "
                    "ones (--strict refuses).",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("qrels", help="qrels file (TREC, JSONL, JSON, Parquet; .gz ok)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="two or more run files")
    p.add_argument("-b", "--baseline", metavar="NAME",
                   help="baseline run: its name (file stem) or path; default the first run")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure (repeatable or comma-separated); default nDCG@10 and AP")
    p.add_argument("-t", "--test", choices=TESTS, default="t",
                   help="paired test: t (default), wilcoxon, randomization (Fisher, sign flips), "
                        "bootstrap (studentized)")
    p.add_argument("-c", "--correction", choices=CORRECTIONS, default="holm",
                   help="multiple-comparison correction within each measure (default holm; "
                        "tukey needs --test t or randomization)")
    p.add_argument("--all-pairs", action="store_true", help="compare every pair, not each run "
                                                            "with the baseline")
    p.add_argument("-q", "--per-query", action="store_true", help="print the per-query deltas")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--alpha", type=PROBABILITY, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--confidence", type=PROBABILITY, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--ci", choices=("t", "bca", "percentile"),
                   help="CI method for the delta (default t; bca for --test bootstrap)")
    p.add_argument("--resamples", type=RESAMPLES, default=10_000, metavar="N",
                   help="permutations / bootstrap resamples (default 10000, at most 10000000)")
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=0,
                   help="seed of the resampling tests (default 0: reruns give the same p-values)")
    p.add_argument("--strict", action="store_true",
                   help="refuse runs evaluated on different queries")
    add_subtopics_option(p)
    add_evaluation_options(p)
    add_group_options(p)
    add_judged_options(p)
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.comparison.compare import CompareOptions, compare_results
    from serpeval.report.comparison import render_comparison
    from serpeval.report.table import fit_text

    check_outputs({"-o": args.output}, [args.qrels, *args.runs])
    refuse_latex_groups(args)
    groups_file = args.groups if args.groups and not args.groups.startswith("builtin:") else None
    measures = with_judged_column(split_measures(args.measures) or ["nDCG@10", "AP"], args.judged)

    # The options, checked before any file is read; the baseline is named once the runs are.
    options = CompareOptions(test=args.test, correction=args.correction,
                             pairs="all" if args.all_pairs else "baseline", alpha=args.alpha,
                             confidence=args.confidence, ci=args.ci, n_resamples=args.resamples,
                             rng=args.seed, strict=args.strict)

    def test(results: Any) -> Any:
        baseline = resolve_run(args.baseline, args.runs, results.run_names)
        return compare_results(results, replace(options, baseline=baseline))

    if groups_file:
        from serpeval.io.groups import read_groups

        read_groups(groups_file, args.group_column)   # a bad groups file fails before the runs are read
    qrels, runs, results, comparison = load_and_evaluate(args.qrels, args.runs, measures, args, test,
                                                         keep_runs=args.judged_gap < 100)
    color = args.output is None and sys.stdout.isatty()
    if args.groups:
        from serpeval.cli.offline import group_topics
        from serpeval.comparison.segments import with_segments

        comparison = with_segments(comparison, args.groups, qrels=qrels, topics=group_topics(args),
                                   column=args.group_column, correction=args.group_correction,
                                   min_queries=args.group_min_queries, rng=args.seed)
    text = render_comparison(comparison, args.format, per_query=args.per_query, digits=args.digits,
                             color=color, width=table_width(args.output))
    if comparison.segments is not None and args.format in ("table", "markdown", "csv", "tsv"):
        from serpeval.report.segments import render_segments

        segments = render_segments(comparison.segments, args.format, digits=args.digits, color=color,
                                   width=table_width(args.output))
        # csv/tsv: the per-group rows replace the overall ones (one table per file)
        text = segments if args.format in ("csv", "tsv") else text + "\n" + segments
    notes = coverage_notes(results, qrels, runs) + judged_gap_notes(qrels, runs, results, args)
    if args.format == "table":
        text += fit_text(notes, table_width(args.output))
    elif args.format == "markdown":
        text += "".join(f"_{note}_  \n" for note in notes)
    else:
        if args.format in ("csv", "tsv", "latex"):
            # These outputs are rows or a paper table: the comparison's own notes (queries left
            # out because a run lacks them, input warnings, the method) and the breakdown's
            # (unmatched and ungrouped queries, small groups, the interaction tests) go to
            # stderr, as JSON carries them in "notes".
            grouped = comparison.segments is not None and args.format != "latex"
            notes = [*comparison.notes(), *(comparison.segments.notes() if grouped else ()),
                     *([f"{args.format}: the per-group rows only (one table per file); the overall "
                        "comparison is in -f json, or without --groups"] if grouped else []), *notes]
        for note in notes:
            print(note, file=sys.stderr)
    write_output(text, args.output)
    return 0
