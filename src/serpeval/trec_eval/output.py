"""trec_eval's output lines, built for a million lines at a time.

Each line is ``printf("%-22s\\t%s\\t%6.4f\\n", name, qid, value)`` (``%ld`` of the value
truncated for counts; ``%s`` for runid; ``'%s'`` for relstring). Lines are assembled with
Arrow string kernels over whole columns and written from the joined buffer, never printed
one by one.

``%6.4f`` is reproduced exactly: the value times 10^4 is rounded to an integer where that
is safe; values whose product lies within 10^-5 of a half (a possible tie, such as 1/32, or
a doubt about the last bit of the product) and non-finite values are formatted by Python's
``%``, which rounds the exact binary value as glibc's ``printf`` does (halves to even).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from serpeval.trec_eval.catalog import Column
    from serpeval.trec_eval.compute import Evaluation
    from serpeval.trec_eval.options import Options

__all__ = ["fixed4", "format_evaluation", "integers", "lines"]

_NEAR_HALF = 1e-5  # |x * 1e4 - (k + 0.5)| below this: let Python decide the rounding


def fixed4(values: np.ndarray) -> pa.Array:
    """``'%6.4f' % v`` for every value, as an Arrow string array.

    Values in [0, 10) (nearly all: measures are in [0, 1]) become the 6 bytes ``d.dddd``
    with integer arithmetic, written straight into an Arrow buffer; the rest (negative,
    large, non-finite, or within 10^-5 of a rounding tie) go through Python's ``%``.
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    with np.errstate(over="ignore", invalid="ignore"):  # huge and non-finite: the slow path
        scaled = values * 1e4
        fast = (scaled >= 0) & (scaled < 99999.0) & ~np.signbit(values)
        fast &= np.abs(scaled - np.floor(scaled) - 0.5) >= _NEAR_HALF
    units = np.rint(np.where(fast, scaled, 0.0)).astype(np.int32)
    text = np.empty((n, 6), dtype=np.uint8)
    text[:, 0] = 48 + units // 10000
    text[:, 1] = 46  # "."
    text[:, 2] = 48 + units // 1000 % 10
    text[:, 3] = 48 + units // 100 % 10
    text[:, 4] = 48 + units // 10 % 10
    text[:, 5] = 48 + units % 10
    offsets = np.arange(0, 6 * n + 1, 6, dtype=np.int32)
    out = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text))
    if not fast.all():
        slow = ~fast
        exact = pa.array(["%6.4f" % v for v in values[slow].tolist()], pa.string())  # noqa: UP031
        out = pc.replace_with_mask(out, pa.array(slow), exact)
    return out


def integers(values: np.ndarray) -> pa.Array:
    """``'%ld' % (long) v``: counts, truncated towards zero."""
    return pc.cast(pa.array(np.trunc(values).astype(np.int64)), pa.string())


def lines(names: Sequence[str], qids: pa.Array, columns: Sequence[pa.Array]) -> Iterator[bytes]:
    """The bytes of the lines ``name_c<TAB>qid_t<TAB>value_ct`` for every topic t (outer) and
    column c (inner), yielded in blocks of topics to bound memory.

    ``columns[c]`` holds the formatted values of column c, one per topic in ``qids``.
    """
    n_topics, n_columns = len(qids), len(names)
    if n_topics == 0 or n_columns == 0:
        return
    prefixes = pa.array([_padded(name) for name in names], pa.binary())
    block = max(1, 2_000_000 // n_columns)
    for start in range(0, n_topics, block):
        stop = min(n_topics, start + block)
        t = stop - start
        row = np.repeat(np.arange(t), n_columns)
        col = np.tile(np.arange(n_columns), t)
        stacked = pa.concat_arrays([c.slice(start, t).cast(pa.binary()) for c in columns])
        values = stacked.take(pa.array(col * t + row))
        joined = pc.binary_join_element_wise(
            prefixes.take(pa.array(col)), qids.slice(start, t).take(pa.array(row)).cast(pa.binary()), b"\t",
            values, b"\n", b"")
        yield _contents(joined)


def _padded(name: str) -> bytes:
    """``printf("%-22s\t", name)``: the name's bytes padded with blanks to 22 *bytes* (a
    non-ASCII name gets fewer blanks than characters suggest), then a tab. A name from a
    command line that is not UTF-8 keeps its own bytes (argv's surrogate escapes)."""
    raw = name.encode("utf-8", "surrogateescape")
    return raw + b" " * (22 - len(raw)) + b"\t"


def _contents(strings: pa.Array) -> bytes:
    """The concatenation of all strings of an Arrow string array (its data buffer)."""
    first, last = strings.offset, strings.offset + len(strings)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[first: last + 1]
    data = strings.buffers()[2]
    if data is None:
        return b""
    return data.slice(int(offsets[0]), int(offsets[-1] - offsets[0])).to_pybytes()


def format_evaluation(evaluation: Evaluation, opts: Options) -> Iterator[bytes]:
    """The output bytes, in blocks: the ``-q`` rows (if asked), then the ``all`` rows."""
    columns = evaluation.columns
    if opts.per_query:
        shown = [(c, v) for c, v in zip(columns, evaluation.per_topic, strict=True)
                 if v is not None]
        yield from lines([c.name for c, _ in shown], evaluation.topics,
                         [_text(c, v) for c, v in shown])
    if opts.summary:
        shown = [(c, v) for c, v in zip(columns, evaluation.summary, strict=True) if v is not None]
        yield from lines([c.name for c, _ in shown], pa.array(["all"]),
                         [_text(c, pa.array([v]) if c.kind == "str" else np.array([v]))
                          for c, v in shown])


def _text(column: Column, values: Any) -> pa.Array:
    """Printed values: ``%6.4f``, ``%ld`` of the truncated value, runid as is, relstring
    between single quotes."""
    if column.kind == "str":
        return values if column.summary == "runid" else pc.binary_join_element_wise(
            "'", values, "'", "")
    return integers(values) if column.kind == "long" else fixed4(values)
