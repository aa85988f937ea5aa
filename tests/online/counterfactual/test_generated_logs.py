"""The simulator's log generation records what counterfactual estimates need (issue 32)."""

from __future__ import annotations

import pytest

from serpeval.core.errors import OptionError
from serpeval.online.counterfactual import counterfactual
from serpeval.online.interleaving import propensities
from serpeval.online.simulation.generate import LogGenerator


@pytest.fixture(scope="module")
def generated():
    g = LogGenerator(3000, interleaving="probabilistic", noise_b=0.8, k=3, n_queries=50, user_mean=0.0,
                     user_sd=0.3, click_model="navigational")
    return g, g.generate(rng=1).impressions


def test_rows_carry_exact_propensities(generated) -> None:
    _, table = generated
    for i in (0, 5, 999):
        row = table.slice(i, 1).to_pylist()[0]
        assert row["logging_design"] == "probabilistic"
        assert row["propensity"] == pytest.approx(
            propensities(row["logging_rankings"], row["shown"], tau=row["tau"]).list_probability, rel=1e-12)
        assert len(row["teams"]) == len(row["shown"]) == row["n_shown"] == 3


def test_estimate_agrees_with_the_generators_exact_expectation(generated) -> None:
    g, table = generated
    world = g.world()
    lists = {str(q): [f"d{c}" for c in world.rank_b[q]] for q in range(g.n_queries)}
    res = counterfactual(table, {"B": lists}, estimators=["snips", "dr"])
    truth = g.expected("treatment")["ctr"]  # expected clicks per impression of ranker B
    for name in ("snips", "dr"):
        est = res.get("B", name)
        assert est.refused is None
        assert abs(est.value - truth) < 4 * est.se, name


def test_bad_interleaving_option() -> None:
    with pytest.raises(OptionError, match="interleaving must be"):
        LogGenerator(10, interleaving="sometimes")
