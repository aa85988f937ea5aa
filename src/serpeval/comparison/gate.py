"""``gate(qrels, baseline, candidate)``: should CI let this ranking change through?

A one-sided **non-inferiority** test per measure (the default rule). With the per-query
improvement ``d_q = candidate_q - baseline_q`` (sign flipped for lower-is-better measures)
and the allowed drop ``margin >= 0``:

    H0: mean(d) <= -margin   (the candidate is worse by more than the margin)
    H1: mean(d) >  -margin   (it is not: the change is non-inferior)

The chosen paired test is run one-sided (``alternative="greater"``) on ``d + margin``;
the gate passes when ``p <= alpha``, equivalently (for the t-test) when the one-sided
``1 - alpha`` lower confidence bound of ``mean(d)`` lies above ``-margin``. With several
measures the gate passes only if every measure passes; this intersection-union test keeps
the overall error at ``alpha`` without a correction (Berger 1982).

The burden of proof is on the candidate: with few queries or noisy measures a harmless
change can fail because non-inferiority cannot be shown. ``rule="no-significant-drop"``
reverses the burden: it fails only when the candidate is *significantly* worse than
``-margin`` (one-sided ``alternative="less"`` on ``d + margin``, Holm-corrected over the
measures), so it passes when the evidence is inconclusive.

Judged queries a run returns nothing for count as 0 by default (``missing="zero"``,
trec_eval's ``-c``): a candidate that stops answering a query has regressed on it, which
trec_eval's default (skip the query) would hide.

With ``margin = 0`` non-inferiority becomes a superiority test (the candidate must be
significantly better), and identical runs fail it; use a margin > 0.

The allowed drop (:class:`MaxDrop`) is **absolute**, in each measure's units (``0.01``: the
mean may fall by up to 0.01), or **relative** to each measure's baseline mean (``"1%"``:
``margin = 0.01 * |baseline mean|``, so a baseline nDCG@10 of 0.5 allows 0.005). A measure
bounded in [lo, hi] cannot drop by ``hi - lo`` or more, so such an absolute drop is
refused ("did you mean 5%?"): ``max_drop=5`` on nDCG would let every candidate through.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from serpeval.comparison.paired import (
    TIE_TOLERANCE,
    align_queries,
    canonical_test,
    check_evaluation_fields,
    paired_test,
    wins_ties_losses,
)
from serpeval.comparison.results import SystemCoverage, json_ready, qrels_warning
from serpeval.core.checks import RngLike, as_generator, check_level
from serpeval.core.errors import OptionError
from serpeval.core.options import check_rng, resolve, set_field
from serpeval.core.tabular import Tabular
from serpeval.core.ties import TiePolicy
from serpeval.measures import parse_measures
from serpeval.stats import paired_t
from serpeval.stats.paired import inverted_bound
from serpeval.stats.registry import PAIRED_TESTS
from serpeval.stats.validation import check_resamples

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.evaluation.results import Results
    from serpeval.measures import Measure
    from serpeval.ranking import Missing
    from serpeval.stats.validation import Alternative

__all__ = ["RULES", "GateCheck", "GateOptions", "GateResult", "MaxDrop", "Regression", "Rule", "check_max_drop", "gate",
           "gate_results", "parse_max_drop"]

Rule = Literal["non-inferiority", "no-significant-drop"]
RULES: tuple[Rule, ...] = get_args(Rule)

_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class MaxDrop:
    """The allowed drop of the gate (the non-inferiority margin), with its unit.

    Attributes:
        value: the absolute drop in each measure's units, or (``relative``) the fraction of
            each measure's baseline mean (0.01 for ``1%``); finite, >= 0, and below 1 when
            relative.
        relative: whether ``value`` is a fraction of the baseline mean.
    """

    value: float
    relative: bool = False

    @property
    def unit(self) -> str:
        """``absolute`` or ``relative``."""
        return "relative" if self.relative else "absolute"

    @property
    def text(self) -> str:
        """As a user writes it: ``0.01`` or ``1%``."""
        return f"{self.value * 100:g}%" if self.relative else f"{self.value:g}"

    def margin(self, baseline_mean: float) -> float:
        """The absolute allowed drop of a measure whose baseline mean is ``baseline_mean``."""
        return self.value * abs(baseline_mean) if self.relative else self.value

    def describe(self, baseline_mean: float, digits: int = 4) -> str:
        """How the margin of one measure was obtained, e.g. ``0.0050 = 1% of the baseline
        mean 0.5000`` or ``0.0100 absolute``."""
        if self.relative:
            return (f"{self.margin(baseline_mean):.{digits}f} = {self.text} of the baseline mean "
                    f"{baseline_mean:.{digits}f}")
        return f"{self.value:.{digits}f} absolute"


def parse_max_drop(value: float | str | MaxDrop, relative: bool = False, *,
                   option: str = "max_drop") -> MaxDrop:
    """The allowed drop from a number (absolute, or a fraction when ``relative``) or a text:
    ``"0.01"`` (absolute) or ``"1%"`` (relative to the baseline mean).

    Refused, naming ``option``: anything but a plain decimal or a decimal followed by one
    ``%`` (``"5%%"``, ``"1e"``), ``inf`` and ``nan``, a negative drop, a relative drop of
    100% or more (it lets every candidate through). Whether an absolute drop fits the
    measures is :func:`check_max_drop`'s question.

    Raises:
        OptionError: the value is not a possible allowed drop.
    """
    if isinstance(value, MaxDrop):
        return value
    form = "a number (0.01: absolute, in the measure's units) or a percentage (1%: relative " \
           "to the baseline mean)"
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        body = text[:-1].strip() if percent else text
        if not _DECIMAL.fullmatch(body):
            finite = body.lower().lstrip("+-") not in ("inf", "infinity", "nan")
            raise OptionError(f"{option} must be {form if finite else 'a finite number'}; "
                              f"got {value!r}.")
        number = float(body) / 100.0 if percent else float(body)
        relative = relative or percent
    elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        number = float(value)
        if not math.isfinite(number):
            raise OptionError(f"{option} must be a finite number; got {value!r}.")
    else:
        raise OptionError(f"{option} must be {form}; got {value!r}.")
    shown = repr(value) if isinstance(value, str) else \
        f"{number:g} (= {number * 100:g}%)" if relative else f"{number:g}"
    if number < 0:
        raise OptionError(f"{option} must be >= 0 (the drop the candidate is allowed); got "
                          f"{shown}. Use 0 to require a significant improvement.")
    if relative and number >= 1:
        raise OptionError(f"{option} {shown}: a relative drop must be below 100% of the "
                          "baseline mean (a drop of 100% or more lets every candidate through); "
                          "e.g. 1%.")
    return MaxDrop(number + 0.0 if number else 0.0, relative)  # "-0" is 0


def check_max_drop(drop: MaxDrop, measures: Iterable[Measure], *, option: str = "max_drop") -> None:
    """Refuse an absolute drop that no bounded measure can make (``--max-drop 5`` on nDCG).

    A measure whose values lie in ``[lo, hi]`` (its spec's ``bounds``) can drop by at most
    ``hi - lo``; an allowed drop that large lets every candidate through, so it is almost
    certainly a percentage written without its ``%``.

    Raises:
        OptionError: naming the measure, its range and the percentage that was probably meant.
    """
    if drop.relative:
        return
    for m in measures:
        if m.spec.bounds is None:
            continue
        lo, hi = m.spec.bounds
        width = hi - lo
        if drop.value >= width:
            hint = f" Did you mean {drop.text}%?" if drop.value < 100 else ""
            raise OptionError(
                f"{option} {drop.text} is an absolute drop, but {m} lies in [{lo:g}, {hi:g}]: "
                f"an allowed drop of {width:g} or more lets every candidate through.{hint} Give "
                f"an absolute drop below {width:g} (e.g. 0.01) or a relative one (e.g. 1%)."
            )


@dataclass(frozen=True)
class Regression:
    """A query on which the candidate scored worse than the baseline.

    Attributes:
        query_id: the query.
        baseline, candidate: the two runs' values on it, as the measure gives them.
        delta: ``candidate - baseline`` oriented like :attr:`GateCheck.delta`, so that
            positive is better: a drop is negative for every measure (the sign is flipped
            for lower-is-better measures such as ``Unjudged@10`` or ``RBPResid``).
    """

    query_id: str
    baseline: float
    candidate: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"query_id": self.query_id, "baseline": self.baseline,
                "candidate": self.candidate, "delta": self.delta}


@dataclass(frozen=True)
class GateCheck:
    """The decision on one measure.

    Attributes:
        measure: canonical measure name.
        queries: queries compared.
        baseline_mean, candidate_mean: aggregates over those queries.
        delta: ``candidate_mean - baseline_mean``, oriented so that positive is better.
        margin: the allowed drop (absolute, >= 0), in the measure's units: ``max_drop``
            itself, or ``max_drop * |baseline_mean|`` for a relative drop.
        bound: the one-sided ``1 - alpha`` confidence bound of ``delta`` that decides:
            the lower bound for non-inferiority, the upper bound for no-significant-drop.
        p_value: p-value of the one-sided test of ``H0`` (see the module docstring).
        p_value_corrected: Holm-corrected over the measures (no-significant-drop), else
            the same as ``p_value``.
        passed: this measure lets the change through.
        wins, ties, losses: queries where the candidate is better, equal, worse.
        regressions: the worst per-query drops, largest first (each delta oriented like
            ``delta``: negative).
    """

    measure: str
    queries: int
    baseline_mean: float
    candidate_mean: float
    delta: float
    margin: float
    bound: float
    p_value: float
    p_value_corrected: float
    passed: bool
    wins: int
    ties: int
    losses: int
    regressions: tuple[Regression, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (regressions as a list of dicts)."""
        out = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "regressions"}
        out["regressions"] = [r.to_dict() for r in self.regressions]
        return out


