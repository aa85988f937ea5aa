"""The first duplicated (query, doc) pair of a run or qrels: screened on 64-bit pair keys (or
on neighbours in the compiled groups), confirmed on the strings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core import native
from serpeval.core.columns import Blocks, take
from serpeval.core.id_codes import pair_keys

if TYPE_CHECKING:

    from numpy.typing import NDArray


def find_duplicate(query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray,
                   keys: NDArray[np.uint64] | None = None) -> tuple[int, int]:
    """Return the rows of the first duplicated (query, doc) pair, or ``(-1, -1)``.

    "First" means the duplicate whose second occurrence comes earliest in the input. A
    cheap screen on 64-bit (query, doc) keys (:func:`pair_keys`; pass them when already
    computed) finds the candidate rows; only those are compared as strings.
    """
    n = len(query_ids)
    if n < 2:
        return -1, -1
    if keys is None:
        keys = pair_keys(query_ids, doc_ids)[2]
    ordered = np.sort(keys)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if repeated.size == 0:
        return -1, -1
    candidates = np.flatnonzero(np.isin(keys, repeated))
    first, second = _exact_duplicate(take(query_ids, candidates), take(doc_ids, candidates))
    if first < 0:
        return -1, -1  # fingerprint collision between different pairs
    return int(candidates[first]), int(candidates[second])


def grouped_duplicate(query_ids: pa.ChunkedArray | Blocks, doc_ids: pa.ChunkedArray, groups: native.Groups
                      ) -> tuple[int, int]:
    """:func:`find_duplicate` on rows grouped by query and sorted by doc fingerprint
    (:class:`serpeval.core.native.Groups`, compiled kernels): equal neighbours within a
    group are the candidates, confirmed (and the first one chosen) on the strings."""
    prints = groups.prints
    same = prints[1:] == prints[:-1]
    starts = groups.offsets[1:-1]
    starts = starts[(starts > 0) & (starts < len(prints))]
    same[starts - 1] = False  # neighbours in different groups
    at = np.flatnonzero(same)
    if at.size == 0:
        return -1, -1
    candidates = np.unique(groups.rows[np.concatenate([at, at + 1])]).astype(np.int64)
    first, second = _exact_duplicate(take(query_ids, candidates), take(doc_ids, candidates))
    if first < 0:
        return -1, -1  # fingerprint collision between different docs
    return int(candidates[first]), int(candidates[second])


def _exact_duplicate(query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray) -> tuple[int, int]:
    """:func:`find_duplicate` by sorting the strings (for the few candidate rows)."""
    n = len(query_ids)
    order = pc.sort_indices(
        pa.table({"q": query_ids, "d": doc_ids, "i": np.arange(n)}),
        sort_keys=[("q", "ascending"), ("d", "ascending"), ("i", "ascending")],
    )
    q = query_ids.take(order)
    d = doc_ids.take(order)
    same = pc.and_(pc.equal(q[1:], q[:-1]), pc.equal(d[1:], d[:-1])).to_numpy(zero_copy_only=False)
    hits = np.flatnonzero(same)
    if hits.size == 0:
        return -1, -1
    idx = order.to_numpy()
    seconds = idx[hits + 1]
    k = int(np.argmin(seconds))
    return int(idx[hits[k]]), int(seconds[k])
