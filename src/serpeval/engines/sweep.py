"""``sweep``: a grid or random search over engine parameters with an honest winner.

Every setting is retrieved and evaluated on the same queries (a judged query a setting
does not answer scores 0, so every setting is measured on the same set). Then:

**In-sample table.** Each setting's mean and its paired test against the baseline (the
registry's paired test, ``t`` by default), with p-values corrected for the number of settings
compared: Holm (or another registry correction) and the single-step **max-T** of Westfall &
Young (1993): with ``B`` sign-flip permutations ``f`` of the per-query differences ``d_jq``
(setting ``j`` minus baseline), applied jointly to all settings (which keeps their
correlation),

    t_j = mean(d_j) / (sd(d_j) / sqrt(n)),   p_j(maxT) = (1 + #{b : max_j |t*_bj| >= |t_j|}) / (B + 1).

**Cross-validated winner.** Queries are split into ``folds`` seeded folds. On each fold the
setting with the best mean on the *other* folds is chosen (ties: the baseline, else the first
setting) and scored on the held-out queries. The mean of the out-of-fold differences
``cv_q - baseline_q`` estimates the gain of the *procedure* "pick the best setting"; it is the
reported gain. Its interval and p-value come from re-running the whole procedure (selection
included) on ``B`` sign flips of the per-query differences (one flip per query, shared by all
settings, as for max-T): ``p = (1 + #{b : gain*_b >= gain}) / (B + 1)`` (one-sided, for an
improvement) and the interval ``[gain - q*_{1-alpha/2}, gain - q*_{alpha/2}]`` (the flip
distribution's quantiles, read as the estimator's spread). A paired t interval on the
out-of-fold differences is **not** valid here: the folds' choices are made on each other's
queries, which correlates the folds' errors (Bengio & Grandvalet 2004); measured on 1000
null sweeps (20 equivalent settings, 100 queries, 5 folds; bench/results/engine.md) it declared
a winner in 11.6% of them at a nominal 2.5% (6.3% with shuffled settings), the flip
distribution in 2.3% (2.7%).

The setting to deploy is the best on all queries; its in-sample gain is biased upwards (the
winner's curse) and is shown only next to the estimate, with
``kept = cv_gain / in_sample_gain``: the share of the apparent gain the cross-validation kept.

A winner is **significant** when the cross-validated interval lies above 0 (equivalently,
up to the flips' resolution, the one-sided p is below alpha/2); in-sample, when a setting better than the
baseline has a corrected p-value below alpha.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from serpeval.core.checks import as_generator, check_count, check_level
from serpeval.core.errors import OptionError, StatsError
from serpeval.core.progress import progress_callback

__all__ = ["SweepResult", "max_t_adjusted", "parse_grid", "random_settings", "select", "sweep"]

#: Default search ranges of the embedded BM25 engine's parameters for ``random``.
BM25_RANGES: Mapping[str, tuple[float, float]] = {"k1": (0.2, 2.0), "b": (0.0, 1.0)}


@dataclass(frozen=True)
class SweepResult:
    """The sweep's settings, in-sample table, cross-validated winner and its estimate.

    Attributes:
        measure: the measure compared (canonical name).
        names: the parameter names varied, in order.
        settings: one ``{name: value}`` per setting (the baseline included).
        baseline: index of the baseline setting.
        query_ids: the queries compared (judged and in the topics).
        scores: ``float64[n_settings, n_queries]`` per-query values.
        means, deltas: per setting: the mean and the mean difference to the baseline.
        p_values, p_corrected, p_max_t: per setting (NaN for the baseline): the paired test's
            two-sided p, corrected (``correction``) and max-T adjusted.
        best: index of the best setting on all queries (the one to deploy).
        in_sample_gain: ``deltas[best]``.
        fold_choices: the setting chosen on each fold's training queries.
        cv_gain, cv_low, cv_high, cv_p: the cross-validated gain, its ``1 - alpha`` interval and
            one-sided p (from sign flips of the whole procedure; module doc).
        kept: ``cv_gain / in_sample_gain`` (NaN when the in-sample gain is not positive).
        significant: the cross-validated interval lies above 0.
        in_sample_significant: indices of settings better than the baseline with a
            corrected (``correction``) p below alpha.
        left_out: ``{"judged_not_in_topics": n, "empty_queries": m}``: judged queries absent
            from the topics (not compared), and judged topics whose query is empty (compared,
            at 0 in every setting).
    """

    measure: str
    names: tuple[str, ...]
    settings: tuple[Mapping[str, Any], ...]
    baseline: int
    query_ids: tuple[str, ...]
    scores: NDArray[np.float64]
    means: NDArray[np.float64]
    deltas: NDArray[np.float64]
    p_values: NDArray[np.float64]
    p_corrected: NDArray[np.float64]
    p_max_t: NDArray[np.float64]
    best: int
    in_sample_gain: float
    fold_choices: tuple[int, ...]
    cv_gain: float
    cv_low: float
    cv_high: float
    cv_p: float
    kept: float
    significant: bool
    in_sample_significant: tuple[int, ...]
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    folds: int = 5
    seed: int | None = 0
    permutations: int = 1000
    engine: str = ""
    config_hashes: tuple[str, ...] = ()
    seconds: float = 0.0
    runs: tuple[Any, ...] = field(default=(), repr=False)
    left_out: Mapping[str, int] = field(default_factory=dict)

    # ------------------------------------------------------------------ views

    def label(self, index: int) -> str:
        """``k1=0.9 b=0.4`` for a setting."""
        return " ".join(f"{k}={_value_text(v)}" for k, v in self.settings[index].items()) or "(defaults)"

    def to_dicts(self) -> list[dict[str, Any]]:
        """The in-sample table: one row per setting, best mean first."""
        order = np.lexsort((np.arange(len(self.means)), -self.means))
        rows = []
        for rank, j in enumerate(order.tolist(), 1):
            row: dict[str, Any] = {"rank": rank}
            row.update({name: self.settings[j].get(name) for name in self.names})
            role = "baseline" if j == self.baseline else ("selected" if j == self.best else "")
            row.update({self.measure: float(self.means[j]), "delta": float(self.deltas[j]),
                        "p": _none(self.p_values[j]), f"p_{self.correction}": _none(self.p_corrected[j]),
                        "p_maxT": _none(self.p_max_t[j]), "role": role})
            rows.append(row)
        return rows

    def summary(self) -> dict[str, Any]:
        """The decision in numbers (what the report's headline shows)."""
        exact = float(f"{100 * (1 - self.alpha):.6g}")  # 97.5 stays 97.5 (never rounded to 98)
        level: int | float = int(exact) if exact.is_integer() else exact
        return {
            "measure": self.measure, "settings": len(self.settings), "queries": len(self.query_ids),
            "baseline": self.label(self.baseline), "baseline_mean": float(self.means[self.baseline]),
            "selected": self.label(self.best), "selected_mean": float(self.means[self.best]),
            "in_sample_gain": self.in_sample_gain, "cv_gain": self.cv_gain, "cv_ci": [self.cv_low, self.cv_high],
            "cv_ci_level": level, "cv_p": self.cv_p, "kept": None if math.isnan(self.kept) else self.kept,
            "significant": self.significant, "folds": self.folds, "seed": self.seed,
            "fold_choices": [self.label(j) for j in self.fold_choices],
            "same_choice_folds": int(sum(1 for j in self.fold_choices if j == self.best)),
            "in_sample_significant": [self.label(j) for j in self.in_sample_significant],
            "test": self.test, "correction": self.correction, "alpha": self.alpha,
            "permutations": self.permutations, "engine": self.engine, "seconds": round(self.seconds, 3),
            "judged_not_in_topics": int(self.left_out.get("judged_not_in_topics", 0)),
            "empty_queries": int(self.left_out.get("empty_queries", 0)),
        }

    def sentences(self) -> list[str]:
        """The decision in words (report/ shows these under the table)."""
        s = self.summary()
        level = s["cv_ci_level"]
        lines = [
            f"selected: {s['selected']} ({self.measure} {s['selected_mean']:.4f} in-sample; baseline "
            f"{s['baseline']} {s['baseline_mean']:.4f})",
            f"cross-validated gain over the baseline ({self.folds}-fold over {s['queries']} queries, seed "
            f"{self.seed}): {self.cv_gain:+.4f}, {level}% CI [{self.cv_low:+.4f}, {self.cv_high:+.4f}], p = "
            f"{_p_text(self.cv_p)}: " + ("a significant improvement" if self.significant else
                                          "no significant improvement"),
        ]
        if self.in_sample_gain > 0:
            lines.append(f"winner's curse: the in-sample gain {self.in_sample_gain:+.4f} is the maximum of "
                         f"{len(self.settings) - 1} comparisons; cross-validation kept {self.kept:.0%} of it")
        else:
            lines.append("no setting beats the baseline in-sample")
        lines.append(f"folds chose the selected setting {s['same_choice_folds']} of {self.folds} times")
        named = significant_names(s["in_sample_significant"], s["selected"])
        lines.append(f"in-sample, corrected for {len(self.settings) - 1} comparisons ({self.correction} and max-T, "
                     f"{self.test} test, alpha {self.alpha:g}): significantly better than the baseline: {named}")
        if s["judged_not_in_topics"]:
            lines.append(f"note: {s['judged_not_in_topics']} judged query(ies) are not in the topics and are not "
                         "compared")
        if s["empty_queries"]:
            lines.append(f"note: {s['empty_queries']} judged topic(s) have an empty query: compared at 0 in every "
                         "setting")
        return lines

    def heatmap(self) -> dict[str, Any] | None:
        """Means over two varied parameters: ``{"rows", "columns", "row_values", "column_values",
        "values"}`` (None unless exactly two parameters vary; NaN where a pair was not tried)."""
        varied = [n for n in self.names if len({_value_text(s.get(n)) for s in self.settings}) > 1]
        if len(varied) != 2:
            return None
        row_name, col_name = varied
        rows = sorted({s.get(row_name) for s in self.settings}, key=_sort_key)
        cols = sorted({s.get(col_name) for s in self.settings}, key=_sort_key)
        values = np.full((len(rows), len(cols)), np.nan)
        for j, s in enumerate(self.settings):
            values[rows.index(s.get(row_name)), cols.index(s.get(col_name))] = self.means[j]
        return {"rows": row_name, "columns": col_name, "row_values": rows, "column_values": cols,
                "values": values.tolist(), "measure": self.measure,
                "best": [rows.index(self.settings[self.best].get(row_name)),
                         cols.index(self.settings[self.best].get(col_name))]}

    def to_json_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), "table": self.to_dicts(), "heatmap": self.heatmap(),
                "sentences": self.sentences()}

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.to_dicts())

    def _repr_html_(self) -> str:
        from html import escape

        head = "".join(f"<p>{escape(line)}</p>" for line in self.sentences())
        rows = self.to_dicts()
        cols = list(rows[0])
        body = "".join("<tr>" + "".join(f"<td>{escape(_value_text(r[c]))}</td>" for c in cols) + "</tr>"
                       for r in rows[:30])
        return f"{head}<table><tr>{''.join(f'<th>{escape(c)}</th>' for c in cols)}</tr>{body}</table>"


