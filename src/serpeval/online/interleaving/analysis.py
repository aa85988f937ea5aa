"""Deciding a winner from logged interleaving outcomes, checking the experiment, planning it.

**Sign convention** (one for the whole toolkit): ranker A is the baseline, ranker B the
candidate, and a positive number means B (the candidate) is better.

**Outcomes.** One per impression, with the label :func:`~serpeval.online.interleaving.credit`
gives it: +1 (A out-credits B), -1 (B out-credits A), 0 (tie) for team draft and balanced; a
real number for probabilistic (the marginalised outcome, in [-1, 1]) and optimized (the
credit difference), whose *mean* is the unbiased quantity (their sign is biased under random
clicks). Every statistic computed from them is oriented towards B.

* Chapelle et al.'s preference, oriented towards B:
  ``Δ = (wins_B + ties / 2) / N - 1/2 = (wins_B - wins_A) / (2 N)`` in [-1/2, 1/2];
  positive: users prefer B (Chapelle's Δ_AB is its negative). In general
  ``Δ = -mean(outcome) / 2``, the same number for ±1/0 outcomes.
* The exact two-sided binomial **sign test** of wins_B against wins_A (ties dropped),
  ``scipy.stats.binomtest(wins_B, wins_A + wins_B, 0.5)``, for ±1/0 outcomes; for real
  outcomes the one-sample **t-test** of mean(outcome) = 0 (as ``scipy.stats.ttest_1samp``).
  Both treat impressions as independent; when one user (or query) contributes many
  impressions use the bootstrap CI and the per-unit preference below, which respect the
  clustering.
* **Biased methods are refused**: outcomes of balanced interleaving (biased under random
  clicks, :data:`serpeval.online.interleaving.BIASED`) raise an :class:`OptionError` unless
  ``allow_biased=True``.
* A **bootstrap CI** for Δ that resamples *units* (users, or user-query pairs), not
  impressions: units are drawn with replacement and all their impressions come along
  (vectorized over resamples: multinomial draws over the distinct per-unit count patterns,
  or a matrix of drawn unit indices; see ``_bootstrap_delta``). :func:`analyze_counts`
  takes the per-unit counts directly (what a log analysis gets from its engine);
  :func:`analyze_outcomes` counts per-impression outcomes per unit first. Both give
  identical numbers for the same seed.
* **Per-unit preference** (Airbnb / GrowthBook "preference" analysis), each unit counted
  once. ±1/0 outcomes: a unit prefers B if its outcomes sum to less than zero (more B wins
  than A wins); the net share of units preferring B, ``(prefer_B - prefer_A) / units``, with
  a sign test over units (valid under random clicks: the coin that swaps A and B makes each
  unit's sum symmetric about zero). Real-valued outcomes: each unit's **mean outcome**
  ``m_u`` (the sign of a real outcome, or of a unit's sum, is biased under random clicks:
  with optimized interleaving and linear credit a sign test over users rejected 40-45% of
  null experiments at alpha 0.05, ``tests/online/interleaving/test_interleaving_null.py``);
  ``preference = -mean_u(m_u)`` (for probabilistic outcomes, in [-1, 1]: the net expected
  share of units preferring B) with the one-sample t-test of
  ``mean_u(m_u) = 0`` over units (each ``m_u`` has mean zero under random clicks); then
  ``prefer_a``/``prefer_b`` count units with ``m_u > 0``/``< 0`` as a description only, and
  so do ``wins_a``/``wins_b`` (impressions with outcome > 0 / < 0): neither is tested, and
  their difference is not an estimate of anything (:meth:`InterleavingAnalysis.to_dicts`
  labels them ``outcome > 0 (A)`` etc., not "wins").
* **Designs without an unbiased solution** (optimized interleaving: ``Outcome.bias`` >
  :data:`~serpeval.online.interleaving.optimized.BIAS_TOLERANCE`, a pair of rankings whose
  LP has no distribution that makes random clicks give zero expected credit): those
  impressions are left out of every statistic, per query (the bias is a property of the
  two rankings, not of the clicks, so leaving them out keeps the null a null), and counted
  (``biased_impressions``, the largest bias in ``max_bias``); ``allow_biased=True`` keeps
  them, still counted. Plain-number outcomes carry no bias and cannot be checked.

**Sanity checks** (the interleaving analogue of a sample-ratio check): first-pick balance
(A should pick first in half the impressions), per-position team balance (each position
belongs to A and B equally often; Holm-corrected binomial tests), the share of impressions
with a competitive (differently ranked) document, and an A/A or random-clicker check that a
method gives no preference when users ignore relevance, under uniform, position-biased and
cascade random clicks, and that no optimized design it drew is biased (balanced interleaving
fails it).

**Sample size** for a target preference: the sign test (as Chapelle, Joachims, Radlinski and
Yue, "Large-scale validation and analysis of interleaved search evaluation", ACM TOIS 30(1),
2012, use it for interleaving) in its normal approximation, the share of B's wins among n
non-tied impressions being about N(1/2, 1/(4n)) under the null and N(p, p(1 - p)/n) under
the alternative (:func:`serpeval.stats.power.sign_test_sample_size`). With p = P(B wins |
not a tie) and tie rate t (the test is two-sided: p and 1 - p need the same size),

    n_non_tied = ((z_{1-α/2} · 0.5 + z_{1-β} · sqrt(p (1 - p))) / (p - 0.5))²,
    n_total = n_non_tied / (1 - t);

p = 0.51, α = 0.05, power 0.8 gives about 19,600 non-tied impressions.

**Multileaving**: a preference matrix ``wins[i, j]`` = impressions where ranker i out-credits
ranker j, a sign test per pair (a t-test for probabilistic multileaving's real-valued
pairwise outcomes) and Holm's correction over the r(r-1)/2 pairs, with each pair's power and
the impressions it needs; :func:`recommend_multileaving` picks the method whose hardest pair
needs the fewest impressions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import as_generator, check_count, check_level
from serpeval.core.errors import InputError, OptionError, StatsError
from serpeval.core.tabular import Tabular
from serpeval.online.interleaving import BIASED, _draw, _method_module, canonical_method
from serpeval.online.interleaving._result import check_k, check_rankings
from serpeval.online.interleaving.optimized import BIAS_TOLERANCE
from serpeval.stats.multiplicity import holm
from serpeval.stats.one_sample import (
    cluster_bootstrap_ratio,
    is_sign,
    normal_power,
    sign_test,
    t_test_from_sums,
    zero_mean_test,
)
from serpeval.stats.power import sign_test_sample_size
from serpeval.stats.validation import confidence_label

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from serpeval.online.interleaving import Interleaving
    from serpeval.online.interleaving.batch import BatchInterleaving

__all__ = [
    "RANDOM_CLICKERS",
    "Check",
    "InterleavingAnalysis",
    "MultileaveAnalysis",
    "MultileaveRecommendation",
    "SampleSize",
    "aa_check",
    "analyze_counts",
    "analyze_outcomes",
    "preference_matrix",
    "random_clicks",
    "recommend_multileaving",
    "sample_size",
    "sanity_checks",
]


# ------------------------------------------------------------------ inputs


def whole_impressions(needed: Any) -> float:
    """A number of impressions needed, as shown: rounded up to whole impressions (the power
    solution is continuous); infinite (no preference) and NaN (not computed) kept."""
    needed = float(needed)
    return float(math.ceil(needed)) if math.isfinite(needed) else needed


def _outcomes(outcomes: Any) -> tuple[NDArray[np.float64], set[str], NDArray[np.float64]]:
    """Outcomes as ``float64[n]``, the methods named by Outcome objects/dicts (if any) and
    each impression's design bias (:attr:`Outcome.bias`; 0 for plain numbers).

    Accepts numbers (+1/0/-1, or the real outcomes of probabilistic and optimized
    interleaving) or :class:`~serpeval.online.interleaving.Outcome` objects or their dicts.
    """
    values = list(outcomes) if not isinstance(outcomes, np.ndarray) else outcomes
    methods: set[str] = set()
    biases: list[Any] | None = None
    if len(values) and not isinstance(values, np.ndarray):
        first = values[0]
        if hasattr(first, "outcome"):
            methods = {o.method for o in values if getattr(o, "method", None)}
            biases = [getattr(o, "bias", None) for o in values]
            values = [o.outcome for o in values]
        elif isinstance(first, dict):
            methods = {o["method"] for o in values if o.get("method")}
            biases = [o.get("bias") for o in values]
            values = [o["outcome"] for o in values]
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"outcomes must be a non-empty 1-D sequence of numbers (+1 A wins, -1 B wins, "
                         f"0 tie); got shape {arr.shape}.")
    if arr.dtype.kind not in "iuf" or not np.isfinite(arr).all():
        bad = next(v for v in values if isinstance(v, bool) or not isinstance(v, (int, float, np.number))
                   or not math.isfinite(v))
        raise InputError(f"outcomes must be finite numbers (+1 A wins, -1 B wins, 0 tie, or a "
                         f"method's real-valued outcome); found {bad!r}.")
    bias = np.zeros(arr.size) if biases is None else np.array([b or 0.0 for b in biases], dtype=np.float64)
    return arr.astype(np.float64), methods, bias


def _check_unbiased(methods: set[str], allow_biased: bool) -> None:
    """Refuse outcomes of a method that is biased under random clicks unless asked."""

    biased = sorted({canonical_method(m) for m in methods} & BIASED)
    if biased and not allow_biased:
        raise OptionError(
            f"{', '.join(biased)} interleaving is biased: users who click at random make one ranker "
            "win (Chapelle et al. 2012), so its preference cannot be read as a quality difference. "
            "Use team_draft, probabilistic or optimized, or pass allow_biased=True to analyse it anyway."
        )


def _units(units: ArrayLike | None, n: int) -> tuple[NDArray[np.int64], int]:
    """Integer codes of the randomisation units (one per impression; None: each impression)."""
    if units is None:
        return np.arange(n), n
    arr = np.asarray(units)
    if arr.shape != (n,):
        raise InputError(f"units must give one user/query id per outcome: {n} outcomes, "
                         f"{arr.shape[0] if arr.ndim else 0} units.")
    try:
        _, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:  # ids that cannot be sorted together (None among strings, str and int)
        kinds = sorted({type(u).__name__ for u in arr.tolist()})
        raise InputError(f"units must be ids of one kind (all strings or all numbers, no None); got "
                         f"{', '.join(kinds)} ({exc}).") from exc
    return codes.astype(np.int64), int(codes.max()) + 1


# ------------------------------------------------------------------ two rankers


@dataclass(frozen=True)
class InterleavingAnalysis(Tabular):
    """Who won an interleaving experiment, and how sure we are. A is the baseline, B the
    candidate; positive numbers favour B.

    Attributes:
        impressions, wins_a, wins_b, ties: counts (outcomes > 0: A won, < 0: B won, = 0).
        delta: Δ = -mean(outcome)/2 = (wins_B + ties/2)/N - 1/2 for ±1/0 outcomes
            (positive: B preferred).
        p_value: exact two-sided sign test of wins_B vs wins_A for ±1/0 outcomes, the
            one-sample t-test of mean(outcome) = 0 for real ones (impressions independent).
        ci_low, ci_high: percentile bootstrap CI of Δ resampling units.
        confidence: the CI's level.
        unit: what was resampled (``impression`` when no units were given).
        units: number of distinct units.
        prefer_a, prefer_b: units whose own wins favour A / B (the rest are indifferent).
        preference: (prefer_b - prefer_a) / units for ±1/0 outcomes (positive: more units
            prefer B); -mean over units of each unit's mean outcome for real ones.
        preference_p_value: sign test of prefer_b vs prefer_a (±1/0 outcomes); one-sample
            t-test of the units' mean outcomes (real ones).
        test: ``sign test`` or ``t-test`` (what ``p_value`` is).
        preference_test: ``sign test`` or ``t-test`` (what ``preference_p_value`` is).
        biased_impressions: impressions whose design has no unbiased solution (optimized
            interleaving, ``Outcome.bias`` above the tolerance); left out of every number
            above unless ``biased_included``.
        max_bias: the largest such bias (expected credit difference a random clicker gives
            at the worst cut-off, in the credit function's units; 0 when none).
        biased_included: True when ``allow_biased=True`` kept those impressions in.
    """

    impressions: int
    wins_a: int
    wins_b: int
    ties: int
    delta: float
    p_value: float
    ci_low: float
    ci_high: float
    confidence: float
    unit: str
    units: int
    prefer_a: int
    prefer_b: int
    preference: float
    preference_p_value: float
    test: str = "sign test"
    preference_test: str = "sign test"
    biased_impressions: int = 0
    max_bias: float = 0.0
    biased_included: bool = False

    @property
    def winner(self) -> str:
        """``B`` (the candidate), ``A`` (the baseline) or ``none``: the sign test at the CI's
        level and the CI of Δ agree (Δ > 0: B)."""
        alpha = 1.0 - self.confidence
        if self.p_value < alpha and self.ci_low > 0:
            return "B"
        if self.p_value < alpha and self.ci_high < 0:
            return "A"
        return "none"

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row for :func:`serpeval.report.table.render`; ``delta (B-A)`` and
        ``preference (B-A)`` are positive when B (the candidate) is preferred. For
        real-valued outcomes the sign counts are labelled as what they are (``outcome > 0
        (A)``, ``units mean > 0 (A)``...), not as wins; designs without an unbiased solution
        add ``biased impressions`` and ``max bias``."""
        real = self.test == "t-test"
        labels = (("outcome > 0 (A)", "outcome < 0 (B)", "outcome = 0", "units mean > 0 (A)",
                   "units mean < 0 (B)") if real else ("wins A", "wins B", "ties", "prefer A", "prefer B"))
        row = {
            "impressions": self.impressions, labels[0]: self.wins_a, labels[1]: self.wins_b,
            labels[2]: self.ties, "delta (B-A)": self.delta, f"p ({self.test})": self.p_value,
            f"CI {confidence_label(self.confidence)} low": self.ci_low,
            f"CI {confidence_label(self.confidence)} high": self.ci_high,
            "unit": self.unit, "units": self.units, labels[3]: self.prefer_a,
            labels[4]: self.prefer_b, "preference (B-A)": self.preference,
            "p (units)": self.preference_p_value, "winner": self.winner,
        }
        if real:
            row["units test"] = self.preference_test
        if self.biased_impressions:
            row["biased impressions"] = self.biased_impressions
            row["max bias"] = self.max_bias
            row["biased"] = "included" if self.biased_included else "excluded"
        return [row]


def _bootstrap_delta(scores: NDArray[np.float64] | NDArray[np.int64], counts: NDArray[np.int64], n_resamples: int,
                     rng: np.random.Generator) -> NDArray[np.float64]:
    """Δ of ``n_resamples`` unit-level bootstrap samples.

    ``scores``: per unit ``Σ (1 - outcome)`` (``2 wins_B + ties`` for ±1/0 outcomes: twice B's
    credit, an integer); ``counts``: its impressions. A resample takes ``m`` units with
    replacement; its ``Δ* = Σ scores / (2 Σ counts) - 1/2`` over the units taken
    (:func:`serpeval.stats.one_sample.cluster_bootstrap_ratio` draws them: the same seed and
    the same units give identical Δ* however the counts arrived, :func:`analyze_outcomes` or
    :func:`analyze_counts`).
    """
    return cluster_bootstrap_ratio(scores, counts, n_resamples, rng) / 2.0 - 0.5


def analyze_outcomes(outcomes: Any, units: ArrayLike | None = None, *, unit: str = "user",
                     confidence: float = 0.95, n_resamples: int = 10_000,
                     rng: int | np.random.Generator | None = None, method: str | None = None,
                     allow_biased: bool = False) -> InterleavingAnalysis:
    """Decide between A (the baseline) and B (the candidate) from per-impression outcomes
    (see the module docstring); positive Δ: B preferred.

    Args:
        outcomes: one outcome per impression as ``credit`` labels them: +1 (A wins) / 0 /
            -1 (B wins), or the real-valued outcomes of probabilistic and optimized
            interleaving (positive: A's credit larger), or Outcome objects, or their dicts.
        units: the user (or query) of each impression, for the clustered bootstrap and the
            per-unit preference; None treats every impression as its own unit.
        unit: what ``units`` are, for the report (``user``, ``query``, ``session``).
        confidence: level of the bootstrap CI.
        n_resamples: bootstrap resamples.
        rng: seed or Generator for the bootstrap.
        method: the interleaving method that produced plain-number outcomes (Outcome
            objects name their own).
        allow_biased: analyse outcomes of a method that is biased under random clicks
            (balanced interleaving) instead of refusing them, and keep impressions whose
            optimized design has no unbiased solution (otherwise left out and counted).

    ±1/0 outcomes are counted per unit (units in sorted order of their ids) and analysed
    by :func:`analyze_counts`: the same seed gives the same numbers either way. Real-valued
    outcomes are summed per unit; the per-unit preference is their mean per unit (see the
    module docstring).

    Examples:
        >>> res = analyze_outcomes([1, 1, 1, -1, 0, 0, 1, 1], rng=0)
        >>> res.wins_a, res.wins_b, res.ties, res.delta   # (1 + 2/2)/8 - 1/2 = -.25: A preferred
        (5, 1, 2, -0.25)
        >>> round(res.p_value, 4)                          # binomtest(1, 6, .5)
        0.2188
    """
    o, methods, bias = _outcomes(outcomes)
    _check_unbiased(methods | ({method} if method else set()), allow_biased)
    unit_ids = None if units is None else np.asarray(units)
    if unit_ids is not None and unit_ids.shape != o.shape:
        _units(unit_ids, len(o))  # the error message
    biased, max_bias, o, unit_ids = _biased_designs(o, bias, unit_ids, allow_biased)
    codes, n_units = _units(unit_ids, len(o))
    per_unit = [np.bincount(codes[test(o, 0)], minlength=n_units)
                for test in (np.greater, np.less, np.equal)]
    sums = None if is_sign(o) else (np.bincount(codes, weights=o, minlength=n_units).astype(np.float64),
                                     np.bincount(codes, weights=o * o, minlength=n_units).astype(np.float64))
    result = _analyze_units(*per_unit, sums=sums, unit=unit if units is not None else "impression",
                            confidence=confidence, n_resamples=n_resamples, rng=rng)
    if not biased:
        return result
    return replace(result, biased_impressions=biased, max_bias=max_bias, biased_included=allow_biased)


def _biased_designs(o: NDArray[np.float64], bias: NDArray[np.float64], units: NDArray[Any] | None,
                    allow_biased: bool) -> tuple[int, float, NDArray[np.float64], NDArray[Any] | None]:
    """(count, largest bias, outcomes, units): impressions whose design has no unbiased
    solution (bias above :data:`optimized.BIAS_TOLERANCE`) are counted and, unless
    ``allow_biased``, left out."""

    flagged = bias > BIAS_TOLERANCE
    count = int(flagged.sum())
    if not count:
        return 0, 0.0, o, units
    largest = float(bias[flagged].max())
    if allow_biased:
        return count, largest, o, units
    if count == len(o):
        raise InputError(
            f"all {count} impressions come from optimized designs without an unbiased solution "
            f"(largest bias {largest:.3g}): random clicks would favour one ranker, so they cannot "
            "decide a winner. Use another method (team_draft, probabilistic) or credit_function, "
            "or pass allow_biased=True to analyse them anyway.")
    keep = ~flagged
    return count, largest, o[keep], None if units is None else units[keep]


def analyze_counts(wins: ArrayLike, losses: ArrayLike, ties: ArrayLike, *, unit: str = "user",
                   confidence: float = 0.95, n_resamples: int = 10_000,
                   rng: int | np.random.Generator | None = None) -> InterleavingAnalysis:
    """Decide between A (the baseline) and B (the candidate) from per-unit counts: A's wins
    (``wins``), B's wins (``losses``, A's losses) and ties of each unit; positive Δ: B preferred.

    The same analysis as :func:`analyze_outcomes` without one array element per impression
    (a log of millions of impressions comes back from the engine as per-unit counts). Given
    the units in the order :func:`analyze_outcomes` numbers them (sorted ids), the same seed
    gives identical numbers, CI included.

    Args:
        wins, losses, ties: one count per unit (every unit has at least one impression):
            impressions A won, impressions B won, ties.
        unit: what the units are, for the report (``user``, ``query``, ``impression``...).
        confidence, n_resamples, rng: the bootstrap CI, as in :func:`analyze_outcomes`.

    Examples:
        >>> res = analyze_counts([3, 0, 1], [1, 1, 0], [0, 2, 0], rng=0)
        >>> res.impressions, res.delta, res.prefer_a, res.prefer_b   # (2 + 2/2)/8 - 1/2
        (8, -0.125, 2, 1)
    """
    won, lost, tied = (_count_array(v, name) for v, name in
                       ((wins, "wins"), (losses, "losses"), (ties, "ties")))
    if not won.shape == lost.shape == tied.shape:
        raise InputError(f"wins, losses and ties need one count per unit each; got lengths "
                         f"{won.size}, {lost.size} and {tied.size}.")
    if won.size == 0:
        raise InputError("no units: wins, losses and ties are empty.")
    empty = np.flatnonzero(won + lost + tied == 0)
    if empty.size:
        raise InputError(f"{empty.size} unit(s) have no impression (e.g. unit {empty[0]}); "
                         "every unit needs at least one win, loss or tie.")
    return _analyze_units(won, lost, tied, unit=unit, confidence=confidence,
                          n_resamples=n_resamples, rng=rng)


def _count_array(values: ArrayLike, name: str) -> NDArray[np.int64]:
    """Non-negative integer counts as ``int64[m]``."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"{name} must be a 1-D array of per-unit counts; got shape {arr.shape}.")
    if arr.size and (arr.dtype.kind not in "iuf" or not np.all(np.mod(arr, 1) == 0)
                     or arr.min() < 0):
        raise InputError(f"{name} must hold non-negative whole numbers (counts per unit).")
    return arr.astype(np.int64)


def _analyze_units(wins_u: NDArray[np.int64], losses_u: NDArray[np.int64],
                   ties_u: NDArray[np.int64], *, unit: str, confidence: float, n_resamples: int,
                   rng: int | np.random.Generator | None,
                   sums: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None) -> InterleavingAnalysis:
    """The analysis of per-unit counts (every entry point ends here).

    ``sums``: per unit Σ outcome and Σ outcome² of real-valued outcomes (None: ±1/0
    outcomes, whose sums are wins - losses and wins + losses).
    """
    confidence = check_level(confidence, "confidence", example=0.95)
    check_count(n_resamples, "n_resamples")
    wins_u, losses_u, ties_u = (np.asarray(v, dtype=np.int64) for v in (wins_u, losses_u, ties_u))
    counts_u = wins_u + losses_u + ties_u
    n_units = len(counts_u)
    impressions = int(counts_u.sum())
    wins_a, wins_b = int(wins_u.sum()), int(losses_u.sum())
    ties = impressions - wins_a - wins_b
    if sums is None:
        sum_u: NDArray[Any] = wins_u - losses_u
        scores: NDArray[Any] = 2 * losses_u + ties_u
        p_value, test = sign_test(wins_b, wins_a + wins_b), "sign test"
        delta = (wins_b + ties / 2) / impressions - 0.5  # positive: B (the candidate) preferred
    else:
        sum_u = np.asarray(sums[0], dtype=np.float64)
        scores = counts_u - sum_u
        p_value, test = t_test_from_sums(float(sum_u.sum()), float(np.sum(sums[1])), impressions), "t-test"
        delta = -float(sum_u.sum()) / (2 * impressions)
    boot = _bootstrap_delta(scores, counts_u, n_resamples, as_generator(rng))
    alpha = 1.0 - confidence
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    prefer_a = int(np.count_nonzero(sum_u > 0))
    prefer_b = int(np.count_nonzero(sum_u < 0))
    if sums is None:
        preference = (prefer_b - prefer_a) / n_units
        preference_p, preference_test = sign_test(prefer_b, prefer_a + prefer_b), "sign test"
    else:  # each unit's mean outcome: its sign (that of the sum) is biased under random clicks
        mean_u = sum_u / counts_u
        preference = -float(mean_u.mean())
        preference_p = t_test_from_sums(float(mean_u.sum()), float((mean_u ** 2).sum()), n_units)
        preference_test = "t-test"
    return InterleavingAnalysis(
        impressions=impressions, wins_a=wins_a, wins_b=wins_b, ties=ties, delta=float(delta),
        p_value=p_value, ci_low=float(low), ci_high=float(high),
        confidence=confidence, unit=unit, units=n_units,
        prefer_a=prefer_a, prefer_b=prefer_b, preference=preference,
        preference_p_value=preference_p, test=test, preference_test=preference_test,
    )


# ------------------------------------------------------------------ planning


@dataclass(frozen=True)
class SampleSize:
    """Impressions needed to detect a preference: non-tied ones, and all (ties included)."""

    non_tied: int
    total: int
    p_win: float
    tie_rate: float
    alpha: float
    power: float

    def to_dict(self) -> dict[str, Any]:
        return {"non_tied": self.non_tied, "total": self.total, "p_win": self.p_win,
                "tie_rate": self.tie_rate, "alpha": self.alpha, "power": self.power}


def sample_size(p_win: float | None = None, *, delta: float | None = None, tie_rate: float = 0.0,
                alpha: float = 0.05, power: float = 0.8) -> SampleSize:
    """Impressions needed for a two-sided sign test to detect a preference
    (:func:`serpeval.stats.power.sign_test_sample_size`, reported with the ties).

    Give either ``p_win`` (P(B wins | not a tie)) or ``delta`` (Δ, which equals
    ``(1 - tie_rate)(p_win - 1/2)``). The test is two-sided: ``p_win`` and ``1 - p_win`` (a
    preference for A of the same size) need the same number of impressions.

    Examples:
        >>> sample_size(0.51).non_tied        # ((1.96*.5 + .8416*.4999)/.01)^2 = 19619.84
        19620
        >>> sample_size(0.51, tie_rate=0.75).total      # 19619.84 / .25 = 78479.4
        78480
    """
    alpha = check_level(alpha)
    power = check_level(power, "power", example=0.8)
    if not (isinstance(tie_rate, (int, float)) and 0.0 <= tie_rate < 1.0):
        raise OptionError(f"tie_rate must be in [0, 1); got {tie_rate!r}.")
    if (p_win is None) == (delta is None):
        raise OptionError("give exactly one of p_win (P(B wins | not tied)) or delta (Δ, positive: B preferred).")
    p = 0.5 + delta / (1.0 - tie_rate) if delta is not None else p_win
    non_tied = sign_test_sample_size(p, alpha=alpha, power=power)  # type: ignore[arg-type]
    return SampleSize(math.ceil(non_tied - 1e-9), math.ceil(non_tied / (1.0 - tie_rate) - 1e-9),
                      float(p), float(tie_rate), alpha, power)  # type: ignore[arg-type]


# ------------------------------------------------------------------ sanity checks


@dataclass(frozen=True)
class Check:
    """One validity check: its statistic, p-value (None for descriptive checks), verdict."""

    name: str
    value: float
    p_value: float | None
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.name, "value": self.value, "p": self.p_value, "ok": self.ok,
                "detail": self.detail}


def _teams_matrix(
    interleavings: Sequence[Interleaving] | BatchInterleaving,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """(teams[n, k] padded with -2, first[n], competitive[n]) from serving results or a batch."""
    from serpeval.online.interleaving.batch import BatchInterleaving

    if isinstance(interleavings, BatchInterleaving):
        teams = interleavings.teams.astype(np.int64)
        teams = np.where(interleavings.docs >= 0, teams, -2)
        competitive = ((interleavings.rank_a != interleavings.rank_b) & (interleavings.docs >= 0)).any(axis=1)
        return teams, interleavings.first.astype(np.int64), competitive
    items = list(interleavings)
    if not items:
        raise InputError("no interleavings to check.")
    k = max(len(i.teams) for i in items)
    teams = np.full((len(items), k), -2, dtype=np.int64)
    for row, item in enumerate(items):
        teams[row, : len(item.teams)] = item.teams
    first = np.array([i.first for i in items], dtype=np.int64)
    competitive = np.array([any(len(set(col)) > 1 for col in zip(*i.ranks, strict=True))
                            for i in items])
    return teams, first, competitive


def sanity_checks(interleavings: Sequence[Interleaving] | BatchInterleaving, *, alpha: float = 0.001) -> list[Check]:
    """First-pick balance, per-position team balance, competitive coverage (two rankers).

    ``interleavings``: the logged :class:`~serpeval.online.interleaving.Interleaving`
    objects, or a :class:`~serpeval.online.interleaving.batch.BatchInterleaving`. A check
    fails when its (Holm-corrected) p-value is below ``alpha`` (strict, as for SRM checks).
    """
    alpha = check_level(alpha)
    teams, first, competitive = _teams_matrix(interleavings)
    a_first, b_first = int(np.count_nonzero(first == 0)), int(np.count_nonzero(first == 1))
    p_first = sign_test(a_first, a_first + b_first)
    checks = [Check("first-pick balance", a_first / max(a_first + b_first, 1), p_first,
                    p_first >= alpha, f"A picked first in {a_first} of {a_first + b_first} impressions")]
    a_pos = (teams == 0).sum(axis=0)
    b_pos = (teams == 1).sum(axis=0)
    p_pos = np.array([sign_test(int(x), int(x + y)) for x, y in zip(a_pos, b_pos, strict=True)])
    adjusted = holm(p_pos)
    worst = int(np.argmin(adjusted))
    share = a_pos / np.maximum(a_pos + b_pos, 1)
    checks.append(Check(
        "per-position team balance", float(share[worst]), float(adjusted[worst]),
        bool(adjusted.min() >= alpha),
        f"share of A per position {np.round(share, 3).tolist()}; most unbalanced: position {worst} "
        "(Holm-corrected)",
    ))
    coverage = float(competitive.mean())
    checks.append(Check("competitive coverage", coverage, None, coverage > 0,
                        f"{int(competitive.sum())} of {len(competitive)} impressions show a document "
                        "the rankers rank differently (only those can tell them apart)"))
    return checks


#: The random clickers of :func:`aa_check`: clicks that ignore the documents.
RANDOM_CLICKERS = ("uniform", "position", "cascade")


def random_clicks(model: str, size: int, click_probability: float, rng: np.random.Generator) -> NDArray[np.bool_]:
    """``bool[size]`` clicks on one shown list that ignore the documents (a random clicker).

    ``uniform``: each position independently with ``click_probability`` (c); ``position``:
    position-biased, rank r (1-based) with c / r; ``cascade``: top-down, each examined
    position clicked with c, the user stops after a click with probability 1/2.
    """
    u = rng.random(size)
    if model == "uniform":
        return u < click_probability
    if model == "position":
        return u < click_probability / np.arange(1, size + 1)
    if model == "cascade":
        stop = rng.random(size) < 0.5
        hits = u < click_probability
        # the clicks down to the first one followed by a stop, none below it
        stops = np.flatnonzero(hits & stop)
        clicks = np.zeros(size, dtype=bool)
        end = int(stops[0]) + 1 if len(stops) else size
        clicks[:end] = hits[:end]
        return clicks
    raise OptionError(f"unknown random clicker {model!r}; use one of {', '.join(RANDOM_CLICKERS)}.")


def aa_check(rankings_a: Sequence[Sequence[str]], rankings_b: Sequence[Sequence[str]] | None = None, *,
             method: str = "team_draft", k: int = 10, impressions: int = 10_000,
             click_probability: float = 0.3, alpha: float = 0.001,
             rng: int | np.random.Generator | None = None,
             clickers: Sequence[str] = RANDOM_CLICKERS, **options: Any) -> Check:
    """A/A or random-clicker check: no preference may appear when clicks ignore relevance.

    Each impression picks one of the queries at random and interleaves ``rankings_a[q]``
    with ``rankings_b[q]`` (with itself when ``rankings_b`` is None: the A/A check). Every
    random clicker of ``clickers`` (:func:`random_clicks`: uniform, position-biased and
    cascade clicks by default, each on the same shown lists) clicks it; per clicker the
    check tests that the mean outcome is zero - the sign test for ±1/0 outcomes, the t-test
    for the real-valued outcomes of probabilistic and optimized interleaving (as
    :func:`analyze_outcomes`) - and Holm's correction over the clickers gives the check's
    p-value. Position-biased clicks matter: an optimized design whose LP has no unbiased
    solution can balance the credit of uniform clicks (the k-th cut-off) while favouring a
    ranker at the top. The check passes when that p-value is >= ``alpha`` **and** no shown
    list came from such a design (``Interleaving.params["bias"]`` above
    :data:`~serpeval.online.interleaving.optimized.BIAS_TOLERANCE`: the bias is then known
    exactly, no sample needed; the detail gives how many impressions and the largest bias).
    Every unbiased method passes; balanced interleaving fails on rankings that disagree.
    ``options`` go to :func:`~serpeval.online.interleaving.interleave` (``credit_function``,
    ``tau``, ``ignore_shared``).
    """

    generator = as_generator(rng)
    check_count(impressions, "impressions")
    if not 0.0 < click_probability <= 1.0:
        raise OptionError(f"click_probability must be in (0, 1]; got {click_probability!r}.")
    models = tuple(clickers)
    if not models or any(m not in RANDOM_CLICKERS for m in models):
        raise OptionError(f"clickers must name some of {', '.join(RANDOM_CLICKERS)}; got {models!r}.")
    b = rankings_a if rankings_b is None else rankings_b
    if len(b) != len(rankings_a) or not len(rankings_a):
        raise InputError("rankings_a and rankings_b need one ranking per query, the same queries.")
    # What interleave() and credit() do per impression, with the per-query work done once: the
    # method resolved and each query's pair checked (and its k) at its first impression, where
    # interleave() would first refuse it; credit() by the module that made the list (credit()
    # looks the same module up and sets Outcome.method, which the outcome does not depend on).
    module = _method_module(method)
    checked: dict[int, tuple[list[list[Any]], int]] = {}
    queries = generator.integers(0, len(rankings_a), size=impressions)
    outcomes = np.empty((len(models), impressions), dtype=np.float64)
    bias = np.zeros(impressions)
    for i, q in enumerate(queries.tolist()):
        if q not in checked:
            pair = [list(rankings_a[q]), list(b[q])]
            size = min(k, len(set(pair[0]) | set(pair[1])))
            pair = check_rankings(pair, module.MAX_RANKERS, module.NAME)
            checked[q] = pair, check_k(size, pair)
        pair, size = checked[q]
        shown = _draw(module, [list(r) for r in pair], size, generator, options)
        bias[i] = float(shown.params.get("bias", 0.0))
        for m, model in enumerate(models):
            clicked = np.nonzero(random_clicks(model, size, click_probability, generator))[0].tolist()
            outcomes[m, i] = module.credit(shown, clicked).outcome
    tested = [zero_mean_test(row) for row in outcomes]
    adjusted = holm(np.array([p for p, _ in tested]))
    worst = int(np.argmin(adjusted))
    biased = bias > BIAS_TOLERANCE
    ok = bool(adjusted[worst] >= alpha) and not biased.any()
    name = "A/A check" if rankings_b is None else "random-clicker check"
    shown_options = "".join(f", {key}={value}" for key, value in sorted(options.items()))
    per_model = "; ".join(
        f"{model}: mean outcome {row.mean():+.4f} ({test}, p = {p:.3g}), {int((row > 0).sum())} > 0, "
        f"{int((row < 0).sum())} < 0" for model, row, (p, test) in zip(models, outcomes, tested, strict=True))
    detail = (f"{method}{shown_options}: {per_model}; {impressions} impressions with random clicks "
              f"(c = {click_probability}), Holm over the clickers")
    if biased.any():
        detail += (f"; {int(biased.sum())} of {impressions} impressions from optimized designs without an "
                   f"unbiased solution (largest bias {float(bias[biased].max()):.3g}): biased on these rankings")
    # value: Δ oriented towards B, -mean(outcome)/2, under the clicker that fared worst
    return Check(name, -float(outcomes[worst].mean()) / 2, float(adjusted[worst]), ok, detail)


# ------------------------------------------------------------------ multileaving


@dataclass(frozen=True)
class MultileaveAnalysis(Tabular):
    """Pairwise preferences among r rankers from multileaved impressions.

    ``wins[i, j]`` counts impressions where ranker i was preferred to ranker j (its pairwise
    outcome > 0); ``delta[i, j]`` = mean pairwise outcome / 2 (positive: i preferred);
    ``p_values`` are two-sided sign tests per pair (a t-test of the mean for real-valued
    pairwise outcomes, as probabilistic multileaving's; ``test`` says which), ``adjusted``
    Holm-corrected over the r(r-1)/2 pairs. For real-valued outcomes ``wins`` counts
    positive outcomes, a description only (their sign is biased under random clicks).

    **Per-pair power** (``power``, ``needed``): with the measured mean ``d_ij`` and
    standard deviation ``s_ij`` of the pair's outcomes taken as the truth, the normal
    approximation of the pair's test at the Bonferroni level ``alpha / (r(r-1)/2)`` (what
    Holm needs for its first step, the hardest), ``power = Φ(|d|√n/s - z) + Φ(-|d|√n/s - z)``
    at the n impressions seen, and ``needed = ((z + z_{plan_power}) s / d)²`` impressions
    for ``plan_power`` (80%). A pair whose measured preference is 0 needs infinitely many.
    These are plug-in (observed) values: they rank designs by the sensitivity measured on
    the same traffic (:func:`recommend_multileaving`), they are not a guarantee.
    """

    names: tuple[str, ...]
    wins: NDArray[np.int64]
    p_values: NDArray[np.float64]
    adjusted: NDArray[np.float64]
    impressions: int
    alpha: float = 0.05
    delta: NDArray[np.float64] | None = None
    power: NDArray[np.float64] | None = None
    needed: NDArray[np.float64] | None = None
    plan_power: float = 0.8
    method: str | None = None
    test: str = "sign test"

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per pair. For real-valued pairwise outcomes (``test == "t-test"``) the
        counts are labelled ``outcome > 0``/``outcome < 0``/``outcome = 0``: their signs are
        biased under random clicks, so they are not wins."""
        rows = []
        r = len(self.names)
        labels = (("outcome > 0", "outcome < 0", "outcome = 0") if self.test == "t-test"
                  else ("wins", "losses", "ties"))
        for i in range(r):
            for j in range(i + 1, r):
                w_i, w_j = int(self.wins[i, j]), int(self.wins[j, i])
                delta = (float(self.delta[i, j]) if self.delta is not None
                         else (w_i + (self.impressions - w_i - w_j) / 2) / self.impressions - 0.5)
                row = {
                    "ranker": self.names[i], "vs": self.names[j], labels[0]: w_i, labels[1]: w_j,
                    labels[2]: self.impressions - w_i - w_j,
                    "delta": delta,
                    "p": float(self.p_values[i, j]), "p (Holm)": float(self.adjusted[i, j]),
                    "better": (self.names[i] if delta > 0 else self.names[j])
                    if self.adjusted[i, j] < self.alpha and delta != 0 else "-",
                }
                if self.power is not None and self.needed is not None:
                    row["power"] = float(self.power[i, j])
                    row[f"impressions for {self.plan_power:.0%}"] = whole_impressions(self.needed[i, j])
                rows.append(row)
        return rows

    @property
    def hardest_pair_needs(self) -> float:
        """Impressions the least separable pair needs (inf when a pair shows no preference)."""
        if self.needed is None:
            return float("nan")
        iu = np.triu_indices(len(self.names), 1)
        return float(self.needed[iu].max(initial=0.0))


def _pairwise_outcomes(credits: NDArray[np.float64] | None,
                       preferences: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """``[n, r, r]`` pairwise outcomes: given preferences, or sign(credit_i - credit_j)."""
    if preferences is not None:
        arr = np.asarray(preferences, dtype=np.float64)
        if arr.ndim != 3 or arr.shape[1] != arr.shape[2] or arr.shape[1] < 2 or arr.shape[0] == 0:
            raise InputError(f"preferences must be [impressions, rankers, rankers] with >= 2 rankers; "
                             f"got {arr.shape}.")
        if not np.isfinite(arr).all():
            raise StatsError("preferences contain NaN or infinity.")
        if not np.allclose(arr, -np.transpose(arr, (0, 2, 1)), atol=1e-9):
            raise InputError("preferences must be antisymmetric per impression (P[i][j] = -P[j][i]), "
                             "as Outcome.preferences are.")
        return arr
    assert credits is not None
    return np.sign(credits[:, :, None] - credits[:, None, :])


def preference_matrix(credits: ArrayLike | None = None, names: Sequence[str] | None = None, *,
                      preferences: ArrayLike | None = None, alpha: float = 0.05,
                      plan_power: float = 0.8, method: str | None = None) -> MultileaveAnalysis:
    """Pairwise wins, tests, Holm's correction and per-pair power of multileaved impressions.

    Give per-impression ``credits`` ``[n, r]`` (team draft multileaving: clicks per team;
    the pairwise outcome is the sign of the credit difference) or ``preferences``
    ``[n, r, r]`` (each impression's :attr:`Outcome.preferences`; probabilistic
    multileaving's are the marginalised outcomes ``E[sign(h_i - h_j)]``, whose mean is
    unbiased while the sign of its expected credits is not). ``method`` names the
    multileaving method for :func:`recommend_multileaving`.
    """
    if (credits is None) == (preferences is None):
        raise OptionError("give exactly one of credits ([impressions, rankers]) or preferences "
                          "([impressions, rankers, rankers]).")
    arr = None
    if credits is not None:
        arr = np.asarray(credits, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] < 2 or arr.shape[0] == 0:
            raise InputError(f"credits must be [impressions, rankers] with >= 2 rankers; got {arr.shape}.")
        if not np.isfinite(arr).all():
            raise StatsError("credits contain NaN or infinity.")
    pair = _pairwise_outcomes(arr, None if preferences is None else np.asarray(preferences))
    n, r = pair.shape[0], pair.shape[1]
    alpha = check_level(alpha)
    plan_power = check_level(plan_power, "plan_power", example=0.8)
    labels = tuple(names) if names is not None else tuple(f"ranker {i}" for i in range(r))
    if len(labels) != r:
        raise InputError(f"{len(labels)} names for {r} rankers.")
    wins = (pair > 0).sum(axis=0).astype(np.int64)
    mean = pair.mean(axis=0)
    sd = pair.std(axis=0, ddof=1) if n > 1 else np.zeros((r, r))
    p = np.ones((r, r))
    iu = np.triu_indices(r, 1)
    sign = is_sign(pair.ravel())
    for i, j in zip(*iu, strict=True):
        if sign:
            p[i, j] = sign_test(int(wins[i, j]), int(wins[i, j] + wins[j, i]))
        else:
            column = pair[:, i, j]
            p[i, j] = t_test_from_sums(float(column.sum()), float((column ** 2).sum()), n)
        p[j, i] = p[i, j]
    adjusted = np.ones((r, r))
    if len(iu[0]):
        adj = holm(p[iu])
        adjusted[iu] = adj
        adjusted[iu[::-1]] = adj
    # each pair at the Bonferroni level, what Holm needs for its first (hardest) step
    power, needed = normal_power(mean, sd, n, alpha=alpha / max(len(iu[0]), 1), target_power=plan_power)
    np.fill_diagonal(power, np.nan)
    np.fill_diagonal(needed, np.nan)
    return MultileaveAnalysis(labels, wins, p, adjusted, n, alpha, mean / 2, power, needed,
                              plan_power, method, "sign test" if sign else "t-test")


@dataclass(frozen=True)
class MultileaveRecommendation(Tabular):
    """Which multileaving method separates the rankers with the fewest impressions.

    ``rows``: per method, the impressions its hardest pair needs (the largest per-pair
    ``needed`` of :class:`MultileaveAnalysis`: to order every ranker, every pair must be
    separated), the median over pairs, and the pairs separated at the Holm level.
    ``recommended``: the method whose hardest pair needs the fewest impressions.
    """

    rows: tuple[dict[str, Any], ...]
    recommended: str

    def to_dicts(self) -> list[dict[str, Any]]:
        return [dict(row, recommended=row["method"] == self.recommended) for row in self.rows]


def recommend_multileaving(analyses: Mapping[str, MultileaveAnalysis] | Sequence[MultileaveAnalysis]
                           ) -> MultileaveRecommendation:
    """Recommend a multileaving method by the sensitivity measured on the same rankers.

    ``analyses``: one :class:`MultileaveAnalysis` per method (a mapping from the method's
    name, or analyses made with ``preference_matrix(..., method=...)``), over the same
    rankers. The method whose hardest pair needs the fewest impressions wins; ties go to
    the more separated pairs, then to the order given.
    """
    items = list(analyses.items()) if isinstance(analyses, Mapping) else \
        [(a.method or f"method {i}", a) for i, a in enumerate(analyses)]
    if len(items) < 1:
        raise InputError("recommend_multileaving needs at least one analysis.")
    names = {a.names for _, a in items}
    if len(names) != 1:
        raise InputError("the analyses must cover the same rankers, in the same order; got "
                         f"{' / '.join(', '.join(n) for n in sorted(names))}.")
    rows: list[dict[str, Any]] = []
    for method, a in items:
        iu = np.triu_indices(len(a.names), 1)
        needed = a.needed[iu] if a.needed is not None else np.full(len(iu[0]), np.nan)
        rows.append({"method": method, "impressions": a.impressions,
                     "hardest pair needs": whole_impressions(a.hardest_pair_needs),
                     "median pair needs": whole_impressions(np.median(needed)),
                     "pairs separated": int((a.adjusted[iu] < a.alpha).sum()),
                     "pairs": len(iu[0])})
    best = min(range(len(rows)), key=lambda i: (rows[i]["hardest pair needs"], -rows[i]["pairs separated"], i))
    return MultileaveRecommendation(tuple(rows), str(rows[best]["method"]))
