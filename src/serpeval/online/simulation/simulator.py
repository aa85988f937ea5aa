"""The sensitivity simulator: how many impressions do interleaving and an A/B test need?

Given judgments (taken as the *true* relevance of every document; unjudged = 0) and two
runs, A (the baseline) and B (the candidate), :func:`simulate` plays users of a click model
on each run's top k:

(a) **interleaving**: team draft lists of A and B, credit by clicks, a t-test over users of
    their summed outcomes (the user-clustered test of Δ = 0);
(b) an **A/B test** with users split between A and B, on clicks per impression (CTR), the
    abandonment rate (no click) and clicks@1, a Welch t-test over users' totals;
(c) the **designs** that reduce variance, as extra rows (exact engine only, no Monte Carlo):
    *triggered* interleaving and A/B tests (only impressions whose two top-k lists differ
    are analysed: the others carry no signal, only noise; :mod:`serpeval.online.experiments.triggered`
    does the same on logs) and team draft with *ignore shared* (shared picks on no team).

For each it reports the impressions needed to detect the true difference at the given power
and level, computed **exactly** from the click model (no Monte Carlo noise; formulas in
:mod:`~serpeval.online.simulation.sensitivity`), the ratio A/B ÷ interleaving with a bootstrap CI over
the queries (which topics you have is the main uncertainty), and whether each method's true
effect agrees in sign with the offline nDCG@k difference. :meth:`SimulationResult.bottom_line`
says it in one sentence: the impressions team draft needs, and how many times as many the
most sensitive A/B metric that points the right way needs (metrics that point the wrong way
are marked and never "best"). A Monte Carlo check then runs
whole simulated experiments - sampled users, queries, coin flips and clicks - at sizes up
to twice the required one and reports the empirical power curve of both methods (the
"measured, not asserted" part; :meth:`SimulationResult.plot` draws it).

Users are heterogeneous: each has a logit shift of attractiveness drawn from
N(0, ``user_sd``²) (discretised exactly with Gauss-Hermite nodes) and issues
``impressions_per_user`` queries drawn uniformly. Set ``user_sd=0`` and
``impressions_per_user=1`` for independent, identical impressions. The rankers and the truth
come from :mod:`serpeval.online.simulation.world` (:func:`make_world`, :func:`synthetic_pair`).

**Signs**: one convention, as everywhere in serpeval: every effect is B − A, positive when
B (the candidate) is better on a higher-is-better metric. Interleaving's effect is
P(B wins) − P(A wins) per impression; an A/B metric's is its mean under B minus under A (for
abandonment, where lower is better, a negative effect favours B); the offline gap is
nDCG@k(B) − nDCG@k(A), relative to A: (B − A) / A.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import as_generator, check_count
from serpeval.core.errors import InputError, OptionError, require
from serpeval.core.options import check_rng, resolve
from serpeval.core.progress import Progress, progress_callback
from serpeval.core.tabular import Tabular
from serpeval.online.clicks import ClickModel
from serpeval.online.clicks import click_model as preset
from serpeval.online.simulation import sensitivity as engine
from serpeval.online.simulation.world import World, make_world, synthetic_pair

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import NDArray

    from serpeval.online.clicks import ClickModel

__all__ = ["SimulationOptions", "SimulationResult", "World", "make_world", "simulate", "synthetic_pair"]


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class MethodResult:
    """One method (interleaving, or an A/B metric): effect, required impressions, agreement.

    ``value_a``, ``value_b``: the metric per impression under A and B (interleaving: the share
    of impressions won by A and by B). ``effect``: B − A (interleaving: P(B wins) − P(A
    wins)). ``relative``: (B − A) / A of an A/B metric (None for interleaving, NaN when A's
    value is 0). ``agrees``: the sign of the true effect (oriented: lower abandonment is
    better) matches the offline nDCG difference; None when the method sees no difference at
    all. ``ratio``: impressions needed ÷ the impressions interleaving needs, with its
    bootstrap CI; it compares like with like only when both methods point the right way
    (:meth:`SimulationResult.best`).

    ``design``: ``all impressions`` (the classic analysis), ``triggered`` (only impressions
    whose two top-k lists differ enter the test) or ``ignore shared`` (team draft drafting
    shared picks on no team). A triggered row gives every value for the whole population,
    like the effect it tests: ``value_a``, ``value_b`` and ``effect`` per impression of all
    impressions (the triggered values x ``trigger_rate`` plus the untriggered pages, which
    are the same in both arms; for interleaving an untriggered impression is a tie), so
    ``value_b - value_a == effect`` and they equal the all-impressions row's; and its
    ``ratio`` is against team draft in the same design (triggered A/B / triggered team
    draft), never against the untriggered team draft.
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
    relative: float | None = None
    design: str = "all impressions"
    trigger_rate: float | None = None


