"""``serpeval counterfactual`` through main(), as a user runs it."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from serpeval.cli import main
from serpeval.online.counterfactual import counterfactual
from serpeval.online.simulation.counterfactual import by_grade, log_table, simulate_log, synthetic_pool


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cf")
    pool = synthetic_pool(30, k=3, pool_size=12, noises={"A": 1.5, "B": 1.0, "far": 0.2}, rng=1)
    pool = by_grade(pool, ("A", "B"), "C", noise=0.8, rng=2)
    log = simulate_log(pool, 8000, "navigational", rng=4)
    path = folder / "log.parquet"
    pq.write_table(log_table(log, experiment="exp"), path)
    runs = {}
    for name in ("B", "C", "far"):
        runs[name] = folder / f"{name}.run"
        runs[name].write_text("".join(f"{q} Q0 {d} {i + 1} {10 - i} {name}\n"
                                      for q, docs in pool.lists(name).items() for i, d in enumerate(docs)))
    return path, runs


def test_json_matches_the_api(files, capsys: pytest.CaptureFixture[str]) -> None:
    path, runs = files
    assert main(["counterfactual", str(path), "-c", str(runs["B"]), "-c", str(runs["far"]), "-k", "2",
                 "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    api = counterfactual(path, [str(runs["B"]), str(runs["far"])], k=2)
    assert [e["value"] for e in payload["estimates"]] == [e.value for e in api.estimates]
    assert payload["recommendation"] == api.recommendation()
    assert payload["ranking"][0]["candidate"] == "B"
    assert payload["ranking"][-1]["verdict"] == "no estimate"


def test_table_shows_ranking_refusals_and_sentence(files, capsys: pytest.CaptureFixture[str]) -> None:
    path, runs = files
    assert main(["counterfactual", str(path), "-c", str(runs["C"]), "-c", str(runs["far"]), "-k", "2",
                 "--ranking-only", "--estimator", "snips", "--estimator", "interleaved"]) == 0
    out = capsys.readouterr().out
    assert "Candidates ranked by estimated effect against A (clicks@2)" in out
    assert "could have been shown by the logging" in out
    assert "deserve" in out or "cannot be told apart" in out or "no candidate" in out.lower()


def test_bad_log_is_one_line(files, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path, runs = files
    table = pq.read_table(path).drop_columns(["logging_rankings"])
    bad = tmp_path / "deterministic.parquet"
    pq.write_table(table, bad)
    assert main(["counterfactual", str(bad), "-c", str(runs["B"])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "no logging propensities" in err[0]
