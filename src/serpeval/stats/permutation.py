"""Fisher's randomization (permutation) test for paired per-query scores.

Under the null hypothesis the two systems are exchangeable on every query, so each
difference ``d_q = x_q - y_q`` is as likely to have had the opposite sign. The test flips
signs at random ``m`` times and counts the flips ``b`` whose statistic is at least as extreme
as the observed one; the p-value is

.. math:: p = (b + 1) / (m + 1)

(the observed assignment counts as one of the permutations, so p is never 0 and the test
keeps its level; Phipson & Smyth 2010). When :math:`2^n \\le m` the ``2^n`` sign vectors
are enumerated instead and ``p = b / 2^n`` is exact.

Vectorized: the signs are a ``[m, n]`` 0/1 matrix ``B`` drawn as random bits, and the
statistics of every comparison at once are ``sum(d) - 2 B d^T`` (one matrix product), in
chunks that bound memory. 10,000 permutations over 250 queries and hundreds of comparisons
take a fraction of a second.

References: Fisher (1935); Smucker, Allan & Carterette, "A comparison of statistical
significance tests for information retrieval evaluation", CIKM 2007.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.checks import RngLike, as_generator, check_level
from serpeval.core.errors import OptionError
from serpeval.stats.paired import PairedTest
from serpeval.stats.validation import (
    Alternative,
    check_alternative,
    check_resamples,
    chunk_rows,
    paired_differences,
    scalar_or_array,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["MAX_EXACT_QUERIES", "randomization_test", "sign_flips"]

#: Exact enumeration is refused above this many queries (2^24 = 16.7 million sign vectors).
MAX_EXACT_QUERIES = 24

def sign_flips(n: int, m: int | None, rng: np.random.Generator | None,
               chunk: int) -> Iterator[NDArray[np.float64]]:
    """Chunks of a 0/1 flip matrix ``[rows, n]``: ``m`` random rows, or all ``2^n`` (``m`` None).

    A 1 in row ``r``, column ``q`` flips the sign of query ``q`` in permutation ``r``.
    Random rows come from random bytes unpacked to bits (the fastest way to draw fair coins).
    """
    if m is None:
        total = 1 << n
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, chunk):
            codes = np.arange(start, min(start + chunk, total), dtype=np.int64)
            yield ((codes[:, None] >> bits) & 1).astype(np.float64)
        return
    if rng is None:
        raise ValueError("sign_flips: random rows need a generator")  # internal misuse only
    n_bytes = (n + 7) // 8
    for start in range(0, m, chunk):
        rows = min(chunk, m - start)
        packed = rng.integers(0, 256, size=(rows, n_bytes), dtype=np.uint8)
        yield np.unpackbits(packed, axis=1, count=n).astype(np.float64)


def _tolerance(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """Slack for comparing sums computed in different orders (rounding, not real differences)."""
    return 1e-9 * np.abs(d).sum(axis=-1)


def randomization_test(
    x: ArrayLike,
    y: ArrayLike | None = None,
    *,
    n_permutations: int = 10_000,
    alternative: Alternative = "two-sided",
    exact: bool | None = None,
    rng: RngLike = None,
    confidence: float = 0.95,
) -> PairedTest:
    """Paired randomization (sign-flip permutation) test of the mean of ``x - y``.

    The statistic is the sum of differences (equivalent to the mean: ``n`` is fixed).
    Two-sided: ``b`` counts flips with ``|T*| >= |T|``; ``greater``: ``T* >= T``;
    ``less``: ``T* <= T``. Ties count as "at least as extreme" (a relative slack of 1e-9
    absorbs rounding), so identical systems (all ``d = 0``) give p = 1.

    Every comparison (leading index) is tested with the same random sign flips, which
    keeps the tests of a family comparable and costs one matrix product per chunk.

    Args:
        x, y: per-query scores ``[..., n_queries]``; or ``x`` alone holding the differences.
        n_permutations: random sign flips ``m`` (10,000 gives p-values to about +-0.002
            near 0.05).
        alternative: ``"two-sided"``, ``"greater"`` (mean delta > 0) or ``"less"``.
        exact: enumerate all ``2^n`` sign vectors. None (default): exactly when
            ``2^n <= n_permutations``. True with more than :data:`MAX_EXACT_QUERIES`
            queries is refused.
        rng: seed or generator for the random flips (never global state).
        confidence: recorded in the result; the test has no interval (NaN).

    Returns:
        :class:`PairedTest` with ``test="randomization"``, ``statistic`` = sum of ``d``,
        ``resamples`` = permutations used (``2^n`` when exact).

    Examples:
        >>> r = randomization_test([0.9, 0.8, 0.7, 0.6], [0.1, 0.2, 0.3, 0.4])
        >>> r.p_value  # exact: 2 of the 16 sign vectors reach |sum| = 2.0 (all +, all -)
        0.125
    """
    check_alternative(alternative)
    level = check_level(confidence, "confidence", example=0.95)
    m = check_resamples(n_permutations, "n_permutations")
    d = paired_differences(x, y)
    n = d.shape[-1]
    if exact is None:
        exact = n <= MAX_EXACT_QUERIES and (1 << n) <= m
    if exact and n > MAX_EXACT_QUERIES:
        raise OptionError(f"exact enumeration of 2^{n} sign flips is too large (at most "
                         f"{MAX_EXACT_QUERIES} queries); use exact=False with n_permutations.")
    shape = d.shape[:-1]
    flat = d.reshape(-1, n)
    observed = flat.sum(axis=1)
    slack = _tolerance(flat)
    extreme = np.zeros(len(flat), dtype=np.int64)
    generator = None if exact else as_generator(rng)
    # The chunk of signs [rows, n] depends on n alone: random bytes drawn in other chunk
    # sizes are other bytes, and a comparison's p-value must not depend on how many others
    # share its flips. The statistics [rows, k] are made in blocks of comparisons instead.
    chunk = chunk_rows(n)
    for flips in sign_flips(n, None if exact else m, generator, chunk):
        width = chunk_rows(len(flips))
        for start in range(0, len(flat), width):
            block = slice(start, start + width)
            permuted = observed[block] - 2.0 * (flips @ flat[block].T)  # [rows, comparisons]
            if alternative == "two-sided":
                hits = np.abs(permuted) >= np.abs(observed[block]) - slack[block]
            elif alternative == "greater":
                hits = permuted >= observed[block] - slack[block]
            else:
                hits = permuted <= observed[block] + slack[block]
            extreme[block] += hits.sum(axis=0)
    if exact:
        total = 1 << n
        p = extreme / total
        method = f"exact: all 2^{n} = {total} sign flips enumerated"
    else:
        total = m
        p = (extreme + 1.0) / (m + 1.0)
        method = f"{m} random sign flips, p = (b + 1) / (m + 1)"
    nan = np.full(shape, np.nan)
    mean = flat.mean(axis=1).reshape(shape)
    return PairedTest("randomization", alternative, n, scalar_or_array(mean),
                      scalar_or_array(observed.reshape(shape)), scalar_or_array(p.reshape(shape)),
                      scalar_or_array(nan), scalar_or_array(nan.copy()), level, total, method)