@dataclass(frozen=True)
class GateResult(Tabular):
    """What :func:`gate` returns: the decision, one :class:`GateCheck` per measure, the context.

    ``bool(result)`` is the decision; :meth:`explain` is the one-screen text for a CI log and
    :meth:`to_dict` the JSON report.
    """

    passed: bool
    rule: Rule
    test: str
    method: str
    alpha: float
    max_drop: float
    relative: bool
    baseline: str
    candidate: str
    checks: tuple[GateCheck, ...]
    coverage: tuple[SystemCoverage, ...]
    rules: tuple[str, ...]
    inputs: dict[str, Any] | None = None
    """What the decision was computed from (:func:`~serpeval.evaluation.results.input_signatures`)."""
    warnings: tuple[str, ...] = ()
    """Counted warnings about the inputs (baseline and candidate evaluated against different qrels)."""

    def __bool__(self) -> bool:
        return self.passed

    @property
    def exit_code(self) -> int:
        """0 when the gate passes, 1 when it fails."""
        return 0 if self.passed else 1

    @property
    def drop(self) -> MaxDrop:
        """The allowed drop with its unit."""
        return MaxDrop(self.max_drop, self.relative)

    def allowed_drop(self, digits: int = 4) -> str:
        """The allowed drop in words, with the absolute threshold of each measure."""
        drop = self.drop
        if not drop.relative:
            return f"allowed drop: {drop.value:.{digits}f} absolute, in each measure's units"
        each = "; ".join(f"{c.measure} {drop.describe(c.baseline_mean, digits)}" for c in self.checks)
        return f"allowed drop: {drop.text} of each measure's baseline mean (relative): {each}"

    def notes(self) -> list[str]:
        """Coverage and method notes."""
        notes = [*(f"warning: {w}" for w in self.warnings), f"p-values: {self.method}", self.allowed_drop()]
        for c in self.coverage:
            if c.dropped:
                notes.append(f"{c.system}: {len(c.dropped)} of {c.evaluated} evaluated queries are "
                             "not in both runs and were left out")
        if self.rule == "non-inferiority" and any(c.margin == 0 for c in self.checks):
            notes.append("margin 0: non-inferiority becomes superiority (the candidate must be "
                         "significantly better); identical runs fail. Use --max-drop > 0.")
        return notes

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per measure: the :class:`GateCheck` fields without the regressions, plus
        the number of regressions listed (:meth:`to_dict` has them in full)."""
        rows = []
        for check in self.checks:
            row = {f: getattr(check, f) for f in check.__dataclass_fields__ if f != "regressions"}
            row["regressions"] = len(check.regressions)
            rows.append(row)
        return rows

    def _html_caption(self) -> str:
        decision = "pass" if self.passed else "fail"
        return f"gate {decision}: {self.candidate} vs {self.baseline} ({self.rule}, {self.drop.text})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON report for the CI log (non-finite numbers become None)."""

        return json_ready({
            "decision": "pass" if self.passed else "fail", "passed": self.passed,
            "exit_code": self.exit_code, "rule": self.rule, "test": self.test,
            "method": self.method, "alpha": self.alpha, "max_drop": self.max_drop,
            "relative": self.relative, "max_drop_unit": self.drop.unit,
            "max_drop_text": self.drop.text, "baseline": self.baseline,
            "candidate": self.candidate,
            "checks": [{**c.to_dict(), "margin_unit": "absolute",
                        "margin_from": self.drop.describe(c.baseline_mean, 6)} for c in self.checks],
            "coverage": [c.to_dict() for c in self.coverage], "notes": self.notes(),
            "rules": list(self.rules),
            "inputs": self.inputs, "warnings": list(self.warnings), "warning_count": len(self.warnings),
        })


