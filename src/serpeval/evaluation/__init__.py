"""Offline evaluation: ``evaluate(qrels, runs, measures) -> Results``.

:mod:`.evaluate` ranks every run against the shared qrels index (:mod:`serpeval.ranking`) and
runs the measure kernels (:mod:`serpeval.measures`); :mod:`.results` holds the per-query
values and their aggregates. May import core, io, ranking and measures; never stats,
comparison, online, report or cli.

The package is named ``evaluation`` so that it never shadows the public function
``serpeval.evaluate``.
"""
