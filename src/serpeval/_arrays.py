"""Vectorized helpers on Arrow string arrays and flat segmented NumPy arrays.

Nothing here knows about relevance: these are the building blocks ``ranking.py`` and the
measure kernels use so that no Python loop runs per query or per document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from numpy.typing import NDArray

_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)


def factorize(values: pa.ChunkedArray) -> tuple[NDArray[np.int64], list[str]]:
    """Integer codes for ``values`` and the distinct values, in order of first appearance.

    Runs and qrels are nearly always grouped by query, so the distinct values are found
    from the boundaries between blocks of equal neighbours (cheap string compares); a file
    that is not grouped falls back to Arrow's hash-based dictionary encoding.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    heads: list[str] = []
    lengths: list[NDArray[np.int64]] = []
    for chunk in values.chunks:
        m = len(chunk)
        if m == 0:
            continue
        change = pc.not_equal(chunk[1:], chunk[:-1]).to_numpy(zero_copy_only=False)
        starts = np.concatenate([[0], np.flatnonzero(change) + 1])
        if starts.size > max(1024, m // 8):
            return _dictionary_factorize(values)
        heads.extend(chunk.take(pa.array(starts)).to_pylist())
        lengths.append(np.diff(np.append(starts, m)))
    uniques: dict[str, int] = {}
    block_codes = np.fromiter((uniques.setdefault(h, len(uniques)) for h in heads),
                              dtype=np.int64, count=len(heads))
    return np.repeat(block_codes, np.concatenate(lengths)), list(uniques)


def _dictionary_factorize(values: pa.ChunkedArray) -> tuple[NDArray[np.int64], list[str]]:
    encoded = pc.dictionary_encode(values.combine_chunks())
    return encoded.indices.to_numpy().astype(np.int64), encoded.dictionary.to_pylist()


def fingerprint(values: pa.ChunkedArray) -> NDArray[np.uint64]:
    """A 64-bit hash of every string, computed on the raw UTF-8 bytes with NumPy.

    Equal strings get equal fingerprints; different strings collide with probability about
    2^-64, and callers verify candidate matches exactly.
    """
    parts = []
    for chunk in values.chunks:
        chunk = chunk.cast(pa.string()) if not pa.types.is_string(chunk.type) else chunk
        m = len(chunk)
        if m == 0:
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset: chunk.offset + m + 1]
        start = offsets[:-1].astype(np.int64)
        length = (offsets[1:] - offsets[:-1]).astype(np.int64)
        raw = chunk.buffers()[2]
        data = np.frombuffer(raw, dtype=np.uint8) if raw is not None else np.zeros(0, np.uint8)
        padded = np.concatenate([data, np.zeros(8, dtype=np.uint8)])
        # Overlapping little-endian 8-byte windows starting at every byte.
        windows = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded.data, strides=(1,))
        h = length.astype(np.uint64) * _MIX
        longest = int(length.max())
        shortest = int(length.min())
        for j in range(0, longest, 8):
            word = windows[start + j]
            if j + 8 > shortest:
                remaining = length - j
                keep_bits = (np.clip(remaining, 0, 8) * 8).astype(np.uint64)
                mask = np.where(keep_bits >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                                (np.uint64(1) << np.minimum(keep_bits, 63)) - np.uint64(1))
                word = word & mask
            h = (h ^ word) * _MIX
            h ^= h >> np.uint64(31)
        parts.append(h)
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    return np.concatenate(parts)


def pair_key(codes: NDArray[np.int64], prints: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Combine a query code and a string fingerprint into one 64-bit key."""
    with np.errstate(over="ignore"):
        return (codes.astype(np.uint64) * _MIX2) ^ prints


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
