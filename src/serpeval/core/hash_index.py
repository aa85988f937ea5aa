"""Finding strings among stored strings by fingerprint: :class:`KeyTable` (a vectorized
open-addressing hash table from 64-bit keys to rows), :class:`Stored` (the strings its rows stand
for), :class:`StringTable` (positions among distinct strings) and :func:`grades_in_groups` (the
compiled lookup of judged documents within query groups). Every candidate match is confirmed on
the bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core import native
from serpeval.core.columns import ordered_chunks, string_chunks
from serpeval.core.fingerprints import fingerprint
from serpeval.core.string_compare import equal_at

if TYPE_CHECKING:

    from numpy.typing import NDArray


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


def grades_in_groups(groups: native.Groups, codes: NDArray[np.int32], prints: NDArray[np.uint64],
                     values: pa.ChunkedArray, grades: NDArray[Any], nonpool: int, unjudged: int,
                     out: NDArray[np.int64] | None = None, order: NDArray[np.int64] | None = None
                     ) -> NDArray[Any]:
    """Compiled kernels: ``grades[r]`` of the row ``r`` of ``groups`` holding each string of
    ``values`` (of ``values[order]`` where ``order`` is given) in its group ``codes[i]``
    (found by its fingerprint ``prints[i]``, confirmed on the bytes); ``unjudged`` for a
    negative grade, ``nonpool`` where there is no such row. ``out`` (a new array if None)
    may be ``prints`` itself, viewed as ``int64``: the kernel reads each row's fingerprint
    before it writes that row's grade.

    Fractional grades (``float64``, no NaN, no ``-0.0``: :func:`serpeval.core.data.check_float_grades`)
    go through the same kernel as their bit patterns: the kernel only copies a grade and tests
    its sign, and a float64's sign bit is its int64's; the result is then ``float64`` (``out``
    viewed so), ``nonpool`` and ``unjudged`` as the floats of the same value."""
    if grades.dtype.kind == "f":
        bits = np.ascontiguousarray(grades, dtype=np.float64).view(np.int64)
        nonpool_bits = int(np.float64(nonpool).view(np.int64))
        unjudged_bits = int(np.float64(unjudged).view(np.int64))
        return grades_in_groups(groups, codes, prints, values, bits, nonpool_bits, unjudged_bits, out=out,
                                order=order).view(np.float64)
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    grades = np.ascontiguousarray(grades, dtype=np.int64)
    if out is None:
        out = np.empty(len(values) if order is None else len(order), dtype=np.int64)
    if order is None:
        for part, chunk in string_chunks(values):
            native.match(codes[part], prints[part], native.Strings(chunk), groups, grades, nonpool, unjudged,
                         out[part])
        return out
    for where, chunk, rows in ordered_chunks(values, order):
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
            for part, chunk in string_chunks(values):
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
