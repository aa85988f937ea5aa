"""serpeval inside the tools people already run: an ir_measures provider (and through it
PyTerrier's ``pt.Experiment``).

Layer: a sibling of ``comparison``, ``online``, ``spark`` and ``trec_eval``; may import
stats, evaluation, measures, ranking, io and core. The third-party packages are imported
lazily, inside functions, so ``import serpeval`` stays light.
"""
