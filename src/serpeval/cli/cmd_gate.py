"""``serpeval gate QRELS --baseline BASE_RUN --candidate NEW_RUN -m nDCG@10 [--max-drop 0.01]``.

``--baseline-json FILE`` instead of ``--baseline``: the baseline's recorded evaluation
(``serpeval evaluate QRELS RUN --format json --per-query``), refused (exit 2, one line naming
both qrels signatures) when it was evaluated against other qrels than QRELS, unless
``--allow-different-qrels`` (the decision then carries the warning).

Exit status 0 when the candidate passes (not worse than the baseline by more than the
allowed drop, shown by a one-sided non-inferiority test), 1 when it fails, 2 on bad input,
7 when no judged query has results in a run (nothing to compare: never a pass); with
``--json`` exit 7, and an error (exit 2) once the options are read, write a report too
(``"decision": "error"``, the status and the reason), replacing an earlier run's.
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
from dataclasses import replace
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT
from serpeval.cli.commands import summary
from serpeval.cli.common import RESAMPLES, check_outputs, split_measures, table_width, write_output
from serpeval.cli.failures import EXIT_ERROR, describe
from serpeval.cli.offline import (
    add_evaluation_options,
    add_group_options,
    add_judged_options,
    add_subtopics_option,
    coverage_notes,
    judged_gap_notes,
    load_and_evaluate,
)
from serpeval.core.errors import InputError, MissingQueriesError, NothingEvaluatedError, OptionError, OutputError
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


def _record_failure(args: argparse.Namespace, measures: list[str] | None, exc: BaseException) -> None:
    """Write the ``--json`` report of a gate that stopped before deciding: exit 7 (nothing
    evaluated) or an error, exit 2 (a malformed run, unreadable qrels, a refused option).
    It replaces the report of an earlier run, which must not be read as this run's decision.
    A report that cannot be written is the output error (exit 2), and its line keeps the
    gate's own reason."""
    from serpeval.report.gate import gate_failure_report

    reason, code = describe(exc)
    status = ("nothing evaluated" if isinstance(exc, NothingEvaluatedError)
              else "error" if code == EXIT_ERROR else "internal error")
    payload = gate_failure_report(status, reason, code, qrels=args.qrels,
                                  baseline=args.baseline or args.baseline_json, candidate=args.candidate,
                                  measures=measures if measures is not None else args.measures)
    try:
        write_output(dumps(payload) + "\n", None if args.json == "-" else args.json)
    except OutputError as error:
        raise OutputError(f"{error} The gate had stopped before: {reason}") from exc


def _stdout_closed(exc: BaseException) -> bool:
    """A closed pipe on standard output: nothing more is written there (the CLI exits quietly)."""
    return isinstance(exc, BrokenPipeError) or (isinstance(exc, OSError) and exc.errno == errno.EPIPE)


def _read_baseline(path: str, measures: list[str]) -> tuple[Any, bool]:
    """The recorded evaluation of ``--baseline-json`` (one run, with every gated measure) and
    whether it records its evaluation options (``settings``: serpeval writes them since they
    are read back; an older file's are unknown)."""

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
    return recorded, isinstance(data.get("settings"), dict)


#: The evaluation options that change the numbers, beside the tie policy and the qrels (checked
#: apart), each value as it reads in a sentence.
_OPTIONS = {
    "depth": lambda v: "no --depth" if v is None else f"--depth {v}",
    "judged_only": lambda v: "--judged-only" if v else "no --judged-only",
    "float32_scores": lambda v: "float32 scores (the API's float32_scores)" if v else "float64 scores",
    "grades": lambda v: f"{v} grades (evaluate's --grades)",
}


def _same_options(recorded: Any, results: Any, where: str, candidate: str) -> None:
    """Refuse a recorded baseline evaluated with other options than the candidate (another
    --depth, --judged-only, float32 scores or grade reading): its numbers follow other rules."""
    for field, spell in _OPTIONS.items():
        theirs, ours = getattr(recorded.settings, field), getattr(results.settings, field)
        if theirs != ours:
            raise InputError(f"{where} was evaluated with {spell(theirs)}, {candidate} with {spell(ours)}: their "
                             "numbers follow different rules; evaluate both with the same options.")


