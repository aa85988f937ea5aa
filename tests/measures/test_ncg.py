"""NCG@k (issue 29 item 4) against an independent implementation and a hand-worked example.

ir_measures 0.4 and ranx 0.3 have no NCG (ir_measures#19 asks for it), so the reference is
the definition written out in plain Python: CG@k of the ranking over CG@k of the ideal
ranking of all judged docs (positive gains only)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serpeval.evaluation.evaluate import evaluate


def reference(qrels: dict, run: dict, k: int | None, exp: bool) -> float:
    by_id = sorted(run.items(), key=lambda item: item[0].encode(), reverse=True)  # ties: doc id desc (bytes)
    ranked = sorted(by_id, key=lambda item: -item[1])

    def gain(g: float | None) -> float:
        return 0.0 if g is None or g <= 0 else (2.0 ** g - 1.0 if exp else g)

    cg = sum(gain(qrels.get(d)) for d, _ in ranked[:k])
    ideal = sorted((gain(g) for g in qrels.values()), reverse=True)[:k]
    return cg / sum(ideal) if sum(ideal) > 0 else 0.0


@settings(max_examples=80, deadline=None)
@given(grades=st.lists(st.sampled_from([-1, 0, 1, 2, 3, 0.5, 2.25]), min_size=1, max_size=12),
       retrieved=st.lists(st.tuples(st.integers(0, 14), st.integers(0, 4)), min_size=1, max_size=12,
                          unique_by=lambda t: t[0]),
       k=st.sampled_from([None, 1, 3, 5, 20]), exp=st.booleans())
def test_ncg_matches_the_definition(grades: list, retrieved: list, k: int | None, exp: bool) -> None:
    qrels = {f"d{i}": g for i, g in enumerate(grades)}
    run = {f"d{i}": float(s) for i, s in retrieved}
    name = f"NCG{'(gain=exp)' if exp else ''}{'' if k is None else f'@{k}'}"
    got = evaluate({"q": qrels}, {"q": run}, [name], grades="float").means("run")
    assert next(iter(got.values())) == pytest.approx(reference(qrels, run, k, exp), rel=1e-12, abs=1e-15)


def test_ncg_hand_worked() -> None:
    # judged d1 2, d2 1, d3 0, d4 3 (not retrieved); ranking d1, d2, d3, d5 (unjudged)
    qrels = {"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": 3}}
    run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d5": 0.6}}
    got = evaluate(qrels, run, ["NCG@2", "NCG@3", "NCG", "NCG(gain=exp)@2", "nDCG@2"]).means("run")
    assert got["NCG@2"] == pytest.approx(3 / 5)  # (2 + 1) / (3 + 2)
    assert got["NCG@3"] == pytest.approx(3 / 6)  # (2 + 1 + 0) / (3 + 2 + 1)
    assert got["NCG"] == pytest.approx(3 / 6)
    assert got["NCG(gain=exp)@2"] == pytest.approx((3 + 1) / (7 + 3))  # 2^g - 1
    # order within the top k does not matter to NCG (it does to nDCG)
    swapped = evaluate(qrels, {"q1": {"d1": 0.8, "d2": 0.9}}, ["NCG@2", "nDCG@2"]).means("run")
    assert swapped["NCG@2"] == got["NCG@2"]
    assert swapped["nDCG@2"] < got["nDCG@2"]
