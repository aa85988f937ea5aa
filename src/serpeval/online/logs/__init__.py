"""The log engine: search logs read, checked and reduced to per-variant moments, on DuckDB or Spark.

The heavy work (impressions -> units -> per-variant moments) is one ibis expression that
runs in the engine (DuckDB embedded by default, Spark for logs that outgrow one machine);
the analyses of :mod:`serpeval.online.experiments` run the statistics on the few numbers that
come back (the design of tea-tasting).

- :func:`read_logs`, :class:`Logs` (:mod:`.sources`) - Parquet, CSV, DuckDB, DataFrames,
  ibis tables or Spark DataFrames; :class:`LogSchema` (:mod:`.schema`) - the column names.
- :mod:`.features` and :mod:`.events` - per-impression features, duplicates and exclusions.
- :mod:`.metrics` (:data:`METRICS`) and :mod:`.moments` - the metrics and their per-variant
  sums, squares and cross-products.

The analyses (``analyze_ab``, ``monitor_ab``, ``plan_ab``, ``analyze_interleaving_logs``, the
triggered ones) moved to :mod:`serpeval.online.experiments` and the log generator to
:mod:`serpeval.online.simulation`; this package serves their old names for one release with a
DeprecationWarning. ``from serpeval.online.ab import ...`` serves them all under one name.

ibis and DuckDB are dependencies of serpeval (``pip install .`` installs them); Spark needs the
``spark`` extra: ``pip install 'serpeval[spark]'``.

Part of online, its bottom layer beside interleaving and clicks: may import online.common,
stats and the layers below; never online.experiments, online.simulation, online.interleaving
or online.clicks.
"""

from __future__ import annotations

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    "read_logs": "serpeval.online.logs.sources",
    "Logs": "serpeval.online.logs.sources",
    "LogSchema": "serpeval.online.logs.schema",
    "METRICS": "serpeval.online.logs.metrics",
    "sample_size": "serpeval.stats.power",
    "mde": "serpeval.stats.power",
}

#: names that moved out, served for one release with a DeprecationWarning
_MOVED: dict[str, str] = {
    "srm_check": "serpeval.stats.srm",
    "SampleRatioMismatchWarning": "serpeval.stats.srm",
    "compare_means": "serpeval.stats.effects",
    "two_proportion_ztest": "serpeval.stats.effects",
    "always_valid": "serpeval.stats.sequential",
    "analyze_ab": "serpeval.online.experiments",
    "monitor_ab": "serpeval.online.experiments",
    "plan_ab": "serpeval.online.experiments",
    "analyze_interleaving_logs": "serpeval.online.experiments",
    "analyze_ab_triggered": "serpeval.online.experiments",
    "analyze_interleaving_triggered": "serpeval.online.experiments",
    "ABResults": "serpeval.online.experiments",
    "SequentialResults": "serpeval.online.experiments",
    "PowerPlan": "serpeval.online.experiments",
    "LogGenerator": "serpeval.online.simulation",
    "generate_logs": "serpeval.online.simulation",
    "write_logs": "serpeval.online.simulation",
    "split_clicks": "serpeval.online.simulation",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_index(__name__, _LAZY, moved=_MOVED)

