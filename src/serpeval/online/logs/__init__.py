"""A/B tests and interleaving experiments analysed from search logs, on DuckDB or Spark.

The heavy work (impressions -> units -> per-variant moments) is one ibis expression that
runs in the engine (DuckDB embedded by default, Spark for logs that outgrow one machine);
the statistics run on the few numbers that come back (the design of tea-tasting).

- :func:`analyze_ab` - CTR, abandonment, clicks@1, MRR, time to first click... with the
  delta method clustered by user, Welch's t, two-proportion z, CUPED, relative effects
  with CIs, the sample-ratio check and a multiple-testing correction.
- :func:`monitor_ab` - always-valid p-values and confidence sequences look by look (mSPRT).
- :func:`plan_ab` and :mod:`serpeval.stats.power` - sample size, power, MDE.
- :func:`analyze_interleaving_logs` - team credit per impression in the engine, then the
  interleaving statistics of :mod:`serpeval.online`.
- :func:`analyze_ab_triggered`, :func:`analyze_interleaving_triggered` - triggered analysis
  (:mod:`.triggered`): only impressions whose arms' pages differ, scaled by the trigger rate.
- :func:`read_logs`, :class:`LogSchema` - the log schema (:mod:`.schema`) from Parquet,
  CSV, DuckDB, DataFrames, ibis tables or Spark DataFrames.
- :func:`~serpeval.online.simulation.generate_logs` moved to :mod:`serpeval.online.simulation`.

ibis and DuckDB are dependencies of serpeval (``pip install .`` installs them); Spark needs the
``spark`` extra: ``pip install 'serpeval[spark]'``.

Part of online (logs on DuckDB or Spark). May import online.interleaving, online.clicks,
online.common, stats and the layers below.
"""

from __future__ import annotations

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    "analyze_ab": "serpeval.online.logs.analysis",
    "monitor_ab": "serpeval.online.logs.monitor",
    "plan_ab": "serpeval.online.logs.plan",
    "analyze_interleaving_logs": "serpeval.online.logs.interleaving_analysis",
    "analyze_ab_triggered": "serpeval.online.logs.triggered",
    "analyze_interleaving_triggered": "serpeval.online.logs.triggered",
    "read_logs": "serpeval.online.logs.sources",
    "Logs": "serpeval.online.logs.sources",
    "LogSchema": "serpeval.online.logs.schema",
    "METRICS": "serpeval.online.logs.metrics",
    "ABResults": "serpeval.online.logs.results",
    "SequentialResults": "serpeval.online.logs.results",
    "PowerPlan": "serpeval.online.logs.results",
    "srm_check": "serpeval.online.logs.srm",
    "SampleRatioMismatchWarning": "serpeval.online.logs.srm",
    "compare_means": "serpeval.online.logs.effects",
    "two_proportion_ztest": "serpeval.online.logs.effects",
    "always_valid": "serpeval.online.logs.sequential",
    "sample_size": "serpeval.stats.power",
    "mde": "serpeval.stats.power",
}

#: names that moved out, served for one release with a DeprecationWarning
_MOVED: dict[str, str] = {
    "LogGenerator": "serpeval.online.simulation",
    "generate_logs": "serpeval.online.simulation",
    "write_logs": "serpeval.online.simulation",
    "split_clicks": "serpeval.online.simulation",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_index(__name__, _LAZY, moved=_MOVED)

