"""Interleaving logs: credit computed in the engine equals credit computed from the raw lists."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from serpeval.core.errors import InputError, OptionError
from serpeval.online.experiments import analyze_interleaving_logs
from serpeval.online.interleaving.analysis import analyze_counts, analyze_outcomes


def test_log_analysis_is_the_counts_analysis_of_python_counts(interleaving_logs, il_outcomes):
    """Per-user counts from the raw lists, ordered as the engine's (wins, losses, impressions)
    patterns: the same numbers exactly, the bootstrap CI included."""
    outcomes, users = il_outcomes(interleaving_logs.impressions)
    ids, codes = np.unique(users, return_inverse=True)
    wins, losses, ties = (np.bincount(codes[outcomes == v], minlength=len(ids)) for v in (1, -1, 0))
    order = np.lexsort((wins + losses + ties, losses, wins))
    direct = analyze_counts(wins[order], losses[order], ties[order], n_resamples=1000, rng=4)
    report = analyze_interleaving_logs(interleaving_logs.impressions, n_resamples=1000, rng=4)
    assert report.analysis == direct


def test_engine_credit_equals_python_credit(interleaving_logs, il_outcomes) -> None:
    outcomes, users = il_outcomes(interleaving_logs.impressions)
    report = analyze_interleaving_logs(interleaving_logs.impressions, n_resamples=2000, rng=3)
    direct = analyze_outcomes(outcomes, users, n_resamples=2000, rng=3)
    got = report.analysis
    for field in (
        "impressions",
        "wins_a",
        "wins_b",
        "ties",
        "delta",
        "p_value",
        "units",
        "prefer_a",
        "prefer_b",
        "preference",
        "preference_p_value",
    ):
        assert getattr(got, field) == getattr(direct, field), field
    # the bootstrap sees the same units in another order: the same distribution, other draws
    assert got.ci_low == pytest.approx(direct.ci_low, abs=0.006)
    assert got.ci_high == pytest.approx(direct.ci_high, abs=0.006)
    assert got.winner == "B"  # ranker B is the less noisy one
    assert got.delta > 0
    assert got.ci_low > 0
    assert got.preference > 0
    assert report.clicks["team A"] + report.clicks["team B"] == int(
        np.sum([len(c) for c in interleaving_logs.impressions.column("clicks").to_pylist()])
    )
    assert all(check.ok for check in report.checks)


@pytest.mark.parametrize("unit", ["query", "user_query", "impression"])
def test_other_units(interleaving_logs, il_outcomes, unit: str) -> None:
    outcomes, users = il_outcomes(interleaving_logs.impressions)
    queries = interleaving_logs.impressions.column("query_id").to_numpy()
    labels = {"query": queries, "user_query": users * 10_000 + queries, "impression": None}[unit]
    direct = analyze_outcomes(outcomes, labels, n_resamples=200, rng=0)
    got = analyze_interleaving_logs(
        interleaving_logs.impressions, unit=unit, n_resamples=200, rng=0
    ).analysis
    assert (got.units, got.prefer_a, got.prefer_b) == (
        direct.units,
        direct.prefer_a,
        direct.prefer_b,
    )
    assert got.unit == unit


def test_team_balance_check_catches_a_broken_drafter() -> None:
    n = 400
    table = pa.table(
        {
            "impression_id": np.arange(n),
            "user_id": np.arange(n) % 50,
            "n_shown": np.full(n, 4),
            "teams": [["A", "B", "A", "B"]] * n,  # A always picks first: no coin
            "clicks": [[1] if i % 2 else [2] for i in range(n)],
        }
    )
    report = analyze_interleaving_logs(table, n_resamples=100, rng=0)
    failed = [c.name for c in report.checks if not c.ok]
    assert "first-pick balance" in failed
    assert "per-position team balance" in failed
    assert any(note.startswith("CHECK FAILED: first-pick balance") for note in report.notes())
    assert report.analysis.wins_a == report.analysis.wins_b == n // 2


def test_custom_labels_neutral_results_and_errors() -> None:
    table = pa.table(
        {
            "impression_id": [1, 2, 3],
            "user_id": [1, 2, 3],
            "n_shown": [3, 3, 3],
            "teams": [["bm25", "dense", "both"]] * 3,
            "clicks": [[1], [2, 3], [3]],
        }
    )
    report = analyze_interleaving_logs(table, teams=("bm25", "dense"), n_resamples=50, rng=0)
    # impression 1: bm25 wins; 2: dense wins (the click on 'both' earns no credit); 3: tie
    assert (report.analysis.wins_a, report.analysis.wins_b, report.analysis.ties) == (1, 1, 1)
    assert report.clicks == {"team A": 1, "team B": 1, "other": 2}
    with pytest.raises(InputError, match="needs column 'teams'"):
        analyze_interleaving_logs(table.drop_columns(["teams"]))
    with pytest.raises(OptionError, match="unit must be"):
        analyze_interleaving_logs(table, unit="session")
    with pytest.raises(OptionError, match="needs the query_id"):
        analyze_interleaving_logs(table, teams=("bm25", "dense"), unit="query")


def test_a_result_clicked_twice_credits_its_team_once_as_credit_does() -> None:
    """A repeated click on one result (7,201 of the Yandex sample's 50,321 clicks repeat one)
    was credited once per click by the log analysis and once by the serving side's credit():
    teams A B A B with clicks [1, 1, 2] made A the winner (2 - 1) where credit() says tie
    (1 - 1). Now both give the same outcome on every impression. Hand-worked outcomes of the
    first four: tie, B, tie, tie."""
    from serpeval.online.interleaving import credit, interleave

    rng = np.random.default_rng(5)
    rows = {"impression_id": [], "user_id": [], "n_shown": [], "teams": [], "clicks": []}
    outcomes = []
    fixed = [(["A", "B", "A", "B"], [1, 1, 2]), (["A", "B", "A", "B"], [2, 2, 2]),
             (["B", "A", "B", "A"], [1, 2, 2, 2]), (["A", "B", "A", "B"], [])]
    for i in range(400):
        if i < len(fixed):
            labels, clicks = fixed[i]
            shown = interleave([["a1", "a2"], ["b1", "b2"]], "team_draft", k=4, rng=0)
            team_of = {"A": 0, "B": 1}
            shown = type(shown).from_dict({**shown.to_dict(), "teams": [team_of[t] for t in labels]})
        else:
            shown = interleave([[f"a{j}" for j in range(8)], [f"b{j}" for j in range(8)]], "team_draft", k=6,
                               rng=int(rng.integers(1 << 30)))
            labels = ["A" if t == 0 else "B" for t in shown.teams]
            clicks = sorted(rng.choice(np.arange(1, 7), size=int(rng.integers(0, 5)), replace=True).tolist())
        outcome = credit(shown, [c - 1 for c in clicks])
        outcomes.append(int(np.sign(outcome.credits[0] - outcome.credits[1])))
        rows["impression_id"].append(i)
        rows["user_id"].append(i % 37)
        rows["n_shown"].append(len(labels))
        rows["teams"].append(labels)
        rows["clicks"].append(clicks)
    assert outcomes[:4] == [0, -1, 0, 0]
    assert sum(len(c) != len(set(c)) for c in rows["clicks"]) > 50  # many impressions repeat a click
    got = analyze_interleaving_logs(pa.table(rows), n_resamples=200, rng=0).analysis
    direct = analyze_outcomes(np.array(outcomes), np.array(rows["user_id"]), n_resamples=200, rng=0)
    for field in ("impressions", "wins_a", "wins_b", "ties", "delta", "p_value", "prefer_a", "prefer_b"):
        assert getattr(got, field) == getattr(direct, field), field
