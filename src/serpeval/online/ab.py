"""``serpeval.online.ab``: the one public import for A/B and interleaving-log work.

The names live in the subpackages of :mod:`serpeval.online` by job: the analyses in
:mod:`serpeval.online.experiments`, the log engine (schema, sources, metrics) in
:mod:`serpeval.online.logs`, the log generator in :mod:`serpeval.online.simulation` and the
statistics in :mod:`serpeval.stats`. This module serves them all under one name, each loaded
on first use: ``from serpeval.online.ab import analyze_ab, LogSchema, generate_logs``.
"""

from __future__ import annotations

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    # the analyses (serpeval.online.experiments)
    "ABDesign": "serpeval.online.experiments",
    "analyze_ab": "serpeval.online.experiments",
    "monitor_ab": "serpeval.online.experiments",
    "plan_ab": "serpeval.online.experiments",
    "analyze_interleaving_logs": "serpeval.online.experiments",
    "analyze_ab_triggered": "serpeval.online.experiments",
    "analyze_interleaving_triggered": "serpeval.online.experiments",
    "analyze_ab_segments": "serpeval.online.experiments",
    "analyze_interleaving_segments": "serpeval.online.experiments",
    "ABResults": "serpeval.online.experiments",
    "SequentialResults": "serpeval.online.experiments",
    "PowerPlan": "serpeval.online.experiments",
    # the log engine (serpeval.online.logs)
    "read_logs": "serpeval.online.logs",
    "Logs": "serpeval.online.logs",
    "LogSchema": "serpeval.online.logs",
    "METRICS": "serpeval.online.logs",
    # the statistics
    "srm_check": "serpeval.stats.srm",
    "SampleRatioMismatchWarning": "serpeval.stats.srm",
    "compare_means": "serpeval.stats.effects",
    "two_proportion_ztest": "serpeval.stats.effects",
    "always_valid": "serpeval.stats.sequential",
    "sample_size": "serpeval.stats.power",
    "mde": "serpeval.stats.power",
    # log generation (serpeval.online.simulation)
    "LogGenerator": "serpeval.online.simulation",
    "generate_logs": "serpeval.online.simulation",
    "write_logs": "serpeval.online.simulation",
    "split_clicks": "serpeval.online.simulation",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_index(__name__, _LAZY)
