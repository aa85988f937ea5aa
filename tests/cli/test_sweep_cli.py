"""serpeval sweep on the command line: the quick start's command names the cross-validated estimate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import DATA, need

from serpeval.cli.app import main

CRANFIELD = DATA / "cranfield"


def test_quick_start_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    need(CRANFIELD / "corpus.jsonl")
    html = tmp_path / "sweep.html"
    args = ["sweep", "--corpus", str(CRANFIELD / "corpus.jsonl"), "--topics", str(CRANFIELD / "topics.tsv"),
            "--qrels", str(CRANFIELD / "qrels.trec"), "--grid", "k1=0.6,0.9,1.2", "--grid", "b=0.3,0.5,0.75",
            "-m", "nDCG@10", "-k", "100", "--permutations", "200"]
    assert main([*args, "--html", str(html), "--gate"]) == 0
    out = capsys.readouterr().out
    assert "cross-validated gain over the baseline (5-fold over 225 queries, seed 0): " in out
    assert "nDCG@10 heat map (* selected)" in out
    assert "no setting beats the baseline in-sample" in out     # the default k1=1.2 b=0.75 is the best here
    assert "serpeval gate: PASS" in out
    assert "cross-validated gain" in html.read_text()
    assert main([*args, "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"]["settings"] == 9
    assert payload["summary"]["queries"] == 225
    assert set(payload["table"][0]) == {"rank", "k1", "b", "nDCG@10", "delta", "p", "p_holm", "p_maxT", "role"}


def test_sweep_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "d.jsonl"
    docs.write_text('{"id": "a", "text": "wing"}\n')
    topics = tmp_path / "t.tsv"
    topics.write_text("1\twing\n")
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n")
    base = ["sweep", "--topics", str(topics), "--qrels", str(qrels), "--corpus", str(docs)]
    assert main(base) == 2
    assert "give a grid (--grid k1=0.6,0.9,1.2 --grid b=0.3,0.75) or a number of random settings" in \
        capsys.readouterr().err
    assert main([*base, "--random", "3", "--range", "k1=2:1"]) == 2
    assert "--range 'k1=2:1': expected NAME=LOW:HIGH with LOW <= HIGH" in capsys.readouterr().err
    assert main([*base, "--grid", "k1=1,2", "--folds", "2"]) == 2
    err = capsys.readouterr().err
    assert "folds=2 is more than the 1 queries; cross-validation needs at least 2 queries" in err
    assert "at most 1 folds" not in err  # --folds must be 2 or more: that advice could not be followed
    # one measure is maximised: a second -m is refused, not silently kept in the first one's place
    with pytest.raises(SystemExit) as refused:  # (argparse's refusal)
        main([*base, "--grid", "k1=1,2", "-m", "nDCG@10", "-m", "AP"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert err == "serpeval sweep: error: argument -m/--measure: given twice (nDCG@10, then AP); it takes one value\n"


def test_the_significant_settings_are_counted_and_the_selected_one_named_first() -> None:
    """The sentence named the first five in grid order, so it could leave out the selected
    setting and the count; the JSON lists them all."""
    from serpeval.engines.sweep import significant_names

    grid = [f"k1={k}" for k in range(8)]
    assert significant_names(grid, "k1=6") == "8: k1=6, k1=0, k1=1, k1=2, k1=3 and 3 more (-f json lists them all)"
    assert significant_names(grid[:5], "k1=9") == "5: k1=0, k1=1, k1=2, k1=3, k1=4"
    assert significant_names(["k1=2"], "k1=2") == "1: k1=2"
    assert significant_names([], "k1=2") == "none"


def test_sweep_html_may_be_written_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--html FILE was taken for an input (not among the output options), so running the same
    sweep again refused to overwrite "an input of this command"."""
    docs = tmp_path / "d.jsonl"
    docs.write_text("".join(f'{{"id": "d{i}", "text": "wing {"flow " * (i % 3)}lift {i}"}}\n' for i in range(12)))
    (tmp_path / "t.tsv").write_text("".join(f"{q}\twing flow\n" for q in range(6)))
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 d{q} 1\n" for q in range(6)))
    html = tmp_path / "sweep.html"
    args = ["sweep", "--corpus", str(docs), "--topics", str(tmp_path / "t.tsv"), "--qrels", str(tmp_path / "q.txt"),
            "--grid", "k1=0.6,1.2", "--folds", "2", "--permutations", "50", "--html", str(html)]
    assert main(args) == 0
    first = html.stat().st_mtime_ns
    assert main(args) == 0, capsys.readouterr().err
    assert html.stat().st_mtime_ns >= first
    assert "refusing to overwrite" not in capsys.readouterr().err
