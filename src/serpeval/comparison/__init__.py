"""Comparing systems: paired tests over :class:`~serpeval.evaluation.results.Results`
(:mod:`.compare`), their result objects (:mod:`.results`) and the CI gate (:mod:`.gate`).

May import core, io, ranking, measures, evaluation and stats; never online, report or cli.
The package is named ``comparison`` so that it never shadows the public function
``serpeval.compare``.
"""
