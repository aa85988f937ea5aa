"""``serpeval sweep --corpus DOCS --topics T --qrels Q --grid k1=.. --grid b=.. -m nDCG@10``: tune honestly."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serpeval.cli._args import POSITIVE_INT, PROBABILITY, Once, integer
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, table_width, write_output


def register(sub: Any) -> None:
    p = sub.add_parser(
        "sweep",
        help=summary("sweep"),
        description="Retrieve and evaluate every setting of a grid (--grid k1=0.6,0.9,1.2 --grid "
                    "b=0.3,0.5,0.75) or of --random N draws, then choose a winner honestly: by k-fold "
                    "cross-validation over queries, reporting the out-of-fold gain over the baseline "
                    "with its confidence interval (never the in-sample maximum), the in-sample table "
                    "with paired tests corrected for the number of settings (Holm and max-T), how "
                    "much of the best in-sample gain the cross-validation kept (the winner's curse) "
                    "and a heat map over two parameters. --gate turns the selected setting into a "
                    "serpeval gate decision against the baseline.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("--topics", required=True, help="topics: TSV, JSONL or TREC <top> file")
    p.add_argument("--qrels", required=True, help="qrels file (TREC, JSONL, CSV, Parquet)")
    p.add_argument("--corpus", metavar="DOCS", help="JSONL corpus for the embedded BM25 engine")
    p.add_argument("--engine", metavar="CONFIG", help="HTTP engine config (TOML/JSON); its [params] are swept")
    p.add_argument("--grid", action="append", metavar="NAME=V1,V2,...", help="values of a parameter (repeatable)")
    p.add_argument("--random", type=POSITIVE_INT, metavar="N", help="draw N settings from --range (seeded)")
    p.add_argument("--range", action="append", default=[], metavar="NAME=LOW:HIGH",
                   help="a parameter's range for --random (default k1=0.2:2 and b=0:1 for the embedded engine)")
    p.add_argument("--baseline", action="append", default=[], metavar="NAME=VALUE",
                   help="the baseline setting (default: the engine's defaults, k1=1.2 b=0.75)")
    p.add_argument("-m", "--measure", default="nDCG@10", action=Once, help="the measure to maximise (default nDCG@10)")
    p.add_argument("-k", "--depth", type=POSITIVE_INT, default=1000, help="documents per query (default 1000)")
    p.add_argument("--folds", type=integer(2), default=5, help="cross-validation folds (default 5)")
    p.add_argument("--seed", type=integer(0), default=0, help="seed of folds, draws and permutations (default 0)")
    p.add_argument("--test", default="t", help="paired test against the baseline: t, wilcoxon, randomization, "
                                               "bootstrap (default t)")
    p.add_argument("--correction", default="holm", help="in-sample correction: holm, bonferroni, bh, none "
                                                        "(max-T is always shown; default holm)")
    p.add_argument("--alpha", type=PROBABILITY, default=0.05, help="level (default 0.05: a 95%% CI)")
    p.add_argument("--permutations", type=POSITIVE_INT, default=1000, help="max-T sign flips (default 1000)")
    p.add_argument("--fields", help="corpus fields to index, comma-separated")
    p.add_argument("--id-field", help="corpus doc id field")
    p.add_argument("--gate", action="store_true",
                   help="gate the selected setting against the baseline (serpeval gate; exit 1 when it fails)")
    p.add_argument("--max-drop", default="0.01", help="the gate's allowed drop (default 0.01; '1%%' relative)")
    p.add_argument("-f", "--format", choices=("table", "json", "markdown", "csv", "tsv"), default="table",
                   help="output format")
    p.add_argument("--html", metavar="FILE", help="also write an HTML report (heat map, table, decision)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def _ranges(items: list[str]) -> dict[str, tuple[float, float]]:
    from serpeval.core.errors import OptionError

    out = {}
    for item in items:
        name, _, span = item.partition("=")
        low, sep, high = span.partition(":")
        try:
            lo, hi = float(low), float(high)
        except ValueError:
            lo = hi = float("nan")
        if not name.strip() or not sep or not lo <= hi:
            raise OptionError(f"--range {item!r}: expected NAME=LOW:HIGH with LOW <= HIGH (e.g. --range k1=0.2:2).")
        out[name.strip()] = (lo, hi)
    return out


def run(args: argparse.Namespace) -> int:
    from serpeval.cli.progress import bar
    from serpeval.core.errors import OptionError
    from serpeval.engines.retrieve import parse_assignments
    from serpeval.engines.sweep import sweep
    from serpeval.report.sweep import heatmap_text
    from serpeval.report.table import render

    check_outputs({"-o": args.output, "--html": args.html}, [args.topics, args.qrels, args.corpus, args.engine])
    if bool(args.corpus) == bool(args.engine):
        raise OptionError("give --corpus DOCS.jsonl (the embedded BM25 engine) or --engine CONFIG, one of the two.")
    fields = [f.strip() for f in args.fields.split(",") if f.strip()] if args.fields else None
    with bar("sweeping settings") as progress:
        result = sweep(args.topics, args.qrels, args.engine, corpus=args.corpus, grid=args.grid, random=args.random,
                       ranges=_ranges(args.range) or None, baseline=parse_assignments(args.baseline, "--baseline"),
                       measure=args.measure, k=args.depth, folds=args.folds, seed=args.seed, test=args.test,
                       correction=args.correction, alpha=args.alpha, permutations=args.permutations,
                       fields=fields, id_field=args.id_field, keep_runs=args.gate, progress=progress)
    data = result.to_json_dict()
    exit_code = 0
    gate_text = ""
    if args.gate:
        from serpeval.comparison.gate import GateOptions, gate, parse_max_drop
        from serpeval.report.gate import explain_gate

        decision = gate(args.qrels, result.runs[result.baseline].renamed("baseline"),
                        result.runs[result.best].renamed("selected"), [result.measure],
                        GateOptions(max_drop=parse_max_drop(args.max_drop, option="--max-drop"), alpha=args.alpha,
                                    missing="zero"))
        data["gate"] = decision.to_dict()
        exit_code = decision.exit_code
        gate_text = "\n" + explain_gate(decision, width=table_width(args.output))
    if args.format == "json":
        from serpeval.core.strict_json import dumps

        write_output(dumps(data) + "\n", args.output)
    else:
        width = table_width(args.output)
        color = args.output is None and sys.stdout.isatty()
        shown = [{k: (f"{v:g}" if k in result.names and isinstance(v, float) else v) for k, v in row.items()}
                 for row in data["table"]]
        text = render(shown, args.format, title=f"{result.measure} per setting (in-sample)", width=width)
        if args.format == "table":
            if data["heatmap"]:
                text += "\n" + heatmap_text(data["heatmap"], color=color, width=width)
            text += "\n" + "\n".join(data["sentences"]) + "\n" + gate_text
        write_output(text, args.output)
        if args.format not in ("table",):
            for line in data["sentences"]:
                print(line, file=sys.stderr)
    if args.html:
        from serpeval.io.outputs import write_text
        from serpeval.report.sweep import sweep_html

        write_text(args.html, sweep_html(data, subtitle=f"{len(result.settings)} settings of {result.engine}, "
                                                        f"{result.measure}, {len(result.query_ids)} queries"))
    return exit_code
