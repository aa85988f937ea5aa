"""Arrow string columns read chunk by chunk: blocks of equal neighbours (:class:`Blocks`), gathers
that never concatenate the whole column (:func:`take`), and iteration over the non-empty chunks
(:func:`string_chunks`, :func:`ordered_chunks`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from collections.abc import Iterator

    from numpy.typing import NDArray


class Blocks(NamedTuple):
    """A column as its blocks of equal neighbours: each block's value and its number of rows
    (``np.repeat(heads, lengths)`` is the column)."""

    heads: pa.Array
    lengths: NDArray[np.int64]


def find_blocks(values: pa.ChunkedArray) -> Blocks | None:
    """The value and length of every run of equal neighbours, or None when runs are short.

    Runs and qrels are nearly always grouped by query, so this finds their few distinct
    values with cheap neighbour compares instead of hashing every row.
    """
    heads = []
    lengths = []
    for chunk in values.chunks:
        m = len(chunk)
        if m == 0:
            continue
        change = pc.not_equal(chunk[1:], chunk[:-1]).to_numpy(zero_copy_only=False)
        starts = np.concatenate([[0], np.flatnonzero(change) + 1])
        if starts.size > max(1024, m // 2):
            return None
        heads.append(chunk.take(pa.array(starts)))
        lengths.append(np.diff(np.append(starts, m)))
    if not heads:
        return Blocks(pa.array([], pa.string()), np.zeros(0, dtype=np.int64))
    return Blocks(pa.concat_arrays(heads), np.concatenate(lengths))


def take(values: pa.ChunkedArray | Blocks, indices: NDArray[np.integer]) -> pa.ChunkedArray:
    """``values[indices]`` gathered chunk by chunk (a one-chunk ``ChunkedArray``); from
    :class:`Blocks`, each row's block value.

    Arrow's own ``take`` on a chunked string column first concatenates every chunk (a full
    copy of a 10M-row column for a handful of indices); here each chunk gives its own rows
    and only the result is assembled.
    """
    indices = np.asarray(indices, dtype=np.int64)
    if isinstance(values, Blocks):
        block = np.searchsorted(np.cumsum(values.lengths), indices, side="right")
        return pa.chunked_array([values.heads.take(pa.array(block))], values.heads.type)
    chunks = [chunk for chunk in values.chunks if len(chunk)] or [pa.array([], values.type)]
    bounds = np.cumsum([0] + [len(chunk) for chunk in chunks])
    chunk_of = np.searchsorted(bounds, indices, side="right") - 1
    by_chunk = np.argsort(chunk_of, kind="stable")
    cuts = np.searchsorted(chunk_of[by_chunk], np.arange(len(chunks) + 1))
    pieces = [
        chunks[c].take(pa.array(indices[by_chunk[cuts[c]: cuts[c + 1]]] - bounds[c]))
        for c in range(len(chunks)) if cuts[c + 1] > cuts[c]
    ]
    gathered = pa.concat_arrays(pieces) if pieces else pa.array([], values.type)
    if np.any(by_chunk[1:] < by_chunk[:-1]):
        back = np.empty(len(indices), dtype=np.int64)
        back[by_chunk] = np.arange(len(indices))
        gathered = gathered.take(pa.array(back))
    return pa.chunked_array([gathered], values.type)


def ordered_chunks(values: pa.ChunkedArray, order: NDArray[np.int64]
                    ) -> Iterator[tuple[slice | NDArray[np.int64], pa.StringArray, NDArray[np.int64]]]:
    """For each chunk of ``values``: the positions ``p`` of ``order`` whose rows
    ``order[p]`` it holds, the chunk, and those rows within it (one chunk: every position)."""
    order = np.ascontiguousarray(order, dtype=np.int64)
    chunks = list(string_chunks(values))
    if len(chunks) == 1:
        yield slice(None), chunks[0][1], order
        return
    starts = np.array([part.start for part, _ in chunks], dtype=np.int64)
    chunk_of = np.searchsorted(starts, order, side="right") - 1
    for c, (part, chunk) in enumerate(chunks):
        where = np.flatnonzero(chunk_of == c)
        if where.size:
            yield where, chunk, order[where] - part.start


def string_chunks(values: pa.ChunkedArray) -> Iterator[tuple[slice, pa.StringArray]]:
    """The non-empty chunks of ``values`` as ``pa.string()`` arrays, with the rows each covers."""
    done = 0
    for chunk in values.chunks:
        m = len(chunk)
        if m:
            yield slice(done, done + m), chunk if pa.types.is_string(chunk.type) else chunk.cast(pa.string())
        done += m
