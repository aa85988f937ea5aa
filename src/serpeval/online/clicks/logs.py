"""Click logs: SERP impressions with their clicks, encoded for fitting click models.

A :class:`ClickLog` holds, per impression, the (query, document) item shown at each slot as
an integer code and a click flag. Codes index the per-item parameters of a fitted model;
:meth:`ClickLog.encode_like` re-encodes a held-out log in a training log's codes, mapping
(query, document) pairs never seen in training to one extra "unseen" code (counted).

Input format (JSON lines, optionally gzipped), one impression per line::

    {"query": "98435_1", "docs": ["232429", "688835", ...], "clicked_ranks": [1, 4]}

``clicked_ranks`` are 1-based integer ranks of clicked results. A ``clicks`` list of clicked doc
ids (in click order, repeats kept) may also be present: it is used to count what cannot be
placed on the page (clicks on ids that were not shown, repeated clicks), which are reported, and
it must agree with ``clicked_ranks`` (the shown documents it names are the documents at those
ranks), or the line is refused.

**Refused, naming the file and line**: a line nested deeper than :data:`MAX_JSON_DEPTH` (checked
before Arrow's JSON reader sees it, which crashes on very deep input), ranks that are not
integers (``1.5``, ``"1"``, ``true``) or not shown positions, ``clicks`` that contradict
``clicked_ranks``, an impression without documents or query (or a null id), a document listed
twice; :meth:`ClickLog.from_records` refuses the same at the record's number, and a record
that is not a dict or whose ``docs`` is not a list. A null ``clicked_ranks`` (or ``clicks``)
is read as an empty list, as an absent one is: no clicks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.errors import EmptyInputError, InputError, ParseError
from serpeval.online.common import first_duplicate_row

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

__all__ = ["MAX_JSON_DEPTH", "ClickLog", "check_json_depth"]

_SEP = "\x1f"
#: The deepest JSON a click-log line may nest (a line is an object of lists: depth 2).
MAX_JSON_DEPTH = 64
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


@dataclass(frozen=True, eq=False)
class ClickLog:
    """Impressions with clicks, items encoded as (query, document) codes.

    Attributes:
        items: ``int64[n, k]`` item code per slot; ``-1`` for a slot past the end of a shorter
            result list; ``n_items`` (one past the last known code) for an item unseen in the
            log that defined the codes (see :meth:`encode_like`).
        clicks: ``bool[n, k]``.
        query: ``int64[n]`` query code of each impression (index into ``queries``).
        queries: distinct query ids.
        item_keys: ``query<US>doc`` of every known item code (US = unit separator).
        source: where the log came from.
        counts: what was read and what could not be used (never silently dropped):
            ``impressions``, ``clicks``, ``clicks_not_shown`` (ids not among the shown docs),
            ``repeat_clicks``, ``unseen_cells`` (items unknown to the encoding log).
    """

    items: NDArray[np.int64]
    clicks: NDArray[np.bool_]
    query: NDArray[np.int64]
    queries: list[str]
    item_keys: pa.Array
    source: str = "<click log>"
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        """Number of known (query, document) items."""
        return len(self.item_keys)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return (f"ClickLog({self.source!r}, {len(self)} impressions, {len(self.queries)} queries, "
                f"{self.n_items} items)")

    # ------------------------------------------------------------------ reading
    @classmethod
    def read_jsonl(cls, path: str | Path) -> ClickLog:
        """Read a JSON-lines log (``.gz`` allowed); see the module docstring for the format."""
        import pyarrow as pa
        import pyarrow.json as pj

        p = Path(path)
        if not p.is_file():
            raise InputError(f"{path}: no such click log file.")
        compression = "gzip" if p.suffix == ".gz" else None
        check_json_depth(p)
        try:
            table = pj.read_json(pa.input_stream(str(p), compression=compression))
        except (pa.ArrowInvalid, OSError) as exc:
            raise ParseError(f"{path}: not a JSON-lines click log ({exc}). Expected one object "
                             'per line: {"query": ..., "docs": [...], "clicked_ranks": [...]}.') from exc
        missing = {"query", "docs", "clicked_ranks"} - set(table.column_names)
        if missing:
            raise ParseError(f"{path}: missing field(s) {', '.join(sorted(missing))}; every line "
                             'needs "query", "docs" and "clicked_ranks" (1-based).')
        return cls.from_table(table, source=str(path))

    @classmethod
    def from_records(cls, records: list[dict[str, Any]], source: str = "<records>") -> ClickLog:
        """Build from dicts shaped like the JSON lines (``query``, ``docs``, ``clicked_ranks``)."""
        import pyarrow as pa

        if not records:
            raise EmptyInputError(f"{source}: no impressions.")
        rows = []
        for number, r in enumerate(records, 1):
            if not isinstance(r, Mapping):
                raise ParseError(f'{source}: record {number}: expected a dict with "query", "docs" and '
                                 f'"clicked_ranks"; got {type(r).__name__}.')
            missing = [key for key in ("query", "docs") if key not in r]
            if missing:
                raise ParseError(f"{source}: record {number}: missing field(s) {', '.join(missing)}; every "
                                 'impression needs "query" and "docs" (and "clicked_ranks", 1-based).')
            ranks = _record_list(r.get("clicked_ranks"), "clicked_ranks", number, source)
            for x in ranks:
                if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
                    raise ParseError(f'{source}: record {number}: "clicked_ranks" must hold 1-based integer '
                                     f"ranks; found {x!r}.")
            # None stays None (a null query or document id, refused by from_table at its record);
            # str() of None would make it an id "None".
            rows.append({
                "query": None if r["query"] is None else str(r["query"]),
                "docs": [None if d is None else str(d)
                         for d in _record_list(r["docs"], "docs", number, source)],
                "clicked_ranks": [int(x) for x in ranks],
                "clicks": ([None if d is None else str(d) for d in _record_list(r["clicks"], "clicks", number, source)]
                           if r.get("clicks") is not None else None),
            })
        table = pa.Table.from_pylist(
            rows,
            schema=pa.schema([("query", pa.string()), ("docs", pa.list_(pa.string())),
                              ("clicked_ranks", pa.list_(pa.int64())),
                              ("clicks", pa.list_(pa.string()))]),
        )
        return cls.from_table(table, source=source)

    @classmethod
    def from_table(cls, table: pa.Table, source: str = "<table>") -> ClickLog:
        """Build from an Arrow table with ``query``, ``docs`` (list) and ``clicked_ranks`` (list)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        n = table.num_rows
        if n == 0:
            raise EmptyInputError(f"{source}: no impressions.")
        table = _typed_nulls(table)
        query = table.column("query").combine_chunks().cast(pa.string())
        docs = table.column("docs").combine_chunks()
        lengths = pc.fill_null(pc.list_value_length(docs), 0).to_numpy(zero_copy_only=False)
        if lengths.min() == 0:
            bad = int(np.argmin(lengths))
            raise ParseError(f"{source}: line {bad + 1}: an impression without documents.")
        if query.null_count:
            bad = int(np.flatnonzero(query.is_null().to_numpy(zero_copy_only=False))[0])
            raise ParseError(f'{source}: line {bad + 1}: no "query" id; every impression needs one.')
        k = int(lengths.max())
        row_of_cell = np.repeat(np.arange(n), lengths)
        slot_of_cell = np.arange(len(row_of_cell)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        flat_docs = docs.flatten().cast(pa.string())
        if flat_docs.null_count:
            cell = int(np.flatnonzero(flat_docs.is_null().to_numpy(zero_copy_only=False))[0])
            raise ParseError(f"{source}: line {row_of_cell[cell] + 1}: a null document id at rank "
                             f"{slot_of_cell[cell] + 1}; every shown result needs an id.")
        keys = pc.binary_join_element_wise(query.take(pa.array(row_of_cell)), flat_docs, _SEP)
        item_keys = pc.unique(keys)
        codes = pc.index_in(keys, value_set=item_keys).to_numpy(zero_copy_only=False)
        items = np.full((n, k), -1, dtype=np.int64)
        items[row_of_cell, slot_of_cell] = codes
        _check_unique_docs(items, source)

        ranks = table.column("clicked_ranks").combine_chunks()
        r_len = pc.fill_null(pc.list_value_length(ranks), 0).to_numpy(zero_copy_only=False)
        r_row = np.repeat(np.arange(n), r_len)
        r_flat = _integer_ranks(ranks.flatten(), r_row, source)
        bad = (r_flat < 1) | (r_flat > lengths[r_row])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ParseError(
                f"{source}: line {r_row[i] + 1}: clicked rank {r_flat[i]} is not a shown position "
                f"(1..{lengths[r_row[i]]}); clicked_ranks are 1-based ranks of shown results."
            )
        clicks = np.zeros((n, k), dtype=bool)
        clicks[r_row, r_flat - 1] = True
        counts = {"impressions": n, "clicks": int(clicks.sum()),
                  "repeat_rank_entries": int(len(r_flat) - clicks.sum())}
        if "clicks" in table.column_names:
            counts.update(_raw_click_counts(table, r_row, r_flat, source))
        q_codes, q_names = _factorize(query)
        return cls(items, clicks, q_codes, q_names, item_keys, source, counts)

    # ------------------------------------------------------------------ encoding
    def encode_like(self, reference: ClickLog | pa.Array) -> ClickLog:
        """This log's impressions with item codes from ``reference`` (a training log, or the
        ``vocabulary`` of a model fitted on one); pairs it does not know get the unseen code
        ``len(reference keys)`` and are counted (``unseen_cells``). A log already in those
        codes is returned as it is."""
        import pyarrow as pa
        import pyarrow.compute as pc

        keys = reference.item_keys if isinstance(reference, ClickLog) else reference
        if self.in_codes_of(keys):
            return self
        shown = self.items >= 0
        own = self.items[shown]
        known = own < self.n_items  # cells already unseen by an earlier encoding stay unseen
        mapped = pc.index_in(self.item_keys.take(pa.array(np.where(known, own, 0))), value_set=keys)
        codes = pc.fill_null(mapped, len(keys)).to_numpy(zero_copy_only=False)
        codes = np.where(known, codes, len(keys))
        items = self.items.copy()
        items[shown] = codes
        counts = dict(self.counts)
        counts["unseen_cells"] = int(np.count_nonzero(codes == len(keys)))
        return ClickLog(items, self.clicks, self.query, self.queries, keys, self.source, counts)

    def in_codes_of(self, keys: pa.Array) -> bool:
        """Whether this log's item codes already are the codes of ``keys`` (the same pairs in
        the same order: the log that defined them, or one encoded like it)."""
        if keys is self.item_keys:
            return True
        if len(keys) != len(self.item_keys):
            return False
        return bool(self.item_keys.cast(keys.type).equals(keys))

    def ctr_by_rank(self) -> NDArray[np.float64]:
        """Click-through rate at each rank (over impressions that show that rank)."""
        shown = self.items >= 0
        return self.clicks.sum(axis=0) / np.maximum(shown.sum(axis=0), 1)


def _record_list(value: Any, field_name: str, number: int, source: str) -> list[Any]:
    """A record's list field (``docs``, ``clicked_ranks``, ``clicks``) as a list; None (and, for
    ``clicked_ranks``, absent) is an empty list, as a null is in a JSON-lines log; a string or
    any other non-list is refused at its record (a string would otherwise be read character by
    character)."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple, np.ndarray)):
        raise ParseError(f'{source}: record {number}: "{field_name}" must be a list; got {value!r}.')
    return list(value)


def _typed_nulls(table: pa.Table) -> pa.Table:
    """``table`` with a list column that holds only nulls (Arrow's JSON reader types it
    ``null``) cast to its list type, so that it reads as empty lists (no documents: refused;
    no clicks: none)."""
    import pyarrow as pa

    types = {"docs": pa.list_(pa.string()), "clicked_ranks": pa.list_(pa.int64()),
             "clicks": pa.list_(pa.string()), "query": pa.string()}
    for name, kind in types.items():
        if name in table.column_names and pa.types.is_null(table.schema.field(name).type):
            table = table.set_column(table.column_names.index(name), name, table.column(name).cast(kind))
    return table


def _factorize(values: pa.Array) -> tuple[NDArray[np.int64], list[str]]:
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(values)
    return (encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64),
            encoded.dictionary.to_pylist())


def _check_unique_docs(items: NDArray[np.int64], source: str) -> None:
    """A document shown twice on one page is a malformed impression."""
    row = first_duplicate_row(items)
    if row is not None:
        raise ParseError(f"{source}: line {row + 1}: a document is listed twice in one result "
                         "page; each shown result must be a distinct document.")


def _integer_ranks(flat: pa.Array, rows: NDArray[np.int64], source: str) -> NDArray[np.int64]:
    """The clicked ranks as integers; a fraction, string, boolean or null is refused at its line
    (integral floats, as some writers store ranks, are taken as the integers they are)."""
    import pyarrow as pa

    kind = flat.type
    if pa.types.is_integer(kind) or (pa.types.is_null(kind) and len(flat) == 0):
        return flat.to_numpy(zero_copy_only=False).astype(np.int64)
    values = flat.to_pylist()
    if pa.types.is_floating(kind):
        bad = [i for i, v in enumerate(values) if v is None or not float(v).is_integer()]
        if not bad:
            return np.asarray(values, dtype=np.float64).astype(np.int64)
        i = bad[0]
    else:
        i = 0
    raise ParseError(f'{source}: line {rows[i] + 1}: "clicked_ranks" must hold 1-based integer ranks; '
                     f"found {values[i]!r}.")


def check_json_depth(path: Path, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse a JSON-lines file with a line nested deeper than ``limit`` (``path:line``).

    Cheap: a line with at most ``limit`` opening brackets cannot be deeper; only longer ones
    are scanned, with their strings (which may hold brackets) removed first.
    """
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                if line.count(b"[") + line.count(b"{") <= limit:
                    continue
                depth = _json_depth(line)
                if depth > limit:
                    raise ParseError(f"{path}:{number}: JSON nested {depth:,} deep (at most {limit}); a click-log "
                                     'line is one object of lists: {"query": ..., "docs": [...], '
                                     '"clicked_ranks": [...]}.')
    except (OSError, EOFError):
        return  # unreadable or truncated: the reader that follows says why


def _json_depth(line: bytes) -> int:
    """The deepest bracket nesting of one JSON text, strings left out."""
    bare = np.frombuffer(_JSON_STRING.sub(b"", line), dtype=np.uint8)
    step = (np.isin(bare, (ord("["), ord("{"))).astype(np.int64)
            - np.isin(bare, (ord("]"), ord("}"))).astype(np.int64))
    return int(np.cumsum(step).max(initial=0))


def _raw_click_counts(table: pa.Table, r_row: NDArray[np.int64], r_flat: NDArray[np.int64],
                      source: str) -> dict[str, int]:
    """Count raw click events that are not on a shown document, and repeated clicks; refuse a
    line whose ``clicks`` name other shown documents than its ``clicked_ranks``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    raw = table.column("clicks").combine_chunks()
    docs = table.column("docs").combine_chunks()
    n_clicks = pc.fill_null(pc.list_value_length(raw), 0).to_numpy(zero_copy_only=False)
    n_docs = pc.fill_null(pc.list_value_length(docs), 0).to_numpy(zero_copy_only=False)

    def row_keys(rows: NDArray[np.int64], values: pa.Array) -> pa.Array:
        return pc.binary_join_element_wise(pa.array(rows.astype(str)), values.cast(pa.string()), _SEP)

    c_row = np.repeat(np.arange(len(n_clicks)), n_clicks)
    click_keys = row_keys(c_row, raw.flatten())
    flat_docs = docs.flatten()
    # A click is on the page when (impression, doc id) is one of the impression's cells.
    on_page = pc.is_in(click_keys, value_set=row_keys(np.repeat(np.arange(len(n_docs)), n_docs), flat_docs))
    on_page = on_page.to_numpy(zero_copy_only=False).astype(bool)
    starts = np.cumsum(n_docs) - n_docs
    rank_docs = flat_docs.take(pa.array(starts[r_row] + r_flat - 1)) if len(r_row) else flat_docs.slice(0, 0)
    _check_clicks_agree(raw, docs, click_keys.filter(pa.array(on_page)), c_row[on_page],
                        row_keys(r_row, rank_docs), r_row, r_flat, source)
    if n_clicks.sum() == 0:
        return {"click_events": 0, "clicks_not_shown": 0, "repeat_clicks": 0}
    distinct_on_page = len(pc.unique(click_keys.filter(pa.array(on_page))))
    return {
        "click_events": len(on_page),
        "clicks_not_shown": int(np.count_nonzero(~on_page)),
        "repeat_clicks": int(np.count_nonzero(on_page) - distinct_on_page),
    }


def _check_clicks_agree(raw: pa.Array, docs: pa.Array, click_keys: pa.Array, click_rows: NDArray[np.int64],
                        rank_keys: pa.Array, rank_rows: NDArray[np.int64], ranks: NDArray[np.int64],
                        source: str) -> None:
    """On every line with a ``clicks`` list, the shown documents it names must be the documents
    at ``clicked_ranks`` (as sets: ``clicks`` keeps repeats and click order)."""
    import pyarrow.compute as pc

    has_list = raw.is_valid().to_numpy(zero_copy_only=False).astype(bool)
    click_extra = ~pc.is_in(click_keys, value_set=rank_keys).to_numpy(zero_copy_only=False).astype(bool)
    rank_extra = ~pc.is_in(rank_keys, value_set=click_keys).to_numpy(zero_copy_only=False).astype(bool)
    bad = np.concatenate([click_rows[click_extra], rank_rows[rank_extra]])
    bad = bad[has_list[bad]]
    if not len(bad):
        return
    row = int(bad.min())
    shown = docs[row].as_py()
    by_ranks = [shown[r - 1] for r in sorted(set(ranks[rank_rows == row].tolist()))]
    by_clicks = list(dict.fromkeys(d for d in raw[row].as_py() if d in shown))
    raise ParseError(
        f'{source}: line {row + 1}: "clicks" and "clicked_ranks" disagree: clicked_ranks names '
        f"{', '.join(map(str, by_ranks)) or 'no document'}, clicks names "
        f"{', '.join(map(str, by_clicks)) or 'no shown document'}. clicked_ranks must be the ranks of the "
        'shown documents in "clicks"; fix the line, or drop "clicks" to use clicked_ranks alone.'
    )

