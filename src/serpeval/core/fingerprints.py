"""64-bit fingerprints of strings (a hash of each string's UTF-8 bytes alone) and the
(query code, doc fingerprint) pair keys built from them; compiled kernels where built, the same
numbers from NumPy otherwise (``tests/core/test_native.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from serpeval.core import native
from serpeval.core.columns import Blocks, ordered_chunks, string_chunks

if TYPE_CHECKING:

    from numpy.typing import NDArray


_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)


# Masks keeping the first n bytes (n = 0..8) of a little-endian 8-byte word.
KEEP_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


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
    for where, chunk, rows in ordered_chunks(values, order):
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
    for part, chunk in string_chunks(values):
        if compiled:
            native.fingerprint(native.Strings(chunk), out[part], None if codes is None else codes[part])
        else:
            _fingerprint_chunk(chunk, out[part])
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
        word &= KEEP_BYTES[np.minimum(left, 8)]
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


# ------------------------------------------------------------------ content signatures

_FINAL1 = np.uint64(0xBF58476D1CE4E5B9)
_FINAL2 = np.uint64(0x94D049BB133111EB)


def _avalanche(h: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """splitmix64's finalizer, in place: every output bit depends on every input bit."""
    h ^= h >> np.uint64(30)
    h *= _FINAL1
    h ^= h >> np.uint64(27)
    h *= _FINAL2
    h ^= h >> np.uint64(31)
    return h


def _column_prints(values: Any) -> NDArray[np.uint64]:
    """Fingerprints of a string column, or of a :class:`~serpeval.core.columns.Blocks` column
    (each block's value once, repeated over its rows: nothing is expanded)."""

    if isinstance(values, Blocks):
        heads = fingerprint(pa.chunked_array([values.heads], pa.string()))
        return np.repeat(heads, values.lengths)
    if not isinstance(values, pa.ChunkedArray):
        values = pa.chunked_array([values], pa.string())
    return fingerprint(values)


_SIGN_BLOCK = 1 << 15  # rows per block of content_signature: a few 256 KiB arrays, in cache


def content_signature(query_ids: Any, doc_ids: Any, values: Any, *, ordered: bool = False) -> str:
    """A short hash (16 hex digits) of a qrels or run *as parsed*: its (query id, doc id,
    value) rows, whatever the file's layout.

    Each row hashes to ``r = fin(mix(mix(fp(q) * M ^ fp(d)) ^ bits(v)))`` (``fp`` the
    64-bit string fingerprint above, ``bits`` the IEEE-754 bits of the value as float64 with
    -0.0 read as 0.0, ``mix(x) = (x * M) ^ ((x * M) >> 31)``, ``fin`` splitmix64's
    finalizer); the signature is ``fin(sum(r) mod 2^64 ^ n * M)``. A sum of row hashes does
    not depend on the rows' order, so whitespace, column spacing, line endings, comment
    lines and the order of the lines leave the signature unchanged, and any changed id,
    grade or score changes it (two inputs collide with probability about 2^-64). A grade
    ``2`` and a float grade ``2.0`` sign alike (the same number). ``ordered=True`` mixes each
    row's position in too, for a reading in which the file order matters (a tie policy that
    ranks by file order).

    Cost: one pass over the ids (the fingerprints are linear in their bytes) and the values.
    Rows read piece by piece sign alike: add up each piece's :func:`signature_part` and
    :func:`finish_signature` the total (the streamed runs, Spark's query groups).
    """
    total, n = signature_part(query_ids, doc_ids, values, ordered=ordered)
    return finish_signature(total, n)


def signature_part(query_ids: Any, doc_ids: Any, values: Any, *, ordered: bool = False,
                   first_row: int = 0) -> tuple[int, int]:
    """``(sum of the row hashes mod 2^64, rows)`` of some rows of an input (see
    :func:`content_signature`); parts add up: ``finish_signature((t1 + t2) % 2**64, n1 + n2)``
    is the signature of both parts' rows. ``first_row``: the rows' position in the whole
    input (``ordered=True`` only)."""
    if native.available():
        return _native_part(query_ids, doc_ids, values, ordered, first_row)
    q = _column_prints(query_ids)
    d = _column_prints(doc_ids)
    v = np.ascontiguousarray(values, dtype=np.float64)
    if not len(q) == len(d) == len(v):
        raise ValueError(f"content_signature: columns of {len(q)}, {len(d)} and {len(v)} rows")
    total = np.uint64(0)
    # Block by block, so that the dozen passes of the mixing stay in the CPU cache.
    for start in range(0, len(q), _SIGN_BLOCK):
        part = slice(start, start + _SIGN_BLOCK)
        h = q[part]                                                  # in place: q is ours
        work = np.empty_like(h)
        h *= _MIX
        h ^= d[part]
        h *= _MIX
        h ^= np.right_shift(h, np.uint64(31), out=work)
        np.add(v[part], 0.0, out=work.view(np.float64))              # -0.0 -> 0.0: its bits
        h ^= work
        h *= _MIX
        h ^= np.right_shift(h, np.uint64(31), out=work)
        if ordered:
            np.multiply(np.arange(first_row + start, first_row + start + len(h), dtype=np.uint64), _MIX2, out=work)
            _mix_word(h, work)
        for shift, factor in ((30, _FINAL1), (27, _FINAL2)):         # _avalanche, in place
            h ^= np.right_shift(h, np.uint64(shift), out=work)
            h *= factor
        h ^= np.right_shift(h, np.uint64(31), out=work)
        with np.errstate(over="ignore"):
            total = np.uint64(total + h.sum(dtype=np.uint64))        # both wrap modulo 2^64
    return int(total), len(q)


