"""Several runs ranked at once: the flat arrays that pooling, judged rates and run diffs share.

All runs are concatenated and ranked with one sort (:func:`serpeval.core.order.sort_order`,
the one tie rule: score descending, then doc id descending) on the key ``query * n_runs +
run``, so each (query, run) ranking is a contiguous segment. Every (query, document) is
given one integer ``pair`` code shared by all runs (and looked up in qrels the same way), so
"the same document for the same query" is an integer comparison everywhere above.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core.columns import take
from serpeval.core.errors import DuplicateError, InputError
from serpeval.core.id_codes import codes_in, factorize_sorted
from serpeval.core.order import sort_order

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from serpeval.core.data import Qrels, Run

__all__ = ["Stacked", "qrels_grades", "sort_by", "stack_runs"]


def sort_by(*keys: tuple[NDArray[Any], str]) -> NDArray[np.int64]:
    """Indices that sort rows by ``keys`` (``(array, "ascending" | "descending")``, the first
    key first), stable; Arrow's multi-key sort, several times faster than ``np.lexsort``."""
    table = pa.table({f"k{i}": values for i, (values, _) in enumerate(keys)})
    order = pc.sort_indices(table, sort_keys=[(f"k{i}", how) for i, (_, how) in enumerate(keys)])
    return order.to_numpy().view(np.int64)


@dataclass(frozen=True, eq=False)
class Stacked:
    """Ranked entries of several runs, flat, ordered by (query, run, rank).

    Attributes:
        query_ids: the distinct query ids of all runs, in byte order (``query`` indexes it).
        run_names: the runs' names, in the order given.
        query: ``int64[n]`` query code of every entry.
        run: ``int64[n]`` run index of every entry.
        rank: ``int64[n]`` 1-based rank within its (query, run) ranking.
        pair: ``int64[n]`` the (query, document) code, shared across runs.
        pair_query: ``int64[n_pairs]`` the query code of every pair.
        pair_doc: the doc id of every pair (an Arrow string array).
        offsets: ``int64[n_queries * n_runs + 1]``: entries of query ``q`` in run ``r`` are
            ``offsets[q * n_runs + r] : offsets[q * n_runs + r + 1]``.
        doc_universe: the distinct doc ids (byte order) that pair codes are built on.
    """

    query_ids: pa.Array
    run_names: tuple[str, ...]
    query: NDArray[np.int64]
    run: NDArray[np.int64]
    rank: NDArray[np.int64]
    pair: NDArray[np.int64]
    pair_query: NDArray[np.int64]
    pair_doc: pa.ChunkedArray
    offsets: NDArray[np.int64]
    doc_universe: pa.Array
    _pair_keys: NDArray[np.int64]

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def n_runs(self) -> int:
        return len(self.run_names)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_query)

    def lengths(self) -> NDArray[np.int64]:
        """``int64[n_queries, n_runs]``: the length of every ranking (after the depth cut)."""
        return np.diff(self.offsets).reshape(self.n_queries, self.n_runs)

    def pair_codes(self, query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray) -> NDArray[np.int64]:
        """The pair code of each (query, doc) given, -1 when no run retrieved it."""
        q, _ = codes_in(query_ids, self.query_ids)
        d, _ = codes_in(doc_ids, self.doc_universe)
        keys = q.astype(np.int64) * max(len(self.doc_universe), 1) + d
        found = np.searchsorted(self._pair_keys, keys)
        found = np.minimum(found, max(len(self._pair_keys) - 1, 0))
        ok = (q >= 0) & (d >= 0) & (len(self._pair_keys) > 0)
        if len(self._pair_keys):
            ok &= self._pair_keys[found] == keys
        return np.where(ok, found, -1).astype(np.int64)


