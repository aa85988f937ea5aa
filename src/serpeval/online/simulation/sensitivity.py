"""The engines behind :mod:`serpeval.online.simulation.simulator`: exact expectations and Monte Carlo.

Everything is tabulated once per (query, interleaved list or arm, user type) and then used
by table look-ups, so neither engine loops over queries or impressions in Python.

**Users.** A user has a type t with weight w_t: a logit shift z_t of every attractiveness
(Gauss-Hermite nodes of a normal with standard deviation ``user_sd``, so the mixture is
exact). She issues ``m`` impressions, each for a query drawn uniformly at random.

**Per-impression quantities.** Interleaving outcome o in {-1, 0, 1}; A/B: clicks per
impression (CTR), abandonment 1{no click}, clicks@1 1{click at rank 1}.

**Exact moments.** With ``E[X | q, t]`` and ``E[X^2 | q, t]`` from the click model's exact
distributions (:func:`~serpeval.online.clicks.kernel.sum_distribution`; team draft's
lists enumerated over all coin sequences), a user's total ``S`` over m impressions has

    E[S] = m Σ_t w_t μ_t,  Var S = m Σ_t w_t v_t + m² (Σ_t w_t μ_t² - (Σ_t w_t μ_t)²)

with ``μ_t = mean_q E[X|q,t]`` and ``v_t = mean_q E[X²|q,t] - μ_t²``.

**Required impressions** at two-sided level α and power 1-β, ``z = z_{1-α/2} + z_{1-β}``:
interleaving (one-sample test of E[S] = 0 over users) ``N = m z² Var S / E[S]²``; A/B (two
independent arms of users) ``N = 2 m z² (Var S_A + Var S_B) / (E S_A - E S_B)²``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.online.clicks import kernel
from serpeval.online.interleaving.batch import interleave_batch

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.online.clicks import ClickModel

AB_METRICS: tuple[str, ...] = ("CTR", "abandonment", "clicks@1")
#: Per-impression effects smaller than this are rounding error of the exact sums: no effect.
NO_EFFECT = 1e-12
#: +1 when a higher value means a better ranker, -1 when lower is better.
ORIENTATION: dict[str, int] = {"CTR": 1, "abandonment": -1, "clicks@1": 1}


@dataclass(frozen=True, eq=False)
class Tables:
    """Everything both engines need, per (row, type); rows are lists (IL) or queries (A/B).

    Interleaving: ``il_cells`` = slot-major (c, sc, sn) of shape ``[k, Q * L * T]`` for
    query q, coin sequence l, type t at column ``(q * L + l) * T + t``; ``il_weight``
    ``[k, Q * L]``: +1 (A's document), -1 (B's), 0 (shared or empty). A/B: ``ab_cells[arm]``
    of shape ``[k, Q * T]`` at column ``q * T + t``. The exact engine reads these float64
    tables; the Monte Carlo engine reads float32 copies (:meth:`for_sampling`), which halve
    the memory traffic of the per-impression look-ups.
    """

    n_queries: int
    n_lists: int
    shifts: NDArray[np.float64]
    type_weights: NDArray[np.float64]
    il_cells: kernel.Cells
    il_weight: NDArray[np.int64]
    ab_cells: tuple[kernel.Cells, kernel.Cells]

    @property
    def n_types(self) -> int:
        return len(self.shifts)

    def for_sampling(self) -> Tables:
        """The same tables in float32 (cells) and int8 (weights) for the Monte Carlo engine."""
        def small(cells: tuple[NDArray[np.float64], ...]) -> tuple[NDArray[np.float32], ...]:
            return tuple(x.astype(np.float32) for x in cells)

        return Tables(self.n_queries, self.n_lists, self.shifts, self.type_weights,
                      small(self.il_cells), self.il_weight.astype(np.int8),  # type: ignore[arg-type]
                      (small(self.ab_cells[0]), small(self.ab_cells[1])))  # type: ignore[arg-type]


def user_types(user_sd: float, n_types: int = 7) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Logit shifts and weights of a discretised N(0, user_sd²) (Gauss-Hermite nodes)."""
    if user_sd == 0:
        return np.zeros(1), np.ones(1)
    nodes, weights = np.polynomial.hermite.hermgauss(n_types)
    return np.sqrt(2.0) * user_sd * nodes, weights / np.sqrt(np.pi)


