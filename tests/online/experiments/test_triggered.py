"""Triggered analysis (counterfactual logging): triggered and untriggered estimates agree in
expectation after scaling, and triggering reduces the variance.

The logs are generated with ranker B differing from A on 30% of the queries
(``changed_queries=0.3``); the generator knows the exact expected CTR and abandonment of each
arm (click-model expectations, no sampling), and the exact trigger rate
(Σ_q P(q) 1{the rankings differ}). Tolerances are 4 standard errors of the estimate being
checked (a false failure has probability below 1e-4 per check).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow.compute as pc
import pytest

from serpeval.core.errors import InputError, OptionError
from serpeval.online.experiments.triggered import analyze_ab_triggered, analyze_interleaving_triggered
from serpeval.online.simulation.generate import LogGenerator

Z = 4.0


@pytest.fixture(scope="module")
def ab() -> tuple[LogGenerator, object]:
    generator = LogGenerator(12_000, noise_b=0.5, changed_queries=0.3)
    return generator, generator.generate(rng=21)


@pytest.fixture(scope="module")
def ab_result(ab):
    return analyze_ab_triggered(ab[1].impressions, metrics=["ctr", "abandonment", "clicks_per_user"])


def test_trigger_rate_is_the_exact_one(ab, ab_result) -> None:
    """Queries are drawn independently per impression, so the triggered share is a binomial
    proportion around Σ_q P(q) 1{triggered}."""
    generator, logs = ab
    world = generator.world()
    exact = float(world.popularity @ world.triggered(0.0))
    n = logs.impressions.num_rows
    assert abs(ab_result.trigger_rate - exact) <= Z * math.sqrt(exact * (1 - exact) / n)
    flags = logs.impressions.column("triggered").to_numpy()
    assert ab_result.trigger_rate == pytest.approx(flags.mean(), rel=1e-12)  # no exclusions here
    for rate in ab_result.rates.values():  # each arm's share: the same binomial, half the size
        assert abs(rate - exact) <= Z * math.sqrt(exact * (1 - exact) / (n / 2))


@pytest.mark.parametrize("metric", ["ctr", "abandonment"])
def test_both_estimates_agree_with_the_exact_effect(ab, ab_result, metric: str) -> None:
    """Untriggered and scaled triggered estimates are both within 4 of their own SEs
    (SE = CI half-width / 1.96) of the exact effect: they agree in expectation."""
    generator, _ = ab
    exact = generator.expected("treatment")[metric] - generator.expected("control")[metric]
    row = next(r for r in ab_result.to_dicts() if r["metric"] == metric)
    se_all = (row["ci_upper"] - row["ci_lower"]) / (2 * 1.959964)
    se_trig = (row["triggered_ci_upper"] - row["triggered_ci_lower"]) / (2 * 1.959964)
    assert abs(row["effect"] - exact) <= Z * se_all
    assert abs(row["triggered_effect"] - exact) <= Z * se_trig


def _clustered_se(table, keep: np.ndarray) -> float:
    """SE of the CTR difference, delta method clustered by user, over the impressions in
    ``keep`` (NumPy/pandas from the Arrow lists, independent of the engine):
    Var(R_arm) = Var_u(Y_u - R X_u) / (n_u mean(X_u)²) with Y = clicks, X = impressions."""
    import pandas as pd

    frame = pd.DataFrame({
        "user": table.column("user_id").to_numpy()[keep],
        "arm": np.asarray(table.column("variant").to_pylist())[keep],
        "clicks": pc.list_value_length(table.column("clicks").combine_chunks()).to_numpy(
            zero_copy_only=False)[keep],
    })
    per_user = frame.groupby(["arm", "user"]).agg(y=("clicks", "sum"), x=("clicks", "size"))
    variance = 0.0
    for _, arm in per_user.groupby(level="arm"):
        ratio = arm.y.sum() / arm.x.sum()
        variance += (arm.y - ratio * arm.x).var(ddof=1) / (len(arm) * arm.x.mean() ** 2)
    return math.sqrt(variance)


def test_triggering_reduces_the_variance(ab, ab_result) -> None:
    """The engine's SE ratio equals r SE_trig / SE_all re-derived with NumPy (delta method
    clustered by user), and is below 1. Without clustering it would be about sqrt(r v_t / v)
    (v, v_t: click variances per impression); clustering makes triggering help more, since a
    user's click propensity then spreads over fewer impressions."""
    table = ab[1].impressions
    flags = table.column("triggered").to_numpy()
    r = flags.mean()
    expected = r * _clustered_se(table, flags) / _clustered_se(table, np.ones(len(flags), dtype=bool))
    ctr = next(row for row in ab_result.to_dicts() if row["metric"] == "ctr")
    assert ctr["se_ratio"] == pytest.approx(expected, rel=1e-6)
    assert ctr["se_ratio"] < 1.0
    per_user = next(row for row in ab_result.to_dicts() if row["metric"] == "clicks_per_user")
    assert per_user["scale"] == pytest.approx(ab_result.unit_trigger_rate)
    assert per_user["se_ratio"] < 1.0


