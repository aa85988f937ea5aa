"""Judgments as a workflow: what to judge next (pooling), how much of a run is judged, whether
assessors agree, how two runs differ without judgments, and qrels inferred from clicks.

Layer: above ``comparison`` and ``online`` (it evaluates runs, compares them and fits click
models), below ``report``. May import comparison, online, stats, evaluation, measures, ranking,
io and core; never report or cli.
"""
