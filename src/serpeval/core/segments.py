"""Flat segmented NumPy arrays: one flat array cut into segments (a query's ranked rows, say) at
``offsets`` (``offsets[0] == 0``, segment ``s`` is ``flat[offsets[s]:offsets[s + 1]]``), and per-code
sums; what the measure kernels use so that no Python loop runs per query."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.core import native

if TYPE_CHECKING:

    from numpy.typing import NDArray


def weighted_bincount(codes: NDArray[np.integer], weights: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Per code 0..n-1: the sum of ``weights`` of its rows (``np.bincount`` with weights,
    which returns float64; numpy's stub types every bincount as intp)."""
    return np.bincount(codes, weights=weights, minlength=n)  # type: ignore[return-value]


def positions_in_segments(offsets: NDArray[np.int64]) -> NDArray[np.int64]:
    """The 0-based position of every element of a flat array cut at ``offsets`` within its
    segment (offsets start at 0)."""
    if native.available():
        return native.positions(offsets)
    return np.arange(int(offsets[-1]), dtype=np.int64) - offsets[:-1][segment_ids(offsets)]


def segment_ids(offsets: NDArray[np.int64]) -> NDArray[np.int64]:
    """The segment index of every element of a flat array cut at ``offsets``."""
    counts = np.diff(offsets)
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def take_segments(
    offsets: NDArray[np.int64], which: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Select whole segments: return the new offsets and the element indices to take."""
    counts = np.diff(offsets)[which]
    new_offsets = np.zeros(len(which) + 1, dtype=np.int64)
    np.cumsum(counts, out=new_offsets[1:])
    starts = offsets[:-1][which]
    index = np.arange(new_offsets[-1], dtype=np.int64) - np.repeat(new_offsets[:-1] - starts, counts)
    return new_offsets, index
