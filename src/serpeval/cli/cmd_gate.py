"""``serpeval gate QRELS --baseline BASE_RUN --candidate NEW_RUN -m nDCG@10 [--max-drop 0.01]``.

``--baseline-json FILE`` instead of ``--baseline``: the baseline's recorded evaluation
(``serpeval evaluate QRELS RUN --format json --per-query``), refused (exit 2, one line naming
both qrels signatures) when it was evaluated against other qrels than QRELS, unless
``--allow-different-qrels`` (the decision then carries the warning).

Exit status 0 when the candidate passes (not worse than the baseline by more than the
allowed drop, shown by a one-sided non-inferiority test), 1 when it fails, 2 on bad input,
7 when no judged query has results in a run (nothing to compare: never a pass); with
``--json`` exit 7 writes a report too (``"decision": "error"``, the status and the reason).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT
from serpeval.cli.commands import summary
from serpeval.cli.common import RESAMPLES, check_outputs, split_measures, table_width, write_output
from serpeval.cli.failures import describe
from serpeval.cli.offline import (
    add_evaluation_options,
    add_group_options,
    add_judged_options,
    add_subtopics_option,
    coverage_notes,
    judged_gap_notes,
    load_and_evaluate,
)
from serpeval.core.errors import InputError, NothingEvaluatedError, OptionError, OutputError
from serpeval.core.strict_json import dumps
from serpeval.stats.registry import TESTS


def register(sub: Any) -> None:
    p = sub.add_parser(
        "gate",
        help=summary("gate"),
        description="A one-sided non-inferiority test per measure: exit 0 when the candidate "
                    "is shown not to be worse than the baseline by more than --max-drop "
                    "(every measure must pass), 1 otherwise, 2 on bad input. Prints a one-screen "
                    "explanation; --json writes the report for the CI log.",
        epilog="exit status: 0 pass; 1 fail; 2 bad input or option (one line on stderr names "
               "the file or option and the cause); 7 nothing evaluated: no judged query has "
               "results in the baseline or the candidate (wrong qrels or wrong run), never a pass "
               "(--json still writes the report, saying why)",
    )
    p.add_argument("qrels", help="qrels file (TREC, JSONL, JSON, Parquet; .gz ok)")
    p.add_argument("--baseline", metavar="BASE_RUN", help="the run in production")
    p.add_argument("--baseline-json", metavar="FILE",
                   help="instead of --baseline: the baseline's recorded evaluation (serpeval evaluate QRELS RUN "
                        "--format json --per-query); refused when it was evaluated against other qrels than "
                        "QRELS (their content signatures differ) unless --allow-different-qrels")
    p.add_argument("--allow-different-qrels", action="store_true",
                   help="gate against --baseline-json even when its qrels signature differs from QRELS' "
                        "(the decision then carries a warning)")
    p.add_argument("--candidate", required=True, metavar="NEW_RUN", help="the run to let through")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure that must not drop (repeatable; default nDCG@10)")
    p.add_argument("--max-drop", default="0.01", metavar="DROP",
                   help="allowed drop: absolute, in the measure's units (0.01), or relative to "
                        "the baseline mean (1%%); default 0.01. A measure bounded in [0, 1] "
                        "cannot drop by 1 or more: --max-drop 5 is refused (did you mean 5%%?)")
    p.add_argument("--alpha", type=float, default=0.05, help="one-sided level (default 0.05)")
    p.add_argument("--rule", choices=("non-inferiority", "no-significant-drop"),
                   default="non-inferiority",
                   help="non-inferiority (default): pass only when shown not worse; "
                        "no-significant-drop: fail only when shown worse")
    p.add_argument("-t", "--test", choices=TESTS, default="t", help="paired test (default t)")
    p.add_argument("--resamples", type=RESAMPLES, default=10_000, metavar="N",
                   help="permutations / bootstrap resamples (default 10000, at most 10000000)")
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=0, help="seed of the resampling tests (default 0)")
    p.add_argument("--top", type=NON_NEGATIVE_INT, default=10, metavar="N",
                   help="per-query regressions to list (default 10)")
    p.add_argument("--strict", action="store_true",
                   help="refuse runs evaluated on different queries")
    add_subtopics_option(p)
    add_evaluation_options(p, missing="zero")
    add_group_options(p, gate=True)
    add_judged_options(p, column=False)
    p.add_argument("--json", metavar="FILE",
                   help="write the JSON report to FILE (- for stdout); also on exit 7, with "
                        "decision 'error' and the reason")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in the explanation (default 4)")
    p.set_defaults(func=run)


def _record_failure(args: argparse.Namespace, measures: list[str], exc: NothingEvaluatedError) -> None:
    """Write the ``--json`` report of a gate that stopped with exit 7 (it replaces the report
    of an earlier run, which must not be read as this run's decision). A report that cannot
    be written is the output error (exit 2), and its line keeps the gate's own reason."""
    from serpeval.report.gate import gate_failure_report

    reason, code = describe(exc)
    payload = gate_failure_report("nothing evaluated", reason, code, qrels=args.qrels,
                                  baseline=args.baseline or args.baseline_json, candidate=args.candidate,
                                  measures=measures)
    try:
        write_output(dumps(payload) + "\n", None if args.json == "-" else args.json)
    except OutputError as error:
        raise OutputError(f"{error} The gate had stopped before: {reason}") from exc


def _read_baseline(path: str, measures: list[str]) -> Any:
    """The recorded evaluation of ``--baseline-json``: one run, with every gated measure."""

    from serpeval.evaluation.results import Results
    from serpeval.measures import parse_measures

    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise InputError(f"--baseline-json {path}: cannot read it ({exc.strerror or exc}).") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"--baseline-json {path}: not JSON ({exc}).") from None
    recorded = Results.from_json_dict(data, path)
    if len(recorded.runs) != 1:
        raise InputError(f"--baseline-json {path}: holds {len(recorded.runs)} runs "
                         f"({', '.join(recorded.run_names)}); record the baseline alone.")
    absent = [str(m) for m in parse_measures(measures) if m not in recorded.measures]
    if absent:
        raise InputError(f"--baseline-json {path}: has no values of {', '.join(absent)} (it has "
                         f"{', '.join(map(str, recorded.measures))}); record the baseline with those measures.")
    return recorded


