"""DCG's discount from a table of distinct positions equals ``np.log2`` elementwise."""

from __future__ import annotations

import numpy as np

from serpeval.measures._segments import rank_log2


def test_table_gives_the_same_doubles_as_elementwise_log2() -> None:
    rng = np.random.default_rng(7)
    for top in (0, 1, 7, 1000, 100_000):
        position = rng.integers(0, top + 1, size=50_001)  # an odd length: SIMD tails too
        assert rank_log2(position).tobytes() == np.log2(position + 2.0).tobytes()
    assert rank_log2(np.zeros(0, dtype=np.int64)).size == 0
