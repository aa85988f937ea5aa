"""Integer codes for string ids: :func:`factorize` (first-appearance order), :func:`codes_in`
and :func:`factorize_sorted` (byte order, or positions in a given universe), :func:`pair_keys`
(query codes with (query, doc) keys). Grouped columns are coded per block of equal neighbours and
expanded once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core.columns import Blocks, find_blocks
from serpeval.core.fingerprints import doc_pair_keys
from serpeval.core.hash_index import StringTable

if TYPE_CHECKING:

    from numpy.typing import NDArray


def factorize(values: pa.ChunkedArray) -> tuple[NDArray[np.int64], list[str]]:
    """Integer codes for ``values`` and the distinct values, in order of first appearance."""
    block_codes, lengths, uniques = _factorize_blocks(values)
    codes = block_codes if lengths is None else np.repeat(block_codes, lengths)
    return codes.astype(np.int64, copy=False), uniques.to_pylist()


def codes_in(values: pa.ChunkedArray | Blocks, universe: pa.Array | StringTable | None = None
             ) -> tuple[NDArray[np.int32], pa.Array]:
    """``int32`` codes of ``values`` as positions in ``universe`` (-1 when absent), and the
    distinct values in byte order. ``values`` may be given as its :class:`Blocks` (as the
    TREC reader keeps query ids: ``Run.query_id_blocks()``).

    Without ``universe`` the codes index the sorted distinct values themselves. The mapping
    is composed on the few distinct values (or blocks of equal neighbours) and expanded
    once, so a 10M-row column costs one ``int32`` array. Byte order of UTF-8 equals
    Python's code point order. Without a universe nothing is hashed: the distinct values
    come from sorting (exact neighbour compares). With a universe (best given as a
    :class:`StringTable`, probed by fingerprint, every match confirmed on the bytes) the
    distinct values are those found in it, in its order, then those absent, in byte order.
    """
    if len(values.heads if isinstance(values, Blocks) else values) == 0:
        return np.zeros(0, dtype=np.int32), pa.array([], pa.string())
    lengths: NDArray[np.int64] | None
    if isinstance(values, Blocks):
        heads, lengths = values
    else:
        blocks = find_blocks(values)
        heads, lengths = (values.combine_chunks(), None) if blocks is None else blocks
    if universe is None:
        mapped, uniques = _sorted_codes(heads)
    else:
        table = universe if isinstance(universe, StringTable) else StringTable(universe)
        mapped = table.positions(heads)
        found = np.flatnonzero(np.bincount(mapped[mapped >= 0], minlength=len(table.values)))
        absent = heads.filter(pa.array(mapped < 0)).unique()
        uniques = pa.concat_arrays([table.values.take(pa.array(found)), absent.take(pc.sort_indices(absent))])
    return (mapped if lengths is None else np.repeat(mapped, lengths)), uniques


def _sorted_codes(values: pa.Array) -> tuple[NDArray[np.int32], pa.Array]:
    """Codes of ``values`` as positions among their distinct values in byte order, and
    those values: one sort and a neighbour compare, no hashing."""
    order = pc.sort_indices(values)
    ordered = values.take(order)
    new = np.empty(len(values), dtype=bool)
    new[0] = True
    new[1:] = pc.not_equal(ordered[1:], ordered[:-1]).to_numpy(zero_copy_only=False)
    codes = np.empty(len(values), dtype=np.int32)
    codes[order.to_numpy()] = np.cumsum(new, dtype=np.int32) - 1
    return codes, ordered.filter(pa.array(new))


def factorize_sorted(values: pa.ChunkedArray) -> tuple[NDArray[np.int32], pa.Array]:
    """Integer codes for ``values`` and the distinct values in byte order (codes follow it)."""
    return codes_in(values)


def _factorize_blocks(values: pa.ChunkedArray) -> tuple[NDArray[np.int64], NDArray[np.int64] | None, pa.Array]:
    """Codes (first-appearance order) per block of equal neighbours with the block lengths,
    or per row (lengths None) when the column is not grouped; all in Arrow/NumPy."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64), None, pa.array([], pa.string())
    blocks = find_blocks(values)
    if blocks is None:
        encoded = pc.dictionary_encode(values.combine_chunks())
        return encoded.indices.to_numpy(), None, encoded.dictionary
    heads, lengths = blocks
    encoded = pc.dictionary_encode(heads)
    return encoded.indices.to_numpy(), lengths, encoded.dictionary


def pair_keys(query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray
              ) -> tuple[NDArray[np.int32], pa.Array, NDArray[np.uint64]]:
    """Per row: the query's code (its position among the distinct query ids in byte order),
    those distinct ids, and the 64-bit (query code, doc fingerprint) key."""
    codes, uniques = codes_in(query_ids)
    return codes, uniques, doc_pair_keys(codes, doc_ids)
