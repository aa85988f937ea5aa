"""The EM fits' fast paths give the bits of the formulas they replaced: the log-likelihood
summed slot by slot as the forward filter runs, the no-click tail in place (one product per
slot when no user stops without a click), the posterior examination with the clicked
impressions by index, and the DBN and DCM cells without the model; and so do the EM fits'
reused buffers (``out``), shared ``1 - c`` (``skip``) and broadcast stop probabilities (one
number, or one per slot)."""

from __future__ import annotations

import numpy as np
import pytest

from serpeval.online.clicks import kernel
from serpeval.online.clicks.fit import _dbn_cells, _dcm_cells, _masked_sum
from serpeval.online.clicks.models import DBN, DCM
from serpeval.online.common import last_click


def _log_likelihood_by_array(c, sc, sn, clicks):
    """The formula as it was: logs of the whole array of conditional click probabilities."""
    q = kernel.conditional_click_probabilities(c, sc, sn, clicks)
    np.subtract(1.0, q, out=q, where=~clicks)
    np.maximum(q, kernel.TINY, out=q)
    return np.log(q, out=q).sum(axis=0)


def _tail_by_formula(c, sn):
    k, n = c.shape
    out = np.ones((k + 1, n))
    for r in range(k - 1, -1, -1):
        out[r] = (1.0 - c[r]) * (sn[r] + (1.0 - sn[r]) * out[r + 1])
    return out


def _posterior_by_masks(c, sc, sn, clicks):
    """The posterior examination as it was: masked copies over every impression."""
    k, n = c.shape
    tail = _tail_by_formula(c, sn)
    last = last_click(clicks)
    cols = np.arange(n)
    f_start = np.where(last >= 0, 1.0 - sc[np.maximum(last, 0), cols], 1.0)
    after = last + 1
    z = np.maximum((1.0 - f_start) + f_start * tail[after, cols], kernel.TINY)
    p_exam = np.ones((k, n))
    f = np.zeros(n)
    for r in range(k):
        np.copyto(f, f_start, where=after == r)
        np.copyto(p_exam[r], f * tail[r] / z, where=after <= r)
        f *= 1.0 - c[r]
        if np.any(sn):
            f *= 1.0 - sn[r]
    return p_exam, tail


def _cells(rng, k, n, stops):
    c = rng.random((k, n))
    c[rng.random((k, n)) < 0.05] = 0.0
    c[rng.random((k, n)) < 0.02] = 1.0  # a certain click: the filter's floor
    sc = rng.random((k, n))
    sn = rng.random((k, n)) * stops
    return c, sc, sn, rng.random((k, n)) < 0.3


@pytest.mark.parametrize("stops", [0.0, 1.0])
@pytest.mark.parametrize("k", [1, 2, 10])
def test_log_likelihood_and_tail_are_the_formulas_bit_for_bit(k, stops) -> None:
    rng = np.random.default_rng(k + int(stops))
    c, sc, sn, clicks = _cells(rng, k, 3_001, stops)
    assert kernel.log_likelihood(c, sc, sn, clicks).tobytes() == _log_likelihood_by_array(c, sc, sn, clicks).tobytes()
    assert kernel.no_click_tail(c, sn).tobytes() == _tail_by_formula(c, sn).tobytes()
    for got, want in zip(kernel.posterior_examination(c, sc, sn, clicks), _posterior_by_masks(c, sc, sn, clicks),
                         strict=True):
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("stop", [0.0, 0.1, 0.63, 1.0])
@pytest.mark.parametrize("k", [1, 2, 10])
def test_fit_paths_are_the_formulas_bit_for_bit(k, stop) -> None:
    """Broadcast ``sc`` / ``sn`` (one number per slot, one number everywhere), ``skip``, the
    layout and reused (dirty) ``out`` arrays give the formulas' bits."""
    rng = np.random.default_rng(10 * k + int(100 * stop))
    n = 2_003
    c, sc, _, clicks = _cells(rng, k, n, 0.0)
    sc_rows = np.broadcast_to(rng.random((k, 1)), (k, n))
    sn_one = np.broadcast_to(np.float64(stop), (k, n))
    last = last_click(clicks)
    layout = kernel.posterior_layout(last, k)
    skip = 1.0 - c
    by_slot = [np.flatnonzero(row) for row in clicks]
    out = (np.full((k, n), np.nan), np.full((k + 1, n), np.nan))
    for sc_ in (sc, sc_rows):
        want_sc, want_sn = np.ascontiguousarray(sc_), np.ascontiguousarray(sn_one)
        want = _posterior_by_masks(c, want_sc, want_sn, clicks)
        got = kernel.posterior_examination(c, sc_, sn_one, clicks, last, layout, out, skip)
        assert got[0] is out[0]
        assert got[1] is out[1]
        for a, b in zip(got, want, strict=True):
            assert a.tobytes() == b.tobytes()
        assert kernel.posterior_examination(c, sc_, sn_one, clicks)[0].tobytes() == want[0].tobytes()
        ll = _log_likelihood_by_array(c, want_sc, want_sn, clicks)
        assert kernel.log_likelihood(c, sc_, sn_one, clicks, by_slot, skip).tobytes() == ll.tobytes()
        assert kernel.log_likelihood(c, sc_, sn_one, clicks).tobytes() == ll.tobytes()
    assert kernel.no_click_tail(c, sn_one, skip=skip).tobytes() == _tail_by_formula(c, want_sn).tobytes()


def test_dbn_cells_are_the_models_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    alpha, sigma = rng.random(50), rng.random(50)
    items = rng.integers(-1, 50, size=(10, 400))  # -1: empty slots
    for g in (0.0, 0.37, 0.9, 1.0):
        fast = _dbn_cells(alpha, sigma, g, items, (np.full(items.shape, np.nan), np.full(items.shape, np.nan)))
        model = DBN(attractiveness=alpha, satisfaction=sigma, gamma=g).cells(items)
        for a, b in zip(fast, model, strict=True):
            assert a.shape == b.shape
            assert np.ascontiguousarray(a).tobytes() == b.tobytes()


def test_dcm_cells_are_the_models_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    alpha = rng.random(50)
    items = rng.integers(-1, 50, size=(10, 400))  # -1: empty slots
    for lam in (rng.random(10), rng.random(12), np.zeros(10), np.ones(10)):
        fast = _dcm_cells(alpha, lam, items, np.full(items.shape, np.nan))
        model = DCM(attractiveness=alpha, continuation=lam).cells(items)
        for a, b in zip(fast, model, strict=True):
            assert a.shape == b.shape
            assert np.ascontiguousarray(a).tobytes() == b.tobytes()


def test_masked_sum_is_the_sum_of_the_masked_values() -> None:
    rng = np.random.default_rng(4)
    values = rng.random((9, 5_003)) * 10.0 ** rng.integers(-8, 8, size=(9, 5_003))
    mask = rng.random(values.shape) < 0.7
    assert _masked_sum(values, mask, False) == float(values[mask].sum())
    every = np.ones(values.shape, dtype=bool)
    assert np.float64(_masked_sum(values, every, True)).tobytes() == np.float64(values[every].sum()).tobytes()
