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
- :mod:`~serpeval.stats.registry`: every statistic by name (``PAIRED_TESTS``, ``CORRECTIONS``,
  ``AGREEMENT``, ``GROUP_TESTS``, ``TWO_SAMPLE``, ``SAMPLE_RATIO``, ``SEQUENTIAL``,
  ``ONE_SAMPLE``, ``POWER``); add a statistic = one function + one registry line.

``import serpeval.stats`` is light: the modules load on first use of a name.

Layer: stats (arrays in, numbers out). May import core only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.core.lazy import lazy_index

__all__ = [
    "AGREEMENT",
    "CORRECTIONS",
    "GROUP_TESTS",
    "PAIRED_TESTS",
    "PairedTest",
    "TukeyResult",
    "adjust",
    "benjamini_hochberg",
    "bonferroni",
    "cohens_dz",
    "holm",
    "paired_bootstrap",
    "paired_t",
    "randomization_test",
    "randomized_tukey",
    "tukey_hsd",
    "wilcoxon",
]

_LAZY = {
    "AGREEMENT": "serpeval.stats.registry",
    "CORRECTIONS": "serpeval.stats.registry",
    "GROUP_TESTS": "serpeval.stats.registry",
    "PAIRED_TESTS": "serpeval.stats.registry",
    "paired_bootstrap": "serpeval.stats.bootstrap",
    "adjust": "serpeval.stats.multiplicity",
    "benjamini_hochberg": "serpeval.stats.multiplicity",
    "bonferroni": "serpeval.stats.multiplicity",
    "holm": "serpeval.stats.multiplicity",
    "PairedTest": "serpeval.stats.paired",
    "cohens_dz": "serpeval.stats.paired",
    "paired_t": "serpeval.stats.paired",
    "wilcoxon": "serpeval.stats.paired",
    "randomization_test": "serpeval.stats.permutation",
    "TukeyResult": "serpeval.stats.tukey",
    "randomized_tukey": "serpeval.stats.tukey",
    "tukey_hsd": "serpeval.stats.tukey",
}

if TYPE_CHECKING:
    from serpeval.stats.bootstrap import paired_bootstrap
    from serpeval.stats.multiplicity import adjust, benjamini_hochberg, bonferroni, holm
    from serpeval.stats.paired import PairedTest, cohens_dz, paired_t, wilcoxon
    from serpeval.stats.permutation import randomization_test
    from serpeval.stats.registry import AGREEMENT, CORRECTIONS, GROUP_TESTS, PAIRED_TESTS
    from serpeval.stats.tukey import TukeyResult, randomized_tukey, tukey_hsd

__getattr__, __dir__ = lazy_index(__name__, _LAZY)
