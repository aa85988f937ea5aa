"""The defaults of ``clicks-to-qrels`` (:mod:`serpeval.judgments.clicks`), in a module that imports
nothing, so that the command line can show them without loading numpy.

Why these values: see :mod:`serpeval.judgments.clicks` (the default model follows the clicks of
the real Yandex sample best; below 10 impressions a click rate's standard error can exceed 0.16).
"""

from __future__ import annotations

__all__ = ["DEFAULT_MODEL", "ITERATIONS", "MIN_IMPRESSIONS", "MODELS", "TOL"]

#: The click models clicks-to-qrels fits, and what it takes as an item's relevance.
MODELS = {"dcm": "attractiveness", "pbm": "attractiveness", "dbn": "attractiveness x satisfaction"}
#: The default model.
DEFAULT_MODEL = "dcm"
#: Pairs seen in fewer impressions get no grade by default.
MIN_IMPRESSIONS = 10
#: EM iterations at most.
ITERATIONS = 1000
#: EM stops when an iteration changes the log-likelihood by less than this per impression.
TOL = 1e-6
