"""Experiments: A/B tests and interleaving experiments analysed from search logs.

Each analysis builds its engine query with :mod:`serpeval.online.logs` (sources, schema,
features, moments, metrics), runs it on DuckDB or Spark, and computes the statistics on the
few numbers that come back (:mod:`serpeval.stats`, :mod:`serpeval.online.interleaving.analysis`).

- :func:`analyze_ab` (:mod:`.analysis`) - CTR, abandonment, MRR... with the delta method
  clustered by user, Welch's t, two-proportion z, CUPED, relative effects, the sample-ratio
  check and a multiple-testing correction; :class:`ABResults` (:mod:`.results`).
- :class:`ABDesign` (:mod:`.options`) - the options of the A/B analyses on one object.
- :func:`monitor_ab` (:mod:`.monitor`) - always-valid p-values look by look (mSPRT).
- :func:`plan_ab` (:mod:`.plan`) - sample size, power, MDE from a pilot log.
- :func:`analyze_ab_triggered`, :func:`analyze_interleaving_triggered` (:mod:`.triggered`).
- :func:`analyze_ab_segments`, :func:`analyze_interleaving_segments` (:mod:`.segments`).
- :func:`analyze_interleaving_logs` (:mod:`.interleaving_analysis`, over time in
  :mod:`.interleaving_over_time`).
- :func:`rejection_rates` (:mod:`.calibration`) - A/A calibration of the tests.

Part of online, between simulation (above) and logs | interleaving | clicks (below): may
import online.logs, online.interleaving, online.clicks, online.common, stats and the layers
below; never online.simulation.
"""

from __future__ import annotations

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    "ABDesign": "serpeval.online.experiments.options",
    "analyze_ab": "serpeval.online.experiments.analysis",
    "monitor_ab": "serpeval.online.experiments.monitor",
    "plan_ab": "serpeval.online.experiments.plan",
    "analyze_interleaving_logs": "serpeval.online.experiments.interleaving_analysis",
    "InterleavingLogReport": "serpeval.online.experiments.interleaving_analysis",
    "analyze_ab_triggered": "serpeval.online.experiments.triggered",
    "analyze_interleaving_triggered": "serpeval.online.experiments.triggered",
    "analyze_ab_segments": "serpeval.online.experiments.segments",
    "analyze_interleaving_segments": "serpeval.online.experiments.segments",
    "rejection_rates": "serpeval.online.experiments.calibration",
    "ABResults": "serpeval.online.experiments.results",
    "SequentialResults": "serpeval.online.experiments.results",
    "PowerPlan": "serpeval.online.experiments.results",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_index(__name__, _LAZY)
