"""Columnar relevance judgments (:class:`Qrels`) and system output (:class:`Run`).

Both hold one row per (query, document) in columns: query ids and doc ids as Arrow string
arrays (opaque byte strings: ``003`` and ``3`` are different queries), numbers as NumPy
arrays. No dict-of-dicts: that is what makes other tools slow to load and large in memory.
Readers live in :mod:`serpeval.io`, whose ``as_qrels`` / ``as_run`` turn anything a user may
hold (a path, a dict, a pandas or polars DataFrame, an Arrow table) into these.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core import native
from serpeval.core.columns import Blocks
from serpeval.core.duplicates import find_duplicate, grouped_duplicate
from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, ParseError
from serpeval.core.fingerprints import fingerprint
from serpeval.core.hash_index import Stored
from serpeval.core.id_codes import codes_in, pair_keys
from serpeval.core.strict_json import quote

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "GRADE_KINDS",
    "GRADE_LIMIT",
    "GradeKind",
    "Qrels",
    "Run",
    "check_float_grades",
    "check_grade_kind",
    "check_grades",
    "check_scores",
    "grades_of_kind",
    "qrels_from_nested",
    "refuse_boolean_grades",
    "run_from_nested",
]

GRADE_LIMIT = 2**53 - 1
"""The largest grade magnitude: grades are integers in ``[-GRADE_LIMIT, GRADE_LIMIT]``.

