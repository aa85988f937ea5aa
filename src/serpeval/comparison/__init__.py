"""Comparing systems: paired tests over :class:`~serpeval.evaluation.results.Results`
(:mod:`.compare`), their result objects (:mod:`.results`) and the CI gate (:mod:`.gate`).

May import core, io, ranking, measures, evaluation and stats; never online, report or cli.
The package is named ``comparison`` so that it never shadows the public function
``serpeval.compare``.

The options of :func:`~serpeval.comparison.compare.compare` and
:func:`~serpeval.comparison.gate.gate` on objects: :class:`CompareOptions`,
:class:`GateOptions` (served here and from ``serpeval``, each loaded on first use).
"""

from __future__ import annotations

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    "CompareOptions": "serpeval.comparison.compare",
    "GateOptions": "serpeval.comparison.gate",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_index(__name__, _LAZY)