def build_tables(model: ClickModel, a: NDArray[np.int64], b: NDArray[np.int64],
                 grades: NDArray[np.int64], user_sd: float, ignore_shared: bool) -> Tables:
    """Tabulate cells for every team draft list and both arms, for every user type.

    ``a``, ``b``: ``[Q, k]`` local document codes (-1 = no document); ``grades[Q, D]`` the
    true grade of each local code.
    """
    n_q, k = a.shape
    shifts, type_weights = user_types(user_sd)
    n_coins = (k + 1) // 2
    coins = np.array(list(itertools.product([True, False], repeat=n_coins)))
    n_l = len(coins)
    batch = interleave_batch(np.repeat(a, n_l, axis=0), np.repeat(b, n_l, axis=0), k=k,
                             coins=np.tile(coins, (n_q, 1)), ignore_shared=ignore_shared)
    list_grades = _grades_of(np.repeat(grades, n_l, axis=0), batch.docs)
    weight = np.where(batch.teams == 0, 1, np.where(batch.teams == 1, -1, 0))
    il_cells = _cells(model, list_grades, shifts)
    ab_cells = (_cells(model, _grades_of(grades, a), shifts), _cells(model, _grades_of(grades, b), shifts))
    return Tables(n_q, n_l, shifts, type_weights, il_cells,
                  np.ascontiguousarray(weight.T), ab_cells)


def _grades_of(grades: NDArray[np.int64], docs: NDArray[np.int64]) -> NDArray[np.int64]:
    """Grade of every shown local code (-1 where nothing is shown)."""
    out = np.take_along_axis(grades, np.maximum(docs, 0), axis=1)
    return np.where(docs >= 0, out, -1)


def _cells(model: ClickModel, items: NDArray[np.int64], shifts: NDArray[np.float64]) -> kernel.Cells:
    """Slot-major cells for every row x type: column ``row * T + t``."""
    n_t = len(shifts)
    expanded = np.repeat(np.ascontiguousarray(items.T), n_t, axis=1)  # [k, rows * T]
    shift = np.tile(shifts, items.shape[0])
    c, sc, sn = model.cells(expanded, shift)
    return np.ascontiguousarray(c), np.ascontiguousarray(sc), np.ascontiguousarray(sn)


# ------------------------------------------------------------------ exact moments


@dataclass(frozen=True, eq=False)
class OutcomeMoments:
    """``E[X | q, t]`` and ``E[X² | q, t]`` (``[Q, T]``) of one per-impression quantity."""

    mean: NDArray[np.float64]
    square: NDArray[np.float64]


def exact_moments(tables: Tables) -> dict[str, OutcomeMoments | tuple[OutcomeMoments, OutcomeMoments]]:
    """Interleaving outcome moments and, per arm, the three A/B metrics' moments."""
    n_q, n_l, n_t = tables.n_queries, tables.n_lists, tables.n_types
    k = tables.il_weight.shape[0]
    weight = np.repeat(tables.il_weight, n_t, axis=1)
    dist = kernel.sum_distribution(*tables.il_cells, weight)  # [(q, l, t), 2k + 1]
    win = dist[:, k + 1:].sum(axis=1).reshape(n_q, n_l, n_t).mean(axis=1)
    loss = dist[:, :k].sum(axis=1).reshape(n_q, n_l, n_t).mean(axis=1)
    out: dict[str, OutcomeMoments | tuple[OutcomeMoments, OutcomeMoments]] = {
        "interleaving": OutcomeMoments(win - loss, win + loss)}
    per_arm = []
    for cells in tables.ab_cells:
        counts = kernel.sum_distribution(*cells, np.ones(cells[0].shape, dtype=np.int64))[:, k:]
        j = np.arange(k + 1)
        ctr = OutcomeMoments((counts @ j).reshape(n_q, n_t), (counts @ j**2).reshape(n_q, n_t))
        none = counts[:, 0].reshape(n_q, n_t)
        first = cells[0][0].reshape(n_q, n_t)  # P(C_1) = c_1: rank 1 is always examined
        per_arm.append({"CTR": ctr, "abandonment": OutcomeMoments(none, none),
                        "clicks@1": OutcomeMoments(first, first)})
    for metric in AB_METRICS:
        out[metric] = (per_arm[0][metric], per_arm[1][metric])
    return out


