"""The subtopic side of ranking: (subtopic qrels, run) -> ranked (document, subtopic) arrays.

:mod:`serpeval.ranking` turns a run into ranked *grades*; the diversity measures need to
know which subtopics each ranked document is relevant to. :func:`rank_subtopics` ranks the
run with the same rules (so the two always agree, which it checks):

* **Order**: :func:`serpeval.core.order.sort_order`, serpeval's one tie rule (score
  descending, ties by doc id descending in byte order). That is NIST ndeval's rule with
  ``-traditional`` (its ``resultCompareByScore``). ndeval without ``-traditional`` ranks by
  the rank column of the run file, which serpeval never reads; pyndeval (and so ir_measures'
  pyndeval provider) re-sorts by score with ties by doc id *ascending*. On runs without
  tied scores all three agree.
* **Depth** (``-M``, ndeval's ``-M`` too) cuts after sorting; **judged only** (``-J``)
  then drops documents without a judgment >= 0 for any subtopic and closes the gaps.
* **Queries**: those of the :class:`~serpeval.ranking.Rankings` the subtopic arrays are
  attached to (:func:`attach`), i.e. the judged queries the ``missing`` policy evaluates.

The result, :class:`SubtopicRankings`, holds every (ranked document, judged subtopic) pair
and the judgments of the evaluated queries (for the ideal ranking), with subtopics coded in
the order they first appear in the qrels (pyndeval's order: the order in which ndeval adds
a document's subtopic gains). The measures in :mod:`serpeval.measures.diversity` read it
through :func:`subtopics_of`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core.columns import take
from serpeval.core.errors import InputError
from serpeval.core.id_codes import codes_in
from serpeval.core.order import sort_order

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.core.data import Run
    from serpeval.core.subtopics import SubtopicQrels
    from serpeval.ranking import Rankings

__all__ = ["SubtopicIndex", "SubtopicRankings", "attach", "index_subtopics", "rank_subtopics", "subtopics_of"]

_KEY = "subtopic_rankings"


@dataclass(frozen=True, eq=False)
class SubtopicIndex:
    """What every run evaluated against one subtopic qrels shares.

    Attributes:
        query_ids: judged queries in byte order (the order of :class:`~serpeval.ranking.QrelsIndex`).
        row_query: the query code of every judgment.
        row_subtopic: the subtopic code of every judgment (order of first appearance).
        row_doc: the doc code of every judgment (codes follow the byte order of the ids).
        doc_ids: the doc id of every judgment.
        grades: the grade of every judgment.
        n_subtopics: number of distinct subtopic ids.
    """

    query_ids: pa.Array
    row_query: NDArray[np.int32]
    row_subtopic: NDArray[np.int64]
    row_doc: NDArray[np.int32]
    doc_ids: pa.ChunkedArray
    grades: NDArray[np.int64]
    n_subtopics: int


def index_subtopics(qrels: SubtopicQrels) -> SubtopicIndex:
    """Build (or fetch the cached) :class:`SubtopicIndex` of ``qrels``."""
    cached = qrels._cache.get("index")
    if cached is not None:
        return cached
    row_query, query_ids = codes_in(qrels.query_ids)
    distinct = pc.unique(qrels.subtopic_ids)  # in order of first appearance
    row_subtopic = pc.index_in(qrels.subtopic_ids, value_set=distinct).to_numpy().astype(np.int64)
    row_doc, _ = codes_in(qrels.doc_ids)
    index = SubtopicIndex(query_ids, row_query, row_subtopic, row_doc, qrels.doc_ids, qrels.relevance,
                          len(distinct))
    qrels._cache["index"] = index
    return index


@dataclass(frozen=True, eq=False)
class SubtopicRankings:
    """Ranked (document, subtopic) judgments of one run, flat over the evaluated queries.

    Attributes:
        n_ret: documents ranked per query (equal to ``Rankings.n_ret``).
        pair_query, pair_position, pair_subtopic, pair_grade: one entry per (ranked
            document, subtopic it is judged for), sorted by query, rank (0-based), subtopic.
        judged_query, judged_subtopic, judged_doc, judged_grade: every judgment of the
            evaluated queries (retrieved or not); ``judged_doc`` codes follow the byte order
            of the doc ids (ndeval's tie rule for its ideal ranking).
        n_subtopics: number of subtopic codes.
    """

    n_ret: NDArray[np.int64]
    pair_query: NDArray[np.int64]
    pair_position: NDArray[np.int64]
    pair_subtopic: NDArray[np.int64]
    pair_grade: NDArray[np.int64]
    judged_query: NDArray[np.int64]
    judged_subtopic: NDArray[np.int64]
    judged_doc: NDArray[np.int64]
    judged_grade: NDArray[np.int64]
    n_subtopics: int
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_queries(self) -> int:
        """Number of evaluated queries."""
        return len(self.n_ret)


def rank_subtopics(qrels: SubtopicQrels | SubtopicIndex, run: Run, rankings: Rankings, *,
                   depth: int | None = None, judged_only: bool = False, float32_scores: bool = False
                   ) -> SubtopicRankings:
    """Rank ``run`` against subtopic ``qrels`` for the queries of ``rankings`` (module docstring).

    ``rankings`` must come from :func:`serpeval.ranking.rank` of the same run against
    ``qrels.topical()`` with the same ``depth``, ``judged_only`` and ``float32_scores``.
    """
    index = qrels if isinstance(qrels, SubtopicIndex) else index_subtopics(qrels)
    n_judged = len(index.query_ids)
    known = rankings.run_order
    if known is not None and known.same_sort(run, index.query_ids, float32_scores):
        order, sorted_codes = known.order, known.sorted_codes.astype(np.int64)  # rank() sorted this run already
    else:
        codes, _ = codes_in(run.query_ids, index.query_ids)
        keep = np.flatnonzero(codes >= 0)
        scores = run.scores.astype(np.float32).astype(np.float64) if float32_scores else run.scores
        order = keep[sort_order(codes[keep], scores[keep], take(run.doc_ids, keep))]
        sorted_codes = codes[order].astype(np.int64)
    starts = np.searchsorted(sorted_codes, np.arange(n_judged))
    position = np.arange(len(order), dtype=np.int64) - starts[sorted_codes]
    if depth is not None:
        kept = position < depth
        order, sorted_codes, position = order[kept], sorted_codes[kept], position[kept]

    # Every (ranked doc, judgment) pair, by a hash join on (query, doc id).
    ranked = pa.table({"q": sorted_codes, "d": take(run.doc_ids, order),
                       "i": np.arange(len(order), dtype=np.int64)})
    judged = pa.table({"q": index.row_query.astype(np.int64), "d": index.doc_ids,
                       "s": index.row_subtopic, "g": index.grades})
    joined = ranked.join(judged, keys=["q", "d"], join_type="inner", use_threads=False)
    row = joined["i"].to_numpy()
    subtopic = joined["s"].to_numpy()
    grade = joined["g"].to_numpy()

    if judged_only:
        is_judged = np.zeros(len(order), dtype=bool)
        is_judged[row[grade >= 0]] = True
        new_row = np.cumsum(is_judged) - 1
        sorted_codes = sorted_codes[is_judged]
        first = np.searchsorted(sorted_codes, np.arange(n_judged))
        position = np.arange(len(sorted_codes), dtype=np.int64) - first[sorted_codes]
        keep_pair = is_judged[row]
        row, subtopic, grade = new_row[row[keep_pair]], subtopic[keep_pair], grade[keep_pair]

    # Judged query code -> evaluated query index (-1: not evaluated).
    evaluated = pc.index_in(index.query_ids, value_set=pa.array(rankings.query_ids, pa.string()))
    to_eval = evaluated.fill_null(-1).to_numpy().astype(np.int64)
    n_ret = np.bincount(to_eval[sorted_codes][to_eval[sorted_codes] >= 0], minlength=rankings.n_queries)
    if not np.array_equal(n_ret, rankings.n_ret):  # an internal invariant, not user input
        raise RuntimeError("subtopic ranking disagrees with the ranking of the same run")

    pair_query = to_eval[sorted_codes[row]]
    pair_position = position[row]
    ok = pair_query >= 0
    pair_query, pair_position, subtopic, grade = pair_query[ok], pair_position[ok], subtopic[ok], grade[ok]
    by_rank = np.lexsort((subtopic, pair_position, pair_query))

    judged_query = to_eval[index.row_query]
    mine = np.flatnonzero(judged_query >= 0)
    return SubtopicRankings(
        n_ret=n_ret.astype(np.int64),
        pair_query=pair_query[by_rank],
        pair_position=pair_position[by_rank],
        pair_subtopic=subtopic[by_rank],
        pair_grade=grade[by_rank],
        judged_query=judged_query[mine],
        judged_subtopic=index.row_subtopic[mine],
        judged_doc=index.row_doc[mine].astype(np.int64),
        judged_grade=index.grades[mine],
        n_subtopics=index.n_subtopics,
    )


def attach(rankings: Rankings, subtopics: SubtopicRankings) -> None:
    """Give ``rankings`` its subtopic arrays, which the diversity measures read."""
    rankings._memo[_KEY] = subtopics


def subtopics_of(rankings: Rankings, measure: str) -> SubtopicRankings:
    """The subtopic arrays attached to ``rankings``.

    Raises:
        InputError: none are attached: the evaluation was given ordinary qrels.
    """
    found = rankings._memo.get(_KEY)
    if found is None:
        raise InputError(needs_subtopics_message(measure, ""))
    return found


def needs_subtopics_message(measure: str, source: str) -> str:
    """The one wording for a diversity measure asked for without subtopic qrels."""
    where = f"{source}: " if source else ""
    return (
        f"{where}{measure} is a diversity measure and needs subtopic qrels (`qid subtopic docid rel`, "
        "NIST ndeval's format), but these qrels are read as ordinary qrels (`qid iter docid rel`, the "
        "second column ignored). If the second column holds subtopic ids, read the file with "
        "serpeval.read_subtopic_qrels(path) (a DataFrame: serpeval.io.as_subtopic_qrels), or add "
        "--subtopics on the command line."
    )
