"""Many impressions at once: team draft and balanced interleaving vectorized with NumPy.

The serving API (:func:`serpeval.online.interleaving.interleave`) drafts one list per call in
Python. Simulations and offline replays need millions of impressions, so here the same
algorithms run over all impressions together: one NumPy step per *slot* (k steps), never a
Python loop per impression. The rules are exactly those of :mod:`.team_draft` and
:mod:`.balanced`: balanced gives the serving code's list for one impression and the same seed; team draft gives
its lists for the same coins (``coins=``, the tests enumerate them) and its distribution for a
seed, though not the same list per seed (its coins are drawn per slot for every impression at
once, as float32).

Documents are integer codes: ``a[n, m]`` and ``b[n, m']`` hold, per impression, ranker A's
and B's ranking (best first), padded with ``-1`` at the end when shorter. Every ranking may
hold at most 62 documents (positions are tracked as bits of an int64). When the two rankings
of an impression hold fewer than ``k`` distinct documents the remaining slots stay empty
(``-1``); unlike the serving API this is not an error, because in a simulation it is simply
what the user sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.checks import as_generator, check_count
from serpeval.core.errors import InputError, OptionError
from serpeval.online.common import first_duplicate_row, last_click, lookup
from serpeval.online.interleaving import _ALIASES
from serpeval.online.interleaving._result import NEUTRAL

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["BatchInterleaving", "BatchOutcome", "credit_batch", "interleave_batch"]

_MAX_WIDTH = 62
_CHUNK = 65536


@dataclass(frozen=True, eq=False)
class BatchInterleaving:
    """Interleaved lists of many impressions (impression-major arrays).

    Attributes:
        method: ``team_draft`` or ``balanced``.
        docs: ``int64[n, k]`` shown document codes, ``-1`` for an empty slot.
        teams: ``int8[n, k]``: 0 (A), 1 (B), ``NEUTRAL`` (-1: shared pick, or empty slot).
        rank_a, rank_b: ``int16[n, k]``: 1-based rank of the shown document in A / B, 0 if
            absent (or the slot is empty).
        first: ``int8[n]``: the ranker that picked first.
    """

    method: str
    docs: NDArray[np.int64]
    teams: NDArray[np.int8]
    rank_a: NDArray[np.int16]
    rank_b: NDArray[np.int16]
    first: NDArray[np.int8]

    def __len__(self) -> int:
        return len(self.docs)


@dataclass(frozen=True, eq=False)
class BatchOutcome:
    """Credit of many impressions: per-impression credits and outcome (+1 A, -1 B, 0 tie)."""

    credit_a: NDArray[np.int64]
    credit_b: NDArray[np.int64]
    outcome: NDArray[np.int8]
    ignored_clicks: int = 0


def _rankings(values: ArrayLike, name: str) -> NDArray[np.int64]:
    arr = np.asarray(values)
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise InputError(f"{name} must be an integer array [impressions, ranks] of document codes "
                         f"(-1 = padding); got dtype {arr.dtype}, shape {arr.shape}.")
    if arr.shape[1] > _MAX_WIDTH:
        raise InputError(f"{name} has {arr.shape[1]} ranks; batched interleaving keeps at most "
                         f"{_MAX_WIDTH} per ranking (only the top k can ever be shown: truncate).")
    arr = arr.astype(np.int64, copy=False)
    valid = arr >= 0
    if arr.size and (arr < -1).any():
        raise InputError(f"{name}: document codes must be >= 0 (-1 = padding).")
    if arr.shape[1] > 1 and (valid[:, 1:] & ~valid[:, :-1]).any():
        row = int(np.flatnonzero((valid[:, 1:] & ~valid[:, :-1]).any(axis=1))[0])
        raise InputError(f"{name}: impression {row} has a document after padding; pad with -1 "
                         "at the end only.")
    if not valid[:, 0].all():
        row = int(np.flatnonzero(~valid[:, 0])[0])
        raise InputError(f"{name}: impression {row} has an empty ranking.")
    duplicate = first_duplicate_row(arr)
    if duplicate is not None:
        raise InputError(f"{name}: impression {duplicate} lists a document twice.")
    return arr


def _positions(a: NDArray[np.int64], b: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For every entry of ``a`` its 0-based position in the same row of ``b`` (-1 if absent),
    and the same for ``b`` in ``a``: one comparison cube per chunk serves both directions."""
    a_in_b = np.full(a.shape, -1, dtype=np.int64)
    b_in_a = np.full(b.shape, -1, dtype=np.int64)
    for start in range(0, len(a), _CHUNK):
        sa, sb = a[start:start + _CHUNK], b[start:start + _CHUNK]
        eq = (sa[:, :, None] == sb[:, None, :]) & (sa[:, :, None] >= 0)
        for cube, out, axis in ((eq, a_in_b, 2), (eq, b_in_a, 1)):
            first = cube.argmax(axis=axis)  # 0 both when found at 0 and when absent
            at_zero = cube[:, :, 0] if axis == 2 else cube[:, 0, :]
            out[start:start + _CHUNK] = np.where((first > 0) | at_zero, first, -1)
    return a_in_b, b_in_a