def test_scaling_is_the_trigger_rate(ab_result) -> None:
    row = next(r for r in ab_result.to_dicts() if r["metric"] == "ctr")
    trig = next(c for c in ab_result.triggered.comparisons if c.metric == "ctr")
    assert row["triggered_effect"] == pytest.approx(trig.estimate.effect * ab_result.trigger_rate, rel=1e-12)
    assert row["triggered_p_value"] == trig.estimate.p_value


def test_refusals(ab) -> None:
    with pytest.raises(OptionError, match="cannot scale user_ctr"):
        analyze_ab_triggered(ab[1].impressions, metrics=["ctr", "user_ctr"])
    with pytest.raises(InputError, match=r"missing column\(s\) triggered"):
        analyze_ab_triggered(ab[1].impressions.drop_columns(["triggered"]), metrics=["ctr"])


@pytest.fixture(scope="module")
def il_logs():
    return LogGenerator(6_000, interleaving=True, noise_b=0.5, changed_queries=0.3).generate(rng=22)


def test_interleaving_triggered_agrees_and_is_tighter(il_logs) -> None:
    """Δ_all and r Δ_trig estimate the same number: on untriggered impressions both rankings
    show the same list, so team draft's outcome is a fair coin there. Their difference is
    r Δ_trig - Δ_all = (untriggered A wins - B wins) / 2N (Δ is B - A: positive when B is
    preferred), whose SE is computed from the untriggered outcomes (NumPy, independent of the
    engine)."""
    res = analyze_interleaving_triggered(il_logs.impressions, n_resamples=2000, rng=0, period=None)
    row = res.to_dicts()[0]
    table = il_logs.impressions
    teams, clicks = table.column("teams").to_pylist(), table.column("clicks").to_pylist()
    outcome = np.sign([sum(t[p - 1] == "A" for p in c) - sum(t[p - 1] == "B" for p in c)
                       for t, c in zip(teams, clicks, strict=True)])
    flags = table.column("triggered").to_numpy()
    n = len(outcome)
    untriggered = outcome[~flags]
    assert row["triggered delta"] - row["delta"] == pytest.approx(untriggered.sum() / (2 * n), abs=1e-12)
    se = math.sqrt(len(untriggered) * np.mean(untriggered ** 2)) / (2 * n)
    assert abs(untriggered.sum() / (2 * n)) <= Z * se
    assert row["trigger rate"] == pytest.approx(flags.mean())
    assert row["ci width ratio"] < 1.0


def test_ignore_shared_makes_untriggered_impressions_ties() -> None:
    """Drafted with ignore_shared, identical lists put every result on no team: untriggered
    impressions are ties, so Δ_all equals r Δ_trig exactly (the same wins and losses)."""
    logs = LogGenerator(1_500, interleaving=True, noise_b=0.5, changed_queries=0.3,
                        ignore_shared=True).generate(rng=23)
    row = analyze_interleaving_triggered(logs.impressions, n_resamples=200, rng=0, period=None).to_dicts()[0]
    assert row["triggered delta"] == pytest.approx(row["delta"], abs=1e-15)