def _with_recorded_baseline(recorded: Any, results: Any, args: argparse.Namespace) -> Any:
    """The recorded baseline beside the evaluated candidate, as one two-run result; refused
    when the two were evaluated against different qrels, unless --allow-different-qrels."""

    from serpeval.core.ties import same_ties
    from serpeval.evaluation.results import Results

    same_ties((f"--baseline-json {args.baseline_json}", recorded.settings.ties),
              (args.candidate, results.settings.ties))
    base = recorded.runs[0]
    theirs, ours = base.qrels_signature or recorded.settings.qrels_signature, results.settings.qrels_signature
    if theirs != ours and not args.allow_different_qrels:
        raise InputError(f"--baseline-json {args.baseline_json} was evaluated against qrels signature "
                         f"{theirs or 'unknown (not recorded)'}, {args.qrels} has signature {ours}: the judgments "
                         "differ; evaluate the baseline against the same qrels, or pass --allow-different-qrels.")
    columns = [recorded.measures.index(m) for m in results.measures]
    base = replace(base, values=base.values[:, columns], qrels_signature=theirs)
    if base.name == results.runs[0].name:   # the same file name twice: tell them apart
        name = f"{base.name} (recorded)"
        base = replace(base, name=name, coverage=replace(base.coverage, run=name))
    return Results(results.measures, (base, results.runs[0]), results.settings)


def run(args: argparse.Namespace) -> int:
    from serpeval.comparison.gate import GateOptions, check_max_drop, gate_results, parse_max_drop
    from serpeval.measures import parse_measures
    from serpeval.report.gate import explain_gate
    from serpeval.report.table import fit_text

    check_outputs({"--json": args.json}, [args.qrels, args.baseline, args.baseline_json, args.candidate])
    if (args.baseline is None) == (args.baseline_json is None):
        raise OptionError("give the baseline once: --baseline BASE_RUN (a run file) or --baseline-json FILE "
                          "(its recorded evaluation).")
    measures = split_measures(args.measures) or ["nDCG@10"]
    recorded = _read_baseline(args.baseline_json, measures) if args.baseline_json else None
    # A margin no measure can use is refused before the files are read.
    max_drop = parse_max_drop(args.max_drop, option="--max-drop")
    check_max_drop(max_drop, parse_measures(measures), option="--max-drop")

    options = GateOptions(max_drop=max_drop, alpha=args.alpha, rule=args.rule, test=args.test,
                          n_resamples=args.resamples, rng=args.seed, top=args.top, strict=args.strict)

    pair: list[Any] = []

    def decide(results: Any) -> Any:
        if recorded is not None:
            results = _with_recorded_baseline(recorded, results, args)
        pair.append(results)
        return gate_results(results, None, options)

    run_paths = [args.candidate] if recorded is not None else [args.baseline, args.candidate]
    try:
        qrels, runs, results, result = load_and_evaluate(args.qrels, run_paths, measures, args, decide,
                                                         keep_runs=args.judged_gap < 100)
    except NothingEvaluatedError as exc:
        if args.json:
            _record_failure(args, measures, exc)
        raise
    gaps = judged_gap_notes(qrels, runs, results, args)
    notes = coverage_notes(results, qrels, runs) + gaps
    payload = result.to_dict()
    payload["evaluation_notes"] = notes
    width = table_width()
    explanation = explain_gate(result, top=args.top, digits=args.digits, width=width)
    exit_code = result.exit_code
    if args.groups:
        from serpeval.cli.offline import resolve_cli_groups
        from serpeval.comparison.compare import align_queries
        from serpeval.comparison.segment_gate import gate_groups
        from serpeval.report.segments import render_group_gate

        query_ids, values, _ = align_queries(pair[0], strict=args.strict)
        groups = resolve_cli_groups(args, query_ids, qrels, values[0, 0], pair[0].run_names[0],
                                    str(pair[0].measures[0]))
        by_group = gate_groups(pair[0], groups, max_drop=max_drop, alpha=args.alpha, rule=args.rule,
                               test=args.test, min_queries=args.group_min_queries,
                               correction=args.group_correction, n_resamples=args.resamples,
                               rng=args.seed, strict=args.strict)
        payload["groups"] = by_group.to_dict()
        payload["passed_overall"] = result.passed
        payload["passed"] = result.passed and by_group.passed
        payload["decision"] = "pass" if payload["passed"] else "fail"
        payload["exit_code"] = exit_code = 0 if payload["passed"] else 1
        explanation += "\n" + render_group_gate(by_group, digits=args.digits, width=width)
    report = dumps(payload) + "\n"
    explanation += fit_text(notes, width)
    if args.json == "-":
        sys.stderr.write(explanation)
        write_output(report, None)
    else:
        write_output(explanation, None)
        if args.json:
            write_output(report, args.json)
    return exit_code