def _native_part(query_ids: Any, doc_ids: Any, values: Any, ordered: bool, first_row: int) -> tuple[int, int]:
    """:func:`signature_part` with the compiled kernels: one pass mixes the rows (no scratch
    arrays); a :class:`~serpeval.core.columns.Blocks` query column is fingerprinted once
    per block and read through a block code per row."""

    if isinstance(query_ids, Blocks):
        q = fingerprint(pa.chunked_array([query_ids.heads], pa.string()))
        block_codes = np.repeat(np.arange(len(q), dtype=np.int32), query_ids.lengths)
        codes: NDArray[np.int32] | None = block_codes
        n_q = len(block_codes)
    else:
        q, codes = _column_prints(query_ids), None
        n_q = len(q)
    d = _column_prints(doc_ids)
    v = np.ascontiguousarray(values, dtype=np.float64)
    if not n_q == len(d) == len(v):
        raise ValueError(f"content_signature: columns of {n_q}, {len(d)} and {len(v)} rows")
    return native.sign_rows(q, codes, d, v, ordered=ordered, first_row=first_row), len(d)


def keep_run_signature(run: Any, query_ids: pa.Array, query_codes: NDArray[np.integer],
                       doc_prints: NDArray[np.uint64], order: NDArray[np.int64] | None) -> None:
    """Sign a :class:`~serpeval.core.data.Run` from fingerprints its ranking computed anyway
    and keep the signature for :func:`signature_of` (compiled kernels; nothing done where they
    are not built or the run is signed already). Every row of the run must be given:
    ``doc_prints[i]`` the fingerprint of the doc id of row ``order[i]`` (row ``i`` where
    ``order`` is None) and ``query_ids[query_codes[i]]`` its query id. A sum of row hashes
    does not depend on the rows' order, so this is :func:`content_signature` of the run."""
    if "signature" in run._cache or not native.available():
        return
    if not len(doc_prints) == len(query_codes) == len(run) or (order is not None and len(order) != len(run)):
        raise ValueError(f"keep_run_signature: {len(doc_prints)} fingerprints for a run of {len(run)} rows")
    q = fingerprint(pa.chunked_array([query_ids], pa.string()))
    codes = np.ascontiguousarray(query_codes, dtype=np.int32)
    scores = np.ascontiguousarray(run.scores, dtype=np.float64)
    order = None if order is None else np.ascontiguousarray(order, dtype=np.int64)
    run._cache["signature"] = finish_signature(native.sign_rows(q, codes, doc_prints, scores, order), len(run))


def finish_signature(total: int, rows: int) -> str:
    """The signature (16 hex digits) of an input whose row hashes add up to ``total``
    (modulo 2^64) over ``rows`` rows (:func:`signature_part`)."""
    with np.errstate(over="ignore"):
        final = np.array([np.uint64(total % (1 << 64)) ^ (np.uint64(rows) * _MIX)], dtype=np.uint64)
    return f"{int(_avalanche(final)[0]):016x}"


def signature_of(data: Any) -> str:
    """The :func:`content_signature` of a :class:`~serpeval.core.data.Qrels` (its grades),
    :class:`~serpeval.core.data.Run` (its scores) or
    :class:`~serpeval.core.subtopics.SubtopicQrels` (the subtopic joined to the doc id),
    computed once and kept with the data."""
    cache = data._cache
    found = cache.get("signature")
    if found is None:
        values = data.relevance if hasattr(data, "relevance") else data.scores
        queries = data.query_id_blocks() if hasattr(data, "query_id_blocks") else data.query_ids
        docs = data.doc_ids
        if hasattr(data, "subtopic_ids"):   # subtopic qrels: a row is (query, subtopic + doc, grade)
            import pyarrow.compute as pc

            docs = pc.binary_join_element_wise(data.subtopic_ids, docs, "\x1f")
        found = cache["signature"] = content_signature(queries, docs, values)
    return str(found)
