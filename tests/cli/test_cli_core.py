"""The core commands: evaluate, measures, demo (run through main(), as a user would)."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from serpeval.cli import main
from serpeval.cli.common import refuse_stdin_twice

QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 d 1\nq3 0 z 1\n"
RUN_A = "q1 Q0 a 1 3 A\nq1 Q0 b 2 2 A\nq1 Q0 c 3 1 A\nq2 Q0 d 1 1 A\nq9 Q0 x 1 1 A\n"
RUN_B = "q1 Q0 b 1 3 B\nq1 Q0 c 2 2 B\nq1 Q0 a 3 1 B\nq2 Q0 e 1 2 B\nq2 Q0 d 2 1 B\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    return tmp_path / "qrels.txt", tmp_path / "a.run", tmp_path / "b.run"


def test_evaluate_table(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, b = files
    assert main(["evaluate", str(qrels), str(a), str(b), "-m", "P@1,RR", "-m", "NumRet"]) == 0
    out = capsys.readouterr().out
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    # q1: a ranks a(2) first -> P@1 = 1, RR = 1; q2: d first -> 1, 1. b: q1 b(0), c(1) -> P@1 0, RR 1/2;
    # q2: e (unjudged), d -> 0, 1/2. NumRet sums: a 3 + 1 (q9 is not judged), b 3 + 2.
    assert rows == [["a", "2", "1.0000", "1.0000", "4"], ["b", "2", "0.0000", "0.5000", "5"]]
    assert "a: 1 of 3 judged queries have no results (skipped)" in out
    assert "a: 1 run query (1 line) without judgments ignored" in out


def test_evaluate_csv_and_json(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, _ = files
    assert main(["evaluate", str(qrels), str(a), "-m", "AP", "--format", "csv", "--missing", "zero"]) == 0
    captured = capsys.readouterr()
    from serpeval.core.fingerprints import signature_of
    from serpeval.io import read_qrels, read_run

    signatures = f"{signature_of(read_run(str(a)))},{signature_of(read_qrels(str(qrels)))}"  # the inputs as read
    assert captured.out.splitlines() == ["run,queries,AP,run_signature,qrels_signature",
                                         f"a,3,0.611111111111111,{signatures}"]  # (5/6 + 1 + 0) / 3
    assert main(["evaluate", str(qrels), str(a), "-m", "AP", "-f", "json", "-q", "--missing", "zero"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["results"][0]["AP"] == pytest.approx((5 / 6 + 1 + 0) / 3)
    assert [row["query_id"] for row in payload["per_query"]] == ["q1", "q2", "q3"]
    assert payload["coverage"][0]["missing"] == ["q3"]
    assert any("doc id descending" in rule for rule in payload["rules"])


def test_trec_eval_value_lists_in_m(files, capsys: pytest.CaptureFixture[str]) -> None:
    """``-m P.5,10`` is two measures and ``-m ndcg.1=3,2=9`` one, as in trec_eval."""
    from serpeval.cli.common import split_measures

    assert split_measures(["P.1,3,RR", "ndcg.1=3,2=9", "utility.1,-1,0,0", "nDCG(gains=1:3;2:9)@5,AP"]) == [
        "P.1,3", "RR", "ndcg.1=3,2=9", "utility.1,-1,0,0", "nDCG(gains=1:3;2:9)@5", "AP"]
    qrels, a, _ = files
    assert main(["evaluate", str(qrels), str(a), "-m", "P.1,3", "-m", "ndcg.1=3,2=9", "-f", "csv"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header == "run,queries,P@1,P@3,nDCG(gains=1:3;2:9),run_signature,qrels_signature"
    # q1 ranks a(2), b(0), c(1): P@1 1, P@3 2/3; q2 ranks d(1) alone: P@1 1, P@3 1/3.
    # nDCG with gains 1->3, 2->9: q1 (9 + 0 + 3/log2(4)) / (9 + 3/log2(3)); q2 1.
    q1 = (9 + 1.5) / (9 + 3 / math.log2(3))
    values = [float(v) for v in row.split(",")[2:5]]
    assert values == pytest.approx([1.0, 0.5, (q1 + 1) / 2])


def test_errors_print_one_line_and_exit_2(files, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, _ = files
    assert main(["evaluate", str(qrels), str(a), "-m", "nDGC@10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Unknown measure 'nDGC' in 'nDGC@10'. Did you mean 'nDCG'" in err
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 3 A\nq1 Q0 b 2\n")
    assert main(["evaluate", str(qrels), str(bad)]) == 2
    assert f"{bad}:2: expected 6 columns" in capsys.readouterr().err
    with pytest.raises(Exception, match="expected 6 columns"):
        main(["--debug", "evaluate", str(qrels), str(bad)])


def test_standard_input_named_twice_is_refused_before_reading(files, capsys: pytest.CaptureFixture[str]) -> None:
    """``cat run | serpeval evaluate QRELS - -``: the second reader found standard input empty
    ("the run has no data lines"); now the command says what is wrong before reading it."""
    qrels, a, _ = files
    done = subprocess.run([sys.executable, "-m", "serpeval", "evaluate", str(qrels), "-", "-"],
                          input=a.read_text(), capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("serpeval evaluate: error: standard input (-) is named twice (runs); it can be read "
                           "once. Give the others as files.\n")
    assert main(["compare", "-", "-", "-"]) == 2
    assert "standard input (-) is named 3 times (qrels, runs)" in capsys.readouterr().err
    # an output written to standard output (-o -) is not an input
    refuse_stdin_twice(argparse.Namespace(qrels=str(qrels), runs=["-"], output="-", func=None))


def test_measures_listing_and_detail(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measures"]) == 0
    out = capsys.readouterr().out
    assert "nDCG(gain=linear" in out
    assert "ndcg_cut_k" in out
    assert "Bpref(rel=1)" in out
    assert main(["measures", "ndcg_cut_10"]) == 0
    out = capsys.readouterr().out
    assert "parsed as: nDCG@10" in out
    assert "IDCG" in out
    assert main(["measures", "P"]) == 0  # a bare name whose cutoff is required
    assert capsys.readouterr().out.startswith("P: precision at k")
    assert main(["measures", "nDCG(gain=bogus)@10"]) == 2  # the parameter's own error
    assert "must be one of linear, exp" in capsys.readouterr().err
    assert main(["measures", "nope"]) == 2
    assert "Unknown measure 'nope'" in capsys.readouterr().err


def test_demo_runs_and_names_the_winner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "demo.html"
    assert main(["demo", "--queries", "40", "-o", str(report)]) == 0
    out = capsys.readouterr().out
    assert "candidate beats baseline on nDCG@10" in out
    assert report.stat().st_size > 10_000


def test_console_script_is_installed() -> None:
    out = subprocess.run([sys.executable, "-m", "serpeval", "--version"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("serpeval ")
