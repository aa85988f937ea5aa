"""``serpeval ties`` and ``--ties`` on the command line (issue 29 item 1)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from serpeval.cli import main

# q1: a, b, c tie at 1.0 (trec_eval order c, b, a), d below; relevant a (2), b (1), d (1).
QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq1 0 d 1\nq2 0 x 1\n"
RUN = "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 1.0 r\nq1 Q0 c 3 1.0 r\nq1 Q0 d 4 0.5 r\nq2 Q0 x 1 3 r\nq2 Q0 y 2 2 r\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def test_evaluate_ties_expected(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = files
    assert main(["evaluate", qrels, run, "-m", "AP", "--ties", "expected", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    # q1: c is at rank 1, 2 or 3 (1/3 each): AP sums 1/2+2/3+3/4, 1+2/3+3/4, 1+1+3/4 over R = 3;
    # their mean is 2.3611.../3 = 0.78704; q2: AP = 1
    assert payload["results"][0]["AP"] == pytest.approx((0.787037037037037 + 1.0) / 2)
    assert payload["ties"] == "expected"
    assert "(tie policy expected)" in payload["rules"][0]


def test_unknown_policy_exits_2(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = files
    with pytest.raises(SystemExit) as info:
        main(["evaluate", qrels, run, "--ties", "best"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "'trec_eval', 'optimistic', 'pessimistic', 'expected', 'rank'" in err[0]


def test_ties_command(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = files
    assert main(["ties", run, "--qrels", qrels, "-m", "RR,AP", "-k", "1", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["counts"]["tied_queries_top_1"] == 1
    assert payload["sizes"] == [{"size": 3, "groups": 1}]
    rr = payload["ranges"][0]
    # q1's first relevant: pessimistic c first -> rank 2; optimistic rank 1; expected:
    # c first with probability 1/3 -> 1/3 * 1/2 + 2/3 * 1 = 5/6; q2: RR = 1 under every policy
    assert (rr["pessimistic"], rr["expected"], rr["optimistic"]) == pytest.approx((0.75, (5 / 6 + 1) / 2, 1.0))
    assert rr["max_range"] == pytest.approx(0.5)
    assert rr["max_range_query"] == "q1"
    assert main(["ties", run]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 queries have a tie group reaching the top 10" in out


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_ties_reports_missing_queries_in_a_note_not_a_python_warning(
        files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """q3 is judged, the run has no results for it: one note (stderr for json), no raw warning."""
    _, run = files
    qrels = tmp_path / "more"
    qrels.write_text(QRELS + "q3 0 w 1\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["ties", run, "--qrels", str(qrels), "-m", "RR", "-f", fmt]) == 0
    assert [str(w.message) for w in caught] == []
    captured = capsys.readouterr()
    assert "Warning" not in captured.err
    note = "run: 1 of 3 judged queries have no results (skipped)"
    assert (captured.out + captured.err).count(note) == 1
    if fmt == "json":
        assert note in captured.err
        assert json.loads(captured.out)["evaluated_queries"] == 2


def test_measures_states_the_method(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measures", "AP"]) == 0
    assert "ties=expected: exact, closed form" in capsys.readouterr().out
    assert main(["measures", "alpha_nDCG@10"]) == 0
    assert "ties=expected: refused" in capsys.readouterr().out


def test_gate_refuses_a_baseline_of_another_tie_policy(files: tuple[str, str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = files
    recorded = str(tmp_path / "base.json")
    assert main(["evaluate", qrels, run, "-m", "AP", "--ties", "expected", "-f", "json", "-q", "-o", recorded]) == 0
    capsys.readouterr()
    assert main(["gate", qrels, "--baseline-json", recorded, "--candidate", run, "-m", "AP"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f"cannot compare --baseline-json {recorded} (ties=expected) with {run} (ties=trec_eval)" in err[0]
    # the same policy on both sides is compared
    assert main(["gate", qrels, "--baseline-json", recorded, "--candidate", run, "-m", "AP", "--ties", "expected",
                 "--max-drop", "0.5"]) in (0, 1)


def test_compare_and_gate_take_ties() -> None:
    from serpeval import compare, gate

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    tied = {q: {d: 1.0 for d in "abcx"} for q in qrels}  # every query: four docs tied
    other = {q: {"x": 2.0, "a": 1.0, "b": 1.0, "c": 1.0} for q in qrels}
    # expected RR of a relevant doc among 4 tied: (1 + 1/2 + 1/3 + 1/4) / 4
    c = compare(qrels, {"tied": tied, "other": other}, ["RR"], ties="expected")
    assert c.row("other", "RR").delta == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3 - (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    assert gate(qrels, tied, tied, ["RR"], ties="pessimistic", max_drop=0.01).passed
    from serpeval.core.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="unknown tie policy"):
        compare(qrels, {"tied": tied, "other": other}, ["RR"], ties="random")


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_ties_csv_reports_the_tie_counts_on_stderr(fmt: str, files: tuple[str, str],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # With --qrels the rows are the measures' ranges; the tie counts (by hand from RUN: one
    # group, a b c at 1.0 in q1, reaching the top 1; 3 of 6 rows tied) were printed nowhere.
    qrels, run = files
    assert main(["ties", run, "--qrels", qrels, "-m", "RR", "-k", "1", "-f", fmt]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].startswith("measure" + ("," if fmt == "csv" else "\t") + "trec_eval")
    assert "run: 1 of 2 queries have a tie group reaching the top 1; 1 have ties anywhere " \
           "(1 group, 3 of 6 rows)" in captured.err
