"""``serpeval pool``, ``judged``, ``diff``; the --judged column and the judged-gap warning of
compare and gate; the diff section of ``serpeval report``."""

from __future__ import annotations

import json
import warnings

import pytest

from serpeval.cli.app import main
from serpeval.io import read_qrels


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 x 2\n")
    (tmp_path / "old.run").write_text("q1 Q0 a 1 3 old\nq1 Q0 b 2 2 old\nq1 Q0 c 3 1 old\n"
                                      "q2 Q0 x 1 2 old\nq2 Q0 y 2 1 old\n")
    (tmp_path / "new.run").write_text("q1 Q0 n 1 3 new\nq1 Q0 a 2 2 new\nq1 Q0 m 3 1 new\n"
                                      "q2 Q0 z 1 2 new\nq2 Q0 x 2 1 new\n")
    (tmp_path / "topics.tsv").write_text("q1\tfirst query\nq2\tsecond, query\n")
    return tmp_path


def test_pool_writes_each_format_and_prints_a_summary(files, capsys) -> None:
    runs = [str(files / "old.run"), str(files / "new.run")]
    out = files / "pool.txt"
    assert main(["pool", *runs, "--depth", "2", "--qrels", str(files / "qrels.txt"), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "already judged (skipped)" in printed
    assert f"to {out}" in printed
    # Top 2: q1 old a b, new n a -> n (a, b judged); q2 old x y, new z x -> y z (x judged).
    assert out.read_text() == "q1 0 n -1\nq2 0 z -1\nq2 0 y -1\n"
    quepid = files / "pool.csv"
    assert main(["pool", *runs, "--depth", "2", "--topics", str(files / "topics.tsv"), "-f", "quepid",
                 "-o", str(quepid)]) == 0
    assert quepid.read_text().splitlines()[:2] == ["query,docid,rating", "first query,a,"]
    body = files / "pool.json"
    assert main(["pool", *runs, "--method", "rrf", "--budget", "2", "--simulate", str(files / "qrels.txt"),
                 "--index", "docs", "-o", str(body)]) == 0
    # RRF: q1 a (1/61 + 1/62) first, then x (1/61 + 1/62) of q2; grades from the qrels.
    assert read_qrels(body).to_dict() == {"q1": {"a": 1}, "q2": {"x": 2}}
    assert json.loads(body.read_text())["requests"][0]["ratings"][0]["_index"] == "docs"


def test_pool_to_stdout_keeps_the_summary_on_stderr(files, capsys) -> None:
    assert main(["pool", str(files / "old.run"), "--depth", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "q1 0 a -1\nq2 0 x -1\n"
    assert "pooled" in captured.err


def test_pool_refuses_a_missing_depth(files, capsys) -> None:
    assert main(["pool", str(files / "old.run")]) == 2
    assert "depth pooling needs a depth" in capsys.readouterr().err


def test_judged_command(files, capsys) -> None:
    assert main(["judged", str(files / "qrels.txt"), str(files / "old.run"), str(files / "new.run"),
                 "-k", "2", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    rows = {r["run"]: r for r in payload["runs"]}
    # Graded@2: old: q1 a b (2/2), q2 x y (1/2) -> 0.75; new: q1 n a (1/2), q2 z x (1/2) -> 0.5.
    assert rows["old"]["Graded@2"] == 0.75
    assert rows["new"]["Graded@2"] == 0.5
    assert rows["old"]["Unjudged@2"] == 0.25  # y of q2, over 2, averaged over 2 queries
    assert payload["pool_needed"] == {"2": 3}  # n, y, z


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_judged_reports_missing_queries_in_a_note_not_a_python_warning(files, capsys, fmt: str) -> None:
    """q3 is judged but old answers q1 and q2 only: one note gives the count, no raw warning."""
    (files / "more.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 x 2\nq3 0 w 1\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["judged", str(files / "more.txt"), str(files / "old.run"), "-k", "2", "-f", fmt]) == 0
    assert [str(w.message) for w in caught] == []
    captured = capsys.readouterr()
    assert "Warning" not in captured.err
    note = "old: 1 of 3 judged queries have no results (skipped)"
    assert (captured.out + captured.err).count(note) == 1
    if fmt == "json":
        assert note in json.loads(captured.out)["notes"]


def test_diff_command(files, capsys) -> None:
    unjudged = files / "unjudged.txt"
    assert main(["diff", str(files / "old.run"), str(files / "new.run"), "--qrels", str(files / "qrels.txt"),
                 "-k", "2", "--unjudged", str(unjudged), "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"][f"overlap@{2}"] == pytest.approx(0.5)  # q1 {a}, q2 {x}: 1/2 each
    assert unjudged.read_text() == "q1 0 n -1\nq2 0 z -1\nq2 0 y -1\n"
    assert main(["diff", str(files / "old.run"), str(files / "new.run"), "--top", "1"]) == 0
    assert "changed most" in capsys.readouterr().out


def test_compare_and_gate_warn_on_unequal_judging(files, capsys) -> None:
    qrels, old, new = str(files / "qrels.txt"), str(files / "old.run"), str(files / "new.run")
    assert main(["compare", qrels, old, new, "-m", "P@2", "--judged"]) == 0
    out = capsys.readouterr().out
    assert "Judged@2" in out
    assert "judged rate of the retrieved top 2 differs by 25.0 points" in " ".join(out.split())
    assert main(["compare", qrels, old, new, "-m", "P@2", "--judged-gap", "30"]) == 0
    assert "judged rate" not in capsys.readouterr().out
    main(["gate", qrels, "--baseline", old, "--candidate", new, "-m", "P@2"])
    assert "judged rate of the retrieved top 2 differs" in capsys.readouterr().out
    assert main(["evaluate", qrels, old, "-m", "P@2", "--judged", "5", "-f", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "run,queries,P@2,Judged@5,run_signature,qrels_signature"


def test_report_has_a_diff_section(files, capsys) -> None:
    out = files / "report.html"
    assert main(["report", str(files / "qrels.txt"), str(files / "old.run"), str(files / "new.run"),
                 "-m", "P@2", "--diff", "--resamples", "100", "-o", str(out)]) == 0
    html = out.read_text()
    assert 'id="run-diff"' in html
    assert "RBO_ext" in html


def test_pool_to_a_tsv_file_reads_back_as_qrels(files, capsys) -> None:
    """-o NAME.tsv writes tabs (it wrote commas, and the file did not read back as qrels)."""
    out = files / "next.tsv"
    assert main(["pool", str(files / "old.run"), str(files / "new.run"), "--depth", "3", "--simulate",
                 str(files / "qrels.txt"), "-o", str(out)]) == 0
    capsys.readouterr()
    assert out.read_text().splitlines()[0].split("\t")[:3] == ["query_id", "doc_id", "relevance"]
    # old + new top 3: q1 a b c n m, q2 x y z -> 8 documents, graded by the qrels (0 where unjudged)
    assert read_qrels(out).to_dict() == {"q1": {"a": 1, "b": 0, "c": 0, "n": 0, "m": 0}, "q2": {"x": 2, "y": 0, "z": 0}}


def test_diff_command_reports_queries_one_run_lacks(tmp_path, capsys) -> None:
    """A answers q1 and q2, B only q1 (the same ranking): compared on q1 (overlap@2 = 1, not
    (1 + 0) / 2), q2 counted and named; --missing zero keeps the old rule and says so."""
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\nq2 Q0 d3 1 1 a\n")
    b.write_text("q1 Q0 d1 1 2 b\nq1 Q0 d2 2 1 b\n")
    assert main(["diff", str(a), str(b), "-k", "2", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"]["overlap@2"] == 1.0
    assert payload["summary"]["queries"] == 1
    assert (payload["missing"], payload["only_a"], payload["only_b"]) == ("skip", ["q2"], [])
    assert main(["diff", str(a), str(b), "-k", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "compared on the 1 queries both runs answer; left out, only in A: 1 (q2)" in out
    assert main(["diff", str(a), str(b), "-k", "2", "--missing", "zero", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"]["overlap@2"] == 0.5
    assert payload["missing"] == "zero"