@dataclass(frozen=True)
class GateOptions:
    """The options of :func:`gate` and :func:`gate_results` (module docstring).

    Every field is checked when the object is built (:class:`OptionError` naming it;
    ``test`` is stored canonical); vary one with :func:`dataclasses.replace`.
    ``gate_results`` reads the fields from ``max_drop`` to ``strict``; ``gate`` reads them
    all. The old keywords (``gate(qrels, a, b, max_drop="1%")``) map onto these fields for
    one release.

    >>> o = GateOptions(max_drop="1%", test="wilcoxon")
    >>> o.drop.relative, o.drop.value, o.missing
    (True, 0.01, 'zero')
    """

    max_drop: float | str | MaxDrop = 0.01
    """The allowed drop (non-inferiority margin), >= 0: absolute in the measure's units, a
    fraction of the baseline mean when ``relative``, or a text (``"0.01"``, ``"1%"``)."""

    relative: bool = False
    """Read a numeric ``max_drop`` as a fraction of each measure's baseline mean."""

    alpha: float = 0.05
    """One-sided significance level, in (0, 0.5)."""

    rule: Rule = "non-inferiority"
    """``non-inferiority`` (pass only when shown) or ``no-significant-drop`` (fail only when
    a drop beyond the margin is shown)."""

    test: str = "t"
    """The paired test: ``t``, ``wilcoxon``, ``randomization`` or ``bootstrap`` (aliases in any
    case, stored canonical)."""

    n_resamples: int = 10_000
    """Permutations / bootstrap resamples, 1 .. MAX_RESAMPLES."""

    rng: RngLike = None
    """Seed or generator of the resampling tests."""

    top: int = 10
    """Per-query regressions kept per measure, >= 0."""

    strict: bool = False
    """Refuse runs evaluated on different queries."""

    missing: Missing = "zero"
    """Judged queries a run has no results for count as 0 (``zero``, the gate's default: a
    candidate that stops answering has regressed), or ``skip`` / ``error`` (``gate`` only)."""

    depth: int | None = None
    """Evaluate each run's top ``depth`` documents only (``gate`` only)."""

    judged_only: bool = False
    """Drop unjudged documents before ranking (``gate`` only)."""

    ties: TiePolicy = "trec_eval"
    """The tie policy of the evaluation (:func:`serpeval.evaluate`; ``gate`` only)."""

    def __post_init__(self) -> None:
        parse_max_drop(self.max_drop, self.relative)
        set_field(self, "relative", bool(self.relative))
        set_field(self, "alpha", check_level(self.alpha, upper=0.5))
        if self.rule not in RULES:
            raise OptionError(f"rule must be one of {', '.join(RULES)}; got {self.rule!r}.")
        set_field(self, "test", canonical_test(self.test))
        set_field(self, "n_resamples", check_resamples(self.n_resamples, "n_resamples"))
        check_rng(self.rng)
        if isinstance(self.top, bool) or not isinstance(self.top, (int, np.integer)) or self.top < 0:
            raise OptionError(f"top must be an integer >= 0; got {self.top!r}.")
        set_field(self, "strict", bool(self.strict))
        check_evaluation_fields(self)

    @property
    def drop(self) -> MaxDrop:
        """The allowed drop, parsed (:func:`parse_max_drop`)."""
        return parse_max_drop(self.max_drop, self.relative)


