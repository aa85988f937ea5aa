"""The compiled kernels (``_native.c``), loaded with :mod:`ctypes` when they were built.

``pip install`` compiles ``_native.c`` with the machine's C compiler (``hatch_build.py``);
where that was not possible serpeval runs the NumPy implementations in
:mod:`serpeval.core.fingerprints`, :mod:`serpeval.core.hash_index` and
:mod:`serpeval.core.segments`, which give the same numbers (``tests/core/test_native.py`` checks the
two against each other). ``SERPEVAL_NATIVE=0`` in the environment turns the kernels off.

Every wrapper here takes Arrow string arrays with ``int32`` offsets (``pa.string()``) and
NumPy arrays of the exact dtypes named; their callers in those modules convert.
"""

from __future__ import annotations

import ctypes
import os
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

ABI = 15  # must equal SV_ABI in _native.c: a library built from older source is not used
LIBRARY = Path(__file__).with_name("_native.so")

_P = ctypes.c_void_p
_I = ctypes.c_int64


@cache
def library() -> ctypes.CDLL | None:
    """The loaded kernels, or None (not built, turned off, or built from other source)."""
    if os.environ.get("SERPEVAL_NATIVE", "1") == "0" or sys.byteorder != "little":
        return None  # the kernels read 8-byte words little-endian, as the NumPy code does
    if not LIBRARY.is_file():
        return None
    try:
        lib = ctypes.CDLL(str(LIBRARY))
    except OSError:
        return None
    lib.sv_abi.restype = _I
    if lib.sv_abi() != ABI:
        return None
    lib.sv_fingerprint.argtypes = [_I, _P, _P, _P, _P, _P]
    lib.sv_fingerprint.restype = None
    lib.sv_sign_rows.argtypes = [_I, _P, _P, _P, _P, _P, _I, _I]
    lib.sv_sign_rows.restype = ctypes.c_uint64
    lib.sv_probe.argtypes = [_I, _P, _P, _P, _P, _P, _P, _I, _P, _P, _P, _P]
    lib.sv_probe.restype = None
    lib.sv_first_repeat.argtypes = [_P, _P, _I, _P]
    lib.sv_first_repeat.restype = _I
    lib.sv_group.argtypes = [_I, _P, _P, _I, _P, _P, _P]
    lib.sv_group.restype = _I
    lib.sv_match.argtypes = [_I, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _I, _I, _P]
    lib.sv_match.restype = _I
    lib.sv_sort_descending.argtypes = [_P, _P, _I]
    lib.sv_sort_descending.restype = None
    lib.sv_place_blocks.argtypes = [_P, _P, _P, _I, _P]
    lib.sv_place_blocks.restype = None
    lib.sv_positions.argtypes = [_P, _I, _P]
    lib.sv_positions.restype = None
    lib.sv_prefix_sums.argtypes = [_P, _P, _I, _P]
    lib.sv_prefix_sums.restype = None
    lib.sv_locate.argtypes = [_P, _I, _P, _I, _P, _P]
    lib.sv_locate.restype = None
    lib.sv_single_spaced.argtypes = [_P, _I]
    lib.sv_single_spaced.restype = _I
    lib.sv_read_trec.argtypes = [_P, _I, _I, _I, _I, _P, _P, _P, _P, _P, _P, _P]
    lib.sv_read_trec.restype = _I
    return lib


def available() -> bool:
    """True when the compiled kernels are loaded (and not turned off)."""
    return library() is not None


def _loaded() -> ctypes.CDLL:
    lib = library()
    if lib is None:  # pragma: no cover - callers check available() first
        raise RuntimeError("serpeval's compiled kernels are not loaded")
    return lib


def _address(array: NDArray[np.generic] | None) -> int | None:
    return None if array is None else array.ctypes.data


class Strings:
    """The offsets and bytes of one Arrow ``string`` array, as the kernels read them."""

    def __init__(self, values: pa.Array) -> None:
        buffers = values.buffers()
        self.values = values  # keeps the buffers alive
        self.offsets = np.frombuffer(buffers[1], dtype=np.int32)[values.offset: values.offset + len(values) + 1]
        self.data = buffers[2].address if buffers[2] is not None and buffers[2].size else None
        self.n = len(values)


