"""``--groups`` on evaluate, compare and gate, run through main() as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from serpeval.cli import main
from serpeval.cli.demo.collection import make_collection
from serpeval.comparison.compare import compare
from serpeval.io import write_trec_qrels, write_trec_run


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("segments")
    collection = make_collection(n_queries=60)
    write_trec_qrels(collection.qrels, folder / "qrels.txt")
    write_trec_run(collection.runs["baseline"], folder / "bm25.run")
    write_trec_run(collection.runs["candidate"], folder / "dense.run")
    qids = sorted(collection.qrels.to_dict())
    lines = [f"{q}\t{'odd' if i % 2 else 'even'}" for i, q in enumerate(qids)]
    lines += [f"{q}\tfirst ten" for q in qids[:10]] + ["not-a-query\teven"]
    (folder / "groups.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"qrels": folder / "qrels.txt", "bm25": folder / "bm25.run", "dense": folder / "dense.run",
            "groups": folder / "groups.tsv", "folder": folder}


def test_compare_groups_json_matches_the_api(files, capsys) -> None:
    argv = ["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "nDCG@10",
            "--groups", str(files["groups"]), "-f", "json"]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)["segments"]
    api = compare(files["qrels"], [files["bm25"], files["dense"]], ["nDCG@10"], groups=files["groups"],
                  rng=0).segments
    assert payload["groups"] == ["even", "odd", "first ten"]
    assert payload["unknown_queries"] == ["not-a-query"]
    assert payload["multi_group_queries"] == 10
    for got, want in zip(payload["rows"], api.to_dicts(), strict=True):
        assert got["queries"] == want["queries"]
        assert got["p_value_corrected"] == pytest.approx(want["p_value_corrected"])


def test_compare_groups_table_and_csv(files, capsys) -> None:
    base = ["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "AP",
            "--groups", str(files["groups"])]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "per-group breakdown by" in out
    assert "first ten" in out
    assert "interaction (AP" in out
    assert "1 queries in the groups were not compared" in out
    assert main([*base, "-f", "csv", "--group-correction", "bh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("measure,system,baseline,group,queries")
    assert len(lines) == 4


def test_evaluate_groups_builtin_relevant(files, capsys) -> None:
    assert main(["evaluate", str(files["qrels"]), str(files["bm25"]), "-m", "AP", "--groups",
                 "builtin:relevant", "-f", "json"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert groups["grouping"] == "builtin:relevant"
    assert sum(r["queries"] for r in groups["rows"]) == 60


def test_gate_groups_fails_when_one_group_regresses(files, tmp_path, capsys) -> None:
    # the candidate is the baseline except on the "bad" group, where it returns nothing
    from serpeval.io import read_run

    base = read_run(files["bm25"]).to_dict()
    qids = sorted(base)
    bad = set(qids[:6])
    cand = {q: ({"nothing": 1.0} if q in bad else docs) for q, docs in base.items()}
    from serpeval.core.data import Run

    write_trec_run(Run.from_dict(cand, name="cand"), tmp_path / "cand.run")
    (tmp_path / "g.tsv").write_text("".join(f"{q}\t{'bad' if q in bad else 'good'}\n" for q in qids))
    argv = ["gate", str(files["qrels"]), "--baseline", str(files["bm25"]), "--candidate",
            str(tmp_path / "cand.run"), "-m", "nDCG@10", "--max-drop", "0.1", "--groups",
            str(tmp_path / "g.tsv"), "--group-min-queries", "5", "--json", "-"]
    code = main(argv)
    payload = json.loads(capsys.readouterr().out)
    assert payload["passed_overall"] is True      # 6 of 60 queries lost: within 0.1 on average
    assert code == 1
    assert payload["passed"] is False
    failed = [c["group"] for c in payload["groups"]["checks"] if not c["passed"]]
    assert failed == ["bad"]
    assert np.isfinite(payload["groups"]["checks"][0]["p_value"])
    # the first line, the one a CI log shows, said PASS while the gate failed (exit 1)
    assert main(argv[:-2]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "serpeval gate: FAIL - 1 of 2 gated groups fail (bad); the overall check passes"
    assert lines[1].startswith("overall: PASS - candidate cand vs baseline")
    assert not any(line.startswith("serpeval gate: PASS") for line in lines)


def test_groups_file_errors_name_the_line(files, tmp_path, capsys) -> None:
    (tmp_path / "bad.tsv").write_text("q1\tx\nq2\n")
    code = main(["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "--groups",
                 str(tmp_path / "bad.tsv")])
    assert code == 2
    assert "bad.tsv:2" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["compare", "evaluate"])
def test_groups_with_latex_is_refused_not_dropped(command, files, capsys) -> None:
    """compare -f latex dropped the breakdown silently; evaluate appended a text table to LaTeX."""
    argv = [command, str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "AP",
            "--groups", str(files["groups"]), "-f", "latex"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--groups has no LaTeX layout" in err
    assert main([*argv[:-4], "-f", "latex"]) == 0    # without --groups, LaTeX as before
    assert "\\begin{table}" in capsys.readouterr().out


def test_gate_groups_table_fits_80_columns_without_a_duplicate_p(files, monkeypatch, capsys) -> None:
    """Non-inferiority applies no correction, so 'p (corr.)' repeated 'p': without it the group
    table fits 80 columns as a table (it fell back to one record per row)."""
    monkeypatch.setenv("COLUMNS", "80")
    argv = ["gate", str(files["qrels"]), "--baseline", str(files["bm25"]), "--candidate", str(files["dense"]),
            "-m", "nDCG@10", "-m", "AP", "--groups", str(files["groups"])]
    assert main(argv) in (0, 1)
    out = capsys.readouterr().out.split("groups: ", 1)[1]
    assert "┃ group " in out
    assert "p (corr.)" not in out
    assert max(map(len, out.splitlines())) <= 80
    assert main([*argv, "--group-correction", "holm"]) in (0, 1)
    assert "p (corr.)" in capsys.readouterr().out
