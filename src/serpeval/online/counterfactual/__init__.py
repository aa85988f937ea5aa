"""Counterfactual (off-policy) evaluation: estimate new rankers from a randomised log (issue 32).

A probabilistic-interleaving log (or an A/B split) records, per impression, the rankings the
design randomised over; every logging probability follows exactly
(:func:`serpeval.online.interleaving.propensities`). From such a log,
:func:`counterfactual` estimates, for candidate rankers that were never shown:

- the interleaved comparison of C against a logging ranker (Hofmann, Whiteson & de Rijke,
  CIKM 2012: importance sampling of the probabilistic-interleaving outcome);
- C's expected clicks (or CTR) on the top k by IPS, self-normalised IPS, independent IPS,
  cascade IPS, the pseudo-inverse slate estimator (Swaminathan et al. 2017, with the
  design's exact second moments), position-based IPS with a fitted PBM's examination, and
  cascade doubly robust with a fitted DBN (:mod:`.estimators`);

each with a cluster-robust interval over users, after support diagnostics that refuse with
a one-line reason where the log cannot answer (:mod:`.diagnostics`).

The package is callable: ``from serpeval.online import counterfactual`` then
``counterfactual(log, {"C": "c.run"}, k=3)`` is :func:`~.api.counterfactual`.

Part of online, at the experiments level: may import online.interleaving, online.clicks,
online.logs, online.common, stats and the layers below; never online.experiments or
online.simulation.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    "counterfactual": "serpeval.online.counterfactual.api",
    "CounterfactualResult": "serpeval.online.counterfactual.result",
    "Estimate": "serpeval.online.counterfactual.result",
    "CounterfactualLog": "serpeval.online.counterfactual.log",
    "read_log": "serpeval.online.counterfactual.log",
    "ESTIMATORS": "serpeval.online.counterfactual.estimators",
    "MIN_ESS": "serpeval.online.counterfactual.diagnostics",
    "MIN_SUPPORT": "serpeval.online.counterfactual.diagnostics",
    "MAX_WEIGHT_SHARE": "serpeval.online.counterfactual.diagnostics",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_index(__name__, _LAZY)


class _CallableModule(types.ModuleType):
    """The package itself is the API: ``serpeval.online.counterfactual(log, candidates, ...)``
    (``from serpeval.online import counterfactual`` gives this module) calls
    :func:`~serpeval.online.counterfactual.api.counterfactual`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from serpeval.online.counterfactual.api import counterfactual as estimate

        return estimate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
