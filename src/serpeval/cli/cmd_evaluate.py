"""``serpeval evaluate QRELS RUN [RUN...] -m nDCG@10 -m AP``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT
from serpeval.cli.app import EXIT_CODES_HELP, check_outputs, split_measures, write_output
from serpeval.report.table import FORMATS


def register(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate",
        help="evaluate runs against qrels",
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
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--backend", choices=("local", "spark"), default="local",
                   help="local (default), or spark: read the files (TREC, JSONL, Parquet; local "
                        "or object storage) and evaluate through Spark (needs serpeval[spark])")
    p.add_argument("--spark-master", metavar="URL",
                   help="Spark master for --backend spark (default: the active session, "
                        "spark-submit's setting, or local[*])")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.evaluation.evaluate import DEFAULT_MEASURES

    check_outputs({"-o": args.output}, [args.qrels, *args.runs])
    measures = split_measures(args.measures) or list(DEFAULT_MEASURES)
    if args.backend == "spark":
        from serpeval.spark.cli import evaluate_files

        qrels, runs, results = evaluate_files(args, measures)
    else:
        from serpeval.cli.cmd_compare import load_and_evaluate

        # A progress bar on a terminal; the notes below report the missing-query counts.
        qrels, runs, results, _ = load_and_evaluate(args.qrels, args.runs, measures, args)
    notes = coverage_notes(results, qrels, runs)
    if args.format == "json":
        from serpeval.core.strict_json import dumps

        payload = results.to_json_dict(per_query=args.per_query)
        payload["notes"] = notes
        write_output(dumps(payload) + "\n", args.output)
    else:
        text = render_results(results, args.format, per_query=args.per_query, digits=args.digits,
                              notes=notes if args.format != "csv" and args.format != "tsv" else (),
                              color=args.output is None and sys.stdout.isatty())
        write_output(text, args.output)
        if args.format in ("csv", "tsv"):
            for note in notes:
                print(note, file=sys.stderr)
    return 0


def coverage_notes(results: Any, qrels: Any, runs: list[Any]) -> list[str]:
    """One line per fact a reader must know: skipped queries, ignored rows, ties, skipped lines."""
    notes = []
    if qrels.skipped_lines:
        notes.append(f"qrels {qrels.source}: {qrels.skipped_lines} blank/comment line(s) skipped")
    for run, result in zip(runs, results.runs, strict=True):
        c = result.coverage
        if run.skipped_lines:
            notes.append(f"{c.run}: {run.skipped_lines} blank/comment line(s) skipped")
        if c.missing:
            action = {"skip": "skipped", "zero": "counted as 0", "error": "refused"}[c.missing_policy]
            notes.append(f"{c.run}: {len(c.missing)} of {c.judged_queries} judged queries have no "
                         f"results ({action})")
        if c.unjudged_queries:
            notes.append(f"{c.run}: {_plural(c.unjudged_queries, 'run query', 'run queries')} "
                         f"({_plural(c.unjudged_rows, 'line')}) without judgments ignored")
        if c.truncated_rows:
            notes.append(f"{c.run}: {c.truncated_rows} lines below depth {results.settings.depth} ignored")
        if c.dropped_unjudged:
            notes.append(f"{c.run}: {c.dropped_unjudged} unjudged docs removed (judged only)")
        if c.ties:
            notes.append(f"{c.run}: {_plural(c.ties, 'group')} of tied scores, broken by doc id descending")
    notes.append("rules: ties by doc id desc (trec_eval); missing queries: "
                 f"{results.settings.missing}; nDCG gain linear unless gain=exp; ideal from all judgments")
    return notes


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def results_rows(results: Any, per_query: bool = False) -> tuple[list[dict[str, Any]], dict[tuple[int, str], str]]:
    """Rows of the results table (counts as integers) and the best value per column in bold."""
    rows = results.to_dicts(per_query=per_query)
    styles = {}
    if not per_query and len(rows) > 1:
        for m in results.measures:
            if m.spec.bounds is None:
                continue
            values = [row[str(m)] for row in rows]
            best = max(values) if m.spec.higher_is_better else min(values)
            for j, v in enumerate(values):
                if v == best:
                    styles[(j, str(m))] = "bold"
    for row in rows:
        for m in results.measures:
            if m.spec.aggregate == "sum":
                row[str(m)] = int(row[str(m)])
    return rows, styles


def render_results(results: Any, fmt: str, *, per_query: bool = False, digits: int = 4,
                   notes: Any = (), color: bool = False, title: str | None = None) -> str:
    """The results table: one row per run (or per run and query), best value per column in bold."""
    from serpeval.report.table import render

    rows, styles = results_rows(results, per_query)
    return render(rows, fmt, digits=digits, notes=notes, styles=styles, color=color, title=title)