#: The fields :func:`gate_results` reads (an evaluation is already done).
RESULTS_FIELDS = ("max_drop", "relative", "alpha", "rule", "test", "n_resamples", "rng", "top", "strict")


def _bound(test: str, tested: Any, gain: NDArray[np.float64], shift: NDArray[np.float64],
           alternative: Alternative, alpha: float) -> NDArray[np.float64]:
    """The one-sided bound of the location the deciding test is about, per measure (per-query
    units, oriented as ``gain``), so that a check passes exactly when it clears the margin:

    - the test's own interval (t, bootstrap), of the mean: the test ran on ``gain + shift``
      (the margin per query), so ``shift`` comes off again;
    - the signed-rank test inverted (:func:`~serpeval.stats.paired.inverted_bound`): the
      Hodges-Lehmann bound of the pseudo-median, which is what it decides on (a t bound of
      the mean beside a Wilcoxon decision could contradict it);
    - the t bound of the mean for the randomization test, which tests the mean by sign flips.
    """
    spec = PAIRED_TESTS[test]
    if spec.location != "mean":
        return np.atleast_1d(inverted_bound(
            lambda rows: paired_test(test, rows, alternative=alternative, confidence=1.0 - alpha).p_value,
            gain, alternative=alternative, alpha=alpha))
    own = spec.interval
    source = tested if own else paired_t(gain, alternative=alternative, confidence=1.0 - alpha)
    side = np.atleast_1d(np.asarray(source.ci_low if alternative == "greater" else source.ci_high,
                                    dtype=np.float64))
    return side - shift if own else side