def user_moments(m: OutcomeMoments, query_weights: NDArray[np.float64], type_weights: NDArray[np.float64],
                 per_user: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """E[S] and Var S of a user's total over ``per_user`` impressions.

    ``query_weights``: ``[Q]`` or ``[B, Q]`` (rows sum to 1; a bootstrap over queries).
    """
    mu = query_weights @ m.mean  # [..., T]
    v = query_weights @ m.square - mu**2
    mean = mu @ type_weights
    between = (mu**2) @ type_weights - mean**2
    return per_user * mean, per_user * (v @ type_weights) + per_user**2 * between


def required_impressions(moments: dict, metric: str, query_weights: NDArray[np.float64],
                         type_weights: NDArray[np.float64], per_user: int,
                         z: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(impressions needed, effect) for interleaving or one A/B metric (formulas above).

    The effect is E[S] per impression for interleaving (E[o]), and the per-impression
    difference A - B of the metric's mean for A/B.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric == "interleaving":
            e, v = user_moments(moments[metric], query_weights, type_weights, per_user)
            n = per_user * z**2 * v / e**2
        else:
            (ma, mb) = moments[metric]
            ea, va = user_moments(ma, query_weights, type_weights, per_user)
            eb, vb = user_moments(mb, query_weights, type_weights, per_user)
            e = ea - eb
            n = 2 * per_user * z**2 * (va + vb) / e**2
    # Differences within rounding of the exact sums are no difference at all.
    none = np.abs(e) <= NO_EFFECT * per_user
    return np.where(none, np.inf, n), np.where(none, 0.0, e / per_user)


def required_triggered_ab(moments: dict, metric: str, triggered: NDArray[np.bool_],
                          query_weights: NDArray[np.float64], type_weights: NDArray[np.float64],
                          per_user: int, z: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(impressions needed, effect) of a *triggered* A/B test on ``metric``.

    Only impressions of triggered queries enter, and a user's count of them is random, so
    the test is the ratio one the log analysis runs (delta method, clustered by user): per
    arm ``R = Σ_u S'_u / Σ_u N'_u`` over triggered impressions, linearised as
    ``D = S' - R N'``. With per-impression ``d = X 1{trig} - R 1{trig}``, whose moments per
    (q, t) are ``1{trig_q} (E[X|q,t] - R)`` and ``1{trig_q} (E[X²|q,t] - 2R E[X|q,t] + R²)``,
    ``Var D`` follows from :func:`user_moments` (E[D] = 0 at the population R) and

        N = 2 m z² (Var D_A + Var D_B) / (E S'_A - E S'_B)²,

    the formula of :func:`required_impressions` with Var S replaced by Var D. The effect,
    ``(E S'_A - E S'_B) / m``, is per impression of the whole population: the triggered
    effect times the trigger rate, equal to the untriggered effect.
    """
    mask = triggered.astype(np.float64)
    share = query_weights @ mask  # [...]: the trigger rate under these query weights
    totals, variances = [], []
    for m in moments[metric]:
        mean, square = m.mean * mask[:, None], m.square * mask[:, None]
        mu = query_weights @ mean  # [..., T]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (mu @ type_weights) / share  # [...]
        r = np.asarray(ratio)[..., None]
        d_mean = mu - r * np.asarray(share)[..., None]
        d_square = query_weights @ square - 2 * r * mu + r**2 * np.asarray(share)[..., None]
        between = (d_mean**2) @ type_weights - (d_mean @ type_weights) ** 2
        variances.append(per_user * ((d_square - d_mean**2) @ type_weights) + per_user**2 * between)
        totals.append(per_user * (mu @ type_weights))
    e = totals[0] - totals[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        n = 2 * per_user * z**2 * (variances[0] + variances[1]) / e**2
    none = (np.abs(e) <= NO_EFFECT * per_user) | ~np.isfinite(n)
    return np.where(none, np.inf, n), np.where(none, 0.0, e / per_user)


# ------------------------------------------------------------------ Monte Carlo


@dataclass(frozen=True)
class PowerCurve:
    """Monte Carlo power at each total number of impressions (``grid``), with Wilson CIs."""

    grid: NDArray[np.int64]
    power: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    replicates: int


def _wilson(hits: NDArray[np.float64], n: int, z: float = 1.96) -> tuple[NDArray[np.float64], ...]:
    p = hits / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return p, np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def _t_crit(df: NDArray[np.floating[Any]], alpha: float) -> NDArray[np.float64]:
    """Two-sided critical value of Student's t (scipy.special, lighter than scipy.stats)."""
    from scipy.special import stdtrit

    return stdtrit(np.maximum(df, 1), 1 - alpha / 2)


def _gather(cells: kernel.Cells, cols: NDArray[np.int64]) -> kernel.Cells:
    c, sc, sn = cells
    return c[:, cols], sc[:, cols], sn[:, cols]


def simulate_interleaving(tables: Tables, users: int, per_user: int, grid_users: NDArray[np.int64],
                          direction: int, alpha: float, replicates: int, rng: np.random.Generator,
                          tick: Callable[[], None]) -> NDArray[np.float64]:
    """Rejections (in the true direction) of a one-sample t-test on users' outcome totals,
    at every prefix size in ``grid_users``; summed over replicates."""
    hits = np.zeros(len(grid_users))
    n_t, n_l = tables.n_types, tables.n_lists
    for _ in range(replicates):
        totals = np.empty(users)
        for start, stop in _chunks(users, per_user):
            u = stop - start
            types = rng.choice(n_t, size=u, p=tables.type_weights)
            n = u * per_user
            lists = rng.integers(0, tables.n_queries, size=n) * n_l + rng.integers(0, n_l, size=n)
            cols = lists * n_t + np.repeat(types, per_user)
            clicks = kernel.sample_clicks(*_gather(tables.il_cells, cols), rng)
            outcome = np.sign((clicks * tables.il_weight[:, lists]).sum(axis=0, dtype=np.int8))
            totals[start:stop] = outcome.reshape(u, per_user).sum(axis=1)
        t = _prefix_t(totals, grid_users)
        hits += (np.nan_to_num(t * direction) > _t_crit(grid_users - 1.0, alpha))
        tick()
    return hits


def simulate_ab(tables: Tables, users: int, per_user: int, grid_users: NDArray[np.int64],
                directions: dict[str, int], alpha: float, replicates: int, rng: np.random.Generator,
                tick: Callable[[], None]) -> dict[str, NDArray[np.float64]]:
    """Rejections (in the true direction) of Welch's t-test between the arms' per-user
    totals, per A/B metric, at every per-arm prefix size in ``grid_users``."""
    hits = {metric: np.zeros(len(grid_users)) for metric in AB_METRICS}
    n_t = tables.n_types
    for _ in range(replicates):
        arm_totals: list[dict[str, NDArray[np.float64]]] = []
        for cells in tables.ab_cells:
            totals = {metric: np.empty(users) for metric in AB_METRICS}
            for start, stop in _chunks(users, per_user):
                u = stop - start
                types = rng.choice(n_t, size=u, p=tables.type_weights)
                n = u * per_user
                cols = rng.integers(0, tables.n_queries, size=n) * n_t + np.repeat(types, per_user)
                clicks = kernel.sample_clicks(*_gather(cells, cols), rng)
                count = clicks.sum(axis=0)
                values = {"CTR": count, "abandonment": count == 0, "clicks@1": clicks[0]}
                for metric in AB_METRICS:
                    totals[metric][start:stop] = values[metric].reshape(u, per_user).sum(axis=1)
            arm_totals.append(totals)
        for metric in AB_METRICS:
            t, df = _prefix_welch(arm_totals[0][metric], arm_totals[1][metric], grid_users)
            hits[metric] += (np.nan_to_num(t * directions[metric]) > _t_crit(np.nan_to_num(df, nan=1.0), alpha))
        tick()
    return hits


def _prefix_moments(x: NDArray[np.float64], grid: NDArray[np.int64]) -> tuple[NDArray[np.float64], ...]:
    """Mean and sample variance (ddof 1) of the first ``n`` values of ``x``, for every n in ``grid``."""
    n = grid.astype(np.float64)
    mean = np.cumsum(x)[grid - 1] / n
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (np.cumsum(x**2)[grid - 1] - n * mean**2) / (n - 1)
    return mean, var


def _prefix_t(x: NDArray[np.float64], grid: NDArray[np.int64]) -> NDArray[np.float64]:
    """One-sample t statistic (H0: mean 0) of the first ``n`` values of ``x``, per n in ``grid``."""
    mean, var = _prefix_moments(x, grid)
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean / np.sqrt(var / grid)


def _prefix_welch(x: NDArray[np.float64], y: NDArray[np.float64],
                  grid: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Welch's t statistic and Welch-Satterthwaite df of the first ``n`` values of ``x``
    against the first ``n`` of ``y``, per n in ``grid``."""
    n = grid.astype(np.float64)
    (ma, va), (mb, vb) = _prefix_moments(x, grid), _prefix_moments(y, grid)
    with np.errstate(divide="ignore", invalid="ignore"):
        se2 = va / n + vb / n
        t = (ma - mb) / np.sqrt(se2)
        df = se2**2 / ((va / n) ** 2 / (n - 1) + (vb / n) ** 2 / (n - 1))
    return t, df


def _chunks(users: int, per_user: int, max_impressions: int = 1_000_000) -> list[tuple[int, int]]:
    step = max(1, max_impressions // per_user)
    return [(s, min(s + step, users)) for s in range(0, users, step)]


def power_curve(hits: NDArray[np.float64], grid_impressions: NDArray[np.int64],
                replicates: int) -> PowerCurve:
    power, low, high = _wilson(hits, replicates)
    return PowerCurve(grid_impressions, power, low, high, replicates)


def analytic_power(n_impressions: NDArray[np.float64], required: float, z_alpha: float,
                   z_total: float) -> NDArray[np.float64]:
    """Normal-approximation power at ``n_impressions`` for a design needing ``required``
    impressions for power Φ(z_total - z_alpha): the standardized effect grows as sqrt(n)."""
    from scipy.special import ndtr

    if not np.isfinite(required):
        return np.full(np.shape(n_impressions), np.nan)
    shift = z_total * np.sqrt(np.asarray(n_impressions, dtype=np.float64) / required)
    return ndtr(shift - z_alpha) + ndtr(-shift - z_alpha)
