"""Vectorized helpers on Arrow string arrays and flat segmented NumPy arrays.

Nothing here knows about relevance: these are the building blocks ``ranking.py`` and the
measure kernels use so that no Python loop runs per query or per document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core import native

if TYPE_CHECKING:
    from collections.abc import Iterator

    from numpy.typing import NDArray

_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)


def weighted_bincount(codes: NDArray[np.integer], weights: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Per code 0..n-1: the sum of ``weights`` of its rows (``np.bincount`` with weights,
    which returns float64; numpy's stub types every bincount as intp)."""
    return np.bincount(codes, weights=weights, minlength=n)  # type: ignore[return-value]


class Blocks(NamedTuple):
    """A column as its blocks of equal neighbours: each block's value and its number of rows
    (``np.repeat(heads, lengths)`` is the column)."""

    heads: pa.Array
    lengths: NDArray[np.int64]


def _blocks(values: pa.ChunkedArray) -> Blocks | None:
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
        blocks = _blocks(values)
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


class StringTable:
    """Positions of strings among a fixed array of distinct strings (a hash index).

    Built once (for the judged query ids of a qrels) and probed with many strings at once:
    fingerprints (:func:`fingerprint`) through a :class:`KeyTable`, every candidate
    confirmed on the bytes (:func:`equal_at`); the rare string whose candidate is another
    string (a fingerprint collision) is looked up exactly with Arrow's ``index_in``.
    """

    def __init__(self, values: pa.Array) -> None:
        self.values = values
        self._stored = Stored(pa.chunked_array([values], pa.string()))
        self._table = KeyTable(fingerprint(self._stored.values))

    def positions(self, values: pa.Array) -> NDArray[np.int32]:
        """``int32`` position of each of ``values`` in the table's strings, -1 when absent."""
        chunked = pa.chunked_array([values], pa.string())
        rows = self._table.find(fingerprint(chunked), chunked, self._stored)
        wrong = np.flatnonzero(rows == KeyTable.OTHER)
        if wrong.size:  # another string with the same fingerprint: look these up exactly
            exact = pc.index_in(values.take(pa.array(wrong)), value_set=self.values)
            rows[wrong] = exact.fill_null(-1).to_numpy().astype(np.int32)
        return rows


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