def fingerprint(strings: Strings, out: NDArray[np.uint64], codes: NDArray[np.int32] | None = None,
                order: NDArray[np.int64] | None = None) -> None:
    """:func:`serpeval.core.fingerprints.fingerprint` of every string (of ``strings[order[i]]``
    where ``order`` is given) into ``out``; with ``codes``, the pair key
    :func:`serpeval.core.fingerprints.pair_key` of (``codes[i]``, string)."""
    lib = _loaded()
    n = strings.n if order is None else len(order)
    lib.sv_fingerprint(n, _address(strings.offsets), strings.data, _address(codes), _address(order), _address(out))


def sign_rows(q_prints: NDArray[np.uint64], q_codes: NDArray[np.int32] | None, d_prints: NDArray[np.uint64],
              values: NDArray[np.float64], v_order: NDArray[np.int64] | None = None, *, ordered: bool = False,
              first_row: int = 0) -> int:
    """The sum modulo 2^64 of the row hashes of
    :func:`serpeval.core.fingerprints.signature_part` over ``len(d_prints)`` rows: row ``i``
    has query fingerprint ``q_prints[q_codes[i]]`` (``q_prints[i]`` without codes), doc
    fingerprint ``d_prints[i]`` and value ``values[v_order[i]]`` (``values[i]`` without an order)."""
    n = len(d_prints)
    return int(_loaded().sv_sign_rows(n, _address(q_prints), _address(q_codes), _address(d_prints),
                                      _address(values), _address(v_order), int(ordered), first_row))


def probe(keys: NDArray[np.uint64], strings: Strings, codes: NDArray[np.int32] | None,
          slot_rows: NDArray[np.int32], table_keys: NDArray[np.uint64], shift: int,
          stored: Strings, stored_codes: NDArray[np.int32] | None, out: NDArray[np.int32]) -> None:
    """Probe a :class:`serpeval.core.hash_index.KeyTable` with ``keys`` (their lowest bit set in
    place) and confirm each match on the bytes (and the codes, where given). ``out``: the
    row, -1 (no such key) or -2 (the key's row holds another string)."""
    lib = _loaded()
    lib.sv_probe(len(keys), _address(keys), _address(strings.offsets), strings.data, _address(codes),
                 _address(slot_rows), _address(table_keys), shift, _address(stored.offsets), stored.data,
                 _address(stored_codes), _address(out))


class Groups:
    """Strings grouped by a code (a query), each group sorted by fingerprint: what
    :func:`match` searches. ``offsets[g]..offsets[g + 1]`` index ``rows`` (the strings' rows)
    and ``prints`` (their fingerprints)."""

    def __init__(self, codes: NDArray[np.int32], prints: NDArray[np.uint64], n_groups: int,
                 strings: Strings) -> None:
        self.offsets = np.empty(n_groups + 1, dtype=np.int64)
        self.rows = np.empty(len(codes), dtype=np.int32)
        self.prints = np.empty(len(codes), dtype=np.uint64)
        self.strings = strings
        codes = np.ascontiguousarray(codes, dtype=np.int32)
        prints = np.ascontiguousarray(prints, dtype=np.uint64)
        if _loaded().sv_group(len(codes), _address(codes), _address(prints), n_groups, _address(self.offsets),
                              _address(self.rows), _address(self.prints)) != 0:
            raise MemoryError("serpeval: no memory to sort a query's judgments")


def match(codes: NDArray[np.int32], prints: NDArray[np.uint64], strings: Strings, groups: Groups,
          grades: NDArray[np.int64], nonpool: int, unjudged: int, out: NDArray[np.int64],
          order: NDArray[np.int64] | None = None) -> None:
    """``out[i]``: ``grades[r]`` of the row ``r`` whose string equals ``strings[i]``
    (``strings[order[i]]`` where ``order`` is given) in group ``codes[i]`` of ``groups``
    (found by its fingerprint ``prints[i]``, confirmed on the bytes), ``unjudged`` where that
    grade is negative, ``nonpool`` where there is none."""
    if _loaded().sv_match(len(codes), _address(codes), _address(prints), _address(strings.offsets), strings.data,
                          _address(order), _address(groups.offsets), _address(groups.rows), _address(groups.prints),
                          _address(groups.strings.offsets), groups.strings.data, _address(grades), nonpool,
                          unjudged, _address(out)) != 0:
        raise MemoryError("serpeval: no memory to match a query's documents")


