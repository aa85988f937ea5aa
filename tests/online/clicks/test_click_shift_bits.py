"""The click models' shifted attractiveness (``_shifted_gather``: odds per item of the table,
gathered, then scaled in place) gives the bits of the formula it replaced
(``_shifted(_gather(...))``: the logit shift over every cell, then the clamps), with
attractiveness 0, -0.0 and 1, empty slots, shifts per impression or per cell, shifts that
overflow ``exp`` and NaN shifts; and a generated log's clicks are the same."""

from __future__ import annotations

import numpy as np
import pytest

from serpeval.online.clicks.models import DBN, _gather, _shifted, _shifted_gather

TABLES = {
    "inside": np.array([0.05, 0.3, 0.5, 0.7, 0.95]),
    "zero and one": np.array([0.0, 0.2, 1.0, 0.6]),
    "negative zero": np.array([-0.0, 0.4, 0.9]),
    "one only": np.array([1.0]),
}
SHIFTS = ["none", "zeros", "small", "wide", "overflow", "nan", "per cell", "scalar"]


def _shift(kind: str, rng: np.random.Generator, k: int, n: int):
    if kind == "none":
        return None
    if kind == "zeros":
        return np.zeros(n)
    if kind == "small":
        return rng.normal(0, 0.5, n)
    if kind == "wide":
        return rng.normal(0, 40, n)
    if kind == "overflow":
        return np.where(rng.random(n) < 0.3, 800.0, rng.normal(0, 1, n)) * rng.choice([-1, 1], n)
    if kind == "nan":
        return np.where(rng.random(n) < 0.2, np.nan, rng.normal(0, 1, n))
    if kind == "per cell":
        return rng.normal(0, 2, (k, n))
    return 0.7


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("kind", SHIFTS)
def test_shifted_gather_is_the_formula_bit_for_bit(table: str, kind: str) -> None:
    rng = np.random.default_rng(len(table) * 31 + len(kind))
    values = TABLES[table]
    k, n = 4, 3000
    items = rng.integers(-1, len(values), size=(k, n)).astype(np.int32)   # -1: empty slot
    shift = _shift(kind, rng, k, n)
    with np.errstate(all="ignore"):
        expected = _shifted(_gather(values, items), shift)
    got = _shifted_gather(values, items, shift)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()


def test_sampled_clicks_are_those_of_the_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    from serpeval.online.clicks import models

    model = DBN(np.array([0.0, 0.3, 0.6, 1.0]), np.array([0.2, 0.4, 0.6, 0.8]), gamma=0.8)
    rng = np.random.default_rng(5)
    items = rng.integers(-1, 4, size=(20_000, 6))
    shift = rng.normal(0, 1, 20_000)
    fast = model.sample(items, 9, shift=shift)
    monkeypatch.setattr(models, "_shifted_gather", lambda t, i, s: _shifted(_gather(t, i), s))
    assert np.array_equal(fast, model.sample(items, 9, shift=shift))
    assert fast.any()


@pytest.mark.parametrize("gamma", [0.0, 0.3, 0.828, 1.0])
def test_dbn_cells_are_the_formula_bit_for_bit(gamma: float) -> None:
    """DBN's ``sc = 1 - (1 - sigma) gamma`` per item of the table, then gathered: the bits of
    the formula over the gathered cells, empty slots (sigma 0) included."""
    rng = np.random.default_rng(3)
    model = DBN(np.array([0.0, 0.3, 0.6, 1.0]), np.array([0.0, 0.25, 0.6, 1.0]), gamma=gamma)
    items = rng.integers(-1, 4, size=(5, 4000)).astype(np.int32)
    shift = rng.normal(0, 1, 4000)
    c, sc, sn = model.cells(items, shift)
    expected_sc = 1.0 - (1.0 - _gather(model.satisfaction, items)) * model.gamma
    assert sc.tobytes() == expected_sc.tobytes()
    assert c.tobytes() == _shifted(_gather(model.attractiveness, items), shift).tobytes()
    assert sn.tobytes() == np.full((5, 4000), 1.0 - gamma).tobytes()
