"""Exact byte-for-byte comparison of strings at given rows of two Arrow string columns, 8 bytes
at a time, without gathering them into new arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from serpeval.core.columns import take
from serpeval.core.fingerprints import KEEP_BYTES

if TYPE_CHECKING:

    from numpy.typing import NDArray


def equal_at(left: pa.ChunkedArray, left_rows: NDArray[np.integer], right: pa.ChunkedArray,
             right_rows: NDArray[np.integer], block: int = 1 << 20) -> NDArray[np.bool_]:
    """``left[left_rows[k]] == right[right_rows[k]]`` for every k, compared byte for byte.

    Exact, and cheaper than gathering both sides into new string arrays: lengths are
    compared first, then the bytes 8 at a time (one gather per side and word; a doc id of up
    to 8 bytes takes one round), only for the pairs still equal and not yet at their end.
    Pairs are compared ``block`` at a time so that the temporaries stay small.
    """
    a_rows: NDArray[np.int64] = np.asarray(left_rows, dtype=np.int64)
    b_rows: NDArray[np.int64] = np.asarray(right_rows, dtype=np.int64)
    if 4 * len(a_rows) < len(left):  # a few rows of a long column: gather them first
        left, a_rows = take(left, a_rows), np.arange(len(a_rows), dtype=np.int64)
    if 4 * len(b_rows) < len(right):
        right, b_rows = take(right, b_rows), np.arange(len(b_rows), dtype=np.int64)
    a = _Bytes(left)
    b = _Bytes(right)
    same = np.empty(len(a_rows), dtype=bool)
    for start in range(0, len(a_rows), block):
        stop = start + block
        same[start:stop] = _equal_block(a, a_rows[start:stop], b, b_rows[start:stop])
    return same


def _equal_block(a: _Bytes, a_rows: NDArray[np.int64], b: _Bytes, b_rows: NDArray[np.int64]) -> NDArray[np.bool_]:
    a_at, a_len = a.positions(a_rows)
    b_at, b_len = b.positions(b_rows)
    same = a_len == b_len
    active = np.flatnonzero(same)
    left_bytes, a_at, b_at = a_len[active], a_at[active], b_at[active]
    while active.size:
        going = left_bytes > 0
        if not going.all():
            active, left_bytes, a_at, b_at = active[going], left_bytes[going], a_at[going], b_at[going]
            if not active.size:
                break
        differ = a.words[a_at] ^ b.words[b_at]
        differ &= KEEP_BYTES[np.minimum(left_bytes, 8)]
        unequal = differ != 0
        if unequal.any():
            same[active[unequal]] = False
            keep = ~unequal
            active, left_bytes, a_at, b_at = active[keep], left_bytes[keep], a_at[keep], b_at[keep]
        left_bytes -= 8
        a_at += 8
        b_at += 8
    return same


class _Bytes:
    """A string column's bytes laid end to end (8 zero bytes after, so that every 8-byte
    window stays inside) with every row's start: what :func:`equal_at` reads."""

    def __init__(self, values: pa.ChunkedArray) -> None:
        chunks = [chunk.cast(pa.string()) if not pa.types.is_string(chunk.type) else chunk
                  for chunk in values.chunks if len(chunk)]
        pieces = []
        for chunk in chunks:
            o = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset: chunk.offset + len(chunk) + 1]
            raw = chunk.buffers()[2]
            pieces.append((o, np.frombuffer(raw, dtype=np.uint8)[o[0]: o[-1]] if raw is not None
                           else np.zeros(0, np.uint8)))
        total = sum(len(d) for _, d in pieces)
        flat = np.empty(total + 8, dtype=np.uint8)
        if pieces:
            np.concatenate([d for _, d in pieces], out=flat[:total])
        flat[total:] = 0
        self.words = np.ndarray(shape=(total + 1,), dtype="<u8", buffer=flat.data, strides=(1,))
        # Every chunk's offsets, moved to where its bytes now start (int32 while they fit);
        # chunk c's entries sit at its rows shifted by c (each chunk brings one extra entry).
        kind = np.int32 if total < 2**31 else np.int64
        self._offsets = np.empty(sum(len(o) for o, _ in pieces), dtype=kind)
        done, shift = 0, 0
        for o, d in pieces:
            np.subtract(o, kind(int(o[0]) - shift), out=self._offsets[done: done + len(o)], dtype=kind,
                        casting="unsafe")
            done += len(o)
            shift += len(d)
        self._bounds = np.cumsum([len(chunk) for chunk in chunks]) if len(chunks) > 1 else None

    def positions(self, rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Start (in ``words``) and length of each of ``rows``."""
        at = rows if self._bounds is None else rows + np.searchsorted(self._bounds, rows, side="right")
        start: NDArray[np.int64] = self._offsets[at].astype(np.int64)
        end: NDArray[np.int64] = self._offsets[at + 1].astype(np.int64)
        return start, end - start