def fingerprint(values: pa.ChunkedArray, order: NDArray[np.int64] | None = None) -> NDArray[np.uint64]:
    """A 64-bit hash of every string (of ``values[order]`` where ``order`` is given, without
    gathering the strings): a function of that string's UTF-8 bytes alone.

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
    if order is None:
        return _prints(values, None)
    out = np.empty(len(order), dtype=np.uint64)
    for where, chunk, rows in _ordered_chunks(values, order):
        if not native.available():
            whole = np.empty(len(chunk), dtype=np.uint64)
            _fingerprint_chunk(chunk, whole)
            out[where] = whole[rows]
        elif isinstance(where, slice):
            native.fingerprint(native.Strings(chunk), out, order=rows)  # every position
        else:
            part = np.empty(len(rows), dtype=np.uint64)
            native.fingerprint(native.Strings(chunk), part, order=rows)
            out[where] = part
    return out


def doc_pair_keys(codes: NDArray[np.int32], values: pa.ChunkedArray) -> NDArray[np.uint64]:
    """``pair_key(codes, fingerprint(values))`` for every row, in one pass where the compiled
    kernels are built."""
    if native.available():
        return _prints(values, np.ascontiguousarray(codes, dtype=np.int32))
    return pair_key(codes, fingerprint(values), inplace=True)


def _prints(values: pa.ChunkedArray, codes: NDArray[np.int32] | None) -> NDArray[np.uint64]:
    """Fingerprints of ``values`` (pair keys with ``codes``, compiled kernels only)."""
    out = np.empty(len(values), dtype=np.uint64)
    compiled = native.available()
    for part, chunk in _string_chunks(values):
        if compiled:
            native.fingerprint(native.Strings(chunk), out[part], None if codes is None else codes[part])
        else:
            _fingerprint_chunk(chunk, out[part])
    return out


def _ordered_chunks(values: pa.ChunkedArray, order: NDArray[np.int64]
                    ) -> Iterator[tuple[slice | NDArray[np.int64], pa.StringArray, NDArray[np.int64]]]:
    """For each chunk of ``values``: the positions ``p`` of ``order`` whose rows
    ``order[p]`` it holds, the chunk, and those rows within it (one chunk: every position)."""
    order = np.ascontiguousarray(order, dtype=np.int64)
    chunks = list(_string_chunks(values))
    if len(chunks) == 1:
        yield slice(None), chunks[0][1], order
        return
    starts = np.array([part.start for part, _ in chunks], dtype=np.int64)
    chunk_of = np.searchsorted(starts, order, side="right") - 1
    for c, (part, chunk) in enumerate(chunks):
        where = np.flatnonzero(chunk_of == c)
        if where.size:
            yield where, chunk, order[where] - part.start


def _string_chunks(values: pa.ChunkedArray) -> Iterator[tuple[slice, pa.StringArray]]:
    """The non-empty chunks of ``values`` as ``pa.string()`` arrays, with the rows each covers."""
    done = 0
    for chunk in values.chunks:
        m = len(chunk)
        if m:
            yield slice(done, done + m), chunk if pa.types.is_string(chunk.type) else chunk.cast(pa.string())
        done += m


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
        differ &= _KEEP[np.minimum(left_bytes, 8)]
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


def pair_key(codes: NDArray[np.integer], prints: NDArray[np.uint64], *, inplace: bool = False
             ) -> NDArray[np.uint64]:
    """Combine a query code and a string fingerprint into one 64-bit key.

    With ``inplace=True`` the result overwrites ``prints`` (no new array).
    """
    mixed = np.multiply(codes, _MIX2, dtype=np.uint64, casting="unsafe")
    return np.bitwise_xor(mixed, prints, out=prints if inplace else mixed)


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


def grades_in_groups(groups: native.Groups, codes: NDArray[np.int32], prints: NDArray[np.uint64],
                     values: pa.ChunkedArray, grades: NDArray[np.int64], nonpool: int, unjudged: int,
                     out: NDArray[np.int64] | None = None, order: NDArray[np.int64] | None = None
                     ) -> NDArray[np.int64]:
    """Compiled kernels: ``grades[r]`` of the row ``r`` of ``groups`` holding each string of
    ``values`` (of ``values[order]`` where ``order`` is given) in its group ``codes[i]``
    (found by its fingerprint ``prints[i]``, confirmed on the bytes); ``unjudged`` for a
    negative grade, ``nonpool`` where there is no such row. ``out`` (a new array if None)
    may be ``prints`` itself, viewed as ``int64``: the kernel reads each row's fingerprint
    before it writes that row's grade."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    grades = np.ascontiguousarray(grades, dtype=np.int64)
    if out is None:
        out = np.empty(len(values) if order is None else len(order), dtype=np.int64)
    if order is None:
        for part, chunk in _string_chunks(values):
            native.match(codes[part], prints[part], native.Strings(chunk), groups, grades, nonpool, unjudged,
                         out[part])
        return out
    for where, chunk, rows in _ordered_chunks(values, order):
        if isinstance(where, slice):
            native.match(codes, prints, native.Strings(chunk), groups, grades, nonpool, unjudged, out, rows)
        else:
            found = np.empty(len(where), dtype=np.int64)
            native.match(codes[where], prints[where], native.Strings(chunk), groups, grades, nonpool, unjudged,
                         found, rows)
            out[where] = found
    return out


class Stored:
    """The strings a :class:`KeyTable`'s rows stand for (what :meth:`KeyTable.find` compares
    with), and, where the compiled kernels are built and the bytes fit ``int32`` offsets,
    the same strings as one contiguous array for them."""

    def __init__(self, values: pa.ChunkedArray) -> None:
        self.values = values
        self.strings: native.Strings | None = None
        if native.available():
            try:
                combined = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
                combined = combined.cast(pa.string()) if not pa.types.is_string(combined.type) else combined
            except (pa.ArrowInvalid, pa.ArrowCapacityError):  # over 2 GiB of bytes: NumPy path
                return
            self.strings = native.Strings(combined)