def gate_results(
    results: Results,
    measures: str | Measure | Iterable[str | Measure] | None = None,
    options: GateOptions | None = None,
    **keywords: Any,
) -> GateResult:
    """The gate on an evaluation already done: run 0 is the baseline, run 1 the candidate.

    ``measures`` picks some of the evaluated measures (default all); ``options``: a
    :class:`GateOptions`, of which the fields from ``max_drop`` to ``strict`` are read (the
    evaluation options were the evaluation's); ``keywords``: those fields as keywords, kept
    for one release. See :func:`gate` for the options.
    """
    o = resolve(GateOptions, options, keywords, "gate_results", allowed=RESULTS_FIELDS)
    max_drop, relative, alpha, rule, test, n_resamples, rng, top, strict = (
        o.max_drop, o.relative, o.alpha, o.rule, o.test, o.n_resamples, o.rng, o.top, o.strict)
    from serpeval.evaluation.results import qrels_signatures
    from serpeval.stats.multiplicity import holm

    test = canonical_test(test)
    if rule not in RULES:
        raise OptionError(f"rule must be one of {', '.join(RULES)}; got {rule!r}.")
    alpha = check_level(alpha, upper=0.5)
    drop = parse_max_drop(max_drop, relative)
    resamples = check_resamples(n_resamples, "n_resamples")
    if len(results.runs) != 2:
        raise OptionError(f"the gate compares exactly two runs (baseline, candidate); got "
                          f"{len(results.runs)}.")
    measures_ = results.measures if measures is None else parse_measures(measures)
    if not measures_:
        raise OptionError("the gate needs at least one measure to check; got none (a gate "
                          "with nothing to check would pass vacuously).")
    geometric = [str(m) for m in measures_ if m.spec.aggregate == "gmean"]
    if geometric:
        raise OptionError(f"{', '.join(geometric)}: a margin on a geometric mean has no "
                          "per-query reading; gate the arithmetic measure (e.g. AP for GMAP).")
    absent = [str(m) for m in measures_ if m not in results.measures]
    if absent:
        raise OptionError(f"{', '.join(absent)} not evaluated; evaluated: "
                          f"{', '.join(map(str, results.measures))}.")
    check_max_drop(drop, measures_)
    query_ids, values, coverage = align_queries(results, strict=strict)
    values = values[:, [results.measures.index(m) for m in measures_]]
    n = len(query_ids)
    orient = np.array([1.0 if m.spec.higher_is_better else -1.0 for m in measures_])
    gain = (values[1] - values[0]) * orient[:, None]              # [measures, queries]
    base_means = np.array([m.aggregate(values[0, j]) for j, m in enumerate(measures_)])
    cand_means = np.array([m.aggregate(values[1, j]) for j, m in enumerate(measures_)])
    per_query = np.array([n if m.spec.aggregate == "sum" else 1.0 for m in measures_])
    margin = np.array([drop.margin(mean) for mean in base_means], dtype=np.float64)
    shifted = gain + (margin / per_query)[:, None]
    alternative: Alternative = "greater" if rule == "non-inferiority" else "less"
    level = 1.0 - alpha
    tested = paired_test(test, shifted, alternative=alternative, confidence=level,
                         n_resamples=resamples, rng=as_generator(rng))
    p = np.atleast_1d(np.asarray(tested.p_value, dtype=np.float64))
    bound = _bound(test, tested, gain, margin / per_query, alternative, alpha) * per_query
    corrected = holm(p) if rule == "no-significant-drop" else p
    passed = corrected <= alpha if rule == "non-inferiority" else corrected > alpha

    wins, ties, losses = wins_ties_losses(gain)                 # gain: positive is better
    checks = []
    for j, m in enumerate(measures_):
        worst = np.argsort(gain[j], kind="stable")[:max(0, top)]
        regressions = tuple(
            Regression(str(query_ids[q]), float(values[0, j, q]), float(values[1, j, q]),
                       float(gain[j, q]))          # oriented, like the check's delta
            for q in worst if gain[j, q] < -TIE_TOLERANCE)
        checks.append(GateCheck(
            measure=str(m), queries=n, baseline_mean=float(base_means[j]),
            candidate_mean=float(cand_means[j]),
            delta=float((cand_means[j] - base_means[j]) * orient[j]), margin=float(margin[j]),
            bound=float(bound[j]), p_value=float(p[j]), p_value_corrected=float(corrected[j]),
            passed=bool(passed[j]), wins=int(wins[j]), ties=int(ties[j]), losses=int(losses[j]),
            regressions=regressions))
    warning = qrels_warning(qrels_signatures(results.settings, results.runs), [r.name for r in results.runs])
    method = tested.method
    if rule == "no-significant-drop" and len(checks) > 1:
        method += " (Holm over measures)"
    return GateResult(
        passed=all(c.passed for c in checks), rule=rule, test=test, method=method,
        alpha=float(alpha), max_drop=drop.value, relative=drop.relative,
        baseline=results.runs[0].name, candidate=results.runs[1].name, checks=tuple(checks),
        coverage=coverage, rules=tuple(results.settings.rules()), inputs=results.inputs(),
        warnings=() if warning is None else (warning,),
    )


