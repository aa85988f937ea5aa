"""``serpeval gate QRELS --baseline BASE_RUN --candidate NEW_RUN -m nDCG@10 [--max-drop 0.01]``.

Exit status 0 when the candidate passes (not worse than the baseline by more than the
allowed drop, shown by a one-sided non-inferiority test), 1 when it fails, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from serpeval.cli.app import check_outputs, split_measures, write_output
from serpeval.cli.cmd_compare import (
    TESTS,
    add_evaluation_options,
    check_non_negative,
    load_and_evaluate,
)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "gate",
        help="CI gate: fail when a candidate run is worse than the baseline",
        description="A one-sided non-inferiority test per measure: exit 0 when the candidate "
                    "is shown not to be worse than the baseline by more than --max-drop "
                    "(every measure must pass), 1 otherwise, 2 on bad input. Prints a one-screen "
                    "explanation; --json writes the report for the CI log.",
    )
    p.add_argument("qrels", help="qrels file (TREC, JSONL, JSON, Parquet; .gz ok)")
    p.add_argument("--baseline", required=True, metavar="BASE_RUN", help="the run in production")
    p.add_argument("--candidate", required=True, metavar="NEW_RUN", help="the run to let through")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure that must not drop (repeatable; default nDCG@10)")
    p.add_argument("--max-drop", default="0.01", metavar="DROP",
                   help="allowed drop: absolute (0.01) or relative to the baseline mean (1%%); "
                        "default 0.01")
    p.add_argument("--alpha", type=float, default=0.05, help="one-sided level (default 0.05)")
    p.add_argument("--rule", choices=("non-inferiority", "no-significant-drop"),
                   default="non-inferiority",
                   help="non-inferiority (default): pass only when shown not worse; "
                        "no-significant-drop: fail only when shown worse")
    p.add_argument("-t", "--test", choices=TESTS, default="t", help="paired test (default t)")
    p.add_argument("--resamples", type=int, default=10_000, metavar="N",
                   help="permutations / bootstrap resamples (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling tests (default 0)")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="per-query regressions to list (default 10)")
    p.add_argument("--strict", action="store_true",
                   help="refuse runs evaluated on different queries")
    add_evaluation_options(p, missing="zero")
    p.add_argument("--json", metavar="FILE", help="write the JSON report to FILE (- for stdout)")
    p.add_argument("--digits", type=int, default=4, help="decimals in the explanation (default 4)")
    p.set_defaults(func=run)


def parse_drop(text: str) -> tuple[float, bool]:
    """``"0.01"`` -> ``(0.01, False)``; ``"1%"`` -> ``(0.01, True)`` (relative)."""
    from serpeval.errors import OptionError

    value = text.strip()
    relative = value.endswith("%")
    try:
        number = float(value.rstrip("%"))
    except ValueError:
        raise OptionError(f"--max-drop must be a number (0.01) or a percentage (1%); "
                          f"got {text!r}.") from None
    if not number >= 0:
        raise OptionError(f"--max-drop must be >= 0; got {text!r}.")
    return (number / 100.0 if relative else number), relative


def run(args: argparse.Namespace) -> int:
    from serpeval.ci_gate import gate_results
    from serpeval.cli.cmd_evaluate import coverage_notes

    check_non_negative(args, "--digits", "--top")
    check_outputs({"--json": args.json}, [args.qrels, args.baseline, args.candidate])
    measures = split_measures(args.measures) or ["nDCG@10"]
    max_drop, relative = parse_drop(args.max_drop)

    def decide(results: Any) -> Any:
        return gate_results(results, max_drop=max_drop,
                    relative=relative, alpha=args.alpha, rule=args.rule, test=args.test,
                    n_resamples=args.resamples, rng=args.seed, top=args.top, strict=args.strict)

    qrels, runs, results, result = load_and_evaluate(args.qrels, [args.baseline, args.candidate],
                                                     measures, args, decide)
    notes = coverage_notes(results, qrels, runs)
    payload = result.to_dict()
    payload["evaluation_notes"] = notes
    report = json.dumps(payload, indent=2) + "\n"
    explanation = result.explain(top=args.top, digits=args.digits)
    explanation += "".join(f"{note}\n" for note in notes)
    if args.json == "-":
        sys.stderr.write(explanation)
        write_output(report, None)
    else:
        write_output(explanation, None)
        if args.json:
            write_output(report, args.json)
    return result.exit_code