def first_repeat(keys: NDArray[np.uint64], offsets: NDArray[np.int64]) -> int:
    """The first position whose key occurs earlier in its segment, or -1. Keys are compared
    with their lowest bit set."""
    lib = _loaded()
    longest = int(np.diff(offsets).max(initial=0))
    size = 16
    while size < 2 * longest:
        size *= 2
    scratch = np.empty(size, dtype=np.uint64)
    return int(lib.sv_first_repeat(_address(keys), _address(offsets), len(offsets) - 1, _address(scratch)))


def sort_descending(values: NDArray[Any], offsets: NDArray[np.int64]) -> NDArray[Any]:
    """A copy of ``values`` with each segment sorted descending.

    ``float64`` values (fractional grades: no NaN) are sorted as int64 keys in the same order:
    a non-negative float's bits as they are, a negative one's with every bit but the sign
    flipped (a bijection, its own inverse), so the kernel's integer sort orders the floats."""
    if values.dtype.kind == "f":
        keys = np.array(values, dtype=np.float64, copy=True, order="C").view(np.int64)
        keys ^= (keys >> 63) & np.int64(0x7FFFFFFFFFFFFFFF)
        keys = sort_descending(keys, offsets)
        keys ^= (keys >> 63) & np.int64(0x7FFFFFFFFFFFFFFF)
        return keys.view(np.float64)
    out = np.array(values, dtype=np.int64, copy=True, order="C")
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    _loaded().sv_sort_descending(_address(out), _address(offsets), len(offsets) - 1)
    return out


def place_blocks(first: NDArray[np.int64], lengths: NDArray[np.int64], starts: NDArray[np.int64],
                 total: int) -> NDArray[np.int64]:
    """Rows of whole blocks (block b: ``lengths[b]`` rows from ``first[b]``) laid out at
    ``starts[b]`` of a new array of ``total`` rows."""
    first, lengths, starts = (np.ascontiguousarray(a, dtype=np.int64) for a in (first, lengths, starts))
    order = np.empty(total, dtype=np.int64)
    _loaded().sv_place_blocks(_address(first), _address(lengths), _address(starts), len(first), _address(order))
    return order


def positions(offsets: NDArray[np.int64]) -> NDArray[np.int64]:
    """The 0-based position of every element within its segment."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    out = np.empty(int(offsets[-1]) if len(offsets) else 0, dtype=np.int64)
    _loaded().sv_positions(_address(offsets), len(offsets) - 1, _address(out))
    return out


def prefix_sums(values: NDArray[np.float64], offsets: NDArray[np.int64]) -> NDArray[np.float64]:
    """Running sums of ``values`` within each segment, added left to right."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    out = np.empty_like(values)
    _loaded().sv_prefix_sums(_address(values), _address(offsets), len(offsets) - 1, _address(out))
    return out