def gate(
    qrels: Any,
    baseline: Any,
    candidate: Any,
    measures: str | Measure | Iterable[str | Measure] = ("nDCG@10",),
    options: GateOptions | None = None,
    **keywords: Any,
) -> GateResult:
    """Decide whether ``candidate`` may replace ``baseline``: a one-sided non-inferiority test.

    Args:
        qrels: judgments (anything :func:`serpeval.evaluate` accepts).
        baseline, candidate: the two runs (paths, :class:`~serpeval.Run`, dicts, DataFrames).
        measures: the measures that must all pass.
        options: a :class:`GateOptions` (default ``GateOptions()``), its fields below.
        keywords: those fields as keywords (``max_drop="1%"``), kept for one release; one
            that conflicts with ``options`` is a :class:`TypeError`
            (:func:`serpeval.core.options.resolve`).
        max_drop: the allowed drop (the non-inferiority margin), >= 0: a number, absolute in
            the measure's units (or a fraction of the baseline mean when ``relative``), or a
            text: ``"0.01"`` (absolute) or ``"1%"`` (relative to each measure's baseline
            mean). An absolute drop a bounded measure cannot make (``5`` on nDCG, in [0, 1])
            and a relative one of 100% or more are refused (:class:`OptionError`).
        relative: read a numeric ``max_drop`` as a fraction of the baseline mean.
        alpha: one-sided significance level.
        rule: ``"non-inferiority"`` (default; pass only when non-inferiority is shown) or
            ``"no-significant-drop"`` (fail only when a drop beyond the margin is shown).
        test: ``"t"``, ``"wilcoxon"``, ``"randomization"`` or ``"bootstrap"`` (typed ``str``:
            aliases such as ``student`` or ``fisher``, in any case, are accepted; see
            :func:`~serpeval.comparison.compare.canonical_test`).
        n_resamples: permutations / bootstrap resamples.
        rng: seed or generator for the resampling tests.
        top: per-query regressions kept per measure.
        strict: refuse runs evaluated on different queries.
        missing: judged queries a run has no results for count as 0 (``"zero"``, the
            default here: a candidate that stops answering a query regressed on it), or are
            skipped (``"skip"``, trec_eval's default) or refused (``"error"``).
        depth, judged_only: evaluation options (see :func:`serpeval.evaluate`).

    Returns:
        :class:`GateResult`; ``result.exit_code`` is 0 (pass) or 1 (fail).

    Examples:
        >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
        >>> run = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 2.0, "x": 1.0},
        ...        "q3": {"x": 2.0, "c": 1.0}}
        >>> gate(qrels, run, run, ["RR"], max_drop=0.01).passed   # identical: non-inferior
        True
    """
    from serpeval.evaluation.evaluate import evaluate

    o = resolve(GateOptions, options, keywords, "gate")   # a bad margin is refused before any reading
    check_max_drop(o.drop, parse_measures(measures))
    results = evaluate(qrels, [baseline, candidate], measures, missing=o.missing,
                       depth=o.depth, judged_only=o.judged_only, ties=o.ties)
    return gate_results(results, None, o)
