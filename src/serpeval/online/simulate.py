"""The sensitivity simulator: how many impressions do interleaving and an A/B test need?

Given judgments (taken as the *true* relevance of every document; unjudged = 0) and two
runs, :func:`simulate` plays users of a click model on each run's top k:

(a) **interleaving**: team draft lists of A and B, credit by clicks, a t-test over users of
    their summed outcomes (the user-clustered test of Δ_AB = 0);
(b) an **A/B test** with users split between A and B, on clicks per impression (CTR), the
    abandonment rate (no click) and clicks@1, a Welch t-test over users' totals.

For each it reports the impressions needed to detect the true difference at the given power
and level, computed **exactly** from the click model (no Monte Carlo noise; formulas in
:mod:`~serpeval.online._sensitivity`), the ratio A/B ÷ interleaving with a bootstrap CI over
the queries (which topics you have is the main uncertainty), and whether each method's true
effect agrees in sign with the offline nDCG@k difference. A Monte Carlo check then runs
whole simulated experiments - sampled users, queries, coin flips and clicks - at sizes up
to twice the required one and reports the empirical power curve of both methods (the
"measured, not asserted" part; :meth:`SimulationResult.plot` draws it).

Users are heterogeneous: each has a logit shift of attractiveness drawn from
N(0, ``user_sd``²) (discretised exactly with Gauss-Hermite nodes) and issues
``impressions_per_user`` queries drawn uniformly. Set ``user_sd=0`` and
``impressions_per_user=1`` for independent, identical impressions.
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.errors import EmptyInputError, InputError, MissingQueriesWarning, OptionError
from serpeval.online import _sensitivity as engine
from serpeval.online._common import as_rng, positive_int

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import NDArray

    from serpeval.data import Qrels, Run
    from serpeval.online.click_models import ClickModel

__all__ = ["SimulationResult", "World", "make_world", "simulate", "synthetic_pair"]


# ------------------------------------------------------------------ the simulated world


@dataclass(frozen=True, eq=False)
class World:
    """Two rankers' top k on a set of queries, with the true grade of every shown document.

    Attributes:
        query_ids: the simulated queries (judged, and retrieved by both runs).
        a, b: ``int64[Q, k]`` local document codes of each ranking (-1: the run retrieved
            fewer than k documents); a document both runs return has the same code.
        grades: ``int64[Q, 2k]`` true grade of each local code (-1: unused code).
        ndcg_a, ndcg_b: per-query offline nDCG@k from the judgments.
        names: display names of A and B.
        truth: where the true grades came from.
        skipped: queries left out, by reason (never silently).
    """

    query_ids: list[str]
    a: NDArray[np.int64]
    b: NDArray[np.int64]
    grades: NDArray[np.int64]
    ndcg_a: NDArray[np.float64]
    ndcg_b: NDArray[np.float64]
    names: tuple[str, str]
    truth: str
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def k(self) -> int:
        return self.a.shape[1]

    @property
    def levels(self) -> int:
        """Relevance levels of the truth (max grade + 1, at least 2)."""
        return max(2, int(self.grades.max(initial=0)) + 1)


def _top_k(run: Run, k: int) -> tuple[list[str], NDArray[np.object_]]:
    """Query ids (byte order) and their top-k doc ids ``[Q, k]`` (None-padded), ranked by
    serpeval's one ranking rule (:func:`serpeval.ranking.rank_order`)."""
    from serpeval._arrays import factorize
    from serpeval.ranking import rank_order

    order = rank_order(run)
    codes, names = factorize(run.query_ids.take(order))
    counts = np.bincount(codes, minlength=len(names))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.arange(len(order)) - starts[codes]
    keep = position < k
    docs = np.full((len(names), k), None, dtype=object)
    docs[codes[keep], position[keep]] = np.array(run.doc_ids.take(order).to_pylist(), dtype=object)[keep]
    return names, docs