9,007,199,254,740,991 = 2^53 - 1, the range where every integer is exact as a float64 (the
kernels compute gains in float64) and can be negated in int64; it is also the integer range
JSON promises to carry exactly (RFC 7493, I-JSON)."""

_GRADE_RANGE = f"from -{GRADE_LIMIT} to {GRADE_LIMIT} (2^53 - 1)"

GradeKind = Literal["int", "float"]
"""What a qrels' grades are: ``"int"`` (the default: integers, as trec_eval) or ``"float"``
(any finite real number within ±GRADE_LIMIT: averaged assessors, calibrated labels)."""
GRADE_KINDS: tuple[GradeKind, ...] = get_args(GradeKind)

FLOAT_HINT = ("; fractional grades are read with --grades float (serpeval evaluate, compare, gate, report; "
              "grades=\"float\" in Python)")
"""Added to the message refusing a fractional grade in integer mode: how to accept it."""


# ----------------------------------------------------------------------------- value rules


def check_grades(values: Any, where: Callable[[int], str]) -> NDArray[np.int64]:
    """The one rule for relevance grades, applied by every reader: ``int64`` grades or a ParseError.

    A grade is an integer in ``[-GRADE_LIMIT, GRADE_LIMIT]``. Integer and boolean values are
    taken as they are; a float (or decimal) is taken when it is a whole number (``2.0`` is
    2); ``2.5``, NaN, infinity (``1e400`` in JSON reads as infinity), anything beyond the
    range and anything that is not a number are refused, never cast.

    Args:
        values: a NumPy array, an Arrow array, or any sequence of Python values.
        where: turns the index of a value into its location for the message (``path:line``,
            ``path: row 3``, ``<dict>: query 'q1', doc 'd7'``).

    Raises:
        ParseError: naming the first bad value's location, what was found, how to fix it,
            and how many values are bad.
    """
    arr = _numeric_array(values)
    if arr is None:
        return _grades_from_objects(values, where)
    kind = arr.dtype.kind
    if kind == "b":
        return arr.astype(np.int64)
    if kind in "iu":
        if arr.dtype.itemsize < 8:
            return arr.astype(np.int64, copy=False)
        bad = arr > GRADE_LIMIT
        if kind == "i":
            bad |= arr < -GRADE_LIMIT
    else:
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(arr) <= GRADE_LIMIT) | (arr != np.trunc(arr))  # NaN fails both
    if bad.any():
        first = int(np.argmax(bad))
        raise _grade_error(where(first), arr[first].item(), int(bad.sum()))
    return arr.astype(np.int64, copy=False)


def check_grade_kind(kind: object) -> GradeKind:
    """``kind`` if it names a grade type (``"int"`` or ``"float"``), else an InvalidParameterError."""
    if kind not in GRADE_KINDS:
        from serpeval.core.errors import InvalidParameterError

        raise InvalidParameterError(f"grades must be one of {', '.join(GRADE_KINDS)}; got {kind!r}.")
    return kind


def grades_of_kind(values: Any, where: Callable[[int], str], kind: GradeKind) -> NDArray[Any]:
    """:func:`check_grades` (``"int"``: ``int64``) or :func:`check_float_grades` (``"float"``: ``float64``)."""
    if check_grade_kind(kind) == "float":
        return check_float_grades(values, where)
    return check_grades(values, where)


def check_float_grades(values: Any, where: Callable[[int], str]) -> NDArray[np.float64]:
    """The rule for fractional grades (``grades="float"``): ``float64`` grades or a ParseError.

    A grade is any finite real number within ``[-GRADE_LIMIT, GRADE_LIMIT]`` (the integer
    range, so that a sum of gains over any ranking stays finite). Integers, booleans, floats
    and decimals are taken (a decimal rounded to the nearest float64); NaN, infinity, numbers
    beyond the range and anything that is not a number are refused. ``-0.0`` becomes ``0.0``
    (so that its sign bit never reads as a negative grade). Integer-valued grades give
    exactly the float64 the integer path computes with, so every measure is bit-identical.

    Raises:
        ParseError: naming the first bad value's location, what was found and how many are bad.
    """
    arr = _numeric_array(values)
    if arr is None:
        items = values.to_pylist() if isinstance(values, (pa.Array, pa.ChunkedArray)) else list(values)
        out = np.array([_float_grade_value(value) for value in items], dtype=np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(out) <= GRADE_LIMIT)  # NaN (not a number at all) fails too
        if bad.any():
            first = int(np.argmax(bad))
            raise _float_grade_error(where(first), items[first], int(bad.sum()))
        return out + 0.0
    if arr.dtype.kind in "iu":
        bad = arr > GRADE_LIMIT
        if arr.dtype.kind == "i":
            bad |= arr < -GRADE_LIMIT
    else:
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(arr) <= GRADE_LIMIT)  # NaN fails too
    if bad.any():
        first = int(np.argmax(bad))
        raise _float_grade_error(where(first), arr[first].item(), int(bad.sum()))
    return arr.astype(np.float64) + 0.0  # a new array (never the caller's), -0.0 as 0.0


def _float_grade_value(value: Any) -> float:
    """The number ``value`` stands for as a float (infinity beyond float64), NaN when it is
    not a number."""
    if isinstance(value, (bool, np.bool_, int, np.integer, float, np.floating, Decimal)):
        try:
            return float(value)
        except OverflowError:  # an int beyond float64
            return math.inf
    return math.nan


def _float_grade_error(where: str, value: Any, count: int) -> ParseError:
    """The message for a value that is not a fractional grade."""
    if isinstance(value, (int, float, np.integer, np.floating, Decimal)) and not isinstance(value, bool):
        if value != value:
            found = "NaN. NaN is not a grade: give the document a grade or drop the row"
        elif isinstance(value, (float, np.floating, Decimal)) and not _finite(value):
            found = (f"{'-' if value < 0 else ''}infinity (a number beyond float64, such as 1e400, "
                     "reads as infinity). Give the document a finite grade")
        else:
            found = f"{value!r}, outside that range. Map the grades onto a smaller scale"
    else:
        found = f"{value!r} ({type(value).__name__}). Write grades as numbers: 0, 0.5, 2.25, ..."
    more = f" ({count} values are not valid grades.)" if count > 1 else ""
    return ParseError(f"{where}: expected a finite real relevance grade {_GRADE_RANGE}, found {found}.{more}")


def check_scores(values: Any, where: Callable[[int], str]) -> NDArray[np.float64]:
    """The one rule for run scores, applied by every reader: ``float64`` scores or a ParseError.

    A score is any number except NaN (NaN has no rank). Infinite scores are kept, as
    trec_eval's ``atof`` reads ``inf`` and ``1e400``; they tie with each other and the doc id
    breaks the tie. Integers become floats (one too large for a float is infinite, as its
    text would be). Booleans and text are refused.

    Args:
        values: a NumPy array, an Arrow array, or any sequence of Python values.
        where: turns the index of a value into its location for the message.

    Raises:
        ParseError: naming the first bad value's location and how many values are bad.
    """
    arr = _numeric_array(values)
    if arr is None or arr.dtype.kind == "b":
        items = values.to_pylist() if isinstance(values, (pa.Array, pa.ChunkedArray)) else list(values)
        scores = np.empty(len(items), dtype=np.float64)
        for i, value in enumerate(items):
            score = _score_value(value)
            if score is None:
                raise ParseError(f"{where(i)}: expected a numeric score, found {value!r}. Write scores as numbers.")
            scores[i] = score
    else:
        scores = arr.astype(np.float64, copy=False)
    nan = np.isnan(scores)
    if nan.any():
        first = int(np.argmax(nan))
        raise ParseError(
            f"{where(first)}: the score is NaN; scores must be numbers (NaN has no rank). "
            f"{int(nan.sum())} score(s) are NaN; give those documents a score or drop them."
        )
    return scores


def _numeric_array(values: Any) -> NDArray[Any] | None:
    """``values`` as a NumPy array of booleans or numbers, or None when they are not that."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        t = values.type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
            return None
        return np.asarray(values.to_numpy(zero_copy_only=False))
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        return values
    return None


