"""``counterfactual(log, candidates, ...)``: estimate new rankers from a randomised log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import check_level
from serpeval.core.errors import InputError, OptionError
from serpeval.online.counterfactual.diagnostics import (
    MIN_UNITS,
    diagnose,
    interleaved_support,
    refusal,
    support_shares,
)
from serpeval.online.counterfactual.estimators import ESTIMATORS, METRICS, Context, Terms, terms
from serpeval.online.counterfactual.log import CounterfactualLog, read_log
from serpeval.online.counterfactual.logging_model import LoggingModel
from serpeval.online.counterfactual.result import CounterfactualResult, Estimate
from serpeval.online.interleaving.probabilistic import MAX_MARGINAL_DOCS, MAX_PAIRWISE_DOCS
from serpeval.stats.importance import cluster_mean_ci

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["candidate_lists", "counterfactual", "encode_candidate", "top_k_lists"]

_SEP = "\x1f"


def top_k_lists(obj: Any, k: int) -> dict[str, list[str]]:
    """``{query: top-k doc ids}`` of a run (path, Run, ``{q: {doc: score}}``) or of ranked
    lists ``{q: [doc, ...]}``, ranked by serpeval's one ranking rule. Ranked lists that hold a
    document twice in a query's top k are refused (no design can show such a list)."""
    if _is_ranked_lists(obj):
        lists = {str(q): [str(d) for d in docs][:k] for q, docs in obj.items()}
        for q, top in lists.items():  # one per query: checking what the caller built
            if len(set(top)) != len(top):
                doc = next(d for i, d in enumerate(top) if d in top[:i])
                raise InputError(f"ranked lists: query {q!r} lists document {doc!r} twice in its top {k}; a "
                                 "ranking lists each document once.")
        return lists
    from serpeval.core.id_codes import factorize
    from serpeval.io import as_run
    from serpeval.ranking import rank_order

    run = as_run(obj)
    order = rank_order(run)
    codes, names = factorize(run.query_ids.take(order))
    counts = np.bincount(codes, minlength=len(names))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    position = np.arange(len(order)) - starts[codes]
    keep = position < k
    docs = np.array(run.doc_ids.take(order).to_pylist(), dtype=object)[keep]
    out: dict[str, list[str]] = {str(q): [] for q in names}
    for q, d in zip(np.asarray(names, dtype=object)[codes[keep]], docs, strict=True):
        out[str(q)].append(str(d))
    return out


def _is_ranked_lists(obj: Any) -> bool:
    """``{q: [doc, ...]}``: a mapping whose values are all lists (not strings)."""
    return isinstance(obj, Mapping) and all(isinstance(v, Sequence) and not isinstance(v, (str, bytes))
                                            for v in obj.values())


def _is_scored_run(obj: Any) -> bool:
    """``{q: {doc: score}}``: a mapping of mappings whose values are numbers (not a
    ``{name: run}`` mapping, whose values' values are runs or lists)."""
    if not isinstance(obj, Mapping) or not all(isinstance(v, Mapping) for v in obj.values()):
        return False
    firsts = [next(iter(v.values())) for v in obj.values() if v]  # one value per query is enough
    return bool(firsts) and all(isinstance(x, (int, float, np.number)) and not isinstance(x, bool) for x in firsts)