def make_world(qrels: Any, run_a: Any, run_b: Any, *, k: int = 10,
               truth: Mapping[str, Mapping[str, int]] | None = None) -> World:
    """Build the :class:`World` from judgments and two runs (paths, dicts, Qrels/Run...).

    ``truth`` (``{qid: {doc: grade}}``, e.g. a demo collection's ``true_grades``) replaces
    the judgments as the users' relevance when given; the offline nDCG@k always comes from
    the judgments. Negative and missing grades count as 0.
    """
    from serpeval.data import as_qrels, as_run
    from serpeval.evaluate import evaluate

    positive_int(k, "k")
    judgments = as_qrels(qrels)
    ra, rb = as_run(run_a), as_run(run_b)
    if ra.name == rb.name:
        rb = rb.renamed(f"{rb.name} (B)")
    qa, docs_a = _top_k(ra, k)
    qb, docs_b = _top_k(rb, k)
    judged = set(judgments.query_ids.to_pylist())
    common = sorted(judged & set(qa) & set(qb))
    skipped = {"judged but missing from run A": len(judged - set(qa)),
               "judged but missing from run B": len(judged - set(qb)),
               "retrieved but not judged": len((set(qa) | set(qb)) - judged)}
    if not common:
        raise EmptyInputError("no query is judged and retrieved by both runs; nothing to simulate.")
    ia = {q: i for i, q in enumerate(qa)}
    ib = {q: i for i, q in enumerate(qb)}
    da = docs_a[[ia[q] for q in common]]
    db = docs_b[[ib[q] for q in common]]
    a, b, union = _local_codes(da, db)
    grades = _truth_grades(common, union, judgments if truth is None else truth)
    with warnings.catch_warnings():  # queries missing from a run are counted in `skipped`
        warnings.simplefilter("ignore", MissingQueriesWarning)
        res = evaluate(judgments, {ra.name: ra, rb.name: rb}, [f"nDCG@{k}"])
    per_a, per_b = res.per_query(ra.name, f"nDCG@{k}"), res.per_query(rb.name, f"nDCG@{k}")
    return World(
        query_ids=common, a=a, b=b, grades=grades,
        ndcg_a=np.array([per_a[q] for q in common]), ndcg_b=np.array([per_b[q] for q in common]),
        names=(ra.name, rb.name), truth="true grades" if truth is not None else "judgments",
        skipped={key: v for key, v in skipped.items() if v},
    )


def _local_codes(da: NDArray[np.object_], db: NDArray[np.object_]) -> tuple[NDArray[np.int64], ...]:
    """Per query: A's docs get codes 0..k-1, B's docs A's code when shared, else k + j."""
    k = da.shape[1]
    valid_a, valid_b = np.not_equal(da, None), np.not_equal(db, None)
    a = np.where(valid_a, np.arange(k), -1)
    same = (db[:, :, None] == da[:, None, :]) & valid_b[:, :, None] & valid_a[:, None, :]
    b = np.where(same.any(axis=2), same.argmax(axis=2), k + np.arange(k))
    b = np.where(valid_b, b, -1)
    union = np.concatenate([da, np.where(same.any(axis=2), None, db)], axis=1)
    return a.astype(np.int64), b.astype(np.int64), union