def _with_recorded_baseline(recorded: Any, results: Any, args: argparse.Namespace, qrels: Any,
                            options_recorded: bool = True) -> Any:
    """The recorded baseline beside the evaluated candidate, as one two-run result; refused
    when the two were evaluated against different qrels, unless --allow-different-qrels, or
    with other options (tie policy, depth, judged-only, float32 scores, grade reading; the options
    only where the file records them, ``options_recorded``). Judged queries the recorded
    baseline has no values for follow --missing as a baseline run's would
    (:func:`_fill_missing`)."""

    from serpeval.core.ties import same_ties
    from serpeval.evaluation.results import Results

    same_ties((f"--baseline-json {args.baseline_json}", recorded.settings.ties),
              (args.candidate, results.settings.ties))
    if options_recorded:
        _same_options(recorded, results, f"--baseline-json {args.baseline_json}", args.candidate)
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
    base = _fill_missing(base, results, args, qrels)
    return Results(results.measures, (base, results.runs[0]), results.settings)


def _fill_missing(base: Any, results: Any, args: argparse.Namespace, qrels: Any) -> Any:
    """The recorded baseline with the judged queries it lacks handled as --missing says, the
    same as for ``--baseline RUN``: ``zero`` (the gate's default) gives each the value of an
    empty ranking (0 for nDCG, AP...), ``error`` refuses, ``skip`` leaves them out (the gate
    then compares the common queries). The judged queries are those of QRELS (the candidate's
    evaluation: the queries it was evaluated on and those it lacks); the baseline's coverage
    records what was missing, for the note."""
    import numpy as np

    cand = results.runs[0]
    judged = np.union1d(np.asarray(cand.query_ids, dtype=object), np.asarray(cand.coverage.missing, dtype=object))
    absent = judged[~np.isin(judged, base.query_ids)]
    if not len(absent):
        return base
    where = f"--baseline-json {args.baseline_json}"
    if args.missing == "error":
        shown = ", ".join(repr(q) for q in absent[:5].tolist())
        more = f" and {len(absent) - 5} more" if len(absent) > 5 else ""
        raise MissingQueriesError(f"{where}: {len(absent)} judged queries of {args.qrels} have no values in it: "
                                  f"{shown}{more}. Use --missing skip to leave them out or --missing zero to count "
                                  "them as 0.")
    coverage = replace(base.coverage, judged_queries=len(judged), missing=tuple(absent.tolist()),
                       missing_policy=args.missing)
    if args.missing == "skip":
        return replace(base, coverage=coverage)
    values = _empty_ranking_values(qrels, absent, judged, results, args, where)
    query_ids = np.concatenate([np.asarray(base.query_ids, dtype=object), absent])
    order = np.argsort(query_ids, kind="stable")
    return replace(base, query_ids=query_ids[order], values=np.vstack([base.values, values])[order],
                   coverage=replace(coverage, evaluated=len(query_ids)))


def _empty_ranking_values(qrels: Any, absent: Any, judged: Any, results: Any, args: argparse.Namespace,
                          where: str) -> Any:
    """Each measure's value on an empty ranking of each query of ``absent`` (what --missing
    zero gives a run that has no results for it), from one evaluation of a run holding a
    single row in another judged query."""
    from serpeval.core.data import Run
    from serpeval.evaluation.evaluate import evaluate

    lacking = set(absent.tolist())
    others = [q for q in judged.tolist() if q not in lacking]
    if not others:
        raise NothingEvaluatedError(f"{where}: no judged query of {args.qrels} has values in it; record the "
                                    "baseline with the same qrels (serpeval evaluate QRELS RUN --format json "
                                    "--per-query).")
    anchor = Run.from_dict({others[0]: {"serpeval-empty-ranking": 0.0}}, name="empty")
    # An empty ranking is the same at any depth, condensed or not, under any tie policy.
    empty = evaluate(qrels, [anchor], results.measures, missing="zero",
                     propensities=getattr(args, "propensities", None)).runs[0]
    rows = {q: i for i, q in enumerate(empty.query_ids.tolist())}
    return empty.values[[rows[q] for q in absent.tolist()]]


