"""The one sampler and the exact probabilities of the cascade family of click models.

Every model in :mod:`serpeval.online.clicks` reduces, at each shown slot ``r`` of an
impression, to three numbers:

* ``c[r]``  - P(click at r | the user examines r);
* ``sc[r]`` - P(the user stops after r | examined r and clicked);
* ``sn[r]`` - P(the user stops after r | examined r and did not click).

The user examines slot 1, and slot r+1 iff she examined r and did not stop there. So

    P(E_1) = 1,   P(E_{r+1}) = P(E_r) * (1 - (c_r sc_r + (1 - c_r) sn_r)),
    P(C_r = 1) = P(E_r) c_r.

PBM is the member with ``sc = sn = 0`` (and ``c = examination_r * attractiveness``), the
cascade model has ``sc = 1, sn = 0``, DCM ``sc = 1 - lambda_r``, DBN
``sc = 1 - (1 - sigma) gamma, sn = 1 - gamma``, and the grade-table users of the
interleaving literature have ``sc = stop[grade]`` and ``sn = 0`` (stop only after a click)
or ``sn = stop[grade]`` (a stop coin at every examined slot).

**Layout.** Arrays here are *slot-major*: shape ``(k, n)``, one contiguous row per slot, so
that the loops over the k slots (10) touch contiguous memory; nothing loops over the n
impressions in Python.

**Sampling** uses one uniform per cell: ``u < c`` is the click; given a click, ``u / c`` is
again uniform, so ``u < c * sc`` is an independent stop coin with probability ``sc``; given
no click, ``(u - c) / (1 - c)`` is uniform, so ``u < c + (1 - c) * sn`` is one with
probability ``sn``. Uniforms are float32 (24-bit resolution: every probability is honoured
to within 6e-8), which halves the cost of the random numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.online.common import last_click

if TYPE_CHECKING:
    from numpy.typing import NDArray

Cells = tuple["NDArray[np.float64]", "NDArray[np.float64]", "NDArray[np.float64]"]

TINY = 1e-300  #: the floor of every probability before its log


def _any(values: NDArray[np.float64]) -> bool:
    """``bool(np.any(values))``, answered by the first value when it is not 0 (a DBN's stop
    probabilities are one value everywhere: no pass over the cells), and by the first row when
    the array repeats one row (strides 0: a broadcast, as an EM fit's cells are)."""
    if values.size == 0:
        return False
    if values.flat[0] != 0:
        return True
    return bool(np.any(values[0] if values.strides[0] == 0 else values))


def _one_value(values: NDArray[np.float64]) -> float | None:
    """The one value of ``values`` when it is a scalar broadcast to its shape (all strides 0,
    as an EM fit's DBN stop probabilities ``sn`` are), else None. Arithmetic with the Python
    float gives each cell the bits it gets with the array (the same IEEE operation on the same
    two numbers), without a pass to read the array."""
    if values.size > 0 and not any(values.strides):
        return float(values.flat[0])
    return None


def sample_clicks(c: NDArray[np.float64], sc: NDArray[np.float64], sn: NDArray[np.float64],
                  rng: np.random.Generator) -> NDArray[np.bool_]:
    """Clicks ``bool[k, n]`` for slot-major cells ``(c, sc, sn)``."""
    k, n = c.shape
    u = rng.random((k, n), dtype=np.float32)
    clicks = np.empty((k, n), dtype=bool)
    going = np.ones(n, dtype=bool)
    any_sn = _any(sn)
    for r in range(k):
        ur, cr = u[r], c[r]
        clicked = ur < cr
        np.logical_and(clicked, going, out=clicks[r])
        if r == k - 1:
            break
        if any_sn:
            stop = np.where(clicked, ur < cr * sc[r], ur < cr + (1.0 - cr) * sn[r])
        else:
            stop = ur < cr * sc[r]  # implies a click, since c * sc <= c
        going &= ~stop
    return clicks


def examination(c: NDArray[np.float64], sc: NDArray[np.float64],
                sn: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(E_r = 1) for every cell, no clicks observed (slot-major)."""
    out = np.ones_like(c)
    for r in range(1, c.shape[0]):
        out[r] = out[r - 1] * (1.0 - (c[r - 1] * sc[r - 1] + (1.0 - c[r - 1]) * sn[r - 1]))
    return out


def click_probabilities(c: NDArray[np.float64], sc: NDArray[np.float64],
                        sn: NDArray[np.float64]) -> NDArray[np.float64]:
    """Unconditional P(C_r = 1) = P(E_r) c_r for every cell (slot-major)."""
    return examination(c, sc, sn) * c


def no_click_tail(c: NDArray[np.float64], sn: NDArray[np.float64],
                  out: NDArray[np.float64] | None = None,
                  skip: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """``N[r]`` = P(no click at slots r..k | the user examines r), ``N[k] = 1`` (``(k+1, n)``).

    Backward recursion ``N_r = (1 - c_r) (sn_r + (1 - sn_r) N_{r+1})``. ``out``: a
    ``(k+1, n)`` float array to write it into (an EM fit reuses one at every iteration);
    ``skip``: ``1 - c``, when the caller has it (the same values as computing it here).
    """
    k, n = c.shape
    if out is None:
        out = np.empty((k + 1, n))
    out[k] = 1.0
    go_on = np.empty(n)
    if not _any(sn):  # sn + (1 - sn) N = N exactly when sn = 0 (N >= 0): one product per slot
        for r in range(k - 1, -1, -1):
            np.multiply(np.subtract(1.0, c[r], out=go_on) if skip is None else skip[r], out[r + 1], out=out[r])
        return out
    one = _one_value(sn)
    for r in range(k - 1, -1, -1):  # the formula's operations, in place
        if one is None:
            np.subtract(1.0, sn[r], out=go_on)
            go_on *= out[r + 1]
            go_on += sn[r]
        else:  # sn one number: (1 - sn) N + sn with the number (products commute bit for bit)
            np.multiply(out[r + 1], 1.0 - one, out=go_on)
            go_on += one
        np.multiply(np.subtract(1.0, c[r], out=out[r]) if skip is None else skip[r], go_on, out=out[r])
    return out


#: :func:`posterior_layout`: per slot r, the impressions whose slots after the last click
#: start at r, and ``(k, n)`` floats, 1.0 where a slot is at or above its impression's last
#: click and 0.0 below it.
Layout = tuple[list["NDArray[np.int64]"], "NDArray[np.float64]"]


def posterior_layout(last: NDArray[np.int64], k: int) -> Layout:
    """Per slot r: the impressions with ``last + 1 == r``, and per cell 1.0 where
    ``last + 1 > r`` (:func:`posterior_examination` resets them there and sets those to 1;
    they depend on the clicks only)."""
    after = last + 1
    return ([np.flatnonzero(after == r) for r in range(k)],
            (after > np.arange(k)[:, None]).astype(np.float64))


def posterior_examination(c: NDArray[np.float64], sc: NDArray[np.float64], sn: NDArray[np.float64],
                          clicks: NDArray[np.bool_], last: NDArray[np.int64] | None = None,
                          layout: Layout | None = None,
                          out: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
                          skip: NDArray[np.float64] | None = None,
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """P(E_r = 1 | all clicks of the impression) for every cell, and the no-click tail ``N``.

    Every slot up to the last click ``l`` was examined. After it, with
    ``f_{l+1} = 1 - sc_l`` (1 when there is no click), ``f_{r+1} = f_r (1-c_r)(1-sn_r)`` and
    ``N`` from :func:`no_click_tail`, ``P(E_r | C) = f_r N_r / Z`` with
    ``Z = (1 - f_{l+1}) + f_{l+1} N_{l+1}`` = P(no click after l | history).
    ``last``: :func:`~serpeval.online.common.last_click` of ``clicks``, when the caller
    already has it (an EM fit calls this at every iteration on the same clicks), and
    ``layout``: :func:`posterior_layout` of it. ``out``: ``(k, n)`` and ``(k+1, n)`` float
    arrays to write the two answers into (an EM fit reuses them at every iteration), and
    ``skip``: ``1 - c``, when the caller has it (an EM fit computes it once for this and
    :func:`log_likelihood` on the same cells).
    """
    k, n = c.shape
    tail = no_click_tail(c, sn, None if out is None else out[1], skip)
    if last is None:
        last = last_click(clicks)
    starts, above = posterior_layout(last, k) if layout is None else layout
    cols = np.arange(n)
    f_start = np.where(last >= 0, 1.0 - sc[np.maximum(last, 0), cols], 1.0)
    after = last + 1
    z = np.maximum((1.0 - f_start) + f_start * tail[after, cols], TINY)
    p_exam = np.empty((k, n)) if out is None else out[0]
    # f is exactly 0 up to the last click (zeros, times finite factors), so there f N / z is
    # 0.0 and adding ``above`` (1.0 there) gives 1.0; below it x + 0.0 is x (x >= 0): the
    # values of putting 1.0 at the cells above, bit for bit, in one contiguous pass.
    f = np.zeros(n)
    step = np.empty(n)
    stops = _any(sn)
    one = _one_value(sn)
    for r in range(k):
        np.put(f, starts[r], f_start.take(starts[r]))  # f_r, meaningful once r >= after
        row = p_exam[r]
        np.multiply(f, tail[r], out=row)
        row /= z
        row += above[r]  # 1 up to the last click
        f *= np.subtract(1.0, c[r], out=step) if skip is None else skip[r]
        if stops:  # f (1 - c_r)(1 - sn_r); with sn = 0 the factor is exactly 1
            if one is None:
                np.subtract(1.0, sn[r], out=step)
                f *= step
            else:
                f *= 1.0 - one
    return p_exam, tail


def conditional_click_probabilities(c: NDArray[np.float64], sc: NDArray[np.float64],
                                    sn: NDArray[np.float64],
                                    clicks: NDArray[np.bool_]) -> NDArray[np.float64]:
    """P(C_r = 1 | C_1..C_{r-1}) for every cell, given the observed clicks above it.

    Forward filter: ``e_1 = 1``; after a click at r, ``e_{r+1} = 1 - sc_r``; after a skip,
    ``e_{r+1} = e_r (1 - c_r)(1 - sn_r) / (1 - e_r c_r)``; the answer is ``e_r c_r``.
    """
    k, n = c.shape
    out = np.empty((k, n))
    e = np.ones(n)
    step = np.empty(n)
    below = np.empty(n)
    stops = _any(sn)
    for r in range(k):
        cr = c[r]
        np.multiply(e, cr, out=out[r])
        np.subtract(1.0, out[r], out=below)  # 1 - e c_r
        np.maximum(below, TINY, out=below)
        np.subtract(1.0, cr, out=step)
        e *= step  # e (1 - c_r) (1 - sn_r) / max(1 - e c_r, tiny); sn = 0: the factor is exactly 1
        if stops:
            np.subtract(1.0, sn[r], out=step)
            e *= step
        e /= below
        np.subtract(1.0, sc[r], out=step)
        np.copyto(e, step, where=clicks[r])
    return out


def log_likelihood(c: NDArray[np.float64], sc: NDArray[np.float64], sn: NDArray[np.float64],
                   clicks: NDArray[np.bool_], clicked: list[NDArray[np.int64]] | None = None,
                   skip: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Natural-log probability of each impression's whole click vector (``(n,)``).

    The sum of the logs of the conditional click probabilities (chain rule), each clipped
    away from 0.

    The forward filter of :func:`conditional_click_probabilities`, run here one slot at a time
    with each slot's log added as soon as it is known (slot-major rows stay in cache; no
    ``(k, n)`` array): the same operations on the same values as taking the logs of that
    function's array and summing them over the slots (NumPy sums axis 0 of a ``(k, n)`` array
    row after row, in order), so the same bits. ``clicked``: the impressions clicked at each
    slot (``np.flatnonzero(clicks[r])`` for every r), when the caller has them (an EM fit
    calls this at every iteration on the same clicks), and ``skip``: ``1 - c``, when the caller
    has it.
    """
    k, n = c.shape
    if clicked is None:
        clicked = [np.flatnonzero(row) for row in clicks]
    total = np.zeros(n)
    e = np.ones(n)
    observed = np.empty(n)
    step = np.empty(n)
    stops = _any(sn)
    one = _one_value(sn)
    for r in range(k):
        cr, on = c[r], clicked[r]
        np.multiply(e, cr, out=observed)  # q = P(C_r = 1 | the clicks above)
        q_on = np.maximum(observed.take(on), TINY)  # max(q, tiny) where clicked
        np.subtract(1.0, observed, out=observed)  # P(observed C_r): 1 - q, q where clicked
        np.maximum(observed, TINY, out=observed)  # max(1 - q, tiny), the filter's divisor
        e *= np.subtract(1.0, cr, out=step) if skip is None else skip[r]
        if stops:
            if one is None:
                np.subtract(1.0, sn[r], out=step)
                e *= step
            else:
                e *= 1.0 - one
        # Divided by max(1 - q, tiny) at every cell; the clicked ones (a finite quotient, the
        # divisor >= tiny and e <= 1) are then replaced: after a click, 1 - sc_r.
        e /= observed
        np.put(e, on, 1.0 - sc[r].take(on))
        np.put(observed, on, q_on)
        if r == 0:
            np.log(observed, out=total)
        else:
            total += np.log(observed, out=observed)
    return total


def sum_distribution(c: NDArray[np.float64], sc: NDArray[np.float64], sn: NDArray[np.float64],
                     weights: NDArray[np.int64]) -> NDArray[np.float64]:
    """Exact distribution of ``sum_r weights_r * C_r`` for every impression.

    ``weights`` are small integers per cell (``+1`` everywhere gives the number of clicks;
    ``+1 / -1 / 0`` by team gives the interleaving credit difference). Returns
    ``P[n, 2 W + 1]`` (impression-major) where ``P[:, W + s]`` = P(sum = s) and
    ``W = k * max|weight|``. Dynamic programme over the slots with the states (still
    examining, running sum).
    """
    k, n = c.shape
    width = int(k * max(1, int(np.abs(weights).max(initial=0))))
    size = 2 * width + 1
    going = np.zeros((n, size))
    going[:, width] = 1.0
    done = np.zeros((n, size))
    for r in range(k):
        cr, scr, snr = c[r][:, None], sc[r][:, None], sn[r][:, None]
        w = weights[r]
        clicked = going * cr
        # Shift each impression's row by its own weight; rows share few distinct weights.
        # The width leaves room for every reachable sum, so np.roll never wraps around.
        shifted = np.zeros_like(clicked)
        for value in np.unique(w).tolist():
            shifted += (w == value)[:, None] * np.roll(clicked, value, axis=1)
        skipped = going * (1.0 - cr)
        done += shifted * scr + skipped * snr
        going = shifted * (1.0 - scr) + skipped * (1.0 - snr)
    return done + going
