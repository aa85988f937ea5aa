"""set_F.x weighs recall by x = beta^2 (trec_eval's m_set_F.c); serpeval holds beta = sqrt(x), and
squaring it back gave x + 1 ulp for x = 0.5: topic values 0.18749999999999997 where trec_eval
computes 0.1875, and a mean of 0.09375 printed 0.0937 (trec_eval: 0.0938). beta^2 is now taken
to 15 significant digits, which gives x back exactly: equal to pytrec_eval bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import serpeval

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval is a test-only oracle (pip install '.[test]')")


def _collection(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(40):
        docs = [f"d{i}" for i in range(30)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, size=int(rng.integers(1, 20)),
                                                                       replace=False)}
        run[f"q{q}"] = {d: float(rng.integers(0, 100)) for d in rng.choice(docs, size=int(rng.integers(1, 30)),
                                                                        replace=False)}
    return qrels, run


@pytest.mark.parametrize("x", ["0.5", "0.3", "2", "0.1", "0.001", "3.7", "1"])
def test_set_f_equals_trec_eval_bit_for_bit(x: str) -> None:
    qrels, run = _collection(int(float(x) * 1000))
    ours = serpeval.evaluate(qrels, run, [f"set_F.{x}"]).per_query("run", f"set_F.{x}")
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {f"set_F.{x}"}).evaluate(run)
    assert {q: v["set_F"] for q, v in theirs.items()} == ours


def test_the_hand_worked_half_way_mean() -> None:
    # topic 1: 6 relevant, 5 retrieved with 1 relevant: P = 1/5, R = 1/6,
    # F = 1.5 * (1/5)(1/6) / (0.5/5 + 1/6) = 0.05 / (4/15) = 0.1875; topic 2: 0; mean 0.09375
    qrels = {"1": {c: 1 for c in "abcdef"}, "2": {"z": 1}}
    run = {"1": {"a": 5.0, "x1": 4.0, "x2": 3.0, "x3": 2.0, "x4": 1.0}, "2": {"y": 1.0}}
    res = serpeval.evaluate(qrels, run, ["set_F.0.5"])
    assert res.per_query("run", "set_F.0.5") == {"1": 0.1875, "2": 0.0}
    assert list(res.means("run").values()) == [0.09375]