class KeyTable:
    """A vectorized open-addressing hash table from 64-bit hash keys to row numbers.

    Built once for the qrels and probed with every run row at once: each probe round is
    one NumPy gather over the rows still unresolved, and with the table at most half full
    most rows resolve in the first round. Keys must already be well-mixed hashes (their
    top bits pick the home slot); the lowest bit is forced to 1 so that 0 can mark an
    empty slot. The slots hold ``int32`` row numbers only (empty: ``n``, whose key is 0);
    a probe reads the row, then its key: 4 bytes per slot plus 8 per key.

    Linear probing, built without a probe loop: with the keys sorted by (home slot, row),
    key ``i`` lands at ``p_i = max(home_i, p_{i-1} + 1)``, i.e. ``p_i = i + max_{j<=i}(home_j
    - j)``, one cumulative maximum; this is exactly where inserting the keys one by one in
    that order would put them, so every slot from a key's home to its place is occupied
    and a lookup that stops at the first empty slot finds it. The table is not circular:
    it ends one empty slot past the last key. The sort is of packed ``home << 32 | row``
    words (NumPy's vectorized ``sort``, several times faster than an ``argsort``).

    A repeated key is stored twice; a lookup returns its first row. Callers confirm
    matches exactly, so a collision can only cost a lookup, never return a wrong row
    unchecked.
    """

    def __init__(self, keys: NDArray[np.uint64]) -> None:
        n = len(keys)
        if n >= 1 << 31:  # pragma: no cover - 2 billion judgments
            raise ValueError("KeyTable holds fewer than 2^31 keys")
        bits = min(32, max(4, int(np.ceil(np.log2(max(n, 1) * 2)))))
        self._shift = np.uint64(64 - bits)
        self._keys = np.empty(n + 1, dtype=np.uint64)  # the last one: 0, the key of an empty slot
        np.bitwise_or(keys, np.uint64(1), out=self._keys[:n])
        self._keys[n] = 0
        keys = self._keys[:n]
        packed = keys >> self._shift
        packed <<= np.uint64(32)
        packed |= np.arange(n, dtype=np.uint64)
        packed.sort()
        rows = (packed & np.uint64(0xFFFFFFFF)).astype(np.int32)
        place = packed.view(np.int64)  # in place: the home slots, then the places
        place >>= 32
        step = np.arange(n, dtype=np.int64)
        place -= step
        np.maximum.accumulate(place, out=place)
        place += step
        del step
        size = max(1 << bits, int(place[-1]) + 2 if n else 0)
        self._rows = np.full(size, n, dtype=np.int32)
        self._rows[place] = rows
        self._empty = n

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

    OTHER = -2  # find(): the key's row holds another string (a fingerprint collision)

    def find(self, keys: NDArray[np.uint64], values: pa.ChunkedArray, stored: Stored,
             codes: NDArray[np.int32] | None = None, stored_codes: NDArray[np.int32] | None = None,
             value_rows: NDArray[np.int64] | None = None) -> NDArray[np.int32]:
        """The row of every key, confirmed: ``values[i]`` equals ``stored.values[row]`` byte
        for byte (and ``codes[i]`` equals ``stored_codes[row]`` where given). ``-1`` when the
        key is absent, :attr:`OTHER` when its row holds another string. With ``value_rows``,
        key ``i`` stands for ``values[value_rows[i]]``. The lowest bit of ``keys`` is set in
        place. The compiled kernel probes and compares in one pass; the NumPy path looks up
        (:meth:`lookup`), then compares (:func:`equal_at`).
        """
        if value_rows is None and native.available() and stored.strings is not None:
            if codes is not None:
                codes = np.ascontiguousarray(codes, dtype=np.int32)
            if stored_codes is not None:
                stored_codes = np.ascontiguousarray(stored_codes, dtype=np.int32)
            out = np.empty(len(keys), dtype=np.int32)
            for part, chunk in _string_chunks(values):
                native.probe(keys[part], native.Strings(chunk), None if codes is None else codes[part],
                             self._rows, self._keys, int(self._shift), stored.strings, stored_codes, out[part])
            return out
        rows = self.lookup(keys, inplace=True)
        hit = np.flatnonzero(rows >= 0)
        if hit.size == 0:
            return rows
        found = rows[hit]
        confirmed = equal_at(values, hit if value_rows is None else value_rows[hit], stored.values, found)
        if codes is not None and stored_codes is not None:
            confirmed &= stored_codes[found] == codes[hit]
        rows[hit[~confirmed]] = self.OTHER
        return rows

    def _lookup(self, keys: NDArray[np.uint64]) -> NDArray[np.int32]:
        slots = self._slot(keys)
        rows = self._rows[slots]
        stored = self._keys[rows]
        hit = stored == keys
        out = np.where(hit, rows, np.int32(-1))
        more = ~hit & (stored != 0)  # the slot holds another key: probe the next one
        active, slots = np.flatnonzero(more), slots[more]
        while active.size:
            slots += 1  # never past the end: the last slot is always empty
            rows = self._rows[slots]
            stored = self._keys[rows]
            hit = stored == keys[active]
            out[active[hit]] = rows[hit]
            more = ~hit & (stored != 0)
            active, slots = active[more], slots[more]
        return out


def pair_keys(query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray
              ) -> tuple[NDArray[np.int32], pa.Array, NDArray[np.uint64]]:
    """Per row: the query's code (its position among the distinct query ids in byte order),
    those distinct ids, and the 64-bit (query code, doc fingerprint) key."""
    codes, uniques = codes_in(query_ids)
    return codes, uniques, doc_pair_keys(codes, doc_ids)


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
