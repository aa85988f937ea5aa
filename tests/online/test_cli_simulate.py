"""``serpeval simulate`` end to end."""

from __future__ import annotations

import json

import pytest

from serpeval.cli.app import main


def test_simulate_generated_pair_json(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    status = main(["simulate", "--generate", "0.05", "--queries", "40", "--mc-impressions", "200000",
                   "--replicates", "20", "--bootstrap", "100", "-c", "navigational,pbm", "-f", "json"])
    assert status == 0
    payload = json.loads(capsys.readouterr().out)
    rows = payload["rows"]
    assert [r["metric"] for r in rows[:4]] == ["interleaving", "CTR", "abandonment", "clicks@1"]
    assert {r["click model"] for r in rows} == {"navigational", "pbm"}
    # The generated A is 5% better in nDCG@10; interleaving sees it.
    assert rows[0]["agrees with nDCG@10"] == "yes"
    assert rows[0]["effect (A-B)"] > 0
    assert any("offline nDCG@10" in note for note in payload["notes"])


def test_simulate_files_and_errors(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 e1 1\nq2 0 e2 0\n")
    run_a = tmp_path / "a.run"
    run_a.write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d3 3 1 a\nq2 Q0 e1 1 2 a\nq2 Q0 e2 2 1 a\n")
    run_b = tmp_path / "b.run"
    run_b.write_text("q1 Q0 d3 1 3 b\nq1 Q0 d1 2 2 b\nq2 Q0 e2 1 2 b\nq2 Q0 e1 2 1 b\n")
    out = tmp_path / "res.md"
    assert main(["simulate", str(qrels), "--run-a", str(run_a), "--run-b", str(run_b), "-k", "3",
                 "--mc-impressions", "0", "-f", "markdown", "-o", str(out)]) == 0
    text = out.read_text()
    assert "| interleaving |" in text
    assert "a (A) vs b (B)" in text
    assert main(["simulate", str(qrels), "--run-a", str(run_a)]) == 2
    assert "needs QRELS, --run-a and --run-b" in capsys.readouterr().err
    assert main(["simulate", "--generate", "0.01", "-c", "navigatoinal", "--mc-impressions", "0"]) == 2
    assert "Did you mean 'navigational'" in capsys.readouterr().err
