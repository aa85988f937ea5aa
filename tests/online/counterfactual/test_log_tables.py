"""read_log's per-context document tables (built in one vectorized pass) against the former loop."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from serpeval.online.counterfactual import read_log
from serpeval.online.counterfactual.log import _context_tables


def _loop(rankings: list[list[list[object]]]) -> tuple[list[list[str]], list[list[list[int]]], list[str], list[int]]:
    """The definition: per context, the union of its rankings in first-seen order (one loop per context)."""
    docs_out, ranks_out, keys, codes = [], [], [], []
    for c, ranks in enumerate(rankings):
        docs = list(dict.fromkeys(str(d) for r in ranks for d in r))
        code = {d: i for i, d in enumerate(docs)}
        docs_out.append(docs)
        ranks_out.append([[code[str(d)] for d in r] for r in ranks])
        keys += [f"{c}\x1f{d}" for d in docs]
        codes += list(range(len(docs)))
    return docs_out, ranks_out, keys, codes


def test_context_tables_equal_the_per_context_loop() -> None:
    rng = np.random.default_rng(5)
    rankings = []
    for _ in range(300):  # overlapping rankings, 1-3 per context, some empty, ids shared across contexts
        n_r = int(rng.integers(1, 4))
        rankings.append([[f"d{x}" for x in rng.choice(12, size=int(rng.integers(0, 7)), replace=False)]
                         for _ in range(n_r)])
    rankings.append([["only"], ["only", "b"], ["b", "c", "only"]])
    docs, ranks, keys, codes = _context_tables(pa.array(rankings, pa.list_(pa.list_(pa.string()))))
    want = _loop(rankings)
    assert docs == want[0]
    assert ranks == want[1]
    assert keys.to_pylist() == want[2]
    np.testing.assert_array_equal(codes, want[3])
    assert docs[-1] == ["only", "b", "c"]
    assert ranks[-1] == [[0], [0, 1], [1, 2, 0]]


def test_read_log_codes_decode_to_the_shown_documents() -> None:
    rankings = [[[3, 1, 2], [2, 4, 3]], [[1, 2], [2, 1]], [[3, 1, 2], [2, 4, 3]], [[7, 8], [8, 9]]]
    shown = [[2, 3], [1, 2], [3, 1], [8, 7]]
    table = pa.table({"user_id": ["u1", "u2", "u1", "u3"], "query_id": ["q1", "q2", "q1", "q1"],
                      "shown": shown, "clicks": [[1], [], [2], [1]], "logging_design": ["probabilistic"] * 4,
                      "logging_rankings": rankings})
    log = read_log(table)
    assert log.contexts == ["q1", "q2", "q1"]  # q1 with other rankings is another context
    assert log.context_docs == [["3", "1", "2", "4"], ["1", "2"], ["7", "8", "9"]]
    assert log.context_rankings == [[[0, 1, 2], [2, 3, 0]], [[0, 1], [1, 0]], [[0, 1], [1, 2]]]
    np.testing.assert_array_equal(log.context, [0, 1, 0, 2])
    decoded = [[log.context_docs[c][d] for d in row] for c, row in zip(log.context, log.shown, strict=True)]
    assert decoded == [[str(d) for d in s] for s in shown]
