"""Simulation: worlds of two rankers, the sensitivity simulator and synthetic search logs.

- :func:`simulate` (:mod:`.simulate`, engines in :mod:`.sensitivity`) - the impressions an
  A/B test and each interleaving method need to detect a ranker difference, exactly from a
  click model.
- :class:`SimulationOptions` (:mod:`.simulate`) - the options of :func:`simulate` on one object.
- :func:`make_world`, :func:`synthetic_pair` (:mod:`.world`) - the two rankers' top k and the
  true grades the simulations run on.
- :func:`generate_logs`, :class:`LogGenerator`, :func:`write_logs` (:mod:`.generate`) -
  realistic A/B and interleaving logs in the schema of :mod:`serpeval.online.logs`.

Part of online, its top layer: may import online.experiments, online.logs,
online.interleaving, online.clicks, online.common, stats and the layers below.
"""

from __future__ import annotations

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    "simulate": "serpeval.online.simulation.simulator",
    "SimulationResult": "serpeval.online.simulation.simulator",
    "SimulationOptions": "serpeval.online.simulation.simulator",
    "World": "serpeval.online.simulation.world",
    "make_world": "serpeval.online.simulation.world",
    "synthetic_pair": "serpeval.online.simulation.world",
    "GeneratedLogs": "serpeval.online.simulation.generate",
    "LogGenerator": "serpeval.online.simulation.generate",
    "generate_logs": "serpeval.online.simulation.generate",
    "write_logs": "serpeval.online.simulation.generate",
    "split_clicks": "serpeval.online.simulation.generate",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_index(__name__, _LAZY)
