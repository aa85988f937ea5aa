"""A run none of whose judged queries has results is refused everywhere, never reported as 0.

The Python API raises :class:`NothingEvaluatedError` whatever ``missing`` says; the
command line prints one line and exits 7 (trec_eval's status for the same case); ``gate``
never passes on it. ``missing="zero"`` keeps trec_eval's ``-c`` meaning when at least one
judged query is answered.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from serpeval import evaluate
from serpeval.cli import main
from serpeval.comparison.compare import compare
from serpeval.comparison.gate import gate
from serpeval.core.errors import InputError, MissingQueriesError, NothingEvaluatedError
from serpeval.ranking import rank

# Judged ids of mixed shapes (short, long, Unicode); the run answers other ids only.
QRELS = {"301": {"FBIS3-1": 1, "FT921-7": 0}, "ü-7": {"d1": 2}, "Q-0000000004": {"x": 1}}
WRONG_RUN = {"1030303": {"FBIS3-1": 2.0, "d1": 1.0}, "87181": {"x": 0.5}}
POLICIES = ("skip", "zero", "error")


@pytest.mark.parametrize("missing", POLICIES)
def test_evaluate_refuses_a_run_with_no_judged_query_whatever_missing_says(missing: str) -> None:
    with pytest.raises(NothingEvaluatedError) as info:
        evaluate(QRELS, WRONG_RUN, ["nDCG@10", "NumRel"], missing=missing)  # type: ignore[arg-type]
    message = str(info.value)
    assert "no judged query has results in run 'run', so nothing can be evaluated" in message
    # what each side holds, so the user sees which file is wrong
    assert "judge 3 queries (e.g. '301', 'Q-0000000004', 'ü-7')" in message  # byte order
    assert "the run has results for 2 queries, none of them judged" in message
    assert "'1030303'" in message
    assert "'87181'" in message
    assert isinstance(info.value, InputError)
    assert "\n" not in message


def test_missing_zero_keeps_trec_eval_c_semantics_when_one_query_is_answered() -> None:
    """q1 answered with its relevant doc first (RR 1), q2 judged but absent from the run:
    skip averages over q1 only (1.0); zero (trec_eval -c) over both: (1 + 0) / 2 = 0.5."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 2.0, "z": 1.0}, "zz": {"b": 1.0}}
    with pytest.warns(UserWarning, match="1 of 2 judged queries have no results"):
        skipped = evaluate(qrels, run, ["RR"], missing="skip")
    assert skipped.means("run") == {"RR": 1.0}
    assert evaluate(qrels, run, ["RR"], missing="zero").means("run") == {"RR": 0.5}
    with pytest.raises(MissingQueriesError, match="1 judged queries have no results in run 'run': 'q2'"):
        evaluate(qrels, run, ["RR"], missing="error")


def test_one_wrong_run_among_several_is_named() -> None:
    good = {"301": {"FBIS3-1": 1.0}}
    with pytest.raises(NothingEvaluatedError, match="no judged query has results in run 'wrong'"):
        evaluate(QRELS, {"good": good, "wrong": WRONG_RUN}, ["AP"], missing="zero")


def test_rank_with_missing_error_says_nothing_was_evaluated() -> None:
    """``missing="error"`` would otherwise list every judged query as missing and advise
    missing='zero', which would report 0.0."""
    from serpeval.io import as_qrels, as_run

    with pytest.raises(NothingEvaluatedError, match="none of them judged"):
        rank(as_qrels(QRELS), as_run(WRONG_RUN), missing="error")


def test_gate_and_compare_refuse_instead_of_passing_on_zeros() -> None:
    with pytest.raises(NothingEvaluatedError):
        gate(QRELS, WRONG_RUN, WRONG_RUN, ["nDCG@10"], max_drop=0.01)  # missing="zero" default
    with pytest.raises(NothingEvaluatedError):
        compare(QRELS, {"a": WRONG_RUN, "b": WRONG_RUN}, ["AP"])


# --------------------------------------------------------------------------- command line


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()),
                     encoding="utf-8")
    run = tmp_path / "wrong.run"
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s} tag\n" for q, docs in WRONG_RUN.items()
                           for i, (d, s) in enumerate(docs.items())), encoding="utf-8")
    return qrels, run


def _one_error_line(err: str, command: str, run: Path) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"serpeval {command}: error: {run}: no judged query has results")
    assert "Traceback" not in err


@pytest.mark.parametrize("extra", [[], ["-m", "NumRel"], ["-f", "json"], ["-m", "NumRel", "-f", "csv"],
                                   ["--missing", "zero"], ["--missing", "error"]])
def test_evaluate_exits_7_with_one_line(files, extra, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = files
    assert main(["evaluate", str(qrels), str(run), *extra]) == 7
    captured = capsys.readouterr()
    assert captured.out == ""  # no table of NaN or zeros, no JSON with a NaN token
    _one_error_line(captured.err, "evaluate", run)


def test_gate_compare_report_simulate_exit_7_and_gate_never_passes(files, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = files
    report = tmp_path / "gate.json"
    assert main(["gate", str(qrels), "--baseline", str(run), "--candidate", str(run),
                 "--json", str(report)]) == 7
    captured = capsys.readouterr()
    assert "PASS" not in captured.out + captured.err
    assert json.loads(report.read_text(encoding="utf-8"))["decision"] == "error"   # says why (issue 27)
    _one_error_line(captured.err, "gate", run)
    assert main(["compare", str(qrels), str(run), str(run)]) == 7
    _one_error_line(capsys.readouterr().err, "compare", run)
    assert main(["report", str(qrels), str(run), str(run), "-o", str(tmp_path / "r.html")]) == 7
    _one_error_line(capsys.readouterr().err, "report", run)
    assert not (tmp_path / "r.html").exists()
    assert main(["simulate", str(qrels), "--run-a", str(run), "--run-b", str(run)]) == 7
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "no query is judged and retrieved by both runs" in err


def test_exit_7_is_in_the_help_of_the_evaluating_commands() -> None:
    from serpeval.cli.app import build_parser

    parser = build_parser()
    helps = {name: action.choices[name].format_help()  # type: ignore[union-attr]
             for action in parser._subparsers._group_actions  # type: ignore[union-attr]
             for name in ("evaluate", "compare", "gate", "report", "simulate")}
    for name, text in helps.items():
        assert "7 nothing evaluated" in " ".join(text.split()), name


def test_gate_on_core18_qrels_with_a_dl20_run_exits_7(trec: Path) -> None:
    """The case of the issue: two DL20 runs gated against Core18's judgments printed PASS
    (every query 0.0 on both sides). Run as a user runs it, in a fresh process."""
    qrels = trec / "core18" / "qrels.txt"
    run = trec / "dl20-doc" / "runs" / "d_bm25.run.gz"
    done = subprocess.run([sys.executable, "-m", "serpeval", "gate", str(qrels), "--baseline", str(run),
                           "--candidate", str(run), "-m", "nDCG@10"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 7, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "no judged query has results in run 'd_bm25'" in done.stderr
    assert "the qrels (" + str(qrels) + ") judge 50 queries" in done.stderr
    # trec_eval (and serpeval's drop-in) stop on the same pair with status 7 too
    assert main(["trec_eval", str(qrels), str(run)]) == 7
