"""Statistics for comparing systems on per-query scores.

Pure, vectorized functions over arrays whose last axis is the queries
(``float64[n_queries]``, ``[n_comparisons, n_queries]`` or ``[n_systems, n_queries]``);
randomness comes only from an injected ``rng`` (seed, generator or None).

- :mod:`~serpeval.stats.paired`: Student's paired t-test, Wilcoxon signed-rank, Cohen's d_z.
- :mod:`~serpeval.stats.permutation`: Fisher's randomization test (p = (b+1)/(m+1), exact
  enumeration for small n).
- :mod:`~serpeval.stats.bootstrap`: paired bootstrap, percentile and BCa intervals.
- :mod:`~serpeval.stats.multiplicity`: Holm, Bonferroni, Benjamini-Hochberg.
- :mod:`~serpeval.stats.tukey`: Tukey HSD and the randomized Tukey test for all pairs.
- :mod:`~serpeval.stats.agreement`: agreement coefficients (Cohen's kappa, Krippendorff's
  alpha, Fleiss' kappa, Kendall's tau-b, tau_AP with the tie rule).
- :mod:`~serpeval.stats.effects`: two-sample tests and effects from per-arm summaries (z,
  Welch's t, two proportions, CUPED); :mod:`~serpeval.stats.srm`: the sample-ratio check;
  :mod:`~serpeval.stats.sequential`: always-valid p-values (mSPRT).
- :mod:`~serpeval.stats.one_sample`: the sign test, the t-test of a zero mean from sums, the
  cluster bootstrap of a ratio, a one-sample test's normal-approximation power (interleaving).
- :mod:`~serpeval.stats.importance`: cluster-robust intervals of means and ratios and the
  effective sample size (counterfactual estimates from logs).
- :mod:`~serpeval.stats.power`: power, sample sizes and minimum detectable effects.
- :mod:`~serpeval.stats.interaction`: the interaction ANOVA across groups.
- :mod:`~serpeval.stats.registry`: every statistic by name (``PAIRED_TESTS``, ``CORRECTIONS``,
  ``AGREEMENT``, ``GROUP_TESTS``, ``TWO_SAMPLE``, ``SAMPLE_RATIO``, ``SEQUENTIAL``,
  ``ONE_SAMPLE``, ``POWER``); add a statistic = one function + one registry line.

Every function the registry names is importable from here (``from serpeval.stats import
srm_check``), with the tables; ``import serpeval.stats`` is light: the modules load on first
use of a name (``tests/stats/test_registry.py`` checks that the two lists agree). The one
exception is ``power``, which names the module :mod:`serpeval.stats.power` here (its function
is ``serpeval.stats.power.power``).

Layer: stats (arrays in, numbers out). May import core only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.core.lazy import lazy_index

__all__ = [
    "AGREEMENT",
    "CORRECTIONS",
    "GROUP_TESTS",
    "ONE_SAMPLE",
    "PAIRED_TESTS",
    "POWER",
    "SAMPLE_RATIO",
    "SEQUENTIAL",
    "TWO_SAMPLE",
    "PairedTest",
    "Statistic",
    "TukeyResult",
    "adjust",
    "always_valid",
    "benjamini_hochberg",
    "bonferroni",
    "canonical",
    "cluster_bootstrap_ci",
    "cluster_bootstrap_ratio",
    "cluster_mean_ci",
    "cluster_ratio_ci",
    "cohen_kappa",
    "cohens_dz",
    "compare_means",
    "correction_names",
    "cuped",
    "effective_sample_size",
    "fleiss_kappa",
    "holm",
    "interaction_test",
    "kendall_tau",
    "krippendorff_alpha",
    "mde",
    "normal_power",
    "observed_agreement",
    "paired_bootstrap",
    "paired_t",
    "randomization_test",
    "randomized_tukey",
    "sample_size",
    "sign_test",
    "sign_test_sample_size",
    "srm_check",
    "t_test_from_sums",
    "tau_ap",
    "tukey_hsd",
    "two_proportion_ztest",
    "unadjusted",
    "wilcoxon",
]

#: Every statistic of the registry (stats/registry.py) by its function's name, the registry's
#: tables, and the helpers the workflows use; each module loads on first use of a name.
_LAZY = {
    "cohen_kappa": "serpeval.stats.agreement",
    "fleiss_kappa": "serpeval.stats.agreement",
    "kendall_tau": "serpeval.stats.agreement",
    "krippendorff_alpha": "serpeval.stats.agreement",
    "observed_agreement": "serpeval.stats.agreement",
    "tau_ap": "serpeval.stats.agreement",
    "paired_bootstrap": "serpeval.stats.bootstrap",
    "compare_means": "serpeval.stats.effects",
    "cuped": "serpeval.stats.effects",
    "two_proportion_ztest": "serpeval.stats.effects",
    "cluster_bootstrap_ci": "serpeval.stats.importance",
    "cluster_mean_ci": "serpeval.stats.importance",
    "cluster_ratio_ci": "serpeval.stats.importance",
    "effective_sample_size": "serpeval.stats.importance",
    "interaction_test": "serpeval.stats.interaction",
    "adjust": "serpeval.stats.multiplicity",
    "benjamini_hochberg": "serpeval.stats.multiplicity",
    "bonferroni": "serpeval.stats.multiplicity",
    "holm": "serpeval.stats.multiplicity",
    "unadjusted": "serpeval.stats.multiplicity",
    "cluster_bootstrap_ratio": "serpeval.stats.one_sample",
    "normal_power": "serpeval.stats.one_sample",
    "sign_test": "serpeval.stats.one_sample",
    "t_test_from_sums": "serpeval.stats.one_sample",
    "PairedTest": "serpeval.stats.paired",
    "cohens_dz": "serpeval.stats.paired",
    "paired_t": "serpeval.stats.paired",
    "wilcoxon": "serpeval.stats.paired",
    "randomization_test": "serpeval.stats.permutation",
    "mde": "serpeval.stats.power",
    "sample_size": "serpeval.stats.power",
    "sign_test_sample_size": "serpeval.stats.power",
    "AGREEMENT": "serpeval.stats.registry",
    "CORRECTIONS": "serpeval.stats.registry",
    "GROUP_TESTS": "serpeval.stats.registry",
    "ONE_SAMPLE": "serpeval.stats.registry",
    "PAIRED_TESTS": "serpeval.stats.registry",
    "POWER": "serpeval.stats.registry",
    "SAMPLE_RATIO": "serpeval.stats.registry",
    "SEQUENTIAL": "serpeval.stats.registry",
    "Statistic": "serpeval.stats.registry",
    "TWO_SAMPLE": "serpeval.stats.registry",
    "canonical": "serpeval.stats.registry",
    "correction_names": "serpeval.stats.registry",
    "always_valid": "serpeval.stats.sequential",
    "srm_check": "serpeval.stats.srm",
    "TukeyResult": "serpeval.stats.tukey",
    "randomized_tukey": "serpeval.stats.tukey",
    "tukey_hsd": "serpeval.stats.tukey",
}

if TYPE_CHECKING:
    from serpeval.stats.agreement import (
        cohen_kappa,
        fleiss_kappa,
        kendall_tau,
        krippendorff_alpha,
        observed_agreement,
        tau_ap,
    )
    from serpeval.stats.bootstrap import paired_bootstrap
    from serpeval.stats.effects import compare_means, cuped, two_proportion_ztest
    from serpeval.stats.importance import cluster_bootstrap_ci, cluster_mean_ci, cluster_ratio_ci, effective_sample_size
    from serpeval.stats.interaction import interaction_test
    from serpeval.stats.multiplicity import adjust, benjamini_hochberg, bonferroni, holm, unadjusted
    from serpeval.stats.one_sample import cluster_bootstrap_ratio, normal_power, sign_test, t_test_from_sums
    from serpeval.stats.paired import PairedTest, cohens_dz, paired_t, wilcoxon
    from serpeval.stats.permutation import randomization_test
    from serpeval.stats.power import mde, sample_size, sign_test_sample_size
    from serpeval.stats.registry import (
        AGREEMENT,
        CORRECTIONS,
        GROUP_TESTS,
        ONE_SAMPLE,
        PAIRED_TESTS,
        POWER,
        SAMPLE_RATIO,
        SEQUENTIAL,
        TWO_SAMPLE,
        Statistic,
        canonical,
        correction_names,
    )
    from serpeval.stats.sequential import always_valid
    from serpeval.stats.srm import srm_check
    from serpeval.stats.tukey import TukeyResult, randomized_tukey, tukey_hsd

__getattr__, __dir__ = lazy_index(__name__, _LAZY)
