"""Columnar relevance judgments (:class:`Qrels`) and system output (:class:`Run`).

Both hold one row per (query, document) in columns: query ids and doc ids as Arrow string
arrays (opaque byte strings: ``003`` and ``3`` are different queries), numbers as NumPy
arrays. No dict-of-dicts: that is what makes other tools slow to load and large in memory.
Readers live in :mod:`serpeval.io`, whose ``as_qrels`` / ``as_run`` turn anything a user may
hold (a path, a dict, a pandas or polars DataFrame, an Arrow table) into these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Qrels", "Run"]


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


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: one row per judged (query, document).

    Attributes:
        query_ids: Arrow string array, one entry per row.
        doc_ids: Arrow string array, one entry per row.
        relevance: ``int64[n]`` grades. Negative grades mean "in the pool but unjudged"
            (trec_eval's rule), never "non-relevant".
        source: where the rows came from (a path, ``<dict>``, ``<DataFrame>``), used in
            error messages.
        skipped_lines: blank and comment lines skipped by the reader (reported, never lost).
    """

    query_ids: pa.ChunkedArray
    doc_ids: pa.ChunkedArray
    relevance: NDArray[np.int64]
    source: str = "<qrels>"
    skipped_lines: int = 0
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "query_ids", _strings(self.query_ids))
        object.__setattr__(self, "doc_ids", _strings(self.doc_ids))
        object.__setattr__(self, "relevance", np.asarray(self.relevance, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.relevance)

    def __repr__(self) -> str:
        return f"Qrels({self.source!r}, {len(self)} judgments)"

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Build from ``{query_id: {doc_id: grade}}`` (pytrec_eval's shape)."""
        from serpeval.io.tables import qrels_from_dict

        return qrels_from_dict(judgments)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """Return ``{query_id: {doc_id: grade}}``."""
        out: dict[str, dict[str, int]] = {}
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
class Run:
    """System output: one row per retrieved (query, document) with a score.

    The order of rows and any rank column are ignored: ranks come from sorting by score
    (see :mod:`serpeval.ranking`).

    Attributes:
        query_ids: Arrow string array, one entry per row.
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
        object.__setattr__(self, "query_ids", _strings(self.query_ids))
        object.__setattr__(self, "doc_ids", _strings(self.doc_ids))
        object.__setattr__(self, "scores", np.asarray(self.scores, dtype=np.float64))
        if not self.tag:
            object.__setattr__(self, "tag", self.name)

    def __len__(self) -> int:
        return len(self.scores)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self)} rows from {self.source!r})"

    @classmethod
    def from_dict(cls, scores: Mapping[str, Mapping[str, float]], name: str = "run") -> Run:
        """Build from ``{query_id: {doc_id: score}}`` (pytrec_eval's shape)."""
        from serpeval.io.tables import run_from_dict

        return run_from_dict(scores, name=name)

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
        return Run(
            self.query_ids, self.doc_ids, self.scores, name=name, tag=self.tag,
            source=self.source, skipped_lines=self.skipped_lines, source_kind=self.source_kind,
        )
