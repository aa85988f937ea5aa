"""serpeval gate --baseline-json (issue 29 item 3): the baseline's recorded evaluation, refused
(exit 2, one line naming both qrels signatures) when it was evaluated against other qrels,
unless --allow-different-qrels; then the decision carries the counted warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serpeval.cli import main
from serpeval.core.fingerprints import signature_of
from serpeval.io import read_qrels

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d 1\nq3 0 e 1\nq3 0 f 0\n"
BASE = "q1 Q0 a 1 2.0 A\nq1 Q0 b 2 1.0 A\nq2 Q0 d 1 2.0 A\nq2 Q0 c 2 1.0 A\nq3 Q0 e 1 3 A\nq3 Q0 f 2 1 A\n"
CAND = "q1 Q0 b 1 2.0 B\nq1 Q0 a 2 1.0 B\nq2 Q0 c 1 2.0 B\nq2 Q0 d 2 1.0 B\nq3 Q0 e 1 3 B\nq3 Q0 f 2 1 B\n"


@pytest.fixture
def files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    paths = {}
    for name, text in {"qrels": QRELS, "qrels_ws": "\n".join(QRELS.replace(" ", "\t").splitlines()[::-1]),
                       "qrels_new": QRELS.replace("q2 0 c 2", "q2 0 c 1"), "base.run": BASE,
                       "cand.run": CAND}.items():
        (tmp_path / name).write_text(text)
        paths[name] = str(tmp_path / name)
    paths["base.json"] = str(tmp_path / "base.json")
    assert main(["evaluate", paths["qrels"], paths["base.run"], "-m", "AP", "-m", "P@1", "-f", "json",
                 "--per-query", "--missing", "zero", "-o", paths["base.json"]]) == 0
    capsys.readouterr()
    return paths


def test_recorded_baseline_gives_the_decision_of_the_run_file(files: dict[str, str],
                                                            capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = str(tmp_path / "a.json")
    code = main(["gate", files["qrels"], "--baseline", files["base.run"], "--candidate", files["cand.run"],
                 "-m", "AP", "--max-drop", "0.5", "--json", out])
    direct = json.loads(Path(out).read_text())
    out2 = str(tmp_path / "b.json")
    # the same qrels with tabs and the lines reversed: the same signature, no refusal
    assert main(["gate", files["qrels_ws"], "--baseline-json", files["base.json"], "--candidate", files["cand.run"],
                 "-m", "AP", "--max-drop", "0.5", "--json", out2]) == code
    recorded = json.loads(Path(out2).read_text())
    assert [c["bound"] for c in recorded["checks"]] == [c["bound"] for c in direct["checks"]]
    assert recorded["warning_count"] == 0
    assert recorded["inputs"]["qrels"]["signature"] == signature_of(read_qrels(files["qrels"]))
    capsys.readouterr()


def test_other_qrels_are_refused_unless_allowed(files: dict[str, str], capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    old, new = signature_of(read_qrels(files["qrels"])), signature_of(read_qrels(files["qrels_new"]))
    args = ["gate", files["qrels_new"], "--baseline-json", files["base.json"], "--candidate", files["cand.run"],
            "-m", "AP", "--max-drop", "0.5"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"serpeval gate: error: --baseline-json {files['base.json']} was evaluated against qrels signature "
                   f"{old}, {files['qrels_new']} has signature {new}: the judgments differ; evaluate the baseline "
                   "against the same qrels, or pass --allow-different-qrels."]
    out = str(tmp_path / "c.json")
    assert main([*args, "--allow-different-qrels", "--json", out]) in (0, 1)
    report = json.loads(Path(out).read_text())
    assert report["warning_count"] == 1
    assert f"base: qrels {old}, cand: qrels {new}" in report["warnings"][0]
    assert f"warning: {report['warnings'][0]}" in capsys.readouterr().out


@pytest.mark.parametrize(("extra", "message"), [
    (["--baseline", "BASE"], "give the baseline once: --baseline BASE_RUN (a run file) or --baseline-json FILE"),
    (["-m", "nDCG@10"], "has no values of nDCG@10 (it has AP, P@1); record the baseline with those measures."),
])
def test_bad_baseline_options(files: dict[str, str], capsys: pytest.CaptureFixture[str], extra: list[str],
                              message: str) -> None:
    extra = [files["base.run"] if e == "BASE" else e for e in extra]
    assert main(["gate", files["qrels"], "--baseline-json", files["base.json"], "--candidate", files["cand.run"],
                 *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert message in err[0]


def test_compare_csv_ends_with_the_signatures(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    from serpeval.io import read_run

    assert main(["compare", files["qrels"], files["base.run"], files["cand.run"], "-m", "AP", "-f", "csv"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.endswith(",system_signature,baseline_signature,qrels_signature")
    assert row.endswith(f",{signature_of(read_run(files['cand.run']))},{signature_of(read_run(files['base.run']))},"
                        f"{signature_of(read_qrels(files['qrels']))}")


def test_judged_queries_the_recorded_baseline_lacks_follow_missing(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The QA repro: q5 is judged, the baseline has no results for it, the candidate answers
    it. --baseline RUN counts it as 0 for the baseline (--missing zero, the gate's default);
    the recording of the same run (evaluated with trec_eval's default, skip) must give the
    same decision and numbers, and the note names the baseline, not the candidate. NumRel (a
    sum, 1 on an empty ranking too) shows that "0" is the value of an empty ranking."""
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 a 1\n" for q in range(1, 6)))
    base = "1 Q0 a 1 2 b\n1 Q0 x 2 1 b\n2 Q0 x 1 2 b\n2 Q0 a 2 1 b\n3 Q0 a 1 2 b\n4 Q0 x 1 2 b\n4 Q0 a 2 1 b\n"
    (tmp_path / "base.run").write_text(base)
    (tmp_path / "cand.run").write_text(base + "5 Q0 a 1 1 c\n")
    q, recorded = str(tmp_path / "q.txt"), str(tmp_path / "base.json")
    measures = ["-m", "AP", "-m", "NumRel"]
    assert main(["evaluate", q, str(tmp_path / "base.run"), *measures, "-f", "json", "--per-query",
                 "-o", recorded]) == 0
    reports = {}
    for how, given in (("run", ["--baseline", str(tmp_path / "base.run")]), ("json", ["--baseline-json", recorded])):
        capsys.readouterr()
        out = str(tmp_path / f"{how}.json")
        assert main(["gate", q, *given, "--candidate", str(tmp_path / "cand.run"), *measures, "--json", out]) == 1
        reports[how] = json.loads(Path(out).read_text())
        reports[how]["printed"] = capsys.readouterr().out
    run, rec = reports["run"], reports["json"]
    # AP: base 1, 1/2, 1, 1/2, 0 (q5 counted as 0) -> 0.6; cand the same with q5 = 1 -> 0.8.
    keys = ("measure", "queries", "baseline_mean", "candidate_mean", "delta", "bound", "p_value", "passed",
            "wins", "ties", "losses")
    assert [[c[k] for k in keys] for c in rec["checks"]] == [[c[k] for k in keys] for c in run["checks"]]
    assert [(c["queries"], c["baseline_mean"]) for c in rec["checks"]] == [(5, pytest.approx(0.6)), (5, 5.0)]
    assert rec["decision"] == run["decision"] == "fail"
    assert f"base (--baseline-json {recorded}): 1 of 5 judged queries have no values (counted as 0)" \
        in rec["evaluation_notes"]
    assert "not in both runs" not in rec["printed"]
    assert "cand: 1 of 5" not in rec["printed"]
    # --missing error refuses the recording as it refuses the run, naming the file.
    assert main(["gate", q, "--baseline-json", recorded, "--candidate", str(tmp_path / "cand.run"), *measures,
                 "--missing", "error"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"serpeval gate: error: --baseline-json {recorded}: 1 judged queries of {q} have no values "
                   "in it: '5'. Use --missing skip to leave them out or --missing zero to count them as 0."]


def test_a_baseline_recorded_with_other_options_is_refused(files: dict[str, str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Only the tie policy and the qrels were checked: a baseline recorded with --depth 1 (or
    --judged-only) was gated silently against a candidate evaluated without it, their numbers
    following different rules. Now refused, naming the option; the same options pass, and a
    file written before serpeval recorded its options (no "settings") is taken as it is."""
    deep = str(tmp_path / "depth1.json")
    assert main(["evaluate", files["qrels"], files["base.run"], "-m", "AP", "-f", "json", "--per-query",
                 "--missing", "zero", "--depth", "1", "-o", deep]) == 0
    capsys.readouterr()
    args = ["gate", files["qrels"], "--baseline-json", deep, "--candidate", files["cand.run"], "-m", "AP",
            "--max-drop", "0.5"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"serpeval gate: error: --baseline-json {deep} was evaluated with --depth 1, {files['cand.run']} "
                   "with no --depth: their numbers follow different rules; evaluate both with the same options."]
    assert main([*args, "--depth", "1"]) in (0, 1)
    capsys.readouterr()
    judged = str(tmp_path / "judged.json")
    assert main(["evaluate", files["qrels"], files["base.run"], "-m", "AP", "-f", "json", "--per-query",
                 "--missing", "zero", "--judged-only", "-o", judged]) == 0
    capsys.readouterr()
    assert main(["gate", files["qrels"], "--baseline-json", judged, "--candidate", files["cand.run"], "-m", "AP",
                 "--max-drop", "0.5"]) == 2
    assert "was evaluated with --judged-only, " in capsys.readouterr().err
    old = json.loads(Path(deep).read_text())
    del old["settings"]
    Path(deep).write_text(json.dumps(old))
    assert main(args) in (0, 1)  # options unknown: not checked (as before)
