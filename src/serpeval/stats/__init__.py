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

Layer: stats (arrays in, numbers out). May import core only.
"""

from __future__ import annotations

from serpeval.stats.bootstrap import paired_bootstrap
from serpeval.stats.multiplicity import adjust, benjamini_hochberg, bonferroni, holm
from serpeval.stats.paired import PairedTest, cohens_dz, paired_t, wilcoxon
from serpeval.stats.permutation import randomization_test
from serpeval.stats.tukey import TukeyResult, randomized_tukey, tukey_hsd

__all__ = [
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
