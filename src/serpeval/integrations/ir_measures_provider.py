"""serpeval as an ir_measures provider, so that ir_measures and PyTerrier compute through it.

ir_measures (0.4.3) looks measures up in providers: each says which measures it
``supports`` and returns an ``Evaluator`` that yields per-query ``Metric`` rows. The
module-level ``ir_measures.calc_aggregate`` / ``iter_calc`` / ``evaluator`` belong to its
``DefaultPipeline``, a fallback chain of providers; PyTerrier's ``pt.Experiment(...,
eval_metrics=[...])`` calls ``ir_measures.iter_calc``. So::

    from serpeval.integrations import ir_measures_provider

    provider = ir_measures_provider.provider()      # use it explicitly:
    provider.calc_aggregate([nDCG@10, AP], qrels, run)
    ir_measures_provider.install()                   # or put it first in ir_measures' chain:
    ir_measures.calc_aggregate([nDCG@10, AP], qrels, run)   # now computed by serpeval
    pt.Experiment([bm25, rm3], topics, qrels, eval_metrics=[nDCG@10, AP])  # too

``install()`` puts the provider first in ``ir_measures.DefaultPipeline`` and registers it
as ``ir_measures.providers.registry["serpeval"]``; ``uninstall()`` undoes both. The
provider supports every ir_measures measure that serpeval's grammar parses
(:mod:`serpeval.measures.dialects`); the others fall through to ir_measures' own providers.

Diversity measures (``alpha_nDCG@20``, ``ERR_IA@20``, ...) read the subtopic from the qrels'
``iteration`` column, as ir_measures' pyndeval provider does; ``judged_only=True`` on them is
declined (serpeval's subtopic ranking is per evaluation) and falls through to pyndeval.

Semantics are ir_measures' where its framework decides them: the queries are the qrels'
queries, and a judged query the run does not answer gets the measure's ``DEFAULT`` (0),
added by ir_measures' ``Evaluator`` base class. Everything else (the tie rule, the
measures' definitions) is serpeval's; ``docs/ecosystem.md`` lists where the numbers differ
from ir_measures' default providers. ``float32_scores=True`` rounds scores to 32-bit floats
as pytrec_eval does, so that scores equal in float32 tie as they do there.

Third-party packages are imported inside functions: ``import serpeval`` stays light and
ir_measures is needed only when the provider is built.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Any

__all__ = ["NAME", "install", "provider", "uninstall"]

NAME = "serpeval"
"""The provider's name in ``ir_measures.providers.registry``."""


def provider(*, float32_scores: bool = False) -> Any:
    """The serpeval provider, an ``ir_measures.providers.Provider`` (built once per setting)."""
    return _provider(bool(float32_scores))


def install(*, float32_scores: bool = False) -> Any:
    """Register the provider and put it first in ``ir_measures.DefaultPipeline``; returns it.

    Installing again replaces the earlier serpeval provider (one at a time).
    """
    import ir_measures

    uninstall()
    made = provider(float32_scores=float32_scores)
    ir_measures.providers.register(made)
    ir_measures.DefaultPipeline.providers.insert(0, made)
    return made


def uninstall() -> None:
    """Take serpeval's provider out of ir_measures' registry and default pipeline (if there)."""
    import ir_measures

    chain = ir_measures.DefaultPipeline.providers
    chain[:] = [p for p in chain if getattr(p, "NAME", None) != NAME]
    ir_measures.providers.registry.pop(NAME, None)


@lru_cache(maxsize=2)
def _provider(float32_scores: bool) -> Any:
    from ir_measures import providers

    class SerpevalProvider(providers.Provider):
        """serpeval (columnar, vectorised; trec_eval's rules, ir_measures' and ranx's measures)."""

        NAME = NAME

        def supports(self, measure: Any) -> bool:
            return _parse(measure) is not None

        def _evaluator(self, measures: Any, qrels: Any) -> Any:
            return _make_evaluator(list(measures), qrels, float32_scores)

        def install_instructions(self) -> str:
            return "pip install serpeval"

    return SerpevalProvider()


def _parse(measure: Any) -> Any:
    """The serpeval measure for an ir_measures measure, or None when serpeval has none."""
    from serpeval.core.errors import MeasureError
    from serpeval.measures import parse_measure

    try:
        return parse_measure(measure)
    except MeasureError:
        return None


def _make_evaluator(measures: list[Any], qrels: Any, float32_scores: bool) -> Any:
    from ir_measures import providers
    from ir_measures.util import Metric, QrelsConverter

    from serpeval.io import as_qrels, as_subtopic_qrels

    measures = list(dict.fromkeys(measures))  # ir_measures' MAP is AP: one row each
    ours = [_parse(m) for m in measures]
    unsupported = [str(m) for m, o in zip(measures, ours, strict=True) if o is None]
    if unsupported:
        raise ValueError(f"serpeval does not support {', '.join(unsupported)} (see `serpeval measures`).")
    frame = QrelsConverter(qrels).as_pd_dataframe()
    if any(o.spec.subtopics for o in ours):
        # ir_measures hands diversity qrels over with the subtopic in its ``iteration`` column
        # (as its pyndeval provider reads them); qrels without one have a single subtopic "0".
        if "iteration" not in frame.columns:
            frame = frame.assign(iteration="0")
        judged: Any = as_subtopic_qrels(_frame(frame, "relevance", extra=("iteration",)))
    else:
        judged = as_qrels(_frame(frame, "relevance"))

    class SerpevalEvaluator(providers.Evaluator):
        def _iter_calc(self, run: Any) -> Any:
            yield from _metrics(judged, run, measures, ours, float32_scores, Metric)

    qids = set(frame["query_id"].astype(str).unique().tolist())
    return SerpevalEvaluator(measures, qids)


def _frame(frame: Any, value: str, extra: tuple[str, ...] = ()) -> Any:
    """ir_measures' frame (query_id, doc_id, relevance|score, and ``extra`` columns) with string
    ids, as serpeval reads it."""
    out = frame[["query_id", *extra, "doc_id", value]].copy()
    for column in ("query_id", *extra, "doc_id"):
        out[column] = out[column].astype(str)
    return out


def _metrics(qrels: Any, run: Any, measures: list[Any], ours: list[Any], float32_scores: bool,
             metric: Any) -> Any:
    """Per-query ``Metric`` rows of one run (the judged queries it answers)."""
    from ir_measures.util import RunConverter

    from serpeval.core.errors import MissingQueriesWarning, NothingEvaluatedError
    from serpeval.evaluation.evaluate import evaluate
    from serpeval.io import as_run

    distinct = list(dict.fromkeys(ours))  # ir_measures' MAP and AP are one serpeval measure
    frame = _frame(RunConverter(run).as_pd_dataframe(), "score")
    if frame.empty:
        return
    with warnings.catch_warnings():
        # ir_measures' Evaluator gives the unanswered queries their DEFAULT itself.
        warnings.simplefilter("ignore", MissingQueriesWarning)
        try:
            result = evaluate(qrels, as_run(frame), distinct, float32_scores=float32_scores)
        except NothingEvaluatedError:
            return
    (one,) = result.runs
    qids = one.query_ids.tolist()
    for measure, mine in zip(measures, ours, strict=True):
        for qid, value in zip(qids, one.column(distinct.index(mine)).tolist(), strict=True):
            yield metric(query_id=qid, measure=measure, value=value)