def locate(index: NDArray[np.int64], offsets: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For increasing flat ``index`` into segments cut at ``offsets``: each one's segment,
    and the position in ``index`` where each segment starts (``len(offsets)`` entries)."""
    index = np.ascontiguousarray(index, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    segment = np.empty(len(index), dtype=np.int64)
    starts = np.empty(len(offsets), dtype=np.int64)
    _loaded().sv_locate(_address(index), len(index), _address(offsets), len(offsets) - 1, _address(segment),
                        _address(starts))
    return segment, starts


def single_spaced(data: NDArray[np.uint8]) -> bool:
    """The single-space test of :mod:`serpeval.io.trec` on one slice (see ``_native.c``)."""
    lib = _loaded()
    return bool(lib.sv_single_spaced(_address(data), len(data)))


# sv_read_trec's state (the ST_* of _trec_reader.c) and why it stopped (SV_*)
(_ROWS, _ROW_CAP, _Q_BYTES, _Q_CAP, _D_BYTES, _D_CAP, _SKIPPED, _STOP, _CHUNK_LIMIT, _Q_NEED, _D_NEED,
 _Q_BLOCKS) = range(12)
_NEED_INPUT, _FULL, _CHUNK_FULL, _REFUSED = range(4)
_PROBE = 1 << 22  # bytes of input the buffers are first sized for


_OWN_PAGES = 1 << 24  # bytes from which the reader's buffers get pages of their own (mmap)


def _regrow(array: NDArray[Any], size: int) -> NDArray[Any]:
    """``array`` with room for ``size`` elements, its content kept. From ``_OWN_PAGES``
    bytes on, the buffer is a mapping of its own (anonymous ``mmap``): the columns a reader
    fills live as long as the run, and kept out of ``malloc``'s heap they leave no holes there
    (another thread may be allocating meanwhile) and go back to the system when dropped. Pages
    never written (the estimate's spare) take no memory."""
    if size * array.itemsize < _OWN_PAGES:  # still malloc's (buffers only grow): realloc
        array.resize(size, refcheck=False)
        return array
    import mmap

    grown = np.frombuffer(mmap.mmap(-1, size * array.itemsize), dtype=array.dtype)
    grown[:len(array)] = array
    return grown


def _cut(array: NDArray[Any], size: int) -> NDArray[Any]:
    """``array``'s first ``size`` elements (cut in place when ``malloc`` owns it)."""
    if array.base is None:
        array.resize(size, refcheck=False)
        return array
    return array[:size]


class TrecColumns:
    """The rows of a TREC run or qrels file read by ``sv_read_trec`` (``_trec_reader.c``),
    fed its bytes piece by piece: query ids and doc ids as Arrow ``string`` arrays (one chunk
    while their bytes fit ``int32`` offsets), the scores (``float64``) or grades (``int64``).

    The buffers are first sized for ``_PROBE`` bytes of input. When they are full, they are
    resized once for the whole input (``size_hint`` bytes) in the proportions of the rows
    read so far, with 3% to spare, so that a file of similar lines is written in place,
    once, with little memory reserved and never used; after that, a full buffer doubles
    (``realloc``). At the end they are cut to their length. A line the reader does not take
    (see ``_trec_reader.c``) makes :meth:`feed` return None: the caller reads the file with
    the careful reader instead.
    """

    def __init__(self, run: bool, comments: bool, size_hint: int, chunk_limit: int = 2**31 - 1) -> None:
        self.columns = 6 if run else 4
        self.comments = comments
        self.number_type = np.float64 if run else np.int64
        self.size_hint = size_hint
        self.chunk_limit = chunk_limit
        self.consumed = 0  # bytes of input read before the current feed
        self.estimated = False
        self.chunks: list[tuple[NDArray[np.int32], NDArray[np.uint8], NDArray[np.int32], NDArray[np.int32],
                                NDArray[np.uint8], NDArray[np.generic], int]] = []
        self.skipped = 0
        first = min(size_hint, _PROBE) + 1
        shortest = 12 if run else 8  # bytes of the shortest data line: 6 or 4 one-byte fields and an end
        self._new_chunk(first // shortest + 1, first)

    def _new_chunk(self, rows: int, data_bytes: int) -> None:
        self.q_off = np.empty(rows + 1, dtype=np.int32)
        self.d_off = np.empty(rows + 1, dtype=np.int32)
        self.numbers = np.empty(rows, dtype=self.number_type)
        self.q_data = np.empty(data_bytes, dtype=np.uint8)
        self.d_data = np.empty(data_bytes, dtype=np.uint8)
        self.q_ends = np.empty(rows, dtype=np.int32)
        self.state = np.zeros(12, dtype=np.int64)
        self.state[[_ROW_CAP, _Q_CAP, _D_CAP, _CHUNK_LIMIT]] = rows, data_bytes, data_bytes, self.chunk_limit

    def _grow(self, consumed: int) -> None:
        """Make room: once for the whole input (estimated from the ``consumed`` bytes read so
        far), then by doubling whatever is full."""
        state = self.state
        rows, q_cap, d_cap = int(state[_ROW_CAP]), int(state[_Q_CAP]), int(state[_D_CAP])
        if not self.estimated and consumed and state[_ROWS]:
            self.estimated = True
            scale = 1.03 * max(self.size_hint, consumed) / consumed
            rows = max(rows, int(state[_ROWS] * scale) + 64)
            q_cap = max(q_cap, int(state[_Q_BYTES] * scale) + 64)
            d_cap = max(d_cap, int(state[_D_BYTES] * scale) + 64)
        elif state[_ROWS] >= rows:
            rows *= 2
        if state[_Q_NEED] > q_cap:
            q_cap = max(2 * q_cap, int(state[_Q_NEED]))
        if state[_D_NEED] > d_cap:
            d_cap = max(2 * d_cap, int(state[_D_NEED]))
        if rows > state[_ROW_CAP]:
            self.q_off = _regrow(self.q_off, rows + 1)
            self.d_off = _regrow(self.d_off, rows + 1)
            self.q_ends = _regrow(self.q_ends, rows)
            self.numbers = _regrow(self.numbers, rows)
        if q_cap > len(self.q_data):
            self.q_data = _regrow(self.q_data, q_cap)
        if d_cap > len(self.d_data):
            self.d_data = _regrow(self.d_data, d_cap)
        state[_ROW_CAP], state[_Q_CAP], state[_D_CAP] = rows, q_cap, d_cap

    def _seal(self) -> None:
        """Cut the current chunk's arrays to their length and keep them."""
        rows, state = int(self.state[_ROWS]), self.state
        blocks = int(state[_Q_BLOCKS])
        self.q_off = _cut(self.q_off, blocks + 1)
        self.q_ends = _cut(self.q_ends, blocks)
        self.d_off = _cut(self.d_off, rows + 1)
        self.numbers = _cut(self.numbers, rows)
        self.q_data = _cut(self.q_data, int(state[_Q_BYTES]))
        self.d_data = _cut(self.d_data, int(state[_D_BYTES]))
        self.chunks.append((self.q_off, self.q_data, self.q_ends, self.d_off, self.d_data, self.numbers, rows))
        self.skipped += int(state[_SKIPPED])

    def feed(self, data: NDArray[np.uint8], final: bool) -> int | None:
        """Read the complete lines of ``data`` (``final``: the rest of the file, so its last
        line needs no line end); returns the bytes consumed (the caller keeps the rest for
        the next call), or None when a line is not taken."""
        lib = _loaded()
        at = 0
        self.state[_Q_NEED] = self.state[_D_NEED] = 0
        while True:
            used = lib.sv_read_trec(data.ctypes.data + at, len(data) - at, int(final), self.columns,
                                    int(self.comments), _address(self.state), _address(self.q_off),
                                    _address(self.q_data), _address(self.q_ends), _address(self.d_off),
                                    _address(self.d_data), _address(self.numbers))
            at += used
            stop = self.state[_STOP]
            if stop == _NEED_INPUT:
                self.consumed += at
                return at
            if stop == _REFUSED:
                return None
            if stop == _FULL:
                self._grow(self.consumed + at)
            else:  # _CHUNK_FULL: the ids' bytes reached the int32 offsets' limit
                state = self.state
                self._seal()
                self._new_chunk(int(state[_ROW_CAP]), int(max(state[_Q_CAP], state[_D_CAP])))

    def finish(self) -> tuple[pa.ChunkedArray, pa.ChunkedArray, NDArray[np.generic], int]:
        """The query ids, doc ids, numbers and the count of skipped (blank and comment) lines.

        The query ids come as the reader wrote them, one value per block of equal
        neighbouring rows: a run-end encoded column (which ``Run`` and ``Qrels`` keep as it
        is unless the blocks are short).
        """
        import pyarrow as pa

        self._seal()
        chunks, self.chunks = self.chunks, []

        def strings(offsets: NDArray[np.int32], data: NDArray[np.uint8], rows: int) -> pa.Array:
            return pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)])

        def blocks(q_off: NDArray[np.int32], q_data: NDArray[np.uint8], q_ends: NDArray[np.int32],
                   rows: int) -> pa.Array:
            ends = pa.Array.from_buffers(pa.int32(), len(q_ends), [None, pa.py_buffer(q_ends)])
            return pa.RunEndEncodedArray.from_arrays(ends, strings(q_off, q_data, len(q_ends)))

        query_ids = pa.chunked_array([blocks(q_off, q_data, q_ends, rows) for q_off, q_data, q_ends, *_, rows
                                      in chunks], pa.run_end_encoded(pa.int32(), pa.string()))
        doc_ids = pa.chunked_array([strings(d_off, d_data, rows) for _, _, _, d_off, d_data, _, rows in chunks],
                                   pa.string())
        numbers = chunks[0][5] if len(chunks) == 1 else np.concatenate([chunk[5] for chunk in chunks])
        return query_ids, doc_ids, numbers, self.skipped
