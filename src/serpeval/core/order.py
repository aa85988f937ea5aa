"""The one tie-breaking rule: the order in which a run's rows are ranked.

Score descending; among equal scores the doc id that is greater in byte order comes first
(trec_eval's ``comp_sim_docno``); the rank column and the order of lines are ignored;
``-0.0`` and ``0.0`` tie. :mod:`serpeval.ranking` ranks every run with
:func:`sort_order`, and the run writers of :mod:`serpeval.io` write runs in that order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core import native
from serpeval.core.columns import take
from serpeval.core.id_codes import factorize_sorted

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.core.data import Run

__all__ = ["rank_order", "sort_order"]



def sort_order(
    query_codes: NDArray[np.integer], scores: NDArray[np.float64], doc_ids: pa.ChunkedArray
) -> NDArray[np.int64]:
    """Indices that rank rows: query code ascending, score descending, doc id descending.

    This is serpeval's single tie-breaking rule (trec_eval's): among equal scores the doc
    id that is greater in byte order comes first, so ``d9`` precedes ``d10`` and ``doc_b``
    precedes ``doc_a``. ``-0.0`` and ``0.0`` are equal.

    Most run files already list each query's docs by descending score; for those the
    order is read off the file (:func:`_presorted_order`), otherwise Arrow sorts. Both give
    the same indices (a property test checks it).
    """
    if np.any(scores == 0.0):
        scores = scores + 0.0  # turns -0.0 into 0.0 (a copy only when zeros exist)
    order = _presorted_order(query_codes, scores, doc_ids)
    if order is not None:
        return order
    return _arrow_sort_order(query_codes, scores, doc_ids)


def _arrow_sort_order(
    query_codes: NDArray[np.integer], scores: NDArray[np.float64], doc_ids: pa.ChunkedArray
) -> NDArray[np.int64]:
    table = pa.table({"q": query_codes, "s": scores, "d": doc_ids})
    order = pc.sort_indices(
        table, sort_keys=[("q", "ascending"), ("s", "descending"), ("d", "descending")]
    )
    # Arrow returns uint64 indices; reading them as int64 needs no copy.
    return order.to_numpy().view(np.int64)


def _presorted_order(
    codes: NDArray[np.integer], scores: NDArray[np.float64], doc_ids: pa.ChunkedArray
) -> NDArray[np.int64] | None:
    """The ranked order of a file whose queries are contiguous with scores descending.

    Whole queries are moved into code order, then equal scores listed in the wrong doc id
    order (common: many tools write ties by ascending doc id) are re-sorted on their own.
    Returns None when the file is not laid out that way (the caller sorts everything).
    """
    n = len(codes)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    same_query = codes[1:] == codes[:-1]
    starts = np.concatenate([[0], np.flatnonzero(~same_query) + 1])
    block_codes = codes[starts]
    in_code_order = bool(np.all(block_codes[1:] > block_codes[:-1]))
    if not in_code_order and _repeats(block_codes):
        return None  # a query appears in several places
    if np.any(same_query & (scores[1:] > scores[:-1])):
        return None  # scores rise within a query
    lengths = np.diff(np.append(starts, n))
    if in_code_order:
        order = np.arange(n, dtype=np.int64)
        shift = np.zeros(len(starts), dtype=np.int64)
    else:
        order, shift = _blocks_in_code_order(starts, lengths, np.argsort(block_codes, kind="stable"))
    ties = np.flatnonzero(same_query & (scores[1:] == scores[:-1]))
    if ties.size:
        left, right = take(doc_ids, ties), take(doc_ids, ties + 1)
        if not pc.all(pc.greater(left, right)).as_py():
            in_tie = np.zeros(n, dtype=bool)
            in_tie[ties] = True
            in_tie[ties + 1] = True
            rows = np.flatnonzero(in_tie)
            # Tie groups are contiguous, so sorting their rows by (query block, score desc,
            # doc id desc) and writing them back into the same positions of their block
            # (moved by ``shift``) fixes the order.
            block = np.searchsorted(starts, rows, side="right") - 1
            fixed = pc.sort_indices(
                pa.table({"b": block, "s": scores[rows], "d": take(doc_ids, rows)}),
                sort_keys=[("b", "ascending"), ("s", "descending"), ("d", "descending")],
            ).to_numpy()
            order[rows + shift[block]] = rows[fixed]
    return order


def _repeats(codes: NDArray[np.integer]) -> bool:
    """True when a value occurs twice (codes are small non-negative integers: a count per
    value, no sort)."""
    if codes.size == 0:
        return False
    if codes.min() < 0:
        return bool(np.unique(codes).size != codes.size)
    return bool(np.bincount(codes).max() > 1)


def _blocks_in_code_order(
    starts: NDArray[np.int64], lengths: NDArray[np.int64], by_code: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Rows of whole blocks (each a run of consecutive rows) laid out in ``by_code`` order.

    Returns the row at every new position and, per block, how far it moved. Built as one
    array: the step between neighbouring positions is 1 inside a block and jumps at block
    starts, and a cumulative sum turns the steps into rows (one compiled loop where the
    kernels are built).
    """
    first = starts[by_code]
    new_lengths = lengths[by_code]
    new_starts = np.zeros(len(first), dtype=np.int64)
    np.cumsum(new_lengths[:-1], out=new_starts[1:])
    if native.available():
        order = native.place_blocks(first, new_lengths, new_starts, int(new_lengths.sum()))
    else:
        order = np.ones(int(new_lengths.sum()), dtype=np.int64)
        order[new_starts[1:]] = first[1:] - (first[:-1] + new_lengths[:-1] - 1)
        order[0] = first[0]
        np.cumsum(order, out=order)
    shift = np.empty(len(first), dtype=np.int64)
    shift[by_code] = new_starts - first
    return order, shift


def rank_order(run: Run) -> NDArray[np.int64]:
    """Row indices of ``run`` in ranked order, queries in byte order of their ids."""
    codes, _ = factorize_sorted(run.query_ids)
    return sort_order(codes, run.scores, run.doc_ids)
