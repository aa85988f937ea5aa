"""Online evaluation: interleaving, click models, sensitivity simulation (and A/B analysis).

A small lazy index: ``import serpeval.online`` loads nothing heavy; each name is imported
from its module on first use. Subpackages, by job: :mod:`serpeval.online.interleaving` (the
methods, and :mod:`~serpeval.online.interleaving.analysis` deciding a winner from logged
outcomes), :mod:`serpeval.online.clicks` (click models), :mod:`serpeval.online.logs` (the log
engine), :mod:`serpeval.online.experiments` (A/B and interleaving-log analyses) and
:mod:`serpeval.online.simulation` (the world, the sensitivity simulator, log generation);
:mod:`serpeval.online.ab` serves the A/B workflow's names under one import.

**Biased methods.** Balanced interleaving is biased under random clicks (``BIASED``): its
outcomes are refused by ``analyze_outcomes`` unless ``allow_biased=True``. Team draft,
probabilistic (the marginalised expected outcome) and optimized (the credit difference) are
unbiased, each checked by the random-clicker ``aa_check`` in CI.

Layer: beside comparison, spark and trec_eval. May import stats, evaluation, measures,
ranking, io and core; inside it (an import-linter contract): simulation > experiments >
logs | interleaving | clicks, the last three independent of each other.
"""

from __future__ import annotations

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    # interleaving at serving time
    "interleave": "serpeval.online.interleaving",
    "credit": "serpeval.online.interleaving",
    "Interleaving": "serpeval.online.interleaving",
    "Outcome": "serpeval.online.interleaving",
    "METHODS": "serpeval.online.interleaving",
    "BIASED": "serpeval.online.interleaving",
    # deciding a winner
    "analyze_outcomes": "serpeval.online.interleaving.analysis",
    "analyze_counts": "serpeval.online.interleaving.analysis",
    "sample_size": "serpeval.online.interleaving.analysis",
    # click models
    "click_model": "serpeval.online.clicks",
    "ClickLog": "serpeval.online.clicks",
    # sensitivity simulator
    "simulate": "serpeval.online.simulation.simulator",
    "make_world": "serpeval.online.simulation.world",
    "synthetic_pair": "serpeval.online.simulation.world",
    # A/B and interleaving logs on DuckDB / Spark (serpeval.online.experiments)
    "analyze_ab": "serpeval.online.experiments", "analyze_interleaving_logs": "serpeval.online.experiments",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_index(__name__, _LAZY)

