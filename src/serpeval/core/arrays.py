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


def weighted_bincount(codes: NDArray[np.integer], weights: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Per code 0..n-1: the sum of ``weights`` of its rows (``np.bincount`` with weights,
    which returns float64; numpy's stub types every bincount as intp)."""
    return np.bincount(codes, weights=weights, minlength=n)  # type: ignore[return-value]


def _blocks(values: pa.ChunkedArray) -> tuple[pa.Array, NDArray[np.int64]] | None:
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
        if starts.size > max(1024, m // 8):
            return None
        heads.append(chunk.take(pa.array(starts)))
        lengths.append(np.diff(np.append(starts, m)))
    if not heads:
        return pa.array([], pa.string()), np.zeros(0, dtype=np.int64)
    return pa.concat_arrays(heads), np.concatenate(lengths)


def take(values: pa.ChunkedArray, indices: NDArray[np.integer]) -> pa.ChunkedArray:
    """``values[indices]`` gathered chunk by chunk (a one-chunk ``ChunkedArray``).

    Arrow's own ``take`` on a chunked string column first concatenates every chunk (a full
    copy of a 10M-row column for a handful of indices); here each chunk gives its own rows
    and only the result is assembled.
    """
    indices = np.asarray(indices, dtype=np.int64)
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


def factorize(values: pa.ChunkedArray) -> tuple[NDArray[np.int64], list[str]]:
    """Integer codes for ``values`` and the distinct values, in order of first appearance."""
    block_codes, lengths, uniques = _factorize_blocks(values)
    codes = block_codes if lengths is None else np.repeat(block_codes, lengths)
    return codes.astype(np.int64, copy=False), uniques.to_pylist()


def codes_in(values: pa.ChunkedArray, universe: pa.Array | None = None) -> tuple[NDArray[np.int32], pa.Array]:
    """``int32`` codes of ``values`` as positions in ``universe`` (-1 when absent), and the
    distinct values in byte order.

    Without ``universe`` the codes index the sorted distinct values themselves. The mapping
    is composed on the few distinct values (or blocks) and expanded once, so a 10M-row
    column costs one ``int32`` array. Byte order of UTF-8 equals Python's code point order.
    """
    block_codes, lengths, uniques = _factorize_blocks(values)
    order = pc.sort_indices(uniques).to_numpy()
    sorted_uniques = uniques.take(pa.array(order))
    if universe is None:
        target = np.empty(len(uniques), dtype=np.int32)
        target[order] = np.arange(len(uniques), dtype=np.int32)
    else:
        target = pc.index_in(uniques, value_set=universe).fill_null(-1).to_numpy().astype(np.int32)
    mapped = target[block_codes]
    return (mapped if lengths is None else np.repeat(mapped, lengths)), sorted_uniques


def factorize_sorted(values: pa.ChunkedArray) -> tuple[NDArray[np.int32], pa.Array]:
    """Integer codes for ``values`` and the distinct values in byte order (codes follow it)."""
    return codes_in(values)


def _factorize_blocks(values: pa.ChunkedArray) -> tuple[NDArray[np.int64], NDArray[np.int64] | None, pa.Array]:
    """Codes (first-appearance order) per block of equal neighbours with the block lengths,
    or per row (lengths None) when the column is not grouped; all in Arrow/NumPy."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64), None, pa.array([], pa.string())
    blocks = _blocks(values)
    if blocks is None:
        encoded = pc.dictionary_encode(values.combine_chunks())
        return encoded.indices.to_numpy(), None, encoded.dictionary
    heads, lengths = blocks
    encoded = pc.dictionary_encode(heads)
    return encoded.indices.to_numpy(), lengths, encoded.dictionary


# Masks keeping the first n bytes (n = 0..8) of a little-endian 8-byte word.
_KEEP = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def fingerprint(values: pa.ChunkedArray) -> NDArray[np.uint64]:
    """A 64-bit hash of every string: a function of that string's UTF-8 bytes alone.

    ``h = len * M``; then for each 8-byte little-endian word ``w`` of the string (the last
    one zero-padded): ``h = mix((h ^ w) * M)`` with ``mix(x) = x ^ (x >> 31)``. A string takes
    exactly ``ceil(len / 8)`` steps, so its fingerprint is the same whatever array, chunk or
    file it sits in and however long its neighbours are. Equal strings get equal
    fingerprints; different strings collide with probability about 2^-64, and callers verify
    candidate matches exactly.

    Cost is linear in the total bytes: word positions every string covers are mixed in one
    vectorized pass over all rows (in place, no new arrays); past the shortest string only
    the rows still going take part, compacted as they end.
    """
    out = np.empty(len(values), dtype=np.uint64)
    done = 0
    for chunk in values.chunks:
        chunk = chunk.cast(pa.string()) if not pa.types.is_string(chunk.type) else chunk
        m = len(chunk)
        if m:
            _fingerprint_chunk(chunk, out[done: done + m])
        done += m
    return out


def _mix_word(h: NDArray[np.uint64], word: NDArray[np.uint64]) -> None:
    """One hash step, in place: ``h = mix((h ^ word) * M)``."""
    h ^= word
    h *= _MIX
    h ^= h >> np.uint64(31)


def _fingerprint_chunk(chunk: pa.StringArray, h: NDArray[np.uint64]) -> None:
    """Fill ``h`` with the fingerprints of one string chunk (see ``fingerprint``)."""
    m = len(chunk)
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset: chunk.offset + m + 1]
    raw = chunk.buffers()[2]
    data = np.frombuffer(raw, dtype=np.uint8) if raw is not None else np.zeros(0, np.uint8)
    start, stop = int(offsets[0]), int(offsets[-1])
    # Only this chunk's bytes, then zero padding so that every 8-byte window stays inside.
    padded = np.zeros(stop - start + 8, dtype=np.uint8)
    padded[: stop - start] = data[start:stop]
    # Overlapping little-endian 8-byte windows starting at every byte.
    windows = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded.data, strides=(1,))
    length = np.diff(offsets)
    np.multiply(length, _MIX, out=h, dtype=np.uint64, casting="unsafe")
    position = (offsets[:-1] - start).astype(np.intp)
    # Few strings (perhaps long ones): word by word, one string at a time.
    full_words = 0 if m <= _FEW_ROWS else int(length.min()) // 8
    word = np.empty(m, dtype=np.uint64)
    for _ in range(full_words):  # every string has all 8 bytes of these words
        np.take(windows, position, out=word)
        _mix_word(h, word)
        position += 8
    # The rest: only strings with bytes left past word offset j, compacted as they end.
    # ``rows`` None means every row is still going: the hashes are updated in ``h`` itself.
    left = length - 8 * full_words
    rows = None
    going_hash = h
    if not (left > 0).all():
        rows = np.flatnonzero(left > 0)
        going_hash, position, left = h[rows], position[rows], left[rows]
    while len(going_hash) > _FEW_ROWS:
        word = windows[position]
        word &= _KEEP[np.minimum(left, 8)]
        _mix_word(going_hash, word)
        position += 8
        left -= 8
        going = left > 0
        if not going.all():
            if rows is None:  # the ended rows' hashes are already in place
                rows = np.flatnonzero(going)
            else:
                h[rows[~going]] = going_hash[~going]
                rows = rows[going]
            going_hash, position, left = going_hash[going], position[going], left[going]
    # A few (long) strings left: one at a time, word by word (a NumPy call per word would
    # cost more than the arithmetic).
    rows = np.arange(len(going_hash)) if rows is None else rows
    for row, start_hash, at, n in zip(rows.tolist(), going_hash.tolist(), position.tolist(), left.tolist(),
                                      strict=True):
        h[row] = _fingerprint_words(start_hash, padded, at, n)


_FEW_ROWS = 8
_MASK64 = (1 << 64) - 1


def _fingerprint_words(h: int, data: NDArray[np.uint8], at: int, n: int) -> int:
    """Continue a fingerprint over the ``n`` bytes of ``data`` from ``at`` (scalar path)."""
    buffer = np.zeros(-(-n // 8) * 8, dtype=np.uint8)
    buffer[:n] = data[at: at + n]
    multiplier = int(_MIX)
    for word in buffer.view("<u8").tolist():
        h = ((h ^ word) * multiplier) & _MASK64
        h ^= h >> 31
    return h


def pair_key(codes: NDArray[np.integer], prints: NDArray[np.uint64], *, inplace: bool = False
             ) -> NDArray[np.uint64]:
    """Combine a query code and a string fingerprint into one 64-bit key.

    With ``inplace=True`` the result overwrites ``prints`` (no new array).
    """
    mixed = np.multiply(codes, _MIX2, dtype=np.uint64, casting="unsafe")
    return np.bitwise_xor(mixed, prints, out=prints if inplace else mixed)


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


class KeyTable:
    """A vectorized open-addressing hash table from 64-bit hash keys to row numbers.

    Built once for the qrels (a few hundred thousand keys) and probed with every run row
    at once: each probe round is one NumPy gather over the rows still unresolved, and with
    the table at most 1/4 full most rows resolve in the first round. Keys must already be
    well-mixed hashes (their top bits pick the slot); the lowest bit is forced to 1 so
    that 0 can mark an empty slot. Keys are expected to be distinct; callers confirm
    matches exactly, so a repeated key or a collision can only cost a lookup, never
    return a wrong row unchecked.
    """

    def __init__(self, keys: NDArray[np.uint64]) -> None:
        n = len(keys)
        bits = max(4, int(np.ceil(np.log2(max(n, 1) * 4))))
        self._mask = np.int64((1 << bits) - 1)
        self._shift = np.uint64(64 - bits)
        self._keys = np.zeros(1 << bits, dtype=np.uint64)
        self._rows = np.full(1 << bits, -1, dtype=np.int64)
        keys = keys | np.uint64(1)
        pending = np.arange(n, dtype=np.int64)
        slots = self._slot(keys)
        while pending.size:
            wanted = slots[pending]
            occupant = self._keys[wanted]
            # A repeated key finds itself already stored: it is done.
            done = occupant == keys[pending]
            free = occupant == 0
            # Among the rows aiming at the same free slot, the first one takes it.
            taken_slots, first = np.unique(wanted[free], return_index=True)
            winners = pending[free][first]
            self._keys[taken_slots] = keys[winners]
            self._rows[taken_slots] = winners
            placed = np.zeros(n, dtype=bool)
            placed[winners] = True
            placed[pending[done]] = True
            pending = pending[~placed[pending]]
            slots[pending] = (slots[pending] + 1) & self._mask

    def _slot(self, keys: NDArray[np.uint64]) -> NDArray[np.int64]:
        return (keys >> self._shift).view(np.int64)

    def lookup(self, keys: NDArray[np.uint64], *, inplace: bool = False,
               block: int = 1 << 20) -> NDArray[np.int32]:
        """The row stored under each key, or -1 (int32: tables hold fewer than 2^31 rows).

        With ``inplace=True`` the lowest bit of ``keys`` is set in place (saves a copy).
        Keys are probed ``block`` at a time so that the temporaries stay small (large fresh
        arrays are slow to fault in).
        """
        keys = np.bitwise_or(keys, np.uint64(1), out=keys if inplace else None)
        out = np.empty(len(keys), dtype=np.int32)
        for start in range(0, len(keys), block):
            out[start: start + block] = self._lookup(keys[start: start + block])
        return out

    def _lookup(self, keys: NDArray[np.uint64]) -> NDArray[np.int32]:
        out = np.full(len(keys), -1, dtype=np.int32)
        slots = self._slot(keys)
        stored = self._keys[slots]
        hit = stored == keys
        out[hit] = self._rows[slots[hit]]
        more = ~hit & (stored != 0)  # the slot holds another key: probe the next one
        active, slots = np.flatnonzero(more), slots[more]
        while active.size:
            slots = (slots + 1) & self._mask
            stored = self._keys[slots]
            hit = stored == keys[active]
            out[active[hit]] = self._rows[slots[hit]]
            more = ~hit & (stored != 0)
            active, slots = active[more], slots[more]
        return out


def find_duplicate(query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray) -> tuple[int, int]:
    """Return the rows of the first duplicated (query, doc) pair, or ``(-1, -1)``.

    "First" means the duplicate whose second occurrence comes earliest in the input. A
    cheap screen on 64-bit (query, doc) fingerprints finds the candidate rows; only those
    are compared as strings.
    """
    n = len(query_ids)
    if n < 2:
        return -1, -1
    codes, _ = codes_in(query_ids)
    keys = pair_key(codes, fingerprint(doc_ids), inplace=True)
    ordered = np.sort(keys)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if repeated.size == 0:
        return -1, -1
    candidates = np.flatnonzero(np.isin(keys, repeated))
    first, second = _exact_duplicate(take(query_ids, candidates), take(doc_ids, candidates))
    if first < 0:
        return -1, -1  # fingerprint collision between different pairs
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
