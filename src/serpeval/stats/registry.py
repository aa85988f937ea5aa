"""The registry of statistics: one frozen entry per statistic, one dict per kind.

``comparison/``, ``judgments/`` and the command line's ``choices=`` read these tables, so
a statistic is declared once. To add one: write the function in its ``stats/`` module
(arrays in, numbers out) and add one line to the table of its kind.

- :data:`PAIRED_TESTS`: tests of the mean of paired per-query differences.
- :data:`CORRECTIONS`: multiple-comparison corrections.
- :data:`AGREEMENT`: agreement coefficients (labels, rankings).
- :data:`GROUP_TESTS`: tests across groups of queries (the interaction ANOVA).
- :data:`TWO_SAMPLE`: two-sample tests and effects of an experiment's arms, from per-arm
  summaries (means, per-unit variances, counts).
- :data:`SAMPLE_RATIO`: checks of the units' split between variants.
- :data:`SEQUENTIAL`: always-valid tests for looking at an experiment repeatedly.
- :data:`ONE_SAMPLE`: tests of a zero mean (sign test, t-test from sums) and the cluster
  bootstrap of a ratio of sums (interleaving outcomes, per-unit preferences).
- :data:`POWER`: power, sample sizes and minimum detectable effects.

An entry names its function as ``"module:attribute"`` and imports it on first use
(:attr:`Statistic.function`): this module imports nothing heavy, so the command line can
build its choices from it without loading NumPy or SciPy.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args

from serpeval.core.errors import OptionError

__all__ = ["AGREEMENT", "ALTERNATIVES", "CORRECTIONS", "GROUP_TESTS", "ONE_SAMPLE", "PAIRED_TESTS", "POWER",
           "SAMPLE_RATIO", "SEQUENTIAL", "TESTS", "TWO_SAMPLE",
           "AgreementSpec", "CorrectionSpec", "PairedTestSpec", "Statistic", "Test", "canonical",
           "correction_names"]

#: The paired tests' canonical names (a ``Literal`` for type checkers; the same as the keys
#: of :data:`PAIRED_TESTS`, which a test checks).
Test = Literal["t", "wilcoxon", "randomization", "bootstrap"]
#: The alternatives of a one- or two-sided test.
ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass(frozen=True, kw_only=True)
class Statistic:
    """One registered statistic.

    Attributes:
        name: the canonical name (the key of its table; what ``choices=`` offers).
        aliases: other accepted spellings (matched ignoring case, like the name).
        label: the name in reports' sentences ("paired t-test", "Holm").
        description: one line: what it computes.
        target: ``"module:attribute"`` of the function; None when the caller computes it
            from more than the table's common input (see the kind's fields).
    """

    name: str
    aliases: tuple[str, ...] = ()
    label: str
    description: str
    target: str | None

    @property
    def function(self) -> Callable[..., Any]:
        """The function, imported on first use."""
        if self.target is None:
            raise OptionError(f"{self.name!r} has no function of its own: {self.description}")
        module, _, attribute = self.target.partition(":")
        function: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
        return function


@dataclass(frozen=True, kw_only=True)
class PairedTestSpec(Statistic):
    """A paired test: ``function(x, y=None, *, alternative, confidence, ...) -> PairedTest``.

    Attributes:
        alternatives: the alternatives it tests.
        resamples: the keyword taking the number of resamples (and then ``rng`` too), or
            None for an analytic test.
        options: further keywords it takes from the common options (``ci``).
        interval: it gives its own interval of the mean difference (others give NaN).
        tukey: its all-pairs form for ``correction="tukey"`` (``"tukey_hsd"``,
            ``"randomized_tukey"`` in :mod:`serpeval.stats.tukey`), or None.
        location: what its null hypothesis is about: ``"mean"`` (of the differences) or
            ``"pseudo-median"`` (the Hodges-Lehmann location a signed-rank test is about;
            a bound of it comes from inverting the test, :func:`serpeval.stats.paired.inverted_bound`).
    """

    alternatives: tuple[str, ...] = ALTERNATIVES
    resamples: str | None = None
    options: tuple[str, ...] = ()
    interval: bool = False
    tukey: str | None = None
    location: str = "mean"


@dataclass(frozen=True, kw_only=True)
class CorrectionSpec(Statistic):
    """A multiple-comparison correction: ``function(p) -> adjusted p`` along the last axis.

    Attributes:
        controls: the error rate it controls (``"FWER"``, ``"FDR"``, or ``""``).
        from_p_values: it adjusts p-values alone; False when it needs the scores of all
            systems (Tukey: the caller runs the paired test's ``tukey`` form).
    """

    controls: str = ""
    from_p_values: bool = True


@dataclass(frozen=True, kw_only=True)
class AgreementSpec(Statistic):
    """An agreement coefficient.

    Attributes:
        data: what it reads: ``"confusion"`` (a k x k table of two label sets),
            ``"coincidence"`` (Krippendorff's coincidence matrix), ``"category counts"``
            (items x categories), ``"scores"`` (two score vectors over the same systems).
        weights: the disagreement weights it applies (``"none"``, ``"linear"``,
            ``"quadratic"``, ``"ordinal"``), when it has any.
        ties: how tied values are treated, in words.
    """

    data: str
    weights: str = ""
    ties: str = ""


_S = TypeVar("_S", bound=Statistic)


def _table(*specs: _S) -> dict[str, _S]:
    return {spec.name: spec for spec in specs}


#: Paired tests, in the order offered (``t`` is the default everywhere).
PAIRED_TESTS: dict[str, PairedTestSpec] = _table(
    PairedTestSpec(name="t", aliases=("student", "t-test", "ttest"), label="paired t-test",
                   description="Student's paired t-test of the mean difference (scipy.stats.ttest_rel)",
                   target="serpeval.stats.paired:paired_t", interval=True, tukey="tukey_hsd"),
    PairedTestSpec(name="wilcoxon", aliases=("signed-rank",), label="Wilcoxon signed-rank test",
                   description="Wilcoxon signed-rank test of the differences (scipy.stats.wilcoxon)",
                   target="serpeval.stats.paired:wilcoxon", location="pseudo-median"),
    PairedTestSpec(name="randomization", aliases=("fisher", "permutation"), label="randomization test",
                   description="Fisher's randomization test by sign flips, p = (b+1)/(m+1)",
                   target="serpeval.stats.permutation:randomization_test", resamples="n_permutations",
                   tukey="randomized_tukey"),
    PairedTestSpec(name="bootstrap", label="paired bootstrap test",
                   description="paired bootstrap: studentized p-value, BCa or percentile interval",
                   target="serpeval.stats.bootstrap:paired_bootstrap", resamples="n_resamples",
                   options=("ci",), interval=True),
)
#: The paired tests' names, in order.
TESTS: tuple[Test, ...] = get_args(Test)

#: Multiple-comparison corrections, in the order offered (``holm`` is the default).
CORRECTIONS: dict[str, CorrectionSpec] = _table(
    CorrectionSpec(name="holm", label="Holm", controls="FWER",
                   description="Holm's step-down adjustment (statsmodels 'holm')",
                   target="serpeval.stats.multiplicity:holm"),
    CorrectionSpec(name="bonferroni", aliases=("bonf",), label="Bonferroni", controls="FWER",
                   description="Bonferroni: min(1, m p)", target="serpeval.stats.multiplicity:bonferroni"),
    CorrectionSpec(name="bh", aliases=("fdr_bh", "benjamini-hochberg"), label="Benjamini-Hochberg",
                   controls="FDR", description="Benjamini-Hochberg step-up adjustment (statsmodels 'fdr_bh')",
                   target="serpeval.stats.multiplicity:benjamini_hochberg"),
    CorrectionSpec(name="tukey", label="Tukey HSD", controls="FWER", from_p_values=False, target=None,
                   description="Tukey HSD over all pairs of systems: the paired test's all-pairs form"),
    CorrectionSpec(name="none", label="no", description="no adjustment",
                   target="serpeval.stats.multiplicity:unadjusted"),
)

#: Agreement coefficients (assessors' labels, systems' orderings).
AGREEMENT: dict[str, AgreementSpec] = _table(
    AgreementSpec(name="observed", aliases=("p_o",), label="agreement p_o", data="confusion",
                  description="share of items given the same label: trace(C) / sum(C)",
                  target="serpeval.stats.agreement:observed_agreement"),
    AgreementSpec(name="kappa", aliases=("cohen",), label="Cohen kappa", data="confusion", weights="none",
                  description="Cohen's kappa, unweighted (sklearn cohen_kappa_score)",
                  target="serpeval.stats.agreement:cohen_kappa"),
    AgreementSpec(name="kappa_linear", label="Cohen kappa (linear)", data="confusion", weights="linear",
                  description="Cohen's kappa, weights |i - j| on the grades",
                  target="serpeval.stats.agreement:cohen_kappa"),
    AgreementSpec(name="kappa_quadratic", label="Cohen kappa (quadratic)", data="confusion",
                  weights="quadratic", description="Cohen's kappa, weights (i - j)^2 on the grades",
                  target="serpeval.stats.agreement:cohen_kappa"),
    AgreementSpec(name="alpha", aliases=("krippendorff",), label="Krippendorff alpha (ordinal)",
                  data="value counts", weights="ordinal",
                  description="Krippendorff's ordinal alpha (the krippendorff package; "
                              "alpha_from_coincidences for coincidence matrices)",
                  target="serpeval.stats.agreement:krippendorff_alpha"),
    AgreementSpec(name="fleiss", aliases=("fleiss_kappa",), label="Fleiss kappa", data="category counts",
                  description="Fleiss' kappa of 3+ label sets, the same number of labels per item",
                  target="serpeval.stats.agreement:fleiss_kappa"),
    AgreementSpec(name="tau", aliases=("tau_b", "kendall"), label="Kendall tau-b", data="scores",
                  ties="values within MEAN_TIE_RTOL of the magnitude tie (tau-b leaves ties out)",
                  description="Kendall's tau-b of two orderings of the same systems",
                  target="serpeval.stats.agreement:kendall_tau"),
    AgreementSpec(name="tau_ap", label="tau_AP", data="scores",
                  ties="pairs tied in either ordering left out, as tau-b leaves them out",
                  description="AP correlation of an ordering against a reference (Yilmaz et al. 2008)",
                  target="serpeval.stats.agreement:tau_ap"),
)

#: Tests across groups of queries.
GROUP_TESTS: dict[str, Statistic] = _table(
    Statistic(name="interaction", aliases=("anova", "treatment-x-group"), label="interaction test",
              description="one-way ANOVA F of per-query deltas across groups, permutation p-value "
                          "(memberships may overlap; the F-distribution p only for disjoint groups)",
              target="serpeval.stats.interaction:interaction_test"),
)

#: Two-sample tests and effects of an experiment's arms (``online.experiments`` runs them on
#: the per-variant moments the log engine returns).
TWO_SAMPLE: dict[str, Statistic] = _table(
    Statistic(name="z", aliases=("delta",), label="delta-method z-test",
              description="difference of two means from summaries, z with the delta-method variance",
              target="serpeval.stats.effects:compare_means"),
    Statistic(name="welch", aliases=("welch-t",), label="Welch t-test",
              description="difference of two means from summaries, Welch's t (compare_means use_t=True; "
                          "scipy.stats.ttest_ind_from_stats equal_var=False)",
              target="serpeval.stats.effects:compare_means"),
    Statistic(name="two_proportion", aliases=("proportions",), label="two-proportion z-test",
              description="pooled z of two shares, unpooled (Wald) interval (statsmodels proportions_ztest)",
              target="serpeval.stats.effects:two_proportion_ztest"),
    Statistic(name="cuped", label="CUPED", target="serpeval.stats.effects:cuped",
              description="CUPED adjustment of ratio metrics by their pre-period value (Deng et al. 2013)"),
)

#: Checks of the units' split between variants.
SAMPLE_RATIO: dict[str, Statistic] = _table(
    Statistic(name="srm", aliases=("chi2",), label="sample-ratio check", target="serpeval.stats.srm:srm_check",
              description="chi-square goodness of fit of units per variant to the planned shares "
                          "(scipy.stats.chisquare)"),
)

#: Always-valid tests for repeated looks.
SEQUENTIAL: dict[str, Statistic] = _table(
    Statistic(name="msprt", aliases=("always-valid",), label="mSPRT", target="serpeval.stats.sequential:always_valid",
              description="mixture SPRT: always-valid p-values and confidence sequences (Johari et al. 2017)"),
)

#: One-sample tests of a zero mean, and the cluster bootstrap (``online.interleaving`` runs
#: them on outcomes, per-unit sums and pairwise preferences).
ONE_SAMPLE: dict[str, Statistic] = _table(
    Statistic(name="sign", aliases=("sign-test", "binomial"), label="sign test",
              target="serpeval.stats.one_sample:sign_test",
              description="exact two-sided binomial test of successes in trials against 1/2 (scipy.stats.binomtest)"),
    Statistic(name="t", aliases=("t-test", "ttest_1samp"), label="one-sample t-test",
              target="serpeval.stats.one_sample:t_test_from_sums",
              description="t-test of mean = 0 from the sum, the sum of squares and n (scipy.stats.ttest_1samp)"),
    Statistic(name="cluster_bootstrap", aliases=("bootstrap",), label="cluster bootstrap",
              target="serpeval.stats.one_sample:cluster_bootstrap_ratio",
              description="ratio of sums over clusters (users) drawn with replacement, their observations along"),
    Statistic(name="cluster_mean", aliases=("cluster-robust",), label="cluster-robust mean",
              target="serpeval.stats.importance:cluster_mean_ci",
              description="mean with a cluster-robust (sandwich) normal interval"),
    Statistic(name="cluster_ratio", aliases=("self-normalised",), label="cluster-robust ratio",
              target="serpeval.stats.importance:cluster_ratio_ci",
              description="ratio of sums with a delta-method cluster-robust normal interval"),
    Statistic(name="cluster_bootstrap_ci", label="cluster bootstrap interval",
              target="serpeval.stats.importance:cluster_bootstrap_ci",
              description="percentile interval of a ratio of sums over clusters drawn with replacement (seeded)"),
    Statistic(name="ess", aliases=("effective_sample_size",), label="effective sample size",
              target="serpeval.stats.importance:effective_sample_size",
              description="Kish's (sum w)^2 / sum w^2 of importance weights"),
)

#: Power, sample sizes and minimum detectable effects.
POWER: dict[str, Statistic] = _table(
    Statistic(name="power", label="power of a two-arm z-test", target="serpeval.stats.power:power",
              description="power of a two-sided two-arm z-test of means at a given effect and size"),
    Statistic(name="sample_size", label="sample size of a two-arm z-test", target="serpeval.stats.power:sample_size",
              description="control units (ratio x as many treated) a two-arm z-test needs for a target power"),
    Statistic(name="mde", label="minimum detectable effect", target="serpeval.stats.power:mde",
              description="smallest effect a two-arm z-test detects with the target power"),
    Statistic(name="sign_test_sample_size", aliases=("sign",), label="sample size of a sign test",
              target="serpeval.stats.power:sign_test_sample_size",
              description="non-tied observations a two-sided sign test needs to detect P(win) != 1/2"),
    Statistic(name="one_sample_power", aliases=("normal_power",), label="power of a one-sample test",
              target="serpeval.stats.one_sample:normal_power",
              description="normal-approximation power of a one-sample test of mean = 0, and the size it needs"),
)


def canonical(table: Mapping[str, _S], name: object, what: str, *, extra: tuple[str, ...] = ()) -> str:
    """The canonical name in ``table`` of ``name`` (a name or an alias, in any case).

    Raises:
        OptionError: no entry is named so; the message lists the choices (``extra`` are
            offered after the table's names).
    """
    key = str(name).lower()
    for spec in table.values():
        if key == spec.name.lower() or key in (alias.lower() for alias in spec.aliases):
            return spec.name
    choices = ", ".join([*table, *extra])
    raise OptionError(f"unknown {what} {name!r}; choose one of: {choices}.")


def correction_names(*, all_pairs: bool = True) -> tuple[str, ...]:
    """The corrections' names; without ``all_pairs``, those that adjust p-values alone."""
    return tuple(name for name, spec in CORRECTIONS.items() if all_pairs or spec.from_p_values)