@dataclass(frozen=True, eq=False)
class SimulationResult(Tabular):
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
        """Impressions an A/B test on ``metric`` needs per impression interleaving needs
        (whatever the signs; :meth:`best` picks among the metrics that point the right way)."""
        value = self[metric].ratio
        return float("nan") if value is None else value

    def best(self) -> MethodResult | None:
        """The A/B metric needing the fewest impressions among those whose true effect points
        the way the offline nDCG@k difference does (``agrees`` is True), in the classic design
        (all impressions, as team draft's headline number); None when none does.
        A metric that points the wrong way would detect a difference in the wrong direction:
        it is never the best, however few impressions it needs."""
        right = [m for m in self.methods if m.method == "A/B" and m.design == "all impressions"
                 and m.agrees is True and np.isfinite(m.required)]
        return min(right, key=lambda m: m.required, default=None)

    def bottom_line(self) -> str:
        """One sentence: team draft needs N impressions; the best A/B metric that points the
        right way (M) needs K (R x as many, with the bootstrap CI of the ratio); metrics that
        point the wrong way named as such."""
        il, best = self["interleaving"], self.best()
        conf = f"{self.settings['confidence']:.0%}"
        k = self.world.k
        a, b = self.world.names
        head = f"{self.click_model} users: "
        if il.agrees is None:
            text = "team draft sees no difference between A and B"
        else:
            text = f"team draft needs {count_text(il.required)} impressions"
            if il.agrees is False:
                winner = a if il.effect < 0 else b
                text += f" but points the wrong way (it prefers {winner}, nDCG@{k} the other)"
        if self.offline["delta"] == 0:
            return (head + text + f"; A and B have the same nDCG@{k}, so no A/B metric has a right "
                    "way to point.")
        if best is None:
            text += "; no A/B metric points the right way"
        else:
            text += (f"; the best A/B metric that points the right way ({best.metric}) needs "
                     f"{count_text(best.required)}")
            if il.agrees is True and best.ratio is not None and np.isfinite(best.ratio):
                text += (f" ({ratio_text(best.ratio)}x as many, {conf} CI "
                         f"[{ratio_text(best.ratio_low)}, {ratio_text(best.ratio_high)}])")
        wrong = [m.metric for m in self.methods if m.method == "A/B" and m.design == "all impressions"
                 and m.agrees is False]
        if wrong:
            names = wrong[0] if len(wrong) == 1 else f"{', '.join(wrong[:-1])} and {wrong[-1]}"
            text += f"; {names} {'points' if len(wrong) == 1 else 'point'} the wrong way"
        return head + text + "."

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per method, numbers as numbers (JSON, CSV): impressions as whole numbers
        (rounded up; ``inf`` when unreachable, which strict JSON writes as null with a
        ``null_reasons`` entry), CIs as two fields each. ``ratio to interleaving`` and its CI
        are given only where both the metric and interleaving point the way nDCG@k does
        (None otherwise: a ratio against a wrong-sign method compares nothing).
        :func:`serpeval.report.simulation.display_rows` formats them for reading."""
        rows = []
        team_draft = {m.design: m for m in self.methods if m.method == "interleaving"}
        for m in self.methods:
            partner = team_draft.get(m.design)  # the ratio's denominator: team draft, same design
            comparable = m.method == "A/B" and m.agrees is True and partner is not None and partner.agrees is True
            rows.append({
                "method": m.method, "metric": m.metric,
                "A": m.value_a, "B": m.value_b, "effect (B-A)": m.effect,
                "relative (B-A)/A": m.relative,
                f"agrees with nDCG@{self.world.k}": _agreement(m.agrees),
                "impressions needed": whole(m.required),
                "needed CI low": whole(m.required_low),
                "needed CI high": whole(m.required_high),
                "ratio to interleaving": m.ratio if comparable else None,
                "ratio CI low": m.ratio_low if comparable else None,
                "ratio CI high": m.ratio_high if comparable else None,
                "Monte Carlo": None if m.mc_required is None else whole(m.mc_required),
            })
        return rows

    def notes(self) -> list[str]:
        s, w = self.settings, self.world
        off = self.offline
        conf = f"{s['confidence']:.0%}"
        lines = [
            f"click model: {self.click_model}; truth: {w.truth} ({w.levels} levels); "
            f"{len(w.query_ids)} queries; top {w.k}; interleaving: team draft"
            + (" (shared picks ignored)" if s["ignore_shared"] else ""),
            f"users: {s['impressions_per_user']} impressions each, attractiveness logit shift "
            f"sd {s['user_sd']}; tests two-sided at alpha {s['alpha']}, power {s['power']}",
            f"offline nDCG@{w.k}: A = {w.names[0]} {off['ndcg_a']:.4f}, B = {w.names[1]} "
            f"{off['ndcg_b']:.4f} (B-A {off['delta']:+.4f}, {off['relative']:+.2%} relative to A)",
            "effects are B - A (positive: B higher; lower abandonment is better); interleaving "
            "row: A and B = share of impressions won by A and by B; A/B rows: the metric per "
            "impression in each arm",
            f"impressions needed: exact click-model expectations; {conf} CIs: bootstrap over "
            f"queries ({s['bootstrap']} resamples); ratio to interleaving: only where both point "
            "the way nDCG does, each design against team draft in the same design (triggered A/B "
            "/ triggered team draft); triggered rows: values per impression of all impressions "
            "(untriggered pages are the same in both arms: a tie for team draft), so they equal "
            "the all-impressions rows; Monte Carlo: impressions at which simulated "
            f"experiments reached the power ({s['replicates_il']} / {s['replicates_ab']} "
            "replicates, '-' = beyond the simulated range)",
        ]
        if w.skipped:
            lines.append("skipped queries: " + ", ".join(f"{v} {k}" for k, v in w.skipped.items()))
        return lines

    def _sizes(self, points: int) -> NDArray[np.float64]:
        """``points`` log-spaced impressions from 10 to 3x the largest finite requirement."""
        finite = [m.required for m in self.methods if np.isfinite(m.required)]
        top = max(finite) * 3 if finite else 1e6
        return np.geomspace(10, max(top, 100), points)

    def power_curves(self, points: int = 40) -> list[dict[str, Any]]:
        """Power against impressions per method, as rows for plots (the HTML report).

        ``source="analytic"``: the normal-approximation curve at ``points`` log-spaced sizes
        from 10 to 3x the largest finite requirement (what :meth:`plot` draws as lines);
        ``source="monte carlo"``: the simulated experiments' power with Wilson CIs
        (``low``, ``high``).
        """
        xs = self._sizes(points)
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
        """Power vs impressions for both methods (analytic lines, Monte Carlo points).

        The image format follows the suffix of ``path`` (``.png``, ``.svg``, ``.pdf`` ... as
        matplotlib writes them); a path without one of those gets ``.png`` appended. Returns
        the path written.
        """

        require("matplotlib", "plot")
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        xs = self._sizes(200)
        colors = {"interleaving": "C0", "CTR": "C1", "abandonment": "C2", "clicks@1": "C3"}
        for m in self.methods:
            label = "interleaving (team draft)" if m.metric == "interleaving" else (
                f"team draft ({m.design})" if m.method == "interleaving" else f"A/B: {m.metric}")
            power = engine.analytic_power(xs, m.required, self.analytic["z_alpha"],
                                          self.analytic["z_total"])
            ax.plot(xs, power, color=colors[m.metric.split(" (")[0]], label=label,
                    ls="-" if m.design == "all impressions" else (":" if m.design == "ignore shared" else "--"))
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
        from serpeval.io.outputs import atomic_path

        out = Path(path)
        image = out.suffix[1:].lower()
        if image not in fig.canvas.get_supported_filetypes():
            image = "png"
            if not (out.exists() and not out.is_file()):  # a device or a pipe is written as named
                out = out.with_name(out.name + ".png")
        try:
            with atomic_path(out) as temporary:  # a failure leaves no partial image
                fig.savefig(temporary, dpi=120, format=image)
        finally:
            plt.close(fig)
        return out


def _agreement(agrees: bool | None) -> str:
    return "no difference" if agrees is None else ("yes" if agrees else "NO: wrong sign")


def whole(value: float | None) -> int | float | None:
    """Impressions as a whole number (rounded up), ``inf`` when unreachable, None when absent."""
    if value is None:
        return None
    if not np.isfinite(value) or value > 1e15:
        return float("inf")
    return math.ceil(value - 1e-9)


def count_text(value: float | None) -> str:
    """Impressions: whole numbers rounded up, with thousands separators; inf when unreachable."""
    if value is None or not np.isfinite(value) or value > 1e15:
        return "inf"
    return f"{math.ceil(value - 1e-9):,}"


def ratio_text(value: float | None) -> str:
    """A ratio with 3 significant digits (``60.2``, ``0.027``), thousands separated from
    1,000, ``inf``; empty when absent or undefined (None, NaN)."""
    if value is None or np.isnan(value):
        return ""
    if not np.isfinite(value):
        return "inf"
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


# ------------------------------------------------------------------ the simulation


@dataclass(frozen=True)
class SimulationOptions:
    """The options of :func:`simulate`: the click model, the users, the tests and the checks.

    Every field is checked when the object is built (:class:`OptionError` naming the field);
    vary one with :func:`dataclasses.replace`. The old keywords of :func:`simulate`
    (``simulate(qrels, a, b, k=5)``) map onto these fields for one release.

    >>> from dataclasses import replace
    >>> o = SimulationOptions(click_model="informational", mc_impressions=0)
    >>> replace(o, k=5).k, o.alpha
    (5, 0.05)
    """

    click_model: str | ClickModel = "navigational"
    """A preset name (:func:`serpeval.online.clicks.click_model`) or a model whose items are
    grades ``0 .. levels - 1``."""

    k: int = 10
    """Results per impression (the top k of each ranker), >= 1."""

    impressions_per_user: int = 4
    """Queries each simulated user issues (uniformly drawn), >= 1."""

    user_sd: float = 1.0
    """Standard deviation (>= 0) of a user's logit shift of attractiveness; 0 with
    ``impressions_per_user=1`` gives independent, identical impressions."""

    stop_requires_click: bool | None = None
    """Stop rule of the grade-table users (None: the model's default)."""

    ignore_shared: bool = False
    """Team draft's shared-pick variant (a document both rankers put at the same place
    credits no team)."""

    alpha: float = 0.05
    """Two-sided level of the tests, in (0, 1)."""

    power: float = 0.8
    """The power to plan for, in (0, 1)."""

    confidence: float = 0.95
    """Level of the bootstrap intervals over queries, in (0, 1)."""

    bootstrap: int = 2000
    """Resamples of the bootstrap over queries, >= 1."""

    mc_impressions: int = 20_000_000
    """Impressions the Monte Carlo check may simulate in all, >= 0 (0: skip it)."""

    replicates: int = 200
    """At most this many simulated experiments per method in the Monte Carlo check, >= 1."""

    rng: int | np.random.Generator | None = None
    """Seed or Generator of the bootstrap and the Monte Carlo check (never global state)."""

    def __post_init__(self) -> None:
        if not isinstance(self.click_model, (str, ClickModel)):
            raise OptionError(f"click_model must be a preset name or a ClickModel; got {self.click_model!r}.")
        check_count(self.k, "k")
        if self.stop_requires_click is not None and not isinstance(self.stop_requires_click, bool):
            raise OptionError(f"stop_requires_click must be True, False or None; got {self.stop_requires_click!r}.")
        for value, what in ((self.alpha, "alpha"), (self.power, "power"), (self.confidence, "confidence")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
                raise OptionError(f"{what} must be strictly between 0 and 1; got {value!r}.")
        if isinstance(self.user_sd, bool) or not isinstance(self.user_sd, (int, float)) or not self.user_sd >= 0:
            raise OptionError(f"user_sd must be >= 0; got {self.user_sd!r}.")
        check_count(self.impressions_per_user, "impressions_per_user")
        check_count(self.bootstrap, "bootstrap")
        check_count(self.replicates, "replicates")
        if isinstance(self.mc_impressions, bool) or not isinstance(self.mc_impressions, int) \
                or self.mc_impressions < 0:
            raise OptionError(f"mc_impressions must be an integer >= 0; got {self.mc_impressions!r}.")
        check_rng(self.rng)


def simulate(qrels: Any = None, run_a: Any = None, run_b: Any = None, options: SimulationOptions | None = None,
             *, world: World | None = None, truth: Mapping[str, Mapping[str, int]] | None = None,
             progress: Progress | bool | None = None, **keywords: Any) -> SimulationResult:
    """Measure how many impressions interleaving and A/B tests need (module docstring).

    Args:
        qrels, run_a, run_b: judgments (the users' truth) and the two rankers, A the
            baseline and B the candidate (effects are B - A); or ``world``.
        options: a :class:`SimulationOptions` (click model, k, the user population, the
            tests' alpha and power, the bootstrap and the Monte Carlo check, rng); default
            ``SimulationOptions()``.
        world: a prepared :class:`World` instead of qrels and runs (``options.k`` is then
            the world's).
        truth: true grades ``{qid: {doc: grade}}`` overriding the judgments for the users.
        progress: a callback ``progress(done, total)`` over the simulated experiments
            (:mod:`serpeval.core.progress`; the command line draws it as a bar), or None.
        keywords: the options' fields as keywords (``k=5``), kept for one release; one that
            conflicts with ``options`` is a :class:`TypeError`
            (:func:`serpeval.core.options.resolve`).
    """
    from scipy.special import ndtri

    o = resolve(SimulationOptions, options, keywords, "simulate")
    click_model, k, user_sd, stop_requires_click, ignore_shared = (
        o.click_model, o.k, o.user_sd, o.stop_requires_click, o.ignore_shared)
    alpha, power, confidence, bootstrap, mc_impressions, replicates, rng = (
        o.alpha, o.power, o.confidence, o.bootstrap, o.mc_impressions, o.replicates, o.rng)
    per_user = int(o.impressions_per_user)
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
    generator = as_generator(rng)
    z_alpha, z_beta = float(ndtri(1 - alpha / 2)), float(ndtri(power))
    z = z_alpha + z_beta

    tables = engine.build_tables(model, world.a, world.b, world.grades, float(user_sd), ignore_shared)
    moments = engine.exact_moments(tables)
    n_q = len(world.query_ids)
    uniform = np.full(n_q, 1.0 / n_q)
    boot = generator.multinomial(n_q, uniform, size=bootstrap) / n_q
    delta_ndcg = float(world.ndcg_b.mean() - world.ndcg_a.mean())  # B - A
    offline_sign = np.sign(delta_ndcg)
    q = ((1 - confidence) / 2, (1 + confidence) / 2)

    def sizes(metric: str) -> tuple[float, float, NDArray[np.float64]]:
        """Impressions needed, the effect B - A, and the bootstrap-over-queries impressions."""
        n, effect = engine.required_impressions(moments, metric, uniform, tables.type_weights, per_user, z)
        n_boot, _ = engine.required_impressions(moments, metric, boot, tables.type_weights, per_user, z)
        return float(n), -float(effect) + 0.0, n_boot  # the engine's effects are A - B

    n_il, effect_il, boot_il = sizes("interleaving")
    il = moments["interleaving"]  # E[o] and E[o²] = P(win) - P(loss) and P(win) + P(loss)
    assert isinstance(il, engine.OutcomeMoments)  # exact_moments' layout: one OutcomeMoments for interleaving
    il_wins = float(((il.square + il.mean) / 2).mean(axis=0) @ tables.type_weights)
    il_losses = float(((il.square - il.mean) / 2).mean(axis=0) @ tables.type_weights)
    results = [MethodResult(
        "interleaving", "interleaving", il_wins, il_losses, effect_il, n_il,
        *_quantiles(boot_il, q),
        agrees=_agrees(effect_il, 1, offline_sign),
    )]
    for metric in engine.AB_METRICS:
        n_ab, effect, boot_ab = sizes(metric)
        arms = moments[metric]
        assert isinstance(arms, tuple)  # exact_moments' layout: (arm A, arm B) per A/B metric
        ma, mb = arms
        value_a = float(ma.mean.mean(axis=0) @ tables.type_weights)
        value_b = float(mb.mean.mean(axis=0) @ tables.type_weights)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio_low, ratio_high = _quantiles(boot_ab / boot_il, q)
        orient = engine.ORIENTATION[metric]
        results.append(MethodResult(
            "A/B", metric, value_a, value_b, effect, n_ab, *_quantiles(boot_ab, q),
            agrees=_agrees(effect, orient, offline_sign),
            ratio=n_ab / n_il if np.isfinite(n_il) and n_il > 0 else float("nan"),
            ratio_low=ratio_low, ratio_high=ratio_high,
            relative=(value_b - value_a) / value_a if value_a else float("nan"),
        ))

    curves: dict[str, engine.PowerCurve] = {}
    reps = {"il": 0, "ab": 0}
    if mc_impressions > 0:
        curves, reps = _monte_carlo(tables.for_sampling(), results, per_user, alpha, power, replicates,
                                    mc_impressions, generator, progress)
        results = [_with_mc(m, curves.get(m.metric), power) for m in results]
    results += _designs(model, world, tables, moments, boot, per_user, float(user_sd), ignore_shared,
                        z, q, offline_sign)
    offline = {"ndcg_a": float(world.ndcg_a.mean()), "ndcg_b": float(world.ndcg_b.mean()),
               "delta": delta_ndcg,  # B - A, and relative to A: (B - A) / A
               "relative": delta_ndcg / float(world.ndcg_a.mean()) if world.ndcg_a.mean() else float("nan")}
    settings = {"k": world.k, "impressions_per_user": per_user, "user_sd": float(user_sd),
                "alpha": alpha, "power": power, "confidence": confidence, "bootstrap": bootstrap,
                "ignore_shared": ignore_shared, "mc_impressions": mc_impressions,
                "replicates_il": reps["il"], "replicates_ab": reps["ab"],
                "user_types": tables.n_types}
    return SimulationResult(world, model.name, settings, offline, tuple(results), curves,
                            {"z_alpha": z_alpha, "z_total": z})


def _designs(model: ClickModel, world: World, tables: engine.Tables, moments: dict[str, Any],
             boot: NDArray[np.float64], per_user: int, user_sd: float, ignore_shared: bool, z: float,
             q: tuple[float, float], offline_sign: float) -> list[MethodResult]:
    """The variance-reducing designs as extra rows (see :class:`MethodResult`).

    Triggered: every query whose two top-k lists are identical contributes nothing to a
    user's total (its moments are set to zero), so the tests see only triggered impressions
    while the impressions are still counted in all. The required impressions are therefore
    totals, the effect per impression of the population (triggered effect x trigger rate).
    Interleaving tests the users' summed outcomes (zero in expectation on untriggered
    impressions, so dropping them removes only noise); A/B tests the ratio over triggered
    impressions (:func:`~serpeval.online.simulation.sensitivity.required_triggered_ab`), since a
    user's number of triggered impressions is random. Each row's values are per impression
    of all impressions (like its effect), and a triggered A/B row's ratio is against the
    triggered team draft row.
    Ignore shared: the team draft tables drafted again with shared picks on no team.
    """
    n_q = len(world.query_ids)
    uniform = np.full(n_q, 1.0 / n_q)
    triggered = (world.a != world.b).any(axis=1)
    rate = float(triggered.mean())
    mask = triggered.astype(np.float64)[:, None]

    def masked(m: engine.OutcomeMoments) -> engine.OutcomeMoments:
        return engine.OutcomeMoments(m.mean * mask, m.square * mask)

    def population(values: NDArray[np.float64]) -> float:
        """Per impression of all impressions (queries weighted alike, as the effect)."""
        return float(values.mean(axis=0) @ tables.type_weights)

    def sizes(table: dict[str, Any], metric: str) -> tuple[float, float, NDArray[np.float64]]:
        """Impressions needed, the effect B - A, and the bootstrap-over-queries impressions."""
        n, effect = engine.required_impressions(table, metric, uniform, tables.type_weights, per_user, z)
        n_boot, _ = engine.required_impressions(table, metric, boot, tables.type_weights, per_user, z)
        return float(n), -float(effect) + 0.0, n_boot  # the engine's effects are A - B

    rows = []
    il = masked(moments["interleaving"])  # an untriggered impression counts as a tie
    n_il, effect, boot_il = sizes({"interleaving": il}, "interleaving")
    rows.append(MethodResult("interleaving", "interleaving (triggered)", population((il.square + il.mean) / 2),
                             population((il.square - il.mean) / 2), effect, n_il,
                             *_quantiles(boot_il, q), agrees=_agrees(effect, 1, offline_sign),
                             design="triggered", trigger_rate=rate))
    if not ignore_shared:
        shared = engine.build_tables(model, world.a, world.b, world.grades, user_sd, True)
        plain = engine.exact_moments(shared)
        n, effect, n_boot = sizes(plain, "interleaving")
        m = plain["interleaving"]
        assert isinstance(m, engine.OutcomeMoments)
        rows.append(MethodResult(
            "interleaving", "interleaving (ignore shared)",
            float(((m.square + m.mean) / 2).mean(axis=0) @ tables.type_weights),
            float(((m.square - m.mean) / 2).mean(axis=0) @ tables.type_weights), effect, n,
            *_quantiles(n_boot, q), agrees=_agrees(effect, 1, offline_sign), design="ignore shared"))
    for metric in engine.AB_METRICS:
        ma, mb = moments[metric]
        n_all, e_all = engine.required_triggered_ab(moments, metric, triggered, uniform, tables.type_weights,
                                                    per_user, z)
        n, effect = float(n_all), -float(e_all) + 0.0  # the engine's effects are A - B
        n_boot, _ = engine.required_triggered_ab(moments, metric, triggered, boot, tables.type_weights,
                                                 per_user, z)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio_low, ratio_high = _quantiles(n_boot / boot_il, q)
        value_a, value_b = population(ma.mean), population(mb.mean)
        rows.append(MethodResult(
            "A/B", f"{metric} (triggered)", value_a, value_b, effect, n,
            *_quantiles(n_boot, q), agrees=_agrees(effect, engine.ORIENTATION[metric], offline_sign),
            ratio=n / n_il if np.isfinite(n_il) and n_il > 0 else float("nan"),
            ratio_low=ratio_low, ratio_high=ratio_high, design="triggered", trigger_rate=rate,
            relative=(value_b - value_a) / value_a if value_a else float("nan")))
    return rows


def _monte_carlo(tables: engine.Tables, results: list[MethodResult], per_user: int, alpha: float,
                 power: float, replicates: int, budget: int, rng: np.random.Generator,
                 progress: Progress | bool | None) -> tuple[dict[str, engine.PowerCurve], dict[str, int]]:
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
    report = progress_callback(progress)
    total = sum(p[0] for p in plans.values())
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        report(done, total)

    def finish() -> None:
        return None

    curves: dict[str, engine.PowerCurve] = {}
    try:
        if "il" in plans:
            reps, users, grid, arms = plans["il"]
            # the engine tests A - B: its true direction is the opposite sign of effect B - A
            hits = engine.simulate_interleaving(tables, users, per_user, grid, -int(np.sign(il.effect)),
                                                alpha, reps, rng, tick)
            curves["interleaving"] = engine.power_curve(hits, grid * per_user * arms, reps)
        if "ab" in plans:
            reps, users, grid, arms = plans["ab"]
            directions = {m.metric: -int(np.sign(m.effect)) or 1 for m in ab}
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


def _quantiles(values: NDArray[np.float64], levels: tuple[float, float]) -> tuple[float, float]:
    """Order-statistic quantiles that tolerate infinities (no interpolation between them).

    A bootstrap resample whose effect vanishes needs infinitely many impressions; it sorts
    last instead of turning the interpolation into NaN. NaN (0 / 0) counts as infinite.
    """
    ordered = np.sort(np.where(np.isnan(values), np.inf, values))
    n = len(ordered)
    def at(level: float) -> float:
        return float(ordered[min(n - 1, max(0, math.ceil(level * n) - 1))])

    return at(levels[0]), at(levels[1])


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
    return replace(m, mc_required=value)


