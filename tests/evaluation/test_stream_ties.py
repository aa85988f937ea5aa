"""evaluate(stream=True, ties=...) equals the in-memory evaluation under every tie policy
(issue 29 item 1): each query is ranked whole within a piece."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from serpeval import evaluate
from serpeval.core.errors import InvalidParameterError
from serpeval.core.ties import TIE_POLICIES


@pytest.mark.parametrize("ties", TIE_POLICIES)
def test_stream_equals_memory(tmp_path: Path, ties: str) -> None:
    rng = np.random.default_rng(29)
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    q_lines, r_lines = [], []
    for q in range(40):
        docs = rng.permutation(60)[:30]
        scores = np.round(rng.random(30), 1)  # one decimal: many ties
        order = np.argsort(-scores, kind="stable")
        for rank_, i in enumerate(order, start=1):
            r_lines.append(f"q{q} Q0 d{docs[i]} {rank_} {scores[i]} r")
        for d in rng.permutation(60)[:15]:
            q_lines.append(f"q{q} 0 d{d} {rng.integers(0, 3)}")
    qrels.write_text("\n".join(q_lines) + "\n")
    run.write_text("\n".join(r_lines) + "\n")
    measures = ["nDCG@10", "AP", "P@5", "RR", "ERR@3"]
    memory = evaluate(str(qrels), str(run), measures, ties=ties)  # type: ignore[arg-type]
    if ties == "rank":  # the pieces keep no rank column
        with pytest.raises(InvalidParameterError, match=r"^ties='rank' reads the whole run file's rank column"):
            evaluate(str(qrels), str(run), measures, ties=ties, stream=True)  # type: ignore[arg-type]
        return
    streamed = evaluate(str(qrels), str(run), measures, ties=ties, stream=True)  # type: ignore[arg-type]
    assert streamed.settings.ties == ties
    np.testing.assert_allclose(streamed["run"].values, memory["run"].values, rtol=0, atol=1e-12)