def _none(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _p_text(p: float) -> str:
    return "n/a" if math.isnan(p) else ("< 0.0001" if p < 1e-4 else f"{p:.4f}")


def _value_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return "" if value is None else str(value)


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))


# ---------------------------------------------------------------------- settings


def parse_grid(items: Sequence[str] | Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    """``["k1=0.6,0.9", "method=lucene,bm25+"]`` (or a mapping) -> ``{"k1": [0.6, 0.9], ...}``.

    Integers become ints, other numbers floats (an HTTP template sends ``2``, not ``2.0``);
    other values stay text. Raises OptionError on an item without
    ``=``, an empty value list, a repeated value or a name given twice.
    """
    pairs = items.items() if isinstance(items, Mapping) else [_grid_item(item) for item in items]
    grid: dict[str, list[Any]] = {}
    for name, values in pairs:
        values = [_number_or_text(v) for v in values]
        if not values:
            raise OptionError(f"--grid {name}: no value; expected {name}=V1,V2,...")
        if name in grid:
            raise OptionError(f"--grid {name} is given twice; list all its values once ({name}=V1,V2,...).")
        if len({_value_text(v) for v in values}) != len(values):
            raise OptionError(f"--grid {name}: a value is repeated in {values}.")
        grid[name] = values
    return grid


def _grid_item(item: str) -> tuple[str, list[str]]:
    name, sep, values = item.partition("=")
    if not sep or not name.strip():
        raise OptionError(f"--grid {item!r}: expected NAME=V1,V2,... (e.g. --grid k1=0.6,0.9,1.2).")
    return name.strip(), [v.strip() for v in values.split(",") if v.strip()]


def _number_or_text(value: Any) -> Any:
    """A number for a numeric value: an integer stays an integer (``"2"`` -> 2, so an HTTP
    template sends ``mm=2`` or ``"rows": 2``, not ``2.0``, which Solr's integer parameters
    refuse), any other finite number is a float; anything else stays as it is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    return number if math.isfinite(number) else value


def random_settings(n: int, ranges: Mapping[str, tuple[float, float]], rng: Any = 0,
                    digits: int = 3) -> list[dict[str, float]]:
    """``n`` settings drawn uniformly from ``ranges`` (rounded to ``digits``), seeded."""
    n = check_count(n, "random")
    generator = as_generator(rng)
    out = []
    for _ in range(n):
        out.append({name: round(float(generator.uniform(lo, hi)), digits) for name, (lo, hi) in ranges.items()})
    return out


# ---------------------------------------------------------------------- statistics


def max_t_adjusted(differences: NDArray[np.float64], permutations: int = 1000,
                   rng: Any = 0) -> NDArray[np.float64]:
    """Westfall-Young single-step max-T adjusted two-sided p-values of each row's mean.

    ``differences[j, q]``: setting ``j`` minus the baseline on query ``q``. The same sign
    flips are applied to every row (so the rows' correlation is kept). A row of zeros (a
    setting identical to the baseline) has t = 0 and p = 1.
    """
    from serpeval.stats.permutation import sign_flips

    d = np.asarray(differences, dtype=np.float64)
    m, n = d.shape
    if n < 2:
        raise StatsError(f"max-T needs at least 2 queries; got {n}.")
    generator = as_generator(rng)
    sumsq = (d * d).sum(axis=1)

    def t_of(sums: NDArray[np.float64]) -> NDArray[np.float64]:
        mean = sums / n
        var = np.maximum(sumsq - n * mean * mean, 0.0) / (n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean / np.sqrt(var / n)
        return np.where(var > 1e-300, np.abs(t), np.where(np.abs(mean) > 0, np.inf, 0.0))

    observed = t_of(d.sum(axis=1))
    exceed = np.zeros(m, dtype=np.int64)
    for flips in sign_flips(n, permutations, generator, chunk=max(1, 2_000_000 // max(n * max(m, 1), 1) + 1)):
        signs = 1.0 - 2.0 * flips                      # 1 -> -1 (flipped), 0 -> +1
        sums = signs @ d.T                             # [rows, m]
        biggest = t_of(sums).max(axis=1)               # [rows]
        exceed += (biggest[:, None] >= observed[None, :] - 1e-12 * np.maximum(observed, 1)[None, :]).sum(axis=0)
    return np.minimum(1.0, (1 + exceed) / (permutations + 1))


def significant_names(names: Sequence[str], selected: str, shown: int = 5) -> str:
    """The settings significantly better than the baseline, for a sentence: how many, then at
    most ``shown`` of them, the selected setting first when it is one (the others in grid
    order), and how many more the JSON output lists; ``none`` when there is none."""
    if not names:
        return "none"
    ordered = sorted(names, key=lambda name: name != selected)  # (a stable sort: grid order kept)
    more = len(ordered) - shown
    return f"{len(ordered)}: " + ", ".join(ordered[:shown]) + (
        f" and {more} more (-f json lists them all)" if more > 0 else "")


def select(scores: NDArray[np.float64], baseline: int = 0, *, folds: int = 5, rng: Any = 0, test: str = "t",
           correction: str = "holm", alpha: float = 0.05, permutations: int = 1000) -> dict[str, Any]:
    """The statistics of a sweep from per-query scores ``[n_settings, n_queries]`` (see the module doc).

    Returns the fields of :class:`SweepResult` from ``means`` to ``in_sample_significant``.

    Raises:
        OptionError: fewer than 2 settings, folds < 2 or more folds than queries, an unknown
            test or correction.
        StatsError: non-finite scores.
    """
    from serpeval.stats.registry import CORRECTIONS, PAIRED_TESTS, canonical

    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] < 2:
        raise OptionError(f"a sweep compares at least 2 settings (the baseline and one other); got {s.shape[0]}.")
    if not np.isfinite(s).all():
        raise StatsError("per-query scores must be finite.")
    m, n = s.shape
    folds = check_count(folds, "folds", minimum=2)
    if folds > n:
        fix = (f"use at most {n} folds" if n >= 2 else
               "cross-validation needs at least 2 queries (one to choose on, one to test on): judge more queries")
        raise OptionError(f"folds={folds} is more than the {n} queries; {fix}.")
    alpha = check_level(alpha, upper=0.5)
    test_name = canonical(PAIRED_TESTS, test, "test")
    correction_name = canonical(CORRECTIONS, correction, "correction")
    spec = PAIRED_TESTS[test_name]
    if not CORRECTIONS[correction_name].from_p_values:
        raise OptionError(f"correction {correction_name!r} needs all pairs of systems; a sweep compares each "
                          "setting with the baseline: use holm, bonferroni, bh or none (max-T is always shown).")
    generator = as_generator(rng)
    assignment = generator.permutation(n) % folds   # the first draw: folds are reproducible from the seed alone
    base = s[baseline]
    means = s.mean(axis=1)
    deltas = means - means[baseline]
    others = np.array([j for j in range(m) if j != baseline])
    kwargs: dict[str, Any] = {"alternative": "two-sided"}
    if spec.resamples:
        kwargs[spec.resamples] = permutations
        kwargs["rng"] = generator
    result = spec.function(s[others], np.broadcast_to(base, s[others].shape), **kwargs)
    p = np.full(m, np.nan)
    p[others] = np.asarray(result.p_value, dtype=np.float64)
    p_corrected = np.full(m, np.nan)
    p_corrected[others] = CORRECTIONS[correction_name].function(p[others])
    p_max_t = np.full(m, np.nan)
    p_max_t[others] = max_t_adjusted(s[others] - base, permutations, generator)
    # best on all queries; ties: the baseline, then the first
    best = _argbest(means, baseline)
    # cross-validation over queries (the folds drawn first)
    d = s - base
    choices, cv_gain = _cross_validate(d, assignment, folds, baseline)
    null = _cv_null(d, assignment, folds, baseline, permutations, generator)
    low_q, high_q = np.quantile(null, [alpha / 2, 1 - alpha / 2])
    cv_low, cv_high = cv_gain - high_q, cv_gain - low_q
    cv_p = float((1 + np.count_nonzero(null >= cv_gain - 1e-12 * max(abs(cv_gain), 1))) / (len(null) + 1))
    in_sample_gain = float(deltas[best])
    kept = cv_gain / in_sample_gain if in_sample_gain > 0 else math.nan
    better = [int(j) for j in others if deltas[j] > 0 and p_corrected[j] < alpha]
    return {
        "means": means, "deltas": deltas, "p_values": p, "p_corrected": p_corrected, "p_max_t": p_max_t,
        "best": best, "in_sample_gain": in_sample_gain, "fold_choices": tuple(choices), "cv_gain": cv_gain,
        "cv_low": float(cv_low), "cv_high": float(cv_high), "cv_p": cv_p, "kept": kept,
        "significant": bool(cv_low > 0), "in_sample_significant": tuple(better),
        "test": test_name, "correction": correction_name, "alpha": alpha, "folds": folds,
        "permutations": permutations,
    }


def _cross_validate(d: NDArray[np.float64], assignment: NDArray[np.int64], folds: int, baseline: int
                    ) -> tuple[list[int], float]:
    """The setting chosen on each fold's training queries and the out-of-fold mean gain."""
    n = d.shape[1]
    total = 0.0
    choices = []
    for f in range(folds):
        test = assignment == f
        chosen = _argbest(d[:, ~test].mean(axis=1), baseline)
        choices.append(chosen)
        total += float(d[chosen, test].sum())
    return choices, total / n


def _cv_null(d: NDArray[np.float64], assignment: NDArray[np.int64], folds: int, baseline: int,
             permutations: int, generator: np.random.Generator) -> NDArray[np.float64]:
    """The cross-validated gain of the whole procedure (selection included) on ``permutations``
    sign flips of the per-query differences, the same flip for every setting of a query."""
    from serpeval.stats.permutation import sign_flips

    m, n = d.shape
    out = []
    chunk = max(1, 4_000_000 // max(n * m, 1))
    for flips in sign_flips(n, permutations, generator, chunk=chunk):
        signs = 1.0 - 2.0 * flips
        gain = np.zeros(len(signs))
        rows = np.arange(len(signs))
        for f in range(folds):
            test = assignment == f
            train_means = signs[:, ~test] @ d[:, ~test].T / max(int((~test).sum()), 1)   # [B, m]
            chosen = train_means.argmax(axis=1)
            keep_base = train_means[:, baseline] >= train_means[rows, chosen]
            chosen = np.where(keep_base, baseline, chosen)
            gain += (signs[:, test] @ d[:, test].T)[rows, chosen]
        out.append(gain / n)
    return np.concatenate(out)


def _argbest(means: NDArray[np.float64], baseline: int) -> int:
    top = means.max()
    if means[baseline] >= top:
        return baseline
    return int(np.flatnonzero(means >= top)[0])


# ---------------------------------------------------------------------- the sweep


def sweep(
    topics: Any,
    qrels: Any,
    engine: Any = None,
    *,
    corpus: Any = None,
    grid: Sequence[str] | Mapping[str, Sequence[Any]] | None = None,
    random: int | None = None,
    ranges: Mapping[str, tuple[float, float]] | None = None,
    baseline: Mapping[str, Any] | None = None,
    measure: str = "nDCG@10",
    k: int = 1000,
    folds: int = 5,
    seed: int | None = 0,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    permutations: int = 1000,
    fields: Sequence[str] | None = None,
    id_field: str | None = None,
    keep_runs: bool = False,
    progress: Any = None,
) -> SweepResult:
    """Retrieve and evaluate every setting, then select a winner honestly (module doc).

    Args:
        topics: topics file or ``{qid: text}``.
        qrels: judgments (anything :func:`serpeval.evaluate` takes).
        engine: None (the embedded BM25 engine over ``corpus``) or an HTTP engine config
            (file or mapping) whose template parameters are swept.
        grid: ``["k1=0.6,0.9,1.2", "b=0.3,0.75"]`` or ``{"k1": [...], ...}``: every combination.
        random: draw this many settings from ``ranges`` instead (seeded by ``seed``); default
            ranges for the embedded engine: k1 in [0.2, 2], b in [0, 1].
        baseline: the reference setting (default: the engine's defaults); added when not in the grid.
        measure: the measure to maximise (one name, ``nDCG@10``).
        k: documents retrieved per query.
        folds, seed: the cross-validation's folds and the seed of folds, random settings and
            permutations.
        test, correction: registry names (``serpeval.stats.registry``) of the paired test and
            the correction of the in-sample table (max-T is always added).
        alpha: the level (the CV interval is ``1 - alpha``).
        keep_runs: keep every setting's run in the result (for ``--gate`` or inspection).
        progress: ``progress(done, total)`` over settings.

    Examples:
        >>> import serpeval
        >>> docs = [{"id": f"d{i}", "text": t} for i, t in enumerate(["wing lift", "wing wing drag", "heat",
        ...         "lift force on a wing", "heat flow", "drag of a body"])]
        >>> topics = {"1": "wing lift", "2": "heat flow", "3": "drag"}
        >>> qrels = {"1": {"d0": 1, "d3": 1}, "2": {"d4": 1}, "3": {"d5": 1}}
        >>> r = serpeval.sweep(topics, qrels, corpus=docs, grid=["k1=0.5,1.2", "b=0.3,0.75"], k=5, folds=3)
        >>> len(r.settings), r.label(r.baseline)
        (4, 'k1=1.2 b=0.75')
    """

    from serpeval.core.data import Run
    from serpeval.engines.retrieve import read_queries
    from serpeval.evaluation.evaluate import evaluate
    from serpeval.measures import parse_measure

    clock = time.perf_counter()
    report = progress_callback(progress)
    metric = parse_measure(measure)
    if (grid is None) == (random is None):
        raise OptionError("give a grid (--grid k1=0.6,0.9,1.2 --grid b=0.3,0.75) or a number of random "
                          "settings (--random 50), one of the two.")
    if grid is not None and ranges:
        raise OptionError("--range gives the ranges that --random draws from; with --grid it would be ignored: "
                          "list the values with --grid NAME=V1,V2,... or use --random N with --range.")
    queries = read_queries(topics)
    from serpeval.io import as_qrels

    judgments = as_qrels(qrels)
    judged = set(judgments.query_ids.unique().to_pylist())
    if not judged & set(queries):
        raise OptionError(f"no judged query is in the topics ({len(queries)} topics, {len(judged)} judged queries, "
                          "none in common): check that the qrels and the topics use the same query ids.")
    factory, defaults, engine_name = _factory(engine, corpus, fields, id_field)
    if grid is not None:
        parsed = parse_grid(grid)
        names = tuple(parsed)
        settings = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*parsed.values())]
    else:
        spans = dict(ranges or (BM25_RANGES if engine is None else {}))
        if not spans:
            raise OptionError("--random needs the ranges of the parameters to draw (--range k1=0.2:2.0).")
        names = tuple(spans)
        settings = random_settings(random or 0, spans, rng=seed)
    unswept = [name for name in (baseline or {}) if name not in names]
    if unswept:  # it would be ignored: every setting, the baseline too, keeps the engine's value
        name = unswept[0]
        raise OptionError(
            f"--baseline {name}={(baseline or {})[name]}: {name!r} is not a swept parameter (the settings vary "
            f"{', '.join(names)}), so it would be ignored; the baseline is one setting of the swept parameters. "
            f"To hold {name} at a value in every setting, the baseline included, add --grid {name}=VALUE.")
    base_setting = {name: _number_or_text((baseline or {}).get(name, defaults.get(name))) for name in names}
    missing = [name for name, v in base_setting.items() if v is None]
    if missing:
        raise OptionError(f"no baseline value for {', '.join(missing)}: the engine has no default; give "
                          f"--baseline {missing[0]}=VALUE.")
    keyed = [tuple(_value_text(s[n]) for n in names) for s in settings]
    base_key = tuple(_value_text(base_setting[n]) for n in names)
    if base_key in keyed:
        base_index = keyed.index(base_key)
    else:
        settings.insert(0, base_setting)
        base_index = 0
    check = getattr(factory, "check", None)
    if check is not None:  # every setting's values, before the first is retrieved
        for setting in settings:
            check(setting)
    check_all = getattr(factory, "check_all", None)
    if check_all is not None:
        check_all(settings)
    qids = [q for q in queries if queries[q].strip()]
    texts = [queries[q] for q in qids]
    runs = []
    hashes = []
    report(0, len(settings))
    for i, setting in enumerate(settings):
        made = factory(setting)
        hashes.append(made.config_hash())
        q_col, d_col, s_col = _retrieve_columns(made, qids, texts, k)
        runs.append(Run(_arrow(q_col), _arrow(d_col), s_col, name=f"s{i}",
                        tag=f"{made.name}:{hashes[-1]}"))
        report(i + 1, len(settings))
    results = evaluate(judgments, runs, [metric], missing="zero")
    topic_set = set(queries)
    first = results.runs[0]
    keep = np.array([q in topic_set for q in first.query_ids.tolist()], dtype=bool)
    scores = np.vstack([r.column(0)[keep] for r in results.runs])
    stats = select(scores, base_index, folds=folds, rng=seed, test=test, correction=correction, alpha=alpha,
                   permutations=permutations)
    cleanup = getattr(factory, "forget", None)
    if cleanup is not None:
        cleanup()
    return SweepResult(
        measure=str(metric), names=names, settings=tuple(settings), baseline=base_index,
        query_ids=tuple(first.query_ids[keep].tolist()), scores=scores, seed=seed, engine=engine_name,
        config_hashes=tuple(hashes), seconds=time.perf_counter() - clock,
        runs=tuple(runs) if keep_runs else (),
        left_out={"judged_not_in_topics": len(judged - set(queries)),
                  "empty_queries": sum(1 for q, text in queries.items() if q in judged and not text.strip())},
        **stats,
    )