def run(args: argparse.Namespace) -> int:
    check_outputs({"--json": args.json}, [args.qrels, args.baseline, args.baseline_json, args.candidate])
    # From here on the --json path is known: a gate that stops before deciding (exit 7, or an
    # error: exit 2) replaces an earlier run's report with one whose decision is "error".
    measures: list[str] | None = None
    try:
        measures = split_measures(args.measures) or ["nDCG@10"]
        explanation, report, exit_code = _decide(args, measures)
        if args.json == "-":
            sys.stderr.write(explanation)
        else:
            write_output(explanation, None)
    except Exception as exc:
        if args.json and not (args.json == "-" and _stdout_closed(exc)):
            _record_failure(args, measures, exc)
        raise
    if args.json:
        write_output(report, None if args.json == "-" else args.json)
    return exit_code


def _decide(args: argparse.Namespace, measures: list[str]) -> tuple[str, str, int]:
    """The gate: the explanation to print, the JSON report and the exit status (0 or 1)."""
    from serpeval.comparison.gate import GateOptions, check_max_drop, gate_results, parse_max_drop
    from serpeval.measures import parse_measures
    from serpeval.report.gate import explain_gate
    from serpeval.report.table import fit_text

    if (args.baseline is None) == (args.baseline_json is None):
        raise OptionError("give the baseline once: --baseline BASE_RUN (a run file) or --baseline-json FILE "
                          "(its recorded evaluation).")
    recorded, options_recorded = _read_baseline(args.baseline_json, measures) if args.baseline_json else (None, False)
    # A margin no measure can use is refused before the files are read.
    max_drop = parse_max_drop(args.max_drop, option="--max-drop")
    check_max_drop(max_drop, parse_measures(measures), option="--max-drop")

    options = GateOptions(max_drop=max_drop, alpha=args.alpha, rule=args.rule, test=args.test,
                          n_resamples=args.resamples, rng=args.seed, top=args.top, strict=args.strict)

    pair: list[Any] = []

    def decide(results: Any, qrels: Any = None) -> Any:
        if recorded is not None:
            results = _with_recorded_baseline(recorded, results, args, qrels, options_recorded)
        pair.append(results)
        return gate_results(results, None, options)

    if recorded is None:
        qrels, runs, results, result = load_and_evaluate(args.qrels, [args.baseline, args.candidate], measures,
                                                         args, decide, keep_runs=args.judged_gap < 100)
    else:   # the qrels, once read, give the judged queries the recording lacks their values
        qrels, runs, results, _ = load_and_evaluate(args.qrels, [args.candidate], measures, args,
                                                    keep_runs=args.judged_gap < 100)
        result = decide(results, qrels)
    gaps = judged_gap_notes(qrels, runs, results, args)
    notes = coverage_notes(results, qrels, runs) + gaps
    if recorded is not None and pair[0].runs[0].coverage.missing:
        c = pair[0].runs[0].coverage
        action = {"skip": "skipped", "zero": "counted as 0"}[c.missing_policy]
        notes.insert(0, f"{c.run} (--baseline-json {args.baseline_json}): {len(c.missing)} of {c.judged_queries} "
                        f"judged queries have no values ({action})")
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
        if result.passed and not by_group.passed:
            # the first line is the decision CI logs show: FAIL, with the groups that fail it
            gated = {c.group for c in by_group.checks if c.gated}
            failed = sorted({c.group for c in by_group.checks if c.gated and not c.passed})
            head = (f"serpeval gate: FAIL - {len(failed)} of {len(gated)} gated groups fail "
                    f"({', '.join(failed[:3])}{', ...' if len(failed) > 3 else ''}); the overall check passes")
            explanation = fit_text([head], width) + explanation.replace("serpeval gate: PASS - ", "overall: PASS - ", 1)
        explanation += "\n" + render_group_gate(by_group, digits=args.digits, width=width)
    report = dumps(payload) + "\n"
    explanation += fit_text(notes, width)
    return explanation, report, exit_code