def stack_runs(runs: Sequence[Run], depth: int | None = None) -> Stacked:
    """Rank every run (one sort over all of them) and keep the top ``depth`` of each ranking.

    Raises:
        InputError: no runs, or all runs are empty.
        DuplicateError: a run retrieves the same document twice for one query (naming the
            file and line, as the evaluation does).
    """
    if not runs:
        raise InputError("give at least one run.")
    qids = pa.chunked_array([c for r in runs for c in r.query_ids.chunks], pa.string())
    docs = pa.chunked_array([c for r in runs for c in r.doc_ids.chunks], pa.string())
    scores = np.concatenate([r.scores for r in runs]) if runs else np.zeros(0)
    n_runs = len(runs)
    run_of = np.repeat(np.arange(n_runs, dtype=np.int64), [len(r) for r in runs])
    qcodes, query_ids = factorize_sorted(qids)
    key = qcodes.astype(np.int64) * n_runs + run_of
    order = sort_order(key, scores, docs)
    n_segments = len(query_ids) * n_runs
    counts = np.bincount(key, minlength=n_segments)
    starts = np.zeros(n_segments + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    sorted_key = key[order]
    rank = np.arange(len(order), dtype=np.int64) - starts[:-1][sorted_key] + 1
    if depth is not None:
        kept = rank <= depth
        order, rank, sorted_key = order[kept], rank[kept], sorted_key[kept]
        counts = np.minimum(counts, depth)
    offsets = np.zeros(n_segments + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    doc_codes, doc_universe = codes_in(take(docs, order))
    query = sorted_key // n_runs
    run = sorted_key % n_runs
    keys = query * max(len(doc_universe), 1) + doc_codes.astype(np.int64)
    pair_keys, pair = np.unique(keys, return_inverse=True)
    pair = pair.astype(np.int64).ravel()
    _refuse_duplicates(runs, run_of, order, pair, run)
    pair_query = pair_keys // max(len(doc_universe), 1)
    pair_doc = pa.chunked_array([doc_universe.take(pa.array(pair_keys % max(len(doc_universe), 1)))])
    return Stacked(query_ids, tuple(r.name for r in runs), query, run, rank, pair, pair_query,
                   pair_doc, offsets, doc_universe, pair_keys)


def _refuse_duplicates(runs: Sequence[Run], run_of: NDArray[np.int64], order: NDArray[np.int64],
                       pair: NDArray[np.int64], run: NDArray[np.int64]) -> None:
    if len(pair) < 2:
        return
    combined = pair * len(runs) + run
    ranked = np.argsort(combined, kind="stable")
    same = combined[ranked][1:] == combined[ranked][:-1]
    if not same.any():
        return
    i = int(np.flatnonzero(same)[0])
    a, b = sorted((int(order[ranked[i]]), int(order[ranked[i + 1]])))
    r = runs[int(run_of[a])]
    local_a = a - int(np.flatnonzero(run_of == run_of[a])[0])
    local_b = b - int(np.flatnonzero(run_of == run_of[a])[0])
    query, doc = r.query_ids[local_b].as_py(), r.doc_ids[local_b].as_py()
    raise DuplicateError(
        f"{_where(r, local_b)}: document {doc!r} is retrieved twice for query {query!r} "
        f"(first at {_where(r, local_a, short=True)}); keep one line per (query, document).",
        query=query, doc=doc,
    )


def _where(run: Run, row: int, short: bool = False) -> str:
    """``path:line`` of a run row (the file is re-read only on this error path)."""

    if run.source_kind == "trec" and Path(run.source).is_file():
        from serpeval.io.trec import physical_line, read_source

        data, _ = read_source(run.source)
        line = physical_line(data, row)
        return f"line {line}" if short else f"{run.source}:{line}"
    return f"row {row + 1}" if short else f"{run.source}: row {row + 1}"


def qrels_grades(stacked: Stacked, qrels: Qrels) -> NDArray[np.int64]:
    """``int64[n_pairs]``: the qrels grade of every pair, -1 where the qrels do not judge it
    (a negative grade in the qrels, "pooled but unjudged", is -1 too)."""
    grades = np.full(stacked.n_pairs, -1, dtype=np.int64)
    codes = stacked.pair_codes(qrels.query_ids, qrels.doc_ids)
    hit = codes >= 0
    grades[codes[hit]] = np.maximum(qrels.relevance[hit], -1)
    return grades