def _arrow(column: Any) -> Any:
    import pyarrow as pa

    return column if isinstance(column, pa.Array) else pa.array(column, pa.string())


class _EmbeddedFactory:
    def __init__(self, index: Any) -> None:
        self.index = index

    def __call__(self, setting: Mapping[str, Any]) -> Any:
        from serpeval.engines.embedded import parse_params

        return self.index.engine(**parse_params(setting))

    def check(self, setting: Mapping[str, Any]) -> None:
        from serpeval.engines.embedded import parse_params

        parse_params(setting)

    def check_all(self, settings: Sequence[Mapping[str, Any]]) -> None:
        """Refuse a swept ``delta`` that no setting's method reads (the settings would be equal)."""
        from serpeval.engines.embedded import parse_params

        if any("delta" in s for s in settings) and not any(
                parse_params(s)["method"] in ("bm25l", "bm25+") for s in settings):
            raise OptionError("delta is swept, but it applies to method=bm25l and method=bm25+ only and no setting "
                              "uses them: every value would give the same run. Add --grid method=bm25+ (or bm25l) "
                              "or drop delta.")

    def forget(self) -> None:
        self.index.forget()


def _factory(engine: Any, corpus: Any, fields: Any, id_field: Any
             ) -> tuple[Callable[[Mapping[str, Any]], Any], dict[str, Any], str]:
    if engine is None:
        from serpeval.engines.embedded import BM25_DEFAULTS, EmbeddedIndex

        if corpus is None:
            raise OptionError("give a corpus (--corpus DOCS.jsonl) for the embedded BM25 engine, or an engine "
                              "config (--engine CONFIG).")
        index = corpus if isinstance(corpus, EmbeddedIndex) else EmbeddedIndex.build(
            corpus, fields=fields, id_field=id_field)
        return _EmbeddedFactory(index), dict(BM25_DEFAULTS), "bm25"
    from serpeval.engines.http import http_engine, load_engine_config
    from serpeval.engines.retrieve import _no_corpus_options

    if corpus is not None:
        raise OptionError("give either a corpus (the embedded engine) or an engine config, not both.")
    _no_corpus_options(fields, id_field)
    config = load_engine_config(engine) if not isinstance(engine, Mapping) else dict(engine)
    first = http_engine(config)

    def make(setting: Mapping[str, Any]) -> Any:
        return http_engine(config, dict(setting))

    return make, dict(first.params), first.name


def _retrieve_columns(engine: Any, qids: list[str], texts: list[str], k: int
                      ) -> tuple[Any, Any, NDArray[np.float64]]:
    from serpeval.engines.embedded import BM25Engine

    if isinstance(engine, BM25Engine):
        return engine.index.run_columns(engine.rank(texts, k), qids)
    fetched = engine.fetch(texts, k)
    q_col: list[str] = []
    d_col: list[str] = []
    s_col: list[float] = []
    for qid, hits in zip(qids, fetched.hits, strict=True):
        for hit in hits or []:
            q_col.append(qid)
            d_col.append(hit.doc_id)
            s_col.append(hit.score)
    return q_col, d_col, np.asarray(s_col, dtype=np.float64)