def candidate_lists(candidates: Any) -> dict[str, Any]:
    """Name -> candidate.

    - a ``{name: run}`` mapping is kept as it is;
    - one candidate given as a mapping (ranked lists ``{q: [doc, ...]}`` or a scored run
      ``{q: {doc: score}}``) is named ``candidate``;
    - otherwise each candidate (a path, a :class:`~serpeval.core.data.Run`, a table) is named
      by its run name or file stem (else ``candidate N``, N its 1-based place). Where two
      would share a name, those take their path as given (else their name and ``#N``): no
      candidate is lost.
    """
    if (_is_ranked_lists(candidates) and candidates) or _is_scored_run(candidates):
        return {"candidate": candidates}
    if isinstance(candidates, Mapping):
        return {str(name): c for name, c in candidates.items()}
    single = isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence)
    items = [candidates] if single else list(candidates)
    stems = [_name(c, i) for i, c in enumerate(items)]
    clash = {n for n in stems if stems.count(n) > 1}
    names = [str(c) if n in clash and isinstance(c, (str, PurePath)) else n for n, c in zip(stems, items, strict=True)]
    clash = {n for n in names if names.count(n) > 1}
    names = [f"{stem}#{i + 1}" if n in clash else n for i, (n, stem) in enumerate(zip(names, stems, strict=True))]
    return dict(zip(names, items, strict=True))


def _name(candidate: Any, i: int) -> str:
    if isinstance(candidate, (str, PurePath)):
        return PurePath(candidate).stem
    name = getattr(candidate, "name", None) if not type(candidate).__module__.startswith("pandas") else None
    return name if isinstance(name, str) and name else f"candidate {i + 1}"