def _bits(valid: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Row-wise bit mask of ``valid`` (bit i set when column i is True)."""
    return (valid.astype(np.int64) << np.arange(valid.shape[1], dtype=np.int64)).sum(axis=1)


def _lowest(free: NDArray[np.int64]) -> NDArray[np.int64]:
    """Index of the lowest set bit of every mask (0 where the mask is empty)."""
    low = free & -free
    return np.log2(np.maximum(low, 1).astype(np.float64)).astype(np.int64)  # exact: powers of 2


def _bit(index: NDArray[np.int64], where: NDArray[np.bool_]) -> NDArray[np.int64]:
    return np.where(where & (index >= 0), np.left_shift(1, np.maximum(index, 0)), 0)


def interleave_batch(a: ArrayLike, b: ArrayLike, method: str = "team_draft", k: int | None = None,
                     rng: int | np.random.Generator | None = None, *, ignore_shared: bool = False,
                     coins: ArrayLike | None = None) -> BatchInterleaving:
    """Interleave rankings A and B of many impressions at once.

    Args:
        a, b: ``int[n, m]`` document codes per impression, best first, ``-1``-padded.
        method: ``team_draft`` or ``balanced`` (aliases as in :func:`interleave`).
        k: slots to fill (default: the wider of the two rankings).
        rng: seed or Generator.
        ignore_shared: team draft's shared-pick variant (see :mod:`.team_draft`).
        coins: team draft only, for exact enumeration: ``bool[n, c]``; the j-th coin an
            impression needs (a round start with both teams able to pick) is ``coins[:, j]``
            (True = A picks). Default: fresh random coins.
    """
    method = _method(method)
    a_arr, b_arr = _rankings(a, "a"), _rankings(b, "b")
    if len(a_arr) != len(b_arr):
        raise InputError(f"a and b must hold the same impressions; got {len(a_arr)} and {len(b_arr)} rows.")
    size = max(a_arr.shape[1], b_arr.shape[1]) if k is None else check_count(k, "k")
    generator = as_generator(rng)
    if method == "balanced":
        if coins is not None or ignore_shared:
            raise OptionError("coins and ignore_shared apply to team draft only.")
        return _balanced(a_arr, b_arr, size, generator)
    coin_arr = None
    if coins is not None:
        coin_arr = np.asarray(coins, dtype=bool)
        if coin_arr.ndim != 2 or len(coin_arr) != len(a_arr) or coin_arr.shape[1] < 1:
            raise InputError(f"coins must be bool[{len(a_arr)}, c] with c >= 1; got shape {coin_arr.shape}.")
    return _team_draft(a_arr, b_arr, size, generator, ignore_shared, coin_arr)


def _method(method: str) -> str:
    module = lookup("interleaving method", method, _ALIASES)
    if module.NAME not in ("team_draft", "balanced"):
        raise OptionError(f"batched interleaving supports team_draft and balanced; for "
                          f"{module.NAME!r} call interleave() per impression.")
    return module.NAME


def _team_draft(a: NDArray[np.int64], b: NDArray[np.int64], k: int, rng: np.random.Generator,
                ignore_shared: bool, coins: NDArray[np.bool_] | None) -> BatchInterleaving:
    n = len(a)
    rows = np.arange(n)
    pos_b_of_a, pos_a_of_b = _positions(a, b)
    mask_a, mask_b = _bits(a >= 0), _bits(b >= 0)
    used_a = np.zeros(n, dtype=np.int64)
    used_b = np.zeros(n, dtype=np.int64)
    size_a = np.zeros(n, dtype=np.int64)
    size_b = np.zeros(n, dtype=np.int64)
    flips = np.zeros(n, dtype=np.int64)
    draws = rng.random((k, n), dtype=np.float32) < 0.5 if coins is None else None
    docs = np.full((n, k), -1, dtype=np.int64)
    teams = np.full((n, k), NEUTRAL, dtype=np.int8)
    rank_a = np.zeros((n, k), dtype=np.int16)
    rank_b = np.zeros((n, k), dtype=np.int16)
    first = np.full(n, NEUTRAL, dtype=np.int8)
    for slot in range(k):
        free_a, free_b = mask_a & ~used_a, mask_b & ~used_b
        has_a, has_b = free_a != 0, free_b != 0
        ia, ib = _lowest(free_a), _lowest(free_b)
        doc_a, doc_b = a[rows, ia], b[rows, ib]
        equal = size_a == size_b
        neutral = (has_a & has_b & equal & (doc_a == doc_b)) if ignore_shared else np.zeros(n, bool)
        contest = has_a & has_b & equal & ~neutral
        if coins is None:
            assert draws is not None  # drawn above exactly when coins is None
            coin = draws[slot]
        else:
            coin = coins[rows, np.minimum(flips, coins.shape[1] - 1)]
            flips += contest
        pick_a = has_a & ~neutral & (~has_b | (size_a < size_b) | (equal & coin))
        pick_b = has_b & ~neutral & ~pick_a
        from_a = pick_a | neutral
        size_a += pick_a
        size_b += pick_b
        # Mark the shown document as used in both rankings.
        j_b = np.where(from_a, pos_b_of_a[rows, ia], ib)
        j_a = np.where(from_a, ia, pos_a_of_b[rows, ib])
        used_a |= _bit(j_a, from_a | pick_b)
        used_b |= _bit(j_b, from_a | pick_b)
        docs[:, slot] = np.where(from_a, doc_a, np.where(pick_b, doc_b, -1))
        teams[:, slot] = np.where(pick_a, 0, np.where(pick_b, 1, NEUTRAL))
        shown = from_a | pick_b
        rank_a[:, slot] = np.where(shown, j_a + 1, 0)
        rank_b[:, slot] = np.where(shown, j_b + 1, 0)
        first = np.where((first == NEUTRAL) & (pick_a | pick_b), teams[:, slot], first)
    return BatchInterleaving("team_draft", docs, teams, rank_a, rank_b, first)


def _balanced(a: NDArray[np.int64], b: NDArray[np.int64], k: int,
              rng: np.random.Generator) -> BatchInterleaving:
    n = len(a)
    rows = np.arange(n)
    len_a, len_b = (a >= 0).sum(axis=1), (b >= 0).sum(axis=1)
    pos_b_of_a, pos_a_of_b = _positions(a, b)
    a_first = rng.random(n) < 0.5
    ka = np.zeros(n, dtype=np.int64)
    kb = np.zeros(n, dtype=np.int64)
    placed_a = np.zeros(n, dtype=np.int64)  # bit i: A's document at position i is shown
    filled = np.zeros(n, dtype=np.int64)
    docs = np.full((n, k), -1, dtype=np.int64)
    teams = np.full((n, k), NEUTRAL, dtype=np.int8)
    rank_a = np.zeros((n, k), dtype=np.int16)
    rank_b = np.zeros((n, k), dtype=np.int16)
    pad_a = np.concatenate([a, np.full((n, 1), -1)], axis=1)
    pad_b = np.concatenate([b, np.full((n, 1), -1)], axis=1)
    pad_pa = np.concatenate([pos_b_of_a, np.full((n, 1), -1)], axis=1)
    pad_pb = np.concatenate([pos_a_of_b, np.full((n, 1), -1)], axis=1)
    placed_b = np.zeros(n, dtype=np.int64)
    while True:
        active = (filled < k) & ((ka < len_a) | (kb < len_b))
        if not active.any():
            break
        take_a = (kb >= len_b) | ((ka < len_a) & ((ka < kb) | ((ka == kb) & a_first)))
        ia, ib = np.minimum(ka, a.shape[1]), np.minimum(kb, b.shape[1])
        j_a = np.where(take_a, ia, pad_pb[rows, ib])  # position in A of the candidate
        j_b = np.where(take_a, pad_pa[rows, ia], ib)
        seen = np.where(take_a, (placed_a >> ia) & 1, (placed_b >> ib) & 1).astype(bool)
        place = active & ~seen
        slot = np.minimum(filled, k - 1)
        r = rows[place]
        docs[r, slot[place]] = np.where(take_a, pad_a[rows, ia], pad_b[rows, ib])[place]
        teams[r, slot[place]] = np.where(take_a, 0, 1)[place]
        rank_a[r, slot[place]] = (j_a + 1)[place]
        rank_b[r, slot[place]] = (j_b + 1)[place]
        placed_a |= _bit(j_a, place)
        placed_b |= _bit(j_b, place)
        filled += place
        ka += active & take_a
        kb += active & ~take_a
    first = np.where(a_first, 0, 1).astype(np.int8)
    return BatchInterleaving("balanced", docs, teams, rank_a, rank_b, first)


def credit_batch(batch: BatchInterleaving, clicks: ArrayLike) -> BatchOutcome:
    """Credit clicks ``bool[n, k]`` on a :class:`BatchInterleaving` (the method's own rule)."""
    arr = np.asarray(clicks, dtype=bool)
    if arr.shape != batch.docs.shape:
        raise InputError(f"clicks have shape {arr.shape}; the batch shows {batch.docs.shape}.")
    shown = batch.docs >= 0
    if (arr & ~shown).any():
        row = int(np.flatnonzero((arr & ~shown).any(axis=1))[0])
        raise InputError(f"impression {row}: a click on an empty slot (nothing was shown there).")
    if batch.method == "team_draft":
        credit_a = (arr & (batch.teams == 0)).sum(axis=1)
        credit_b = (arr & (batch.teams == 1)).sum(axis=1)
        ignored = int((arr & (batch.teams == NEUTRAL)).sum())
    else:
        lowest = last_click(arr.T)
        rows = np.arange(len(arr))
        big = np.iinfo(np.int16).max
        ra = np.where(batch.rank_a > 0, batch.rank_a, big).astype(np.int32)
        rb = np.where(batch.rank_b > 0, batch.rank_b, big).astype(np.int32)
        lc = np.maximum(lowest, 0)
        m = np.minimum(ra[rows, lc], rb[rows, lc])[:, None]
        credit_a = (arr & (ra <= m)).sum(axis=1)
        credit_b = (arr & (rb <= m)).sum(axis=1)
        ignored = 0
    outcome = np.sign(credit_a - credit_b).astype(np.int8)
    return BatchOutcome(credit_a, credit_b, outcome, ignored)
