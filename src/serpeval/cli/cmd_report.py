"""``serpeval report [QRELS RUN...] [-m ...] [-b NAME] [--topics FILE] [--ab JSON] -o FILE``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, PROBABILITY
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, RESAMPLES, check_outputs, split_measures, table_width
from serpeval.cli.offline import (
    add_evaluation_options,
    add_group_options,
    add_subtopics_option,
    coverage_notes,
    load_and_evaluate,
    resolve_run,
    results_rows,
)
from serpeval.core.errors import InputError, StatsError
from serpeval.report import DEFAULT_HTML_PATH
from serpeval.report.online_inputs import KINDS, read_online_json
from serpeval.report.table import render
from serpeval.stats.registry import TESTS, correction_names


def register(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help=summary("report"),
        description="Evaluate and compare runs, then write one self-contained HTML file (no "
                    "network needed to view it): means with significance markers and CIs, the "
                    "per-query differences sorted (with the query text from --topics), the "
                    "distribution of every measure per run, and the evaluation rules used. "
                    "Online results saved with -f json (--interleaving, --ab, --ab-monitor, "
                    "--ab-plan, --simulation) add their sections; they need no qrels.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("qrels", nargs="?", help="qrels file (TREC, JSONL, JSON, Parquet; .gz ok)")
    p.add_argument("runs", nargs="*", metavar="RUN", help="run files (the first is the baseline "
                                                          "unless --baseline says otherwise)")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure (repeatable or comma-separated); default nDCG@10, AP, P@10, "
                        "R@100, RR")
    p.add_argument("-b", "--baseline", metavar="NAME", help="baseline run: name or path")
    p.add_argument("--topics", metavar="FILE",
                   help="query texts: TSV 'qid<TAB>text' or JSONL (.gz ok), shown per query")
    p.add_argument("-t", "--test", choices=TESTS, default="t", help="paired test (default t)")
    p.add_argument("-c", "--correction", choices=correction_names(), default="holm",
                   help="multiple-comparison correction within each measure (default holm)")
    p.add_argument("--all-pairs", action="store_true", help="compare every pair of runs")
    p.add_argument("--alpha", type=PROBABILITY, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--confidence", type=PROBABILITY, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--resamples", type=RESAMPLES, default=10_000, metavar="N",
                   help="permutations / bootstrap resamples (default 10000)")
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=0, help="seed of the resampling tests (default 0)")
    add_subtopics_option(p)
    add_evaluation_options(p)
    add_group_options(p, topics=False)
    online = p.add_argument_group("online results (JSON files written with -f json; repeatable)")
    for kind, what in KINDS.items():
        online.add_argument(f"--{kind.replace('_', '-')}", dest=f"online_{kind}", action="append",
                            metavar="JSON", default=[], help=what)
    p.add_argument("--diff", action="store_true",
                   help="add a section on how each run's rankings differ from the baseline's "
                        "(overlap@10, RBO, Kendall's tau; serpeval diff)")
    p.add_argument("--title", help="page title (default: the run names)")
    p.add_argument("-o", "--output", metavar="FILE", default=DEFAULT_HTML_PATH,
                   help=f"the HTML file to write (default {DEFAULT_HTML_PATH})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from serpeval.io.topics import read_topics
    from serpeval.report.html import save_html

    files = {kind: getattr(args, f"online_{kind}") for kind in KINDS}
    check_outputs({"-o": args.output},
                  [args.qrels, *args.runs, args.topics, *(p for paths in files.values() for p in paths)])
    online = {kind: [read_online_json(kind, path) for path in paths]
              for kind, paths in files.items() if paths}
    if args.qrels is not None and not args.runs:
        raise InputError("give the run files after the qrels: serpeval report QRELS RUN [RUN...].")
    if args.qrels is None and not online:
        raise InputError("nothing to report: give QRELS RUN [RUN...], or online results such as "
                         "--ab ab.json (written by serpeval ab -f json).")
    topics = read_topics(args.topics) if args.topics else {}
    console = Console(highlight=False, width=table_width() or 120)
    results = comparison = None
    notes: list[str] = []
    diffs: list[Any] = []
    if args.qrels is not None:
        results, comparison, notes, (qrels, runs) = _evaluate(args)
        if args.topics:
            notes += topics_notes(args.topics, topics, results)
        print_summary(console, results, comparison, notes)
        if args.diff:
            diffs = _diffs(args, qrels, runs)
    for kind in online:
        console.print(f"included {KINDS[kind]}: {', '.join(files[kind])}", markup=False, soft_wrap=True)
    replaced = Path(args.output).exists()
    path = save_html(args.output, results, comparison, topics=topics, title=args.title,
                     notes=notes, online_results=online, diffs=diffs)
    console.print(wrote_message(path, replaced), markup=False, soft_wrap=True)
    return 0


def topics_notes(path: str, topics: dict[str, str], results: Any) -> list[str]:
    """A note when --topics has no text for some evaluated queries (a topics file of another
    collection, or of another id scheme, gives a report whose text column is empty)."""
    import numpy as np

    evaluated = np.unique(np.concatenate([np.asarray(run.query_ids, dtype=str) for run in results.runs]))
    missing = evaluated[~np.isin(evaluated, np.asarray(list(topics), dtype=str))].tolist()
    if not missing:
        return []
    shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
    return [f"topics {path}: no text for {len(missing):,} of the {len(evaluated):,} evaluated "
            f"queries ({shown}); the file has {len(topics):,} ids. Check that it is the topics "
            "file of these qrels."]


def wrote_message(path: Path, replaced: bool) -> str:
    """``wrote /abs/report.html (12 KB, replaced the previous file)``: where, how big, and
    whether a file was overwritten."""
    size = path.stat().st_size / 1024
    return f"wrote {path.resolve()} ({size:,.0f} KB{', replaced the previous file' if replaced else ''})"


def _evaluate(args: argparse.Namespace) -> tuple[Any, Any, list[str], tuple[Any, list[Any]]]:
    """Evaluate (with a progress bar on a terminal) and compare; the coverage notes."""
    from serpeval.comparison.compare import compare_results
    from serpeval.evaluation.evaluate import DEFAULT_MEASURES

    measures = split_measures(args.measures) or list(DEFAULT_MEASURES)

    untested: list[str] = []

    def test(results: Any) -> Any:
        if len(results.runs) < 2:
            return None
        baseline = resolve_run(args.baseline, args.runs, results.run_names)
        try:
            return compare_results(results, baseline=baseline, test=args.test,
                                   correction=args.correction,
                                   pairs="all" if args.all_pairs else "baseline", alpha=args.alpha,
                                   confidence=args.confidence, n_resamples=args.resamples,
                                   rng=args.seed)
        except StatsError as exc:  # the report still shows the evaluation, and says why
            untested.append(f"no significance tests: {exc}")
            return None

    qrels, runs, results, comparison = load_and_evaluate(args.qrels, args.runs, measures, args, test,
                                                         keep_runs=bool(args.diff))
    if args.groups and comparison is not None:
        from serpeval.cli.offline import group_topics
        from serpeval.comparison.segments import with_segments

        comparison = with_segments(comparison, args.groups, qrels=qrels, topics=group_topics(args),
                                   column=args.group_column, correction=args.group_correction,
                                   min_queries=args.group_min_queries, rng=args.seed)
    notes = [n for n in coverage_notes(results, qrels, runs) if not n.startswith("rules:")]
    return results, comparison, notes + untested, (qrels, runs)


def _diffs(args: argparse.Namespace, qrels: Any, runs: list[Any]) -> list[Any]:
    """The diff of the baseline's rankings with each other run's (the first run is the baseline
    unless --baseline names another)."""
    from serpeval.judgments.diff import diff_runs

    names = [r.name for r in runs]
    baseline = resolve_run(args.baseline, args.runs, names) or names[0]
    base = runs[names.index(baseline)] if baseline in names else runs[0]
    return [diff_runs(base, other, qrels=qrels) for other in runs if other is not base]


def print_summary(console: Any, results: Any, comparison: Any, notes: list[str]) -> None:
    """The terminal's share of the report: the comparison (or results) table and the notes."""
    from rich.text import Text

    color = console.is_terminal
    if comparison is not None:
        from serpeval.report.comparison import human_rows, legend, text_table

        console.print(comparison.description(), markup=False)
        text = text_table(*human_rows(comparison), color=color, width=console.width)
        notes = [*notes, legend(comparison)]
    else:
        rows, styles = results_rows(results)
        text = render(rows, "table", styles=styles, color=color, width=console.width)
    console.print(Text.from_ansi(text.rstrip("\n")), soft_wrap=True)
    for note in notes:
        console.print(note, markup=False)
