"""``evaluate(qrels, runs, measures)``: per-query values and aggregates for one or more runs."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core.columns import Blocks
from serpeval.core.data import GradeKind, Qrels, Run
from serpeval.core.errors import InputError, OptionError
from serpeval.core.fingerprints import signature_of
from serpeval.core.pages import small_pages
from serpeval.core.read_ahead import ReadAhead, may_read_stdin
from serpeval.core.subtopics import SingleSubtopicWarning, SubtopicQrels
from serpeval.evaluation.results import Results, RunResult, Settings, unique_names, with_unique_names
from serpeval.io import as_qrels, as_run
from serpeval.io.propensities import as_propensities
from serpeval.measures import Measure, parse_measures
from serpeval.measures.propensity import weight_key, weighted_index
from serpeval.measures.subtopic_ranking import attach, index_subtopics, needs_subtopics_message, rank_subtopics
from serpeval.ranking import (
    Missing,
    TiePolicy,
    check_ties,
    index_qrels,
    missing_queries_warning,
    rank,
    require_evaluated,
)

__all__ = ["DEFAULT_MEASURES", "evaluate", "iter_runs", "unique_names"]

DEFAULT_MEASURES: tuple[str, ...] = ("nDCG@10", "AP", "P@10", "R@100", "RR")


def _is_run_dict(obj: Mapping[Any, Any]) -> bool:
    """True for ``{qid: {docid: score}}``, False for ``{name: run}``."""
    for value in obj.values():
        if isinstance(value, Mapping):
            # {qid: {docid: score}} has scalars two levels down; {name: {qid: {...}}} has mappings.
            return not any(isinstance(v, Mapping) for v in list(value.values())[:5])
        return False
    return True


def _some_queries(run: Run) -> list[str]:
    """Up to 4 distinct query ids of ``run``, in file order (for an error message)."""

    ids = run.query_id_blocks()
    head = (ids.heads if isinstance(ids, Blocks) else ids).slice(0, 10_000)
    return pc.unique(head).slice(0, 4).to_pylist()


def _run_paths(runs: Any) -> list[str | Path] | None:
    """``runs`` as a list of paths when it is a path or a non-empty sequence of paths."""
    if isinstance(runs, (str, Path)):
        return [runs]
    if isinstance(runs, Sequence) and runs and all(isinstance(r, (str, Path)) for r in runs):
        return list(runs)
    return None


def iter_runs(runs: Any, *, read_ahead: bool = True) -> Iterator[Run]:
    """The runs one at a time, each read or converted only when reached (so that a list of
    paths never holds more than one run's rows, two with ``read_ahead``).

    With ``read_ahead`` (and two usable CPUs) run paths are read one ahead, in a background
    thread (:class:`~serpeval.core.read_ahead.ReadAhead`): the first starts at once, and
    the next while the caller evaluates the current one.
    """
    paths = _run_paths(runs) if read_ahead else None
    if paths is not None:
        return ReadAhead(paths, as_run)
    return _each_run(runs)


def _each_run(runs: Any) -> Iterator[Run]:
    """:func:`iter_runs` without reading ahead."""
    if isinstance(runs, (Run, str, Path)) or (isinstance(runs, Mapping) and _is_run_dict(runs)):
        yield as_run(runs)
    elif isinstance(runs, Mapping):
        for name, run in runs.items():
            yield as_run(run, name=str(name))
    elif isinstance(runs, Sequence) or (isinstance(runs, Iterable) and not hasattr(runs, "columns")):
        given = False
        for item in runs:
            given = True
            box = [item]  # hold no reference here while the caller evaluates the run
            del item
            yield as_run(box.pop())
        if not given:
            raise InputError("No runs given; pass a run or a list of runs.")
    else:
        yield as_run(runs)


def evaluate(
    qrels: Qrels | str | Path | Mapping[str, Mapping[str, int]] | Any,
    runs: Any,
    measures: str | Measure | Iterable[str | Measure] | None = DEFAULT_MEASURES,
    *,
    missing: Missing = "skip",
    depth: int | None = None,
    judged_only: bool = False,
    float32_scores: bool = False,
    stream: bool = False,
    progress: Any = None,
    ties: TiePolicy = "trec_eval",
    grades: GradeKind | None = None,
    propensities: Mapping[str, float] | str | Path | None = None,
) -> Results:
    """Evaluate one or several runs against the same qrels.

    The qrels work (indexing the judgments, the ideal rankings) is done once and shared by
    every run; each run is sorted once and every measure reads the same ranked arrays.

    Args:
        qrels: judgments: :class:`Qrels`, a path (TREC, JSONL, JSON, Parquet), a dict
            ``{qid: {docid: grade}}``, or a pandas/polars DataFrame; or
            :class:`~serpeval.core.subtopics.SubtopicQrels`
            (:func:`serpeval.read_subtopic_qrels`), which the diversity measures need
            (``alpha_nDCG@20``, ``ERR_IA@20``, ...; the other measures then see each
            document's highest grade over its subtopics).
        runs: one run (a :class:`Run`, path, dict ``{qid: {docid: score}}`` or DataFrame),
            a list of runs, or a dict ``{name: run}``. Paths are read one ahead in a
            background thread (the first while the qrels are read, each next one while the
            one before is evaluated; :mod:`serpeval.core.read_ahead`).
        measures: names in any supported dialect (``nDCG@10``, ``ndcg_cut_10``, ``MAP``);
            None: :data:`DEFAULT_MEASURES`. An empty list is an :class:`OptionError`.
        missing: judged queries absent from a run: ``"skip"`` them (with a warning giving
            the count), count them as ``"zero"``, or raise (``"error"``).
        depth: keep only the top ``depth`` docs per query (trec_eval ``-M``).
        judged_only: drop unjudged docs before measuring (trec_eval ``-J``).
        float32_scores: compare scores as 32-bit floats (trec_eval 9.0.8 / pytrec_eval).
        stream: read the runs (TREC text files, ``.gz`` ok) piece by piece in bounded
            memory, for runs larger than RAM; the same values, bit for bit
            (:mod:`serpeval.evaluation.stream`, where ``evaluate_stream`` has more options).
        progress: with ``stream``, ``progress(bytes_read, file_size)`` after each piece.
        ties: the tie policy (``serpeval.ranking.TIE_POLICIES``): ``"trec_eval"`` (doc id
            descending), ``"optimistic"``, ``"pessimistic"``, or ``"expected"`` (each value its
            exact expectation over every order of each tie group); see ``docs/how-to/ties.md``.
        grades: the qrels' grade type: None keeps a :class:`Qrels`' own (``"int"`` for
            anything read here); ``"float"`` takes fractional grades (any finite real grade;
            gain measures use it as is, binary measures count grade >= ``rel``), see
            ``docs/how-to/fractional-grades.md``.
        propensities: for ``psP@k`` / ``psnDCG@k``: ``{doc_id: propensity}`` or a path to
            ``doc_id propensity`` lines (:func:`serpeval.io.propensities.read_propensities`);
            None uses Jain et al.'s formula with the measure's ``A`` and ``B``.

    Returns:
        :class:`~serpeval.evaluation.results.Results` with per-query values and aggregates.

    Raises:
        NothingEvaluatedError: no judged query has results in one of the runs (wrong qrels
            or wrong run), whatever ``missing`` says: there is no number to report, and
            ``missing="zero"`` would otherwise show 0.0 for a run never matched with the
            judgments (trec_eval exits 7 here).
        MissingQueriesError: ``missing="error"`` and judged queries are absent from a run.
        InputError: a diversity measure asked for with ordinary qrels.

    Examples:
        >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
        >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
        >>> res = evaluate(qrels, run, ["P@2", "RR", "nDCG@3"])
        >>> [round(v, 4) for v in res.means("run").values()]
        [0.5, 1.0, 0.7602]
    """
    if measures is None:
        measures = DEFAULT_MEASURES
    elif isinstance(measures, (list, tuple, set, frozenset, dict)) and not measures:
        # (a single ir_measures object is a measure, not a collection: not iterated here)
        raise OptionError("measures is empty: name at least one (e.g. ['nDCG@10', 'AP']), or leave it out "
                          f"for the defaults ({', '.join(DEFAULT_MEASURES)}).")
    if grades is not None:
        qrels = as_qrels(qrels, grades)
    with small_pages():
        return _evaluate(qrels, runs, measures, missing=missing, depth=depth, judged_only=judged_only,
                         float32_scores=float32_scores, stream=stream, progress=progress, ties=check_ties(ties),
                         propensities=propensities)


def _evaluate(qrels: Any, runs: Any, measures: str | Measure | Iterable[str | Measure], *, missing: Missing,
              depth: int | None, judged_only: bool, float32_scores: bool, stream: bool, progress: Any,
              ties: TiePolicy = "trec_eval", propensities: Any = None) -> Results:
    """:func:`evaluate`, on small memory pages (:mod:`serpeval.core.pages`)."""
    if stream:
        from serpeval.evaluation.stream import evaluate_stream

        return evaluate_stream(qrels, runs, measures, missing=missing, depth=depth, judged_only=judged_only,
                               float32_scores=float32_scores, progress=progress, ties=ties)
    parsed = parse_measures(measures)
    # The first run is read while the qrels are (unless both could be standard input).
    each_run = iter_runs(runs, read_ahead=not may_read_stdin(qrels))
    subtopic_qrels = qrels if isinstance(qrels, SubtopicQrels) else None
    judgments = subtopic_qrels.topical() if subtopic_qrels is not None else as_qrels(qrels)
    diverse = [m for m in parsed if m.spec.subtopics]
    if diverse and subtopic_qrels is None:
        raise InputError(needs_subtopics_message(str(diverse[0]), judgments.source))
    if diverse and subtopic_qrels is not None:
        note = subtopic_qrels.single_subtopic_note()
        if note is not None:
            warnings.warn(SingleSubtopicWarning(note), stacklevel=3)
    index = index_qrels(judgments)
    qrels_signature = signature_of(subtopic_qrels if subtopic_qrels is not None else judgments)  # as read
    subtopic_index = index_subtopics(subtopic_qrels) if diverse and subtopic_qrels is not None else None
    given, label = as_propensities(propensities)
    keys = {key for key in map(weight_key, parsed) if key is not None}
    weighted = {key: weighted_index(index, key, given, label) for key in keys}  # psP, psnDCG
    results = []
    # One run after another: its rows and rankings are dropped before the next is read, so
    # memory does not grow with the number of runs (only the per-query values are kept).
    for run in each_run:
        rankings = rank(index, run, missing=missing, depth=depth, judged_only=judged_only,
                        float32_scores=float32_scores, ties=ties)
        require_evaluated(rankings.coverage, run.source, qrels=judgments.source,
                          run_examples=_some_queries(run))
        name, tag, signature = run.name, run.tag, signature_of(run)   # the run as read, before it is dropped
        if rankings.coverage.missing and missing == "skip":
            warnings.warn(missing_queries_warning(rankings.coverage), stacklevel=3)
        scored: dict[Any, Any] = {key: rank(w, run, missing=missing, depth=depth, judged_only=judged_only,
                                          float32_scores=float32_scores, ties=ties) for key, w in weighted.items()}
        if subtopic_index is not None:
            attach(rankings, rank_subtopics(subtopic_index, run, rankings, depth=depth,
                                            judged_only=judged_only, float32_scores=float32_scores))
        del run
        # The measures need the ranked grades only: drop the run's rows (the ranking's
        # record of its sort holds them) and hand Arrow's freed memory back before measuring.
        rankings = replace(rankings, run_order=None)
        pa.default_memory_pool().release_unused()
        values = np.column_stack([m.compute(scored.get(weight_key(m), rankings)) for m in parsed]) if parsed else \
            np.zeros((rankings.n_queries, 0))
        results.append(RunResult(name, tag, rankings.query_ids, values, rankings.coverage, signature, qrels_signature))
        del rankings, scored
    results = with_unique_names(results)
    settings = Settings(missing=missing, depth=depth, judged_only=judged_only,
                        float32_scores=float32_scores, qrels=judgments.source,
                        qrels_skipped_lines=judgments.skipped_lines, subtopics=subtopic_qrels is not None, ties=ties,
                        qrels_signature=qrels_signature, grades=judgments.grades)
    return Results(parsed, tuple(results), settings)
