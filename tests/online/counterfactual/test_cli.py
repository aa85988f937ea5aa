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


def test_generate_logs_probabilistic_then_counterfactual(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """The docs' workflow from the CLI: generate-logs --interleaving probabilistic writes a log that
    serpeval counterfactual reads (logged propensities checked against the recomputed ones)."""
    from serpeval.online.counterfactual import read_log
    from serpeval.online.interleaving import propensities

    folder = tmp_path / "pil"
    assert main(["generate-logs", str(folder), "--users", "100", "--interleaving", "probabilistic",
                 "--tau", "2", "--seed", "3"]) == 0
    table = pq.read_table(folder / "impressions.parquet")
    log = read_log(table)
    assert log.design == "probabilistic"
    assert log.tau == 2.0
    row = table.slice(7, 1).to_pylist()[0]
    want = propensities(row["logging_rankings"], row["shown"], tau=2.0).list_probability
    assert row["propensity"] == pytest.approx(want, rel=1e-12)
    run = tmp_path / "B.run"  # ranker B: the second logging ranking of each query
    first = {}
    for q, r in zip(table.column("query_id").to_pylist(), table.column("logging_rankings").to_pylist(), strict=True):
        first.setdefault(q, r[1])
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {20 - i} B\n" for q, docs in first.items() for i, d in enumerate(docs)))
    capsys.readouterr()
    assert main(["counterfactual", str(folder / "impressions.parquet"), "-c", str(run), "-k", "3", "-f", "json",
                 "--estimator", "interleaved", "--estimator", "snips"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {e["estimator"] for e in payload["estimates"]} == {"interleaved", "snips"}
    # team draft stays the flag's default; --tau is refused without probabilistic interleaving
    assert main(["generate-logs", str(tmp_path / "td"), "--users", "200", "--interleaving"]) == 0
    assert "logging_design" not in pq.read_table(tmp_path / "td" / "impressions.parquet").column_names
    assert main(["generate-logs", str(tmp_path / "x"), "--users", "200", "--interleaving", "--tau", "2"]) != 0
    assert "--tau 2 applies to probabilistic interleaving only" in capsys.readouterr().err
