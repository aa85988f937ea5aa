"""Subtopic (intent) judgments: :class:`SubtopicQrels`, what the diversity measures read.

TREC's diversity tasks (Web 2009-2014) judge each document once per *subtopic* of a query,
and NIST's ``ndeval`` reads them as ``qid subtopic docid rel``: the second column, which
ordinary qrels use for an ignored iteration number, names the subtopic. The two files look
alike, so the format is never guessed: subtopic qrels are read by
:func:`serpeval.io.read_subtopic_qrels` (``serpeval evaluate --subtopics``), and a
diversity measure asked for with ordinary qrels is an error that says so.

Ordinary measures evaluated with subtopic qrels see :meth:`SubtopicQrels.topical`: one
judgment per (query, document), the highest grade the document has for any subtopic (a
document relevant to a subtopic is relevant to the query, as ndeval's own non-intent-aware
MAP counts it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from serpeval.core.data import Qrels, _strings, check_grades, refuse_boolean_grades
from serpeval.core.duplicates import find_duplicate
from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, SingleSubtopicWarning
from serpeval.core.id_codes import codes_in

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import NDArray

__all__ = ["SUBTOPIC_QRELS_COLUMNS", "SingleSubtopicWarning", "SubtopicQrels", "subtopic_qrels_from_rows"]

SUBTOPIC_QRELS_COLUMNS = "qid subtopic docid rel"


@dataclass(frozen=True, eq=False)
class SubtopicQrels:
    """Subtopic judgments: one row per judged (query, subtopic, document).

    Attributes:
        query_ids: Arrow string array, one entry per row.
        subtopic_ids: Arrow string array: the subtopic (intent) the row judges. Ids are
            opaque strings (``1``, ``01`` and ``a`` are three subtopics).
        doc_ids: Arrow string array.
        relevance: ``int64[n]`` grades. The diversity measures are binary, as ndeval's: a
            grade >= ``rel`` (default 1) is relevant to the subtopic; 0 and negative grades
            are not (ndeval reads only grades >= 0 and counts anything above 1 as 1).
        source: where the rows came from, for messages.
        skipped_lines: blank and comment lines skipped by the reader.

    A (query, subtopic, document) judged twice is refused (ndeval would count it twice in
    the subtopic's number of relevant documents).
    """

    query_ids: pa.ChunkedArray
    subtopic_ids: pa.ChunkedArray
    doc_ids: pa.ChunkedArray
    relevance: NDArray[np.int64]
    source: str = "<subtopic qrels>"
    skipped_lines: int = 0
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "query_ids", _strings(self.query_ids))
        object.__setattr__(self, "subtopic_ids", _strings(self.subtopic_ids))
        object.__setattr__(self, "doc_ids", _strings(self.doc_ids))
        object.__setattr__(self, "relevance", check_grades(self.relevance, self._row))
        lengths = {len(self.query_ids), len(self.subtopic_ids), len(self.doc_ids), len(self.relevance)}
        if len(lengths) != 1:
            raise InputError(f"{self.source}: the query, subtopic, doc and relevance columns differ in length.")

    def _row(self, i: int) -> str:
        return f"{self.source}: row {i + 1}"

    def __len__(self) -> int:
        return len(self.relevance)

    def __repr__(self) -> str:
        return f"SubtopicQrels({self.source!r}, {len(self)} judgments)"

    def topical(self) -> Qrels:
        """Ordinary qrels for the other measures: one row per (query, document), its highest
        grade over the subtopics (computed once and cached)."""
        cached = self._cache.get("topical")
        if cached is None:
            table = pa.table({"q": self.query_ids, "d": self.doc_ids, "r": self.relevance})
            grouped = table.group_by(["q", "d"], use_threads=False).aggregate([("r", "max")])
            cached = Qrels(grouped["q"], grouped["d"], grouped["r_max"].to_numpy(), source=self.source,
                           skipped_lines=self.skipped_lines)
            self._cache["topical"] = cached
        return cached

    def check_unique(self, where: Callable[[int], str] | None = None) -> SubtopicQrels:
        """Refuse a (query, subtopic, document) judged twice, naming both rows; returns self."""
        if len(self) < 2:
            return self
        q_codes, _ = codes_in(self.query_ids)
        s_codes, subtopics = codes_in(self.subtopic_ids)
        pair = q_codes.astype(np.int64) * max(len(subtopics), 1) + s_codes
        first, second = find_duplicate(pa.chunked_array([pa.array(pair).cast(pa.string())]), self.doc_ids)
        if first >= 0:
            at = where or self._row
            raise DuplicateError(
                f"{at(second)}: document {self.doc_ids[second].as_py()!r} is judged twice for subtopic "
                f"{self.subtopic_ids[second].as_py()!r} of query {self.query_ids[second].as_py()!r} "
                f"(first at {at(first)}). Keep one judgment per (query, subtopic, document)."
            )
        return self

    def n_subtopics(self) -> dict[str, int]:
        """``{query_id: number of subtopics judged}`` (with any grade)."""
        table = pa.table({"q": self.query_ids, "s": self.subtopic_ids})
        grouped = table.group_by("q").aggregate([("s", "count_distinct")])
        return dict(zip(grouped["q"].to_pylist(), grouped["s_count_distinct"].to_pylist(), strict=True))

    def single_subtopic_note(self) -> str | None:
        """A warning when no query has two subtopics: ordinary qrels read as subtopic qrels
        (their iteration column, ``0`` everywhere, taken for the subtopic) look like that."""
        if max(self.n_subtopics().values(), default=0) > 1:
            return None
        return (f"{self.source}: every query has a single subtopic, so the diversity measures reduce to "
                "ordinary ones; is the second column really the subtopic (qid subtopic docid rel)?")

    def to_arrow(self) -> pa.Table:
        """An Arrow table with columns ``query_id, subtopic_id, doc_id, relevance``."""
        return pa.table({"query_id": self.query_ids, "subtopic_id": self.subtopic_ids,
                         "doc_id": self.doc_ids, "relevance": self.relevance})

    def to_pandas(self) -> Any:
        """A pandas DataFrame with columns ``query_id, subtopic_id, doc_id, relevance``."""
        return self.to_arrow().to_pandas()


def subtopic_qrels_from_rows(rows: Iterable[Any], label: str = "<rows>") -> SubtopicQrels:
    """:class:`SubtopicQrels` from ``(query_id, subtopic_id, doc_id, relevance)`` tuples
    (pyndeval's shape; its ``SubtopicQrel`` named tuples work too).

    Raises:
        InputError: a row that is not four values.
        ParseError: a grade that is not an integer, or a ``True``/``False`` (naming the row).
        DuplicateError: a (query, subtopic, document) given twice.
        EmptyInputError: no rows.
    """
    q: list[str] = []
    s: list[str] = []
    d: list[str] = []
    r: list[Any] = []
    for i, row in enumerate(rows):
        if not isinstance(row, (tuple, list)) or len(row) != 4:
            raise InputError(f"{label}: row {i + 1}: expected ({SUBTOPIC_QRELS_COLUMNS.replace(' ', ', ')}), "
                             f"found {row!r}.")
        q.append(str(row[0]))
        s.append(str(row[1]))
        d.append(str(row[2]))
        r.append(row[3])
    if not r:
        raise EmptyInputError(f"{label}: the subtopic qrels have no rows.")
    refuse_boolean_grades(r, lambda i: f"{label}: row {i + 1}", python=True)
    grades = check_grades(r, lambda i: f"{label}: row {i + 1}")
    return SubtopicQrels(pa.array(q, pa.string()), pa.array(s, pa.string()), pa.array(d, pa.string()),
                         grades, source=label).check_unique()
