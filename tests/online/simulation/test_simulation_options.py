"""SimulationOptions: every old keyword of simulate gives the result of the options object that
holds it (issue 28 item 3); its checks; conflicts refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from serpeval.core.errors import OptionError
from serpeval.online.clicks import click_model
from serpeval.online.simulation import SimulationOptions
from serpeval.online.simulation.simulator import make_world, simulate

QRELS = {
    "q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 0, "d5": 2, "d6": 1},
    "q2": {"e1": 0, "e2": 1, "e3": 0, "e4": 2},
}
RUN_A = {"q1": {"d1": 6, "d2": 5, "d3": 4, "d4": 3, "d6": 2}, "q2": {"e1": 4, "e2": 3, "e3": 2, "e4": 1}}
RUN_B = {"q1": {"d5": 6, "d4": 5, "d1": 4, "x9": 3}, "q2": {"e4": 4, "e2": 3, "e1": 2}}

#: what every call shares: a small bootstrap, a small Monte Carlo check, a seed
BASE = {"bootstrap": 40, "mc_impressions": 20_000, "replicates": 4, "rng": 0}


def _outcome(**kw: Any) -> Any:
    try:
        res = simulate(QRELS, RUN_A, RUN_B, **kw)
    except Exception as exc:  # the two forms must raise the same
        return type(exc).__name__, str(exc)
    return str(res.to_dicts()), res.settings, res.click_model


# (keyword, value): each changes the simulation from the default one.
CASES = [
    ("click_model", "informational"), ("k", 3), ("impressions_per_user", 1), ("user_sd", 0.0),
    ("stop_requires_click", False), ("ignore_shared", True), ("alpha", 0.2), ("power", 0.5),
    ("confidence", 0.5), ("bootstrap", 30), ("mc_impressions", 0), ("replicates", 3), ("rng", 1),
]


@pytest.mark.parametrize(("keyword", "value"), CASES, ids=[c[0] for c in CASES])
def test_keyword_equals_options(keyword: str, value: Any) -> None:
    fields = BASE | {"click_model": "navigational"}
    old = _outcome(**(fields | {keyword: value}))
    assert old == _outcome(options=SimulationOptions(**(fields | {keyword: value})))
    assert old != _outcome(options=SimulationOptions(**fields))


def test_a_click_model_object_and_a_world() -> None:
    world = make_world(QRELS, RUN_A, RUN_B, k=4)
    model = click_model("navigational", world.levels)
    options = SimulationOptions(click_model=model, mc_impressions=0, bootstrap=20, rng=3)
    a = simulate(world=world, options=options)
    b = simulate(world=world, click_model=model, mc_impressions=0, bootstrap=20, rng=3)
    assert str(a.to_dicts()) == str(b.to_dicts())


def test_conflicts_and_unknown_keywords() -> None:
    options = SimulationOptions(k=5, mc_impressions=0)
    with pytest.raises(TypeError, match=r"^simulate\(\): k=4 conflicts with SimulationOptions.k=5; "):
        simulate(QRELS, RUN_A, RUN_B, options, k=4)
    with pytest.raises(TypeError, match=r"^simulate\(\) got an unexpected keyword argument 'clickmodel'"):
        simulate(QRELS, RUN_A, RUN_B, clickmodel="perfect")
    same = simulate(QRELS, RUN_A, RUN_B, options, k=5, bootstrap=2000)   # equal values: one option
    assert same.settings["k"] == 5


@pytest.mark.parametrize(("fields", "message"), [
    ({"click_model": 3}, r"^click_model must be a preset name or a ClickModel; got 3\.$"),
    ({"k": 0}, r"^k must be an integer >= 1; got 0\.$"),
    ({"stop_requires_click": "yes"}, r"^stop_requires_click must be True, False or None; got 'yes'\.$"),
    ({"alpha": 1.0}, r"^alpha must be strictly between 0 and 1; got 1\.0\.$"),
    ({"power": True}, r"^power must be strictly between 0 and 1; got True\.$"),
    ({"confidence": 0}, r"^confidence must be strictly between 0 and 1; got 0\.$"),
    ({"user_sd": -0.1}, r"^user_sd must be >= 0; got -0\.1\.$"),
    ({"user_sd": float("nan")}, r"^user_sd must be >= 0; got nan\.$"),
    ({"impressions_per_user": 0}, r"^impressions_per_user must be an integer >= 1; got 0\.$"),
    ({"bootstrap": 1.5}, r"^bootstrap must be an integer >= 1; got 1\.5\.$"),
    ({"replicates": 0}, r"^replicates must be an integer >= 1; got 0\.$"),
    ({"mc_impressions": -1}, r"^mc_impressions must be an integer >= 0; got -1\.$"),
    ({"rng": "seed"}, r"^rng must be an int seed >= 0"),
])
def test_options_check_their_fields(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        SimulationOptions(**fields)


def test_replace_and_a_generator() -> None:
    o = SimulationOptions(rng=np.random.default_rng(1))
    assert dataclasses.replace(o, k=5).k == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.k = 3  # type: ignore[misc]
