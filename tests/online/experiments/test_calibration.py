"""The tests reject at the nominal rate under A/A and find an injected effect at the planned power.

Fast versions (seeded) of ``bench/ab_calibration.py``: 2,000 A/A experiments in one log,
analysed in one query; a planned effect over 400 experiments.
"""

from __future__ import annotations

import pytest

from serpeval.online.experiments.calibration import rejection_rates
from serpeval.online.simulation.generate import LogGenerator
from serpeval.stats.power import sample_size


@pytest.fixture(scope="module")
def aa_rates():
    # 2,000 A/A experiments x 300 users (150 per arm), ~1.2M impressions
    logs = LogGenerator(2000 * 300, experiments=2000, impressions_per_user=2).generate(rng=11)
    return {
        (r["metric"], r["analysis"].split(":")[0]): r
        for r in rejection_rates(logs.impressions, metrics=["ctr", "mrr"])
    }


@pytest.mark.parametrize("metric", ["ctr", "mrr"])
def test_aa_rejects_at_five_percent(aa_rates, metric: str) -> None:
    row = aa_rates[(metric, "clustered by user_id")]
    assert row["experiments"] == 2000
    assert abs(row["rate"] - 0.05) <= 0.01, row


def test_ignoring_users_inflates_false_positives(aa_rates) -> None:
    # the same logs analysed as if impressions were independent: the mistake the delta method avoids
    for metric in ("ctr", "mrr"):
        assert (
            aa_rates[(metric, "naive")]["rate"]
            > aa_rates[(metric, "clustered by user_id")]["rate"] + 0.02
        )


def test_injected_effect_is_detected_at_the_planned_power() -> None:
    effect = 0.3  # logit shift of the treatment's attractiveness
    world = LogGenerator(2, effect=effect)
    truth = world.expected("treatment")["ctr"] - world.expected("control")["ctr"]  # exact
    # per-unit delta-method variance of CTR from an independent pilot (A/A, other seed)
    pilot = LogGenerator(20_000).generate(rng=21)
    from serpeval.online.experiments import plan_ab

    baseline = plan_ab(pilot.impressions, metrics="ctr").to_dicts()[0]
    per_arm = round(sample_size(truth, baseline["sd_per_unit"] ** 2, power=0.8))
    logs = LogGenerator(400 * 2 * per_arm, experiments=400, effect=effect).generate(rng=22)
    row = rejection_rates(logs.impressions, metrics="ctr", naive=False)[0]
    assert row["experiments"] == 400
    assert abs(row["units_per_arm"] - per_arm) < 0.05 * per_arm
    assert abs(row["rate"] - 0.8) <= 0.06, row  # 3 standard errors of 400 Bernoulli(.8)
    assert row["mean_effect"] == pytest.approx(truth, rel=0.05)


def test_an_experiment_with_two_treatments_is_refused() -> None:
    from serpeval.core.errors import InputError

    logs = LogGenerator(600, experiments=2, variants=("control", "b", "c")).generate(rng=3)
    with pytest.raises(InputError, match="more than one arm besides the control 'control'"):
        rejection_rates(logs.impressions, metrics="ctr", naive=False)


def test_experiments_too_small_for_a_test_are_refused() -> None:
    from serpeval.core.errors import InputError

    logs = LogGenerator(40, experiments=20).generate(rng=3)  # 2 users per experiment
    with pytest.raises(InputError, match="no experiment has at least 2 units in both arms"):
        rejection_rates(logs.impressions, metrics="ctr", naive=False)