def _grades_from_objects(values: Any, where: Callable[[int], str]) -> NDArray[np.int64]:
    items = values.to_pylist() if isinstance(values, (pa.Array, pa.ChunkedArray)) else list(values)
    grades = np.empty(len(items), dtype=np.int64)
    first = -1
    bad = 0
    for i, value in enumerate(items):
        grade = _grade_value(value)
        if grade is None:
            bad += 1
            first = i if first < 0 else first
        else:
            grades[i] = grade
    if bad:
        raise _grade_error(where(first), items[first], bad)
    return grades


def _grade_value(value: Any) -> int | None:
    """The grade ``value`` stands for, or None when it is not one."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        number = int(value)
        return number if -GRADE_LIMIT <= number <= GRADE_LIMIT else None
    if isinstance(value, (float, np.floating, Decimal)):
        if not _finite(value) or not -GRADE_LIMIT <= value <= GRADE_LIMIT or value != int(value):
            return None
        return int(value)
    return None


def _finite(value: float | np.floating | Decimal) -> bool:
    return value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)


def _score_value(value: Any) -> float | None:
    """The score ``value`` stands for (NaN included), or None when it is not a number."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        try:
            return float(value)
        except OverflowError:  # beyond float64, as the text "1e400" is
            return math.inf if value > 0 else -math.inf
    if isinstance(value, (float, np.floating, Decimal)):
        return float(value)
    return None


def _grade_error(where: str, value: Any, count: int) -> ParseError:
    """The message for a value that is not a grade: what was found and how to fix it."""
    if isinstance(value, (float, np.floating, Decimal)) and not _finite(value):
        if value != value:  # NaN
            found = "NaN. NaN is not a grade: give the document a grade or drop the row"
        else:
            found = (f"{'-' if value < 0 else ''}infinity (a number beyond float64, such as 1e400, "
                     "reads as infinity). Give the document an integer grade")
    elif isinstance(value, (int, float, np.integer, np.floating, Decimal)) and not isinstance(value, bool):
        # Compared, not abs(): abs(np.int64(-2**63)) overflows back to -2**63.
        if not -GRADE_LIMIT <= value <= GRADE_LIMIT:
            found = (f"{value!r}, outside that range, where every grade is exact in float64 "
                     "arithmetic. Map the grades onto a smaller scale")
        else:
            found = (f"{value!r}, which is not a whole number. Round it or map it to an integer "
                     f"grade (2.0 is read as 2){FLOAT_HINT}")
    else:
        found = f"{value!r} ({type(value).__name__}). Write grades as numbers: 0, 1, 2, ..."
    more = f" ({count} values are not valid grades.)" if count > 1 else ""
    return ParseError(f"{where}: expected an integer relevance grade {_GRADE_RANGE}, found {found}.{more}")


