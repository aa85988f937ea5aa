"""``serpeval evaluate --subtopics`` (and compare, gate) and ``serpeval measures alpha_nDCG``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serpeval.cli import main

pyndeval = pytest.importorskip("pyndeval")

# Topic 1: subtopics 1-3 (d judged 0 only); topic 2: judged, nothing relevant. Tab-separated
# and CRLF on one line: the careful reader takes the second column as the subtopic.
SUBTOPIC_QRELS = "1 1 a 1\n1 2 a 1\n1 2 b 2\n1 3 c 1\n1 1 d 0\n2\t1\tx\t0\r\n"
RUN_A = "1 Q0 a 1 3.0 A\n1 Q0 d 2 2.0 A\n1 Q0 b 3 1.5 A\n1 Q0 z 4 1 A\n2 Q0 x 1 1 A\n"
RUN_B = "1 Q0 c 1 3.0 B\n1 Q0 a 2 2.0 B\n1 Q0 b 3 1.5 B\n2 Q0 x 1 1 B\n"
MEASURES = {"alpha_nDCG@5": "alpha-nDCG@5", "ERR_IA@5": "ERR-IA@5", "nERR_IA@5": "nERR-IA@5", "NRBP": "NRBP",
            "AP_IA": "MAP-IA", "P_IA@5": "P-IA@5", "StRecall@5": "strec@5"}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    (tmp_path / "qrels.diversity").write_bytes(SUBTOPIC_QRELS.encode())
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    return tmp_path / "qrels.diversity", tmp_path / "a.run", tmp_path / "b.run"


def oracle(run_text: str) -> dict[str, dict[str, float]]:
    qrels = [tuple(line.split()) for line in SUBTOPIC_QRELS.splitlines()]
    run = [(f[0], f[2], float(f[4])) for f in (line.split() for line in run_text.splitlines())]
    return pyndeval.ndeval([(q, s, d, int(g)) for q, s, d, g in qrels], run, list(MEASURES.values()))


def test_evaluate_with_subtopics_equals_ndeval(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, _ = files
    assert main(["evaluate", "--subtopics", str(qrels), str(a), "-m", ",".join(MEASURES), "-m", "nDCG@5",
                 "-f", "json", "-q"]) == 0
    payload = json.loads(capsys.readouterr().out)
    want = oracle(RUN_A)
    for row in payload["per_query"]:
        for ours, theirs in MEASURES.items():
            assert row[ours] == want[row["query_id"]][theirs], (row["query_id"], ours)
    assert payload["per_query"][0]["nDCG@5"] > 0  # ordinary measures read the highest grade per doc
    assert any("subtopic qrels" in rule for rule in payload["rules"])


def test_evaluate_table_with_ndeval_names(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, b = files
    assert main(["evaluate", "--subtopics", str(qrels), str(a), str(b), "-m", "alpha-nDCG@5,MAP-IA,strec@5",
                 "-f", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "run,queries,alpha_nDCG@5,AP_IA,StRecall@5,run_signature,qrels_signature"
    want = oracle(RUN_B)
    assert float(lines[2].split(",")[2]) == pytest.approx((want["1"]["alpha-nDCG@5"] + 0.0) / 2, abs=1e-15)


def test_a_diversity_measure_without_subtopics_is_one_clear_line(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, _ = files
    assert main(["evaluate", str(qrels), str(a), "-m", "alpha_nDCG@20"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{qrels}: alpha_nDCG@20 is a diversity measure and needs subtopic qrels" in err
    assert "--subtopics" in err


def test_compare_gate_and_report_take_subtopics(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, b = files
    assert main(["compare", "--subtopics", str(qrels), str(a), str(b), "-m", "alpha_nDCG@5"]) == 0
    assert "alpha_nDCG@5" in capsys.readouterr().out
    status = main(["gate", "--subtopics", str(qrels), "--baseline", str(a), "--candidate", str(b), "-m", "StRecall@5"])
    assert status in (0, 1)  # pass or fail: evaluated, not an error
    capsys.readouterr()
    report = qrels.parent / "report.html"
    assert main(["report", "--subtopics", str(qrels), str(a), str(b), "-m", "alpha_nDCG@5,NRBP",
                 "-o", str(report)]) == 0
    assert "alpha_nDCG@5" in report.read_text(encoding="utf-8")
    capsys.readouterr()


def test_spark_backend_refuses_subtopics(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, _ = files
    assert main(["evaluate", "--subtopics", "--backend", "spark", str(qrels), str(a), "-m", "NRBP"]) == 2
    assert "--subtopics works with the local backend only" in capsys.readouterr().err


def test_measures_help_for_alpha_ndcg(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measures", "alpha_nDCG"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("alpha_nDCG: alpha-nDCG")
    assert "alpha-nDCG@k = alpha-DCG@k / alpha-DCG@k of the greedy ideal ranking" in out
    assert "Hand-worked (alpha = 0.5)" in out
    assert "alpha (a number in [0, 1], default 0.5)" in out
    assert "cutoff: required" in out
    assert "aliases: alpha-nDCG, α_nDCG, α-nDCG" in out
    assert "ndeval" in out
    assert main(["measures", "ERR-IA@20"]) == 0
    assert "parsed as: ERR_IA@20" in capsys.readouterr().out
    assert main(["measures"]) == 0
    listing = capsys.readouterr().out
    for name in ("alpha_nDCG(alpha=0.5,rel=1)@k", "NRBP(alpha=0.5,beta=0.5,rel=1)", "AP_IA(rel=1)",
                 "StRecall(rel=1)@k"):
        assert name in listing


def test_ordinary_qrels_read_as_subtopics_get_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    (tmp_path / "a.run").write_text("1 Q0 a 1 2 A\n1 Q0 b 2 1 A\n2 Q0 c 1 1 A\n")
    assert main(["evaluate", "--subtopics", str(tmp_path / "qrels.txt"), str(tmp_path / "a.run"),
                 "-m", "alpha_nDCG@5"]) == 0
    captured = capsys.readouterr()
    assert "every query has a single subtopic" in captured.out
    assert "Warning" not in captured.err


def test_subtopic_qrels_serve_the_judged_rate_check_as_their_topical_view(files) -> None:
    """compare/gate's judged-rate warning (and every API taking qrels) reads subtopic qrels as each
    document's highest grade over its subtopics."""
    from serpeval.io import as_qrels, read_subtopic_qrels

    qrels, _, _ = files
    subtopics = read_subtopic_qrels(qrels)
    topical = as_qrels(subtopics)
    assert topical is subtopics.topical()
    assert len(topical) == len(set(zip(subtopics.query_ids.to_pylist(), subtopics.doc_ids.to_pylist(),
                                       strict=True)))
