"""The bottom layer: data types (:class:`Qrels`, :class:`Run`), the exception tree, and the
vectorized array helpers (factorizing, fingerprints, the hash table, segments).

Imports nothing from serpeval. Everything else may import it.
"""