def encode_candidate(log: CounterfactualLog, ranked: Mapping[str, list[str]], k: int
                     ) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """``(lists[n_ctx, k], answered[n_ctx])``: the candidate's top k per context as local
    codes (documents outside the logging union get codes past it, in C's order)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n_ctx = len(log.contexts)
    docs = np.full((n_ctx, k), None, dtype=object)
    answered = np.zeros(n_ctx, dtype=bool)
    for c, q in enumerate(log.contexts):  # the candidate's lists, one per context
        lst = ranked.get(q)
        if lst:
            answered[c] = True
            docs[c, :len(lst[:k])] = lst[:k]
    present = np.not_equal(docs, None)  # type: ignore[call-overload]
    rows, cols = np.nonzero(present)
    ctx_keys = pa.array([f"{c}{_SEP}{d}" for c, ds in enumerate(log.context_docs) for d in ds], pa.string())
    ctx_codes = np.array([i for ds in log.context_docs for i in range(len(ds))], dtype=np.int64)
    keys = pa.array([f"{r}{_SEP}{d}" for r, d in zip(rows.tolist(), docs[present].tolist(), strict=True)],
                    pa.string())
    where = pc.index_in(keys, value_set=ctx_keys)
    found = ~where.is_null().to_numpy(zero_copy_only=False)
    local = np.full(len(rows), -1, dtype=np.int64)
    local[found] = ctx_codes[where.to_numpy(zero_copy_only=False)[found].astype(np.int64)]
    new = np.zeros((n_ctx, k), dtype=bool)
    new[rows[~found], cols[~found]] = True
    extra = np.cumsum(new, axis=1) - 1
    union = np.array([len(d) for d in log.context_docs], dtype=np.int64)
    out = np.full((n_ctx, k), -1, dtype=np.int64)
    out[rows[found], cols[found]] = local[found]
    out[new] = (union[:, None] + extra)[new]
    return out, answered


def _influence(t: Terms, mask: NDArray[np.bool_]) -> tuple[float, NDArray[np.float64]]:
    """Estimate ``Σx/Σy`` over ``mask`` and its per-impression influence values (zero mean)."""
    x, y = t.x[mask], t.y[mask]
    ybar = float(y.mean())
    if ybar == 0:
        return float("nan"), np.zeros(len(x))
    value = float(x.sum() / y.sum())
    return value, (x - value * y) / ybar


def _interval(value: float, phi: NDArray[np.float64], units: NDArray[np.int64], confidence: float
              ) -> tuple[float, float, float]:
    r = cluster_mean_ci(phi, units, confidence)
    half = r.high - r.estimate
    return r.se, value - half, value + half


def _against_index(against: Any, log: CounterfactualLog) -> tuple[int, str]:
    n = min(len(r) for r in log.context_rankings)
    names = [chr(ord("A") + i) for i in range(n)]
    if isinstance(against, str) and against.upper() in names:
        return names.index(against.upper()), against.upper()
    if isinstance(against, (int, np.integer)) and not isinstance(against, bool) and 0 <= against < n:
        return int(against), names[int(against)]
    raise OptionError(f"against must name a logging ranker, {' or '.join(names)} (or its index); got {against!r}.")


def counterfactual(log: Any, candidates: Any, *, against: str | int = "A", metric: str = "clicks",
                   estimators: Sequence[str] | None = None, experiment: str | None = None,
                   confidence: float = 0.95, k: int | None = None) -> CounterfactualResult:
    """Estimate each candidate's click metric, and its interleaved comparison against a
    logging ranker, from a randomised log (probabilistic interleaving or an A/B split).

    Args:
        log: a log path (Parquet or JSON lines), an Arrow table / DataFrame in the fields of
            docs/explanation/counterfactual-logs.md, or a :class:`CounterfactualLog`.
        candidates: runs (paths, :class:`~serpeval.core.data.Run`, ``{q: {doc: score}}``) or
            ranked lists ``{q: [doc, ...]}``: one, a list, or a ``{name: run}`` mapping
            (names: :func:`candidate_lists`; one mapping given alone is ``candidate``, two
            files with one stem keep their paths apart). Each keeps as many documents as the
            longest of the shown lists and the logging rankings (its softmax in the
            interleaved comparison).
        against: the logging ranker the effects are measured against (``"A"`` = the first
            of ``logging_rankings``, ``"B"`` the second).
        metric: ``clicks`` (expected clicks on the top k per query) or ``ctr``.
        estimators: names of :data:`~.estimators.ESTIMATORS` (one name or several, each run
            once; default: all that apply, the interleaved comparison only for a
            probabilistic-interleaving log).
        experiment: the experiment to read when the log holds several.
        confidence: the intervals' level (cluster-robust over users).
        k: the metric's cutoff (clicks or CTR on the top k; default: every shown position).
            A smaller k needs the log to support only C's top k, so its weights are far
            smaller: list and cascade estimators often need k <= 3 under probabilistic
            interleaving.

    Each estimate first passes the support diagnostics (:mod:`.diagnostics`); below their
    thresholds it carries a one-line ``refused`` reason instead of a number.
    """
    if metric not in METRICS:
        raise OptionError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}.")
    level = check_level(confidence, "confidence", example=0.95)
    data = read_log(log, experiment=experiment)
    index, against_name = _against_index(against, data)
    asked = [estimators] if isinstance(estimators, str) else estimators
    names = list(ESTIMATORS) if asked is None else list(dict.fromkeys(asked))
    if not names:
        raise OptionError(f"no estimator asked for; name one or more of {', '.join(ESTIMATORS)} (or leave "
                          "estimators out for all that apply).")
    for name in names:
        if name not in ESTIMATORS:
            raise OptionError(f"unknown estimator {name!r}; expected one of {', '.join(ESTIMATORS)}.")
    if estimators is None:
        names = [n for n in names if metric in ESTIMATORS[n].metrics
                 and (n != "interleaved" or data.design == "probabilistic")]
    # candidates keep as many documents as the longest of the shown lists and the logging rankings:
    # their softmax in the interleaved comparison is over that many ranks, as the logging rankers' is
    depth = max(data.k, *(len(r) for rankings in data.context_rankings for r in rankings))
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= data.k:
            raise OptionError(f"k must be an integer from 1 to {data.k} (the positions the log shows); got {k!r}.")
        LoggingModel(data).check_logged()
        data = replace(data, shown=data.shown[:, :k].copy(), clicks=data.clicks[:, :k].copy(), logged_propensity=None)
    k = data.k
    ranked = {name: top_k_lists(obj, depth) for name, obj in candidate_lists(candidates).items()}
    if not ranked:
        raise InputError("no candidate given: pass one or more runs to estimate.")
    encoded = {name: encode_candidate(data, r, depth) for name, r in ranked.items()}
    width = max(int(lists.max(initial=0)) + 1 for lists, _ in encoded.values())
    model = LoggingModel(data, width)
    model.check_logged()
    ctx = Context(data, model, metric)
    logged = model.rankings[index][:, :depth]
    against_lists = np.pad(logged, ((0, 0), (0, depth - logged.shape[1])), constant_values=-1)
    clicks = int(data.clicks.sum())
    out: list[Estimate] = []
    for cand, (lists, answered) in encoded.items():
        shares = support_shares(ctx, lists[:, :k], answered)
        mask = answered[data.context]
        units = len(np.unique(data.unit[mask]))
        for name in names:
            spec = ESTIMATORS[name]
            if metric not in spec.metrics:
                out.append(_refused(cand, name, f"{spec.label} needs an additive metric (clicks), not {metric}"))
                continue
            if spec.comparison and data.design != "probabilistic":
                out.append(_refused(cand, name, "the interleaved comparison needs a probabilistic-interleaving log"))
                continue
            if (name in ("iips", "pbm_ips") and data.design == "probabilistic"
                    and int(model.union.max(initial=0)) > MAX_MARGINAL_DOCS):
                out.append(_refused(cand, name, (
                    f"{spec.label} needs the design's exact position marginals, computed for at most "
                    f"{MAX_MARGINAL_DOCS} logged documents per query; this log has up to {int(model.union.max())}")))
                continue
            if name == "pseudo_inverse" and int(model.union.max(initial=0)) > MAX_PAIRWISE_DOCS:
                out.append(_refused(cand, name, (
                    f"the pseudo-inverse needs the design's exact second moments, computed for at most "
                    f"{MAX_PAIRWISE_DOCS} logged documents per query; this log has up to {int(model.union.max())}")))
                continue
            if spec.comparison:
                support = interleaved_support(ctx, lists, index, k, answered)
            else:
                support = shares["anywhere" if name == "pbm_ips" else "position"]
            if clicks == 0 or not mask.any() or units < MIN_UNITS or support == 0:
                diag = diagnose(np.zeros(int(mask.sum())), support)
                reason, _ = refusal(spec, diag, clicks=clicks, answered=int(answered.sum()), units=units)
                out.append(_refused(cand, name, reason or "", diag.to_dict()))
                continue
            t = terms(name, ctx, lists, index)
            diag = diagnose(t.weight[mask], support)
            reason, warning = refusal(spec, diag, clicks=clicks, answered=int(answered.sum()), units=units)
            if not mask.all():
                left = f"{int((~mask).sum()):,} impressions on queries the candidate does not rank left out"
                warning = left if warning is None else f"{warning}; {left}"
            if reason is not None:
                out.append(_refused(cand, name, reason, diag.to_dict()))
                continue
            value, phi = _influence(t, mask)
            se, low, high = _interval(value, phi, data.unit[mask], level)
            if spec.comparison:
                effect, e_low, e_high = value, low, high
            else:
                base, phi_a = _influence(terms(name, ctx, against_lists, index), mask)
                effect = value - base
                _, e_low, e_high = _interval(effect, phi - phi_a, data.unit[mask], level)
            out.append(Estimate(cand, name, value, se, low, high, effect, e_low, e_high, diag.to_dict(),
                                None, warning, spec.assumption))
    observed = float(ctx.rewards.sum(axis=1).mean())
    return CounterfactualResult(data.source, data.design, data.experiment, metric, against_name, observed,
                                tuple(out), len(data), data.n_units, level, k, dict(data.skipped))


def _refused(candidate: str, name: str, reason: str, diagnostics: dict[str, Any] | None = None) -> Estimate:
    return Estimate(candidate, name, None, None, None, None, None, None, None, diagnostics or {}, reason, None,
                    ESTIMATORS[name].assumption)