def _strings(values: Any) -> pa.ChunkedArray:
    """Return ``values`` as an Arrow chunked string array (ids are opaque strings)."""
    if isinstance(values, pa.ChunkedArray):
        arr = values
    elif isinstance(values, pa.Array):
        arr = pa.chunked_array([values])
    else:
        arr = pa.chunked_array([pa.array(values, type=pa.string())])
    if not pa.types.is_string(arr.type):  # large_string, string_view, dictionary, numbers
        arr = arr.cast(pa.string())
    return arr


_STRING_LIMIT = 2**31 - 1  # bytes an Arrow string array (int32 offsets) holds


def _is_blocks_column(values: Any) -> bool:
    """Whether ``values`` is query ids as the TREC reader keeps them: a run-end encoded
    column (``int32`` run ends, ``string`` values) whose chunks are not slices."""
    if not isinstance(values, pa.ChunkedArray) or not pa.types.is_run_end_encoded(values.type):
        return False
    return (values.type.run_end_type == pa.int32() and values.type.value_type == pa.string()
            and all(chunk.offset == 0 for chunk in values.chunks))


def _decoded(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """A run-end encoded column as a plain ``string`` column, cut into chunks whose bytes
    fit ``int32`` offsets."""

    if not _is_blocks_column(values):
        return _strings(pc.run_end_decode(values) if pa.types.is_run_end_encoded(values.type) else values)
    pieces = []
    for chunk in values.chunks:
        heads, ends = chunk.values, chunk.run_ends.to_numpy().astype(np.int64)
        offsets = np.frombuffer(heads.buffers()[1], dtype=np.int32, count=len(heads) + 1, offset=4 * heads.offset)
        widths = np.diff(offsets).astype(np.int64)
        starts = np.concatenate([[0], ends[:-1]])
        expanded = np.cumsum(widths * (ends - starts))  # the column's bytes up to each block's end
        block, row = 0, 0
        while block < len(heads):
            done = (expanded[block - 1] if block else 0) + (row - starts[block]) * widths[block]
            last = int(np.searchsorted(expanded, done + _STRING_LIMIT, side="right"))
            if last > block:  # whole blocks from `row` on
                end = int(ends[last - 1])
                block = last
            else:  # one block alone expands past the limit: as many of its rows as fit
                end = min(row + _STRING_LIMIT // int(widths[block]), int(ends[block]))
                block += end == ends[block]
            pieces.append(pc.run_end_decode(chunk.slice(row, end - row)))
            row = end
    return pa.chunked_array(pieces, pa.string())


class _QueryIdBlocks:
    """``query_ids`` kept as blocks of equal neighbours until something asks for the column.

    The TREC reader writes each block of neighbouring rows with the same query id once (a
    run-end encoded column; files are nearly always grouped by query), so a 10M-row run of
    10k queries holds 10k ids instead of 10M (about 90 MB less), and the ranking maps the
    blocks to query codes without expanding them (:meth:`query_id_blocks`). The first read of
    ``query_ids`` expands the column (:func:`_decoded`) and keeps it.
    """

    _cache: dict[str, Any]

    def _set_query_ids(self, values: Any) -> None:
        """Keep ``values`` as blocks when it is a blocks column with at most half as many
        blocks as rows (a file grouped by query), else as a plain column."""
        if _is_blocks_column(values) and 2 * sum(len(chunk.values) for chunk in values.chunks) <= len(values):
            self._cache["query_blocks"] = values
            self.__dict__.pop("query_ids", None)  # made by __getattr__ when first asked for
        elif isinstance(values, pa.ChunkedArray) and pa.types.is_run_end_encoded(values.type):
            object.__setattr__(self, "query_ids", _decoded(values))
        else:
            object.__setattr__(self, "query_ids", _strings(values))

    if not TYPE_CHECKING:  # (for the type checker, query_ids is a plain attribute)

        def __getattr__(self, name: str) -> Any:
            blocks = self.__dict__.get("_cache", {}).get("query_blocks") if name == "query_ids" else None
            if blocks is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            column = _decoded(blocks)
            object.__setattr__(self, "query_ids", column)
            return column

    def query_id_blocks(self) -> Blocks | pa.ChunkedArray:
        """The query ids as their :class:`~serpeval.core.columns.Blocks` when the reader kept
        them so (nothing is expanded), else the ``query_ids`` column."""
        column = self._cache.get("query_blocks")
        if column is None:
            return self.query_ids  # type: ignore[attr-defined]
        blocks = self._cache.get("blocks")
        if blocks is None:
            heads = [chunk.values for chunk in column.chunks]
            lengths = [np.diff(chunk.run_ends.to_numpy(), prepend=0).astype(np.int64) for chunk in column.chunks]
            if len(heads) == 1:
                blocks = Blocks(heads[0], lengths[0])
            else:
                blocks = Blocks(pa.concat_arrays(heads) if heads else pa.array([], pa.string()),
                                np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64))
            self._cache["blocks"] = blocks
        return blocks


def _one_chunk(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """``values`` as a single chunk (a copy) when it has several and its bytes fit ``int32``
    offsets: judgments are looked up by row, and the compiled kernels read one array
    (without this they would need their own contiguous copy beside the chunks)."""
    if values.num_chunks <= 1:
        return values
    try:
        return pa.chunked_array([values.combine_chunks()], values.type)
    except (pa.ArrowInvalid, pa.ArrowCapacityError):  # over 2 GiB of ids: stay in chunks
        return values


@dataclass(frozen=True, eq=False)
class Qrels(_QueryIdBlocks):
    """Relevance judgments: one row per judged (query, document).

    Attributes:
        query_ids: Arrow string array, one entry per row. (Given as a run-end encoded
            column, as the TREC reader writes it, it is expanded when first read:
            :meth:`query_id_blocks` gives the blocks without expanding them.)
        doc_ids: Arrow string array, one entry per row.
        relevance: ``int64[n]`` grades (``float64[n]`` when ``grades="float"``). Negative
            grades mean "in the pool but unjudged" (trec_eval's rule), never "non-relevant";
            a negative fractional grade (``-0.5``) means the same.
        source: where the rows came from (a path, ``<dict>``, ``<DataFrame>``), used in
            error messages.
        skipped_lines: blank and comment lines skipped by the reader (reported, never lost).
        grades: the grade type: ``"int"`` (the default; a fractional grade is an error, so
            nobody gets fractions by accident) or ``"float"`` (any finite real grade within
            ±GRADE_LIMIT, :func:`check_float_grades`). Every measure reads float grades as
            they are; integer-valued float grades give bit-identical values.
    """

    query_ids: pa.ChunkedArray
    doc_ids: pa.ChunkedArray
    relevance: NDArray[Any]
    source: str = "<qrels>"
    skipped_lines: int = 0
    grades: GradeKind = "int"
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._set_query_ids(self.query_ids)
        object.__setattr__(self, "doc_ids", _one_chunk(_strings(self.doc_ids)))
        object.__setattr__(self, "relevance", grades_of_kind(self.relevance, self._row, self.grades))

    def as_grades(self, grades: GradeKind) -> Qrels:
        """These judgments with the grade type ``grades``: ``self`` when it already has it;
        ``"float"`` from integer grades is exact; ``"int"`` from float grades refuses a
        fractional grade (naming its row)."""
        if check_grade_kind(grades) == self.grades:
            return self
        blocks = self._cache.get("query_blocks")
        return Qrels(self.query_ids if blocks is None else blocks, self.doc_ids, self.relevance,
                     source=self.source, skipped_lines=self.skipped_lines, grades=grades)

    def _row(self, i: int) -> str:
        return f"{self.source}: row {i + 1}"

    def __len__(self) -> int:
        return len(self.relevance)

    def pair_keys(self) -> tuple[NDArray[np.int32], pa.Array, NDArray[np.uint64]]:
        """Every judgment's query code, the distinct query ids in byte order, and the 64-bit
        (query, doc) keys (:func:`serpeval.core.id_codes.pair_keys`).

        Computed once and shared by the readers' duplicate check and the qrels index
        (``serpeval.ranking.index_qrels``, which drops them once built).
        """
        cached = self._cache.get("pair_keys")
        if cached is None:
            cached = self._cache["pair_keys"] = pair_keys(self.query_ids, self.doc_ids)
        return cached

    def grouped(self) -> tuple[NDArray[np.int32], pa.Array, native.Groups] | None:
        """With the compiled kernels: every judgment's query code, the distinct query ids in
        byte order, and the judgments grouped by query and sorted by doc fingerprint
        (:class:`serpeval.core.native.Groups`); None without them. Computed once and shared
        by the readers' duplicate check and the qrels index."""
        if not native.available():
            return None
        cached = self._cache.get("grouped")
        if cached is None:
            strings = Stored(self.doc_ids).strings
            if strings is None:
                return None
            codes, uniques = codes_in(self.query_id_blocks())
            groups = native.Groups(codes, fingerprint(self.doc_ids), len(uniques), strings)
            cached = self._cache["grouped"] = (codes, uniques, groups)
        return cached

    def find_duplicate(self) -> tuple[int, int]:
        """The rows of the first (query, doc) judged twice, or ``(-1, -1)``
        (:func:`serpeval.core.duplicates.find_duplicate` on the shared keys, or on the shared
        groups with the compiled kernels)."""
        grouped = self.grouped()
        if grouped is not None:
            return grouped_duplicate(self.query_id_blocks(), self.doc_ids, grouped[2])
        return find_duplicate(self.query_ids, self.doc_ids, keys=self.pair_keys()[2])

    def __repr__(self) -> str:
        return f"Qrels({self.source!r}, {len(self)} judgments)"

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, float]], *, grades: GradeKind = "int") -> Qrels:
        """Build from ``{query_id: {doc_id: grade}}`` (pytrec_eval's shape); ``grades="float"``
        takes fractional grades."""
        return qrels_from_nested(judgments, "<dict>", json_keys=False, grades=grades)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Return ``{query_id: {doc_id: grade}}`` (grades as ``int``, or ``float`` for float qrels)."""
        out: dict[str, dict[str, Any]] = {}
        for q, d, r in zip(
            self.query_ids.to_pylist(), self.doc_ids.to_pylist(), self.relevance.tolist(), strict=True
        ):
            out.setdefault(q, {})[d] = r
        return out

    def to_pandas(self) -> Any:
        """Return a pandas DataFrame with columns ``query_id, doc_id, relevance``."""
        return self.to_arrow().to_pandas()

    def to_arrow(self) -> pa.Table:
        """Return an Arrow table with columns ``query_id, doc_id, relevance``."""
        return pa.table(
            {"query_id": self.query_ids, "doc_id": self.doc_ids, "relevance": self.relevance}
        )


@dataclass(frozen=True, eq=False)
class Run(_QueryIdBlocks):
    """System output: one row per retrieved (query, document) with a score.

    The order of rows and any rank column are ignored: ranks come from sorting by score
    (see :mod:`serpeval.ranking`).

    Attributes:
        query_ids: Arrow string array, one entry per row. (Given as a run-end encoded
            column, as the TREC reader writes it, it is expanded when first read:
            :meth:`query_id_blocks` gives the blocks without expanding them.)
        doc_ids: Arrow string array, one entry per row.
        scores: ``float64[n]``.
        name: display name (defaults to the file stem, or the run tag).
        tag: the run tag of the file's last line (trec_eval's ``runid``), or ``name``.
        source: where the rows came from, used in error messages.
        skipped_lines: blank and comment lines skipped by the reader.
        source_kind: ``"trec"`` when ``source`` is a TREC text file (so errors can name its
            lines), otherwise ``"memory"`` or ``"table"`` (errors name rows).
    """

    query_ids: pa.ChunkedArray
    doc_ids: pa.ChunkedArray
    scores: NDArray[np.float64]
    name: str = "run"
    tag: str = ""
    source: str = "<run>"
    skipped_lines: int = 0
    source_kind: str = "memory"
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._set_query_ids(self.query_ids)
        object.__setattr__(self, "doc_ids", _strings(self.doc_ids))
        object.__setattr__(self, "scores", check_scores(self.scores, self._row))
        if not self.tag:
            object.__setattr__(self, "tag", self.name)

    def _row(self, i: int) -> str:
        return f"{self.source}: row {i + 1}"

    def __len__(self) -> int:
        return len(self.scores)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self)} rows from {self.source!r})"

    @classmethod
    def from_dict(cls, scores: Mapping[str, Mapping[str, float]], name: str = "run") -> Run:
        """Build from ``{query_id: {doc_id: score}}`` (pytrec_eval's shape)."""
        return run_from_nested(scores, name, "<dict>", json_keys=False)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return ``{query_id: {doc_id: score}}`` (a duplicate doc keeps its last score)."""
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(
            self.query_ids.to_pylist(), self.doc_ids.to_pylist(), self.scores.tolist(), strict=True
        ):
            out.setdefault(q, {})[d] = s
        return out

    def to_arrow(self) -> pa.Table:
        """Return an Arrow table with columns ``query_id, doc_id, score``."""
        return pa.table({"query_id": self.query_ids, "doc_id": self.doc_ids, "score": self.scores})

    def to_pandas(self) -> Any:
        """Return a pandas DataFrame with columns ``query_id, doc_id, score``."""
        return self.to_arrow().to_pandas()

    def renamed(self, name: str) -> Run:
        """Return the same run under another display name."""
        blocks = self._cache.get("query_blocks")
        return Run(
            self.query_ids if blocks is None else blocks, self.doc_ids, self.scores, name=name, tag=self.tag,
            source=self.source, skipped_lines=self.skipped_lines, source_kind=self.source_kind,
        )


# ----------------------------------------------------------------------------- nested dicts


def _flatten(nested: Mapping[str, Mapping[str, Any]], value: str, label: str, json_keys: bool
             ) -> tuple[list[str], list[str], list[Any]]:
    """Query ids, doc ids and values of ``{query_id: {doc_id: value}}`` (values unchecked).

    ``json_keys`` names an entry by its JSON key path (``["q1"]["d7"]``, for a file), else
    as ``query 'q1', doc 'd7'`` (a Python dict).
    """
    qids: list[str] = []
    docs: list[str] = []
    values: list[Any] = []
    for q, inner in nested.items():
        if not isinstance(inner, Mapping):
            where = f"key [{quote(q)}]" if json_keys else f"query {q!r}"
            raise InputError(f"{label}: {where}: expected {{doc_id: {value}}}, found {type(inner).__name__}.")
        for d, v in inner.items():
            qids.append(str(q))
            docs.append(str(d))
            values.append(v)
    if not values:
        kind = "qrels have" if value == "grade" else "run has"
        raise EmptyInputError(f"{label}: the {kind} no (query, doc, {value}) entries.")
    return qids, docs, values


def _entry_namer(qids: list[str], docs: list[str], label: str, json_keys: bool) -> Callable[[int], str]:
    def where(i: int) -> str:
        if json_keys:
            return f"{label}: key [{quote(qids[i])}][{quote(docs[i])}]"
        return f"{label}: query {qids[i]!r}, doc {docs[i]!r}"

    return where


def run_from_nested(scores: Mapping[str, Mapping[str, Any]], name: str, label: str, json_keys: bool) -> Run:
    """A :class:`Run` from ``{query_id: {doc_id: score}}`` (errors as :func:`qrels_from_nested`)."""
    qids, docs, values = _flatten(scores, "score", label, json_keys)
    checked = check_scores(values, _entry_namer(qids, docs, label, json_keys))
    return Run(pa.array(qids, pa.string()), pa.array(docs, pa.string()), checked, name=name, source=label)


def refuse_boolean_grades(values: Any, where: Callable[[int], str], *, column: str | None = None,
                          python: bool = False) -> None:
    """The one rule on ``true``/``false`` grades, applied by every qrels reader (TREC text has
    no booleans; JSON, JSON lines, Parquet, Arrow tables, pandas and polars DataFrames, Python
    dicts, subtopic qrels) before :func:`check_grades` or :func:`check_float_grades`: a boolean
    grade is refused, never read as 1 or 0. ``bool`` is an ``int`` in Python and Arrow casts
    ``true`` to 1, but a column of flags is not a column of grades (a ``judged`` or
    ``clicked`` column named by mistake would pass as binary relevance).

    (:func:`check_grades` itself takes booleans: it is the value rule of a :class:`Qrels`
    built in code; the readers decide what a file or a user's table may hold.)

    Args:
        values: the grades: an Arrow array (a boolean column), a NumPy array or a sequence of
            Python values (``True``, ``np.True_``).
        where: turns the index of a value into its location (``path:line``, ``<table>: row 3``,
            a JSON key path, ``<dict>: query 'q', doc 'd'``).
        column: the relevance column's name, for a table (said in the message).
        python: spell the value as Python does (``True``, for a dict built in code), else as
            JSON and Arrow do (``true``).

    Raises:
        ParseError: naming the first boolean grade's location, the value and how to fix it.
    """
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if pa.types.is_dictionary(values.type) and pa.types.is_boolean(values.type.value_type):
            values = values.cast(pa.bool_())  # a categorical of true/false (pandas' Categorical)
        if not pa.types.is_boolean(values.type) or len(values) == values.null_count:
            return
        first = int(np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False))[0])
        value = bool(values[first].as_py())
    elif isinstance(values, np.ndarray) and values.dtype.kind != "O":
        if values.dtype.kind != "b" or not values.size:
            return
        first, value = 0, bool(values[0])
    else:
        items = values if isinstance(values, list) else list(values)
        if not {bool, np.bool_} & set(map(type, items)):  # (at C speed: the common case)
            return
        first = next(i for i, item in enumerate(items) if isinstance(item, (bool, np.bool_)))
        value = bool(items[first])
    shown, fix = (repr(value), "True as 1, False as 0") if python else (quote(value), "true as 1, false as 0")
    if column is not None:
        raise ParseError(f"{where(first)}: the relevance ({column!r}) is {shown}; expected an integer grade "
                         f"(0, 1, 2, ...). Write the grades as numbers ({fix}).")
    raise ParseError(f"{where(first)}: expected an integer relevance grade, found {shown}. Write the grade "
                     f"as a number ({fix}).")


def qrels_from_nested(judgments: Mapping[str, Mapping[str, Any]], label: str, json_keys: bool,
                      grades: GradeKind = "int") -> Qrels:
    """:class:`Qrels` from ``{query_id: {doc_id: grade}}``; ``label`` names the source in errors
    (entries by JSON key path when ``json_keys``, else as ``query 'q', doc 'd'``); ``grades``
    is the grade type."""
    qids, docs, values = _flatten(judgments, "grade", label, json_keys)
    where = _entry_namer(qids, docs, label, json_keys)
    refuse_boolean_grades(values, where, python=not json_keys)
    checked = grades_of_kind(values, where, grades)
    qrels = Qrels(pa.array(qids, pa.string()), pa.array(docs, pa.string()), checked, source=label,
                  grades=grades)
    first, second = qrels.find_duplicate()
    if first >= 0:  # only keys that differ but read as the same id: 1 and "1"
        raise DuplicateError(
            f"{where(second)}: document {docs[second]!r} is judged twice for query {qids[second]!r}: "
            "two keys read as the same id. Keep one judgment per (query, document)."
        )
    return qrels