def _truth_grades(queries: list[str], union: NDArray[np.object_], truth: Any) -> NDArray[np.int64]:
    """Grade of every local code: looked up in the qrels (or a truth dict), 0 if absent."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from serpeval.data import Qrels

    if isinstance(truth, Qrels):
        t_q, t_d, t_g = truth.query_ids, truth.doc_ids, truth.relevance
    else:
        rows = [(str(q), str(d), int(g)) for q, docs in truth.items() for d, g in docs.items()]
        t_q = pa.array([r[0] for r in rows], pa.string())
        t_d = pa.array([r[1] for r in rows], pa.string())
        t_g = np.array([r[2] for r in rows], dtype=np.int64)
    sep = "\x1f"
    truth_keys = pc.binary_join_element_wise(t_q, t_d, sep)
    present = np.not_equal(union, None)
    qs = np.repeat(np.array(queries, dtype=object), union.shape[1]).reshape(union.shape)
    cell_keys = pc.binary_join_element_wise(pa.array(qs[present].tolist(), pa.string()),
                                            pa.array(union[present].tolist(), pa.string()), sep)
    where = pc.index_in(cell_keys, value_set=truth_keys).to_numpy(zero_copy_only=False)
    found = ~np.isnan(where.astype(np.float64))
    g = np.zeros(len(where), dtype=np.int64)
    g[found] = np.asarray(t_g)[where[found].astype(np.int64)]
    out = np.full(union.shape, -1, dtype=np.int64)
    out[present] = np.maximum(g, 0)  # negative (pooled but unjudged) counts as not relevant
    return out


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class MethodResult:
    """One method (interleaving, or an A/B metric): effect, required impressions, agreement.

    ``agrees``: the sign of the true effect (oriented: lower abandonment is better) matches
    the offline nDCG difference; None when the method sees no difference at all.
    """

    method: str
    metric: str
    value_a: float | None
    value_b: float | None
    effect: float
    required: float
    required_low: float
    required_high: float
    agrees: bool | None
    ratio: float | None = None
    ratio_low: float | None = None
    ratio_high: float | None = None
    mc_required: float | None = None


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """What :func:`simulate` measured; ``to_dicts()`` feeds every renderer."""

    world: World
    click_model: str
    settings: dict[str, Any]
    offline: dict[str, float]
    methods: tuple[MethodResult, ...]
    curves: dict[str, engine.PowerCurve]
    analytic: dict[str, float]

    def __getitem__(self, key: str) -> MethodResult:
        for m in self.methods:
            if key in (m.metric, m.method):
                return m
        raise KeyError(f"no method or metric {key!r}; have {[m.metric for m in self.methods]}")

    def ratio(self, metric: str = "CTR") -> float:
        """Impressions an A/B test on ``metric`` needs per impression interleaving needs."""
        value = self[metric].ratio
        return float("nan") if value is None else value

    def to_dicts(self) -> list[dict[str, Any]]:
        conf = f"{self.settings['confidence']:.0%}"
        rows = []
        for m in self.methods:
            rows.append({
                "method": m.method, "metric": m.metric,
                "A": m.value_a, "B": m.value_b, "effect (A-B)": m.effect,
                f"agrees with nDCG@{self.world.k}": _agreement(m.agrees),
                "impressions needed": _count(m.required),
                f"{conf} CI": f"[{_count(m.required_low)}, {_count(m.required_high)}]",
                "A/B / interleaving": _ratio(m.ratio),
                f"ratio {conf} CI": None if m.ratio is None else
                f"[{_ratio(m.ratio_low)}, {_ratio(m.ratio_high)}]",
                "Monte Carlo": _count(m.mc_required) if m.mc_required is not None else "-",
            })
        return rows

    def notes(self) -> list[str]:
        s, w = self.settings, self.world
        off = self.offline
        lines = [
            f"click model: {self.click_model}; truth: {w.truth} ({w.levels} levels); "
            f"{len(w.query_ids)} queries; top {w.k}; interleaving: team draft"
            + (" (shared picks ignored)" if s["ignore_shared"] else ""),
            f"users: {s['impressions_per_user']} impressions each, attractiveness logit shift "
            f"sd {s['user_sd']}; tests two-sided at alpha {s['alpha']}, power {s['power']}",
            f"offline nDCG@{w.k}: {w.names[0]} {off['ndcg_a']:.4f}, {w.names[1]} {off['ndcg_b']:.4f} "
            f"(A-B {off['delta']:+.4f}, {off['relative']:+.2%} relative)",
            "impressions needed: exact click-model expectations; CIs: bootstrap over queries "
            f"({s['bootstrap']} resamples); Monte Carlo: impressions at which simulated "
            f"experiments reached the power ({s['replicates_il']} / {s['replicates_ab']} "
            "replicates, '-' = beyond the simulated range)",
        ]
        if w.skipped:
            lines.append("skipped queries: " + ", ".join(f"{v} {k}" for k, v in w.skipped.items()))
        return lines

    def power_curves(self, points: int = 40) -> list[dict[str, Any]]:
        """Power against impressions per method, as rows for plots (the HTML report).

        ``source="analytic"``: the normal-approximation curve at ``points`` log-spaced sizes
        from 10 to 3x the largest finite requirement (what :meth:`plot` draws as lines);
        ``source="monte carlo"``: the simulated experiments' power with Wilson CIs
        (``low``, ``high``).
        """
        finite = [m.required for m in self.methods if np.isfinite(m.required)]
        top = max(finite) * 3 if finite else 1e6
        xs = np.geomspace(10, max(top, 100), points)
        rows: list[dict[str, Any]] = []
        for m in self.methods:
            power = engine.analytic_power(xs, m.required, self.analytic["z_alpha"],
                                          self.analytic["z_total"])
            rows += [{"method": m.method, "metric": m.metric, "source": "analytic",
                      "impressions": float(x), "power": float(p), "low": None, "high": None}
                     for x, p in zip(xs, power, strict=True) if np.isfinite(p)]
            curve = self.curves.get(m.metric)
            if curve is not None:
                rows += [{"method": m.method, "metric": m.metric, "source": "monte carlo",
                          "impressions": float(n), "power": float(p), "low": float(lo), "high": float(hi)}
                         for n, p, lo, hi in zip(curve.grid, curve.power, curve.low, curve.high, strict=True)]
        return rows

    def plot(self, path: str | Path, title: str | None = None) -> Path:
        """Power vs impressions for both methods (analytic lines, Monte Carlo points); a PNG."""
        from serpeval.errors import require

        require("matplotlib", "plot")
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        finite = [m.required for m in self.methods if np.isfinite(m.required)]
        top = max(finite) * 3 if finite else 1e6
        xs = np.geomspace(10, max(top, 100), 200)
        colors = {"interleaving": "C0", "CTR": "C1", "abandonment": "C2", "clicks@1": "C3"}
        for m in self.methods:
            label = "interleaving (team draft)" if m.method == "interleaving" else f"A/B: {m.metric}"
            power = engine.analytic_power(xs, m.required, self.analytic["z_alpha"],
                                          self.analytic["z_total"])
            ax.plot(xs, power, color=colors[m.metric], label=label)
            curve = self.curves.get(m.metric)
            if curve is not None and len(curve.grid):
                yerr = np.maximum(0.0, [curve.power - curve.low, curve.high - curve.power])
                ax.errorbar(curve.grid, curve.power, yerr=yerr,
                            fmt="o", ms=3, color=colors[m.metric], alpha=0.8)
        ax.axhline(self.settings["power"], color="grey", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("impressions (queries issued)")
        ax.set_ylabel("power")
        ax.set_title(title or f"{self.world.names[0]} vs {self.world.names[1]}, {self.click_model}")
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(alpha=0.3, which="both")
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out, dpi=120)
        plt.close(fig)
        return out


def _agreement(agrees: bool | None) -> str:
    return "no difference" if agrees is None else ("yes" if agrees else "NO")


def _count(value: float | None) -> str:
    """Impressions: whole numbers rounded up, with thousands separators; inf when unreachable."""
    if value is None or not np.isfinite(value) or value > 1e15:
        return "inf"
    return f"{math.ceil(value - 1e-9):,}"


def _ratio(value: float | None) -> str | None:
    if value is None:
        return None
    if not np.isfinite(value):
        return "inf" if value > 0 else "nan"
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


# ------------------------------------------------------------------ the simulation


def simulate(qrels: Any = None, run_a: Any = None, run_b: Any = None, *,
             click_model: str | ClickModel = "navigational", k: int = 10,
             world: World | None = None, truth: Mapping[str, Mapping[str, int]] | None = None,
             impressions_per_user: int = 4, user_sd: float = 1.0, stop_requires_click: bool | None = None,
             ignore_shared: bool = False, alpha: float = 0.05, power: float = 0.8,
             confidence: float = 0.95, bootstrap: int = 2000, mc_impressions: int = 20_000_000,
             replicates: int = 200, rng: int | np.random.Generator | None = None,
             progress: bool | None = None) -> SimulationResult:
    """Measure how many impressions interleaving and A/B tests need (module docstring).

    Args:
        qrels, run_a, run_b: judgments (the users' truth) and the two rankers; or ``world``.
        click_model: a preset name (:func:`serpeval.online.click_models.click_model`) or a
            model whose items are grades ``0 .. levels - 1``.
        k: results per impression.
        truth: true grades ``{qid: {doc: grade}}`` overriding the judgments for the users.
        impressions_per_user, user_sd: the user population (module docstring).
        stop_requires_click: stop rule of the grade-table users (None: the model's default).
        ignore_shared: team draft's shared-pick variant.
        alpha, power: the tests' level and the power to plan for.
        confidence, bootstrap: CI level and resamples of the bootstrap over queries.
        mc_impressions: impressions the Monte Carlo check may simulate in all (0: skip it).
        replicates: at most this many simulated experiments per method.
        rng: seed or Generator (bootstrap and Monte Carlo).
        progress: show a progress bar (None: when stderr is a terminal).
    """
    from scipy.special import ndtri

    from serpeval.online.click_models import ClickModel
    from serpeval.online.click_models import click_model as preset

    for value, what in ((alpha, "alpha"), (power, "power"), (confidence, "confidence")):
        if not isinstance(value, (int, float)) or not 0 < value < 1:
            raise OptionError(f"{what} must be strictly between 0 and 1; got {value!r}.")
    if not isinstance(user_sd, (int, float)) or user_sd < 0:
        raise OptionError(f"user_sd must be >= 0; got {user_sd!r}.")
    per_user = positive_int(impressions_per_user, "impressions_per_user")
    positive_int(bootstrap, "bootstrap")
    positive_int(replicates, "replicates")
    if not isinstance(mc_impressions, int) or mc_impressions < 0:
        raise OptionError(f"mc_impressions must be an integer >= 0; got {mc_impressions!r}.")
    if world is None:
        if qrels is None or run_a is None or run_b is None:
            raise InputError("simulate needs qrels, run_a and run_b (or a prepared world=).")
        world = make_world(qrels, run_a, run_b, k=k, truth=truth)
    if isinstance(click_model, ClickModel):
        model = click_model
    else:
        model = preset(click_model, world.levels, stop_requires_click=stop_requires_click)
    if model.n_items < world.levels:
        raise OptionError(f"click model {model.name!r} knows {model.n_items} grades; the truth has "
                          f"{world.levels} (grades 0..{world.levels - 1}).")
    generator = as_rng(rng)
    z_alpha, z_beta = float(ndtri(1 - alpha / 2)), float(ndtri(power))
    z = z_alpha + z_beta

    tables = engine.build_tables(model, world.a, world.b, world.grades, float(user_sd), ignore_shared)
    moments = engine.exact_moments(tables)
    n_q = len(world.query_ids)
    uniform = np.full(n_q, 1.0 / n_q)
    boot = generator.multinomial(n_q, uniform, size=bootstrap) / n_q
    delta_ndcg = float(world.ndcg_a.mean() - world.ndcg_b.mean())
    offline_sign = np.sign(delta_ndcg)
    q = [(1 - confidence) / 2, (1 + confidence) / 2]

    def sizes(metric: str) -> tuple[float, float, NDArray[np.float64]]:
        """Impressions needed, the effect, and the bootstrap-over-queries impressions."""
        n, effect = engine.required_impressions(moments, metric, uniform, tables.type_weights, per_user, z)
        n_boot, _ = engine.required_impressions(moments, metric, boot, tables.type_weights, per_user, z)
        return float(n), float(effect), n_boot

    n_il, effect_il, boot_il = sizes("interleaving")
    il_wins = float(((moments["interleaving"].square + moments["interleaving"].mean) / 2).mean(axis=0)
                    @ tables.type_weights)
    il_losses = float(((moments["interleaving"].square - moments["interleaving"].mean) / 2).mean(axis=0)
                      @ tables.type_weights)
    results = [MethodResult(
        "interleaving", "interleaving", il_wins, il_losses, effect_il, n_il,
        *_quantiles(boot_il, q),
        agrees=_agrees(effect_il, 1, offline_sign),
    )]
    for metric in engine.AB_METRICS:
        n_ab, effect, boot_ab = sizes(metric)
        ma, mb = moments[metric]
        value_a = float(ma.mean.mean(axis=0) @ tables.type_weights)
        value_b = float(mb.mean.mean(axis=0) @ tables.type_weights)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio_boot = boot_ab / boot_il
        orient = engine.ORIENTATION[metric]
        results.append(MethodResult(
            "A/B", metric, value_a, value_b, effect, n_ab, *_quantiles(boot_ab, q),
            agrees=_agrees(effect, orient, offline_sign),
            ratio=n_ab / n_il if np.isfinite(n_il) and n_il > 0 else float("nan"),
            ratio_low=_quantiles(ratio_boot, q)[0],
            ratio_high=_quantiles(ratio_boot, q)[1],
        ))

    curves: dict[str, engine.PowerCurve] = {}
    reps = {"il": 0, "ab": 0}
    if mc_impressions > 0:
        curves, reps = _monte_carlo(tables.for_sampling(), results, per_user, alpha, power, replicates,
                                    mc_impressions, generator, progress)
        results = [_with_mc(m, curves.get(m.metric), power) for m in results]
    offline = {"ndcg_a": float(world.ndcg_a.mean()), "ndcg_b": float(world.ndcg_b.mean()),
               "delta": delta_ndcg,
               "relative": delta_ndcg / float(world.ndcg_b.mean()) if world.ndcg_b.mean() else float("nan")}
    settings = {"k": world.k, "impressions_per_user": per_user, "user_sd": float(user_sd),
                "alpha": alpha, "power": power, "confidence": confidence, "bootstrap": bootstrap,
                "ignore_shared": ignore_shared, "mc_impressions": mc_impressions,
                "replicates_il": reps["il"], "replicates_ab": reps["ab"],
                "user_types": tables.n_types}
    return SimulationResult(world, model.name, settings, offline, tuple(results), curves,
                            {"z_alpha": z_alpha, "z_total": z})


def _monte_carlo(tables: engine.Tables, results: list[MethodResult], per_user: int, alpha: float,
                 power: float, replicates: int, budget: int, rng: np.random.Generator,
                 progress: bool | None) -> tuple[dict[str, engine.PowerCurve], dict[str, int]]:
    """Simulate whole experiments up to twice the required size (within ``budget``)."""
    il = results[0]
    ab = results[1:]
    plans = {}
    for name, required, arms in (("il", il.required, 1),
                                 ("ab", max((m.required for m in ab if np.isfinite(m.required)),
                                            default=np.inf), 2)):
        if not np.isfinite(required) or required <= 0:
            continue
        top = 2.0 * required
        reps = int(min(replicates, budget / 2 // top))
        if reps < 20:  # keep at least 20 experiments: cover a smaller range instead
            reps = min(replicates, 20)
            top = budget / 2 / reps
        users = max(2, int(top // (per_user * arms)))
        grid = np.unique(np.geomspace(2, users, 24).astype(np.int64))
        plans[name] = (reps, users, grid, arms)
    tick, finish = _progress_bar(sum(p[0] for p in plans.values()), progress)
    curves: dict[str, engine.PowerCurve] = {}
    try:
        if "il" in plans:
            reps, users, grid, arms = plans["il"]
            hits = engine.simulate_interleaving(tables, users, per_user, grid, int(np.sign(il.effect)),
                                                alpha, reps, rng, tick)
            curves["interleaving"] = engine.power_curve(hits, grid * per_user * arms, reps)
        if "ab" in plans:
            reps, users, grid, arms = plans["ab"]
            directions = {m.metric: int(np.sign(m.effect)) or 1 for m in ab}
            hits_ab = engine.simulate_ab(tables, users, per_user, grid, directions, alpha, reps, rng, tick)
            for metric, hits in hits_ab.items():
                curves[metric] = engine.power_curve(hits, grid * per_user * arms, reps)
    finally:
        finish()
    return curves, {"il": plans.get("il", (0,))[0], "ab": plans.get("ab", (0,))[0]}


def _agrees(effect: float, orientation: int, offline_sign: float) -> bool | None:
    """Does the method's true effect point the way the offline nDCG difference does?"""
    if effect == 0:
        return None
    return bool(np.sign(effect) * orientation == offline_sign)


def _quantiles(values: NDArray[np.float64], levels: list[float]) -> list[float]:
    """Order-statistic quantiles that tolerate infinities (no interpolation between them).

    A bootstrap resample whose effect vanishes needs infinitely many impressions; it sorts
    last instead of turning the interpolation into NaN. NaN (0 / 0) counts as infinite.
    """
    ordered = np.sort(np.where(np.isnan(values), np.inf, values))
    n = len(ordered)
    return [float(ordered[min(n - 1, max(0, math.ceil(level * n) - 1))]) for level in levels]


def _with_mc(m: MethodResult, curve: engine.PowerCurve | None, power: float) -> MethodResult:
    """Attach the impressions at which the simulated power first reached ``power``."""
    if curve is None:
        return m
    above = np.flatnonzero(curve.power >= power)
    if not len(above):
        return m
    i = int(above[0])
    if i == 0:
        value = float(curve.grid[0])
    else:  # linear interpolation between the grid points around the crossing
        x0, x1 = curve.grid[i - 1], curve.grid[i]
        y0, y1 = curve.power[i - 1], curve.power[i]
        value = float(x0 + (power - y0) / max(y1 - y0, 1e-12) * (x1 - x0))
    from dataclasses import replace

    return replace(m, mc_required=value)


def _progress_bar(total: int, show: bool | None):  # type: ignore[no-untyped-def]
    """(tick, finish) callables for a rich progress bar over simulated experiments."""
    if show is None:
        show = sys.stderr.isatty()
    if not show or total == 0:
        return (lambda: None), (lambda: None)
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("simulating experiments"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    bar.start()
    task = bar.add_task("simulate", total=total)
    return (lambda: bar.advance(task)), bar.stop


# ------------------------------------------------------------------ synthetic pairs


def synthetic_pair(gap: float = 0.01, *, n_queries: int = 200, docs_per_query: int = 50,
                   levels: int = 5, k: int = 10, rng: int | np.random.Generator | None = 0,
                   ) -> tuple[Qrels, Run, Run]:
    """Generated judgments and two runs whose mean nDCG@k differ by ``gap`` (relative).

    Every document is judged (grades 0..levels-1, skewed to non-relevant). Ranker A scores
    ``grade + noise``; ranker B scores ``(1 + λ) grade + noise`` with the same noise, and λ
    is found by bisection so that ``nDCG_B / nDCG_A - 1`` is as close to ``gap`` as the
    sample allows (returned in the runs' names). Negative gaps make B worse.
    """
    import pyarrow as pa

    from serpeval.data import Qrels, Run
    from serpeval.evaluate import evaluate

    generator = as_rng(rng)
    positive_int(n_queries, "n_queries")
    positive_int(docs_per_query, "docs_per_query", minimum=k)
    probs = np.array([0.6, 0.2, 0.1, 0.06, 0.04][:levels]) if levels <= 5 else np.full(levels, 1 / levels)
    probs = probs / probs.sum()
    grades = generator.choice(levels, size=(n_queries, docs_per_query), p=probs)
    noise = generator.standard_normal((n_queries, docs_per_query)) * 1.5
    qids = np.repeat([f"q{i + 1:04d}" for i in range(n_queries)], docs_per_query).tolist()
    dids = [f"d{i:06d}" for i in range(n_queries * docs_per_query)]
    qrels = Qrels(pa.array(qids), pa.array(dids), grades.ravel(), source="<synthetic qrels>")

    def run(weight: float, name: str) -> Run:
        return Run(pa.array(qids), pa.array(dids), (weight * grades + noise).ravel(), name=name)

    base = run(1.0, "A")
    base_ndcg = evaluate(qrels, base, [f"nDCG@{k}"]).aggregate("A", f"nDCG@{k}")

    def relative(lam: float) -> float:
        cand = run(1.0 + lam, "B")
        return evaluate(qrels, cand, [f"nDCG@{k}"]).aggregate("B", f"nDCG@{k}") / base_ndcg - 1

    lo, hi = (0.0, 2.0) if gap >= 0 else (-0.99, 0.0)
    for _ in range(40):
        mid = (lo + hi) / 2
        if (relative(mid) < gap) == (gap >= 0):
            lo, hi = (mid, hi) if gap >= 0 else (lo, mid)
        else:
            lo, hi = (lo, mid) if gap >= 0 else (mid, hi)
    lam = (lo + hi) / 2
    achieved = relative(lam)
    return qrels, base.renamed("A"), run(1.0 + lam, f"B ({achieved:+.2%} nDCG@{k})")
