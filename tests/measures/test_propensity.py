"""psP@k and psnDCG@k (issue 29 item 4) against pyxclib's definitions written out on dense
label matrices (pyxclib's ``compute_inv_propesity``, ``psprecision`` and ``psndcg`` of
``xclib/evaluation/xc_metrics.py``: the dataset means of the scores over the dataset means of
the best scores), and the paper's unnormalised formulas (Jain, Prabhu & Varma, KDD 2016)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serpeval.core.errors import InputError
from serpeval.evaluation.evaluate import evaluate
from serpeval.io.propensities import read_propensities


def order(run: dict) -> list[str]:
    """trec_eval's order: score descending, doc id descending in byte order."""
    by_id = sorted(run.items(), key=lambda it: it[0].encode(), reverse=True)
    return [d for d, _ in sorted(by_id, key=lambda it: -it[1])]


def pyxclib_like(qrels: dict, run: dict, k: int, a: float, b: float, rel: int = 1,
                 given: dict | None = None) -> dict[str, float | list[float]]:
    queries = sorted(qrels)
    docs = sorted({d for q in queries for d in qrels[q]} | {d for q in run for d in run[q]})
    col = {d: j for j, d in enumerate(docs)}
    y = np.zeros((len(queries), len(docs)))
    for i, q in enumerate(queries):
        for d, g in qrels[q].items():
            y[i, col[d]] = 1.0 if g >= rel else 0.0
    if given is None:  # compute_inv_propesity(labels, A, B)
        n = y.shape[0]
        freqs = y.sum(axis=0)
        c = (np.log(n) - 1) * np.power(b + 1, a)
        inv = 1.0 + c * np.power(freqs + b, -a)
    else:
        inv = np.array([1.0 / given.get(d, 1.0) for d in docs])
    scores, best, dcg, best_dcg, n_q = [], [], [], [], []
    for i, q in enumerate(queries):
        top = [col[d] for d in order(run.get(q, {}))][:k]
        flags = [inv[j] * y[i, j] for j in top] + [0.0] * (k - len(top))
        ideal = sorted(inv * y[i], reverse=True)[:k]
        scores.append(sum(flags) / k)
        best.append(sum(ideal) / k)
        positives = int(y[i].sum())
        n = sum(1 / math.log2(r + 2) for r in range(min(positives, k)))
        n_q.append(n)
        dcg.append(sum(f / math.log2(r + 2) for r, f in enumerate(flags)) / n if n else 0.0)
        best_dcg.append(sum(f / math.log2(r + 2) for r, f in enumerate(ideal)) / n if n else 0.0)
    return {
        "psP": np.mean(scores) / np.mean(best) if np.mean(best) else 0.0,
        "psnDCG": np.mean(dcg) / np.mean(best_dcg) if np.mean(best_dcg) else 0.0,
        "psP_raw": scores, "psnDCG_raw": dcg,
        "psP_query": [s / m if m else 0.0 for s, m in zip(scores, best, strict=True)],
        "queries": queries,
    }


@st.composite
def collections(draw) -> tuple[dict, dict]:
    n_queries = draw(st.integers(3, 6))
    pool = [f"d{i}" for i in range(draw(st.integers(3, 9)))]
    qrels, run = {}, {}
    for q in range(n_queries):
        judged = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
        qrels[f"q{q}"] = {d: draw(st.sampled_from([0, 1, 1, 2, -1])) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
        run[f"q{q}"] = {d: float(draw(st.integers(0, 4))) for d in retrieved}
    return qrels, run


@settings(max_examples=60, deadline=None)
@given(data=collections(), k=st.sampled_from([1, 3, 5]), ab=st.sampled_from([(0.55, 1.5), (0.5, 0.4), (0.6, 2.6)]),
       use_file=st.booleans())
def test_matches_pyxclib_definitions(data, k: int, ab: tuple[float, float], use_file: bool) -> None:
    qrels, run = data
    a, b = ab
    given = {d: 0.1 + 0.9 * ((sum(d.encode()) % 7) / 7) for q in qrels for d in qrels[q]} if use_file else None
    want = pyxclib_like(qrels, run, k, a, b, given=given)
    names = [f"psP(A={a},B={b})@{k}", f"psnDCG(A={a},B={b})@{k}", f"psP(A={a},B={b},norm=none)@{k}",
             f"psnDCG(A={a},B={b},norm=none)@{k}", f"psP(A={a},B={b},norm=query)@{k}"]
    res = evaluate(qrels, run, names, propensities=given)
    means = list(res.means("run").values())
    assert means[0] == pytest.approx(want["psP"], rel=1e-12, abs=1e-15)
    assert means[1] == pytest.approx(want["psnDCG"], rel=1e-12, abs=1e-15)
    per_query = res.runs[0].values
    assert list(res.runs[0].query_ids) == want["queries"]
    assert per_query[:, 2].tolist() == pytest.approx(want["psP_raw"], rel=1e-12, abs=1e-15)
    assert per_query[:, 3].tolist() == pytest.approx(want["psnDCG_raw"], rel=1e-12, abs=1e-15)
    assert per_query[:, 4].tolist() == pytest.approx(want["psP_query"], rel=1e-12, abs=1e-15)


def test_hand_worked_jain_formula() -> None:
    # N = 3 queries; doc a relevant in all 3 (N_a = 3), b, d, e in one each (N = 1).
    # C = (ln 3 - 1)(1.5 + 1)^0.55; 1/p = 1 + C (N_l + 1.5)^-0.55
    qrels = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"a": 1, "d": 1}, "q3": {"a": 1, "e": 2}}
    run = {"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"d": 3, "a": 1, "x": 2}, "q3": {"x": 1, "e": 0.5}}
    c = (math.log(3) - 1) * 2.5 ** 0.55
    w3, w1 = 1 + c * 4.5 ** -0.55, 1 + c * 2.5 ** -0.55
    got = evaluate(qrels, run, ["psP(norm=none)@2", "psP@2"]).runs[0].values
    # raw psP@2: q1 (w3 + w1)/2, q2 d then x: w1/2, q3 x then e: w1/2
    assert got[:, 0].tolist() == pytest.approx([(w3 + w1) / 2, w1 / 2, w1 / 2])
    # dataset norm: every best is (w3 + w1)/2; mean = sum(raw) / sum(best)
    assert got[:, 1].mean() == pytest.approx(((w3 + w1) / 2 + w1) / (3 * (w3 + w1) / 2))


def test_zero_propensity_and_missing_ones_are_one_line(tmp_path) -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}}
    with pytest.raises(InputError, match=r"'a' has propensity 0.0; a propensity is a probability in \(0, 1\]"):
        evaluate(qrels, run, ["psP@1"], propensities={"a": 0.0, "c": 1.0})
    with pytest.raises(InputError, match="relevant document 'c' has no propensity"):
        evaluate(qrels, run, ["psP@1"], propensities={"a": 0.5})
    path = tmp_path / "p.txt"
    path.write_text("# doc propensity\na 0.5\n\nc 1\n")
    assert read_propensities(path) == {"a": 0.5, "c": 1.0}
    res = evaluate(qrels, run, ["psP(norm=none)@1"], propensities=path, missing="zero")
    assert res.runs[0].values[:, 0].tolist() == [2.0, 0.0, 0.0]  # 1/0.5 at rank 1 of q1
    path.write_text("a 0.5\nb x\n")
    with pytest.raises(Exception, match=r"p.txt:2: expected a propensity"):
        read_propensities(path)
    with pytest.raises(InputError, match="not computed by the streaming evaluation"):
        evaluate(qrels, run, ["psP@1"], stream=True)


def test_tie_policies_bracket_the_value() -> None:
    qrels = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 1}, "q3": {"c": 0}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}, "q2": {"a": 1.0}}
    names = ["psP(norm=none)@1", "psnDCG(norm=none)@2"]
    low, mid, high = (evaluate(qrels, run, names, ties=ties, missing="zero").runs[0].values
                      for ties in ("pessimistic", "expected", "optimistic"))
    assert np.all(low <= mid + 1e-12)
    assert np.all(mid <= high + 1e-12)
    assert low[0, 0] == 0.0  # b (not relevant) first


def test_propensities_no_measure_reads_or_stream_ignores_are_refused(tmp_path, capsys) -> None:
    """--propensities without psP/psnDCG was read by nothing, silently; with --stream, psP@k was
    scored with Jain et al.'s formula instead of the file, silently. Both are one line, exit 2,
    before anything is read; the in-memory path uses the file (a document without a propensity
    is refused, naming it)."""
    from serpeval.cli.app import main

    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n")
    (tmp_path / "prop").write_text("a 0.5\n")
    base = ["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run"), "--propensities", str(tmp_path / "prop")]
    assert main([*base, "-m", "nDCG@10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"serpeval evaluate: error: --propensities {tmp_path / 'prop'}: no measure asked reads "
                   "propensities (psP@k and psnDCG@k do); add one (-m psP@5) or leave --propensities out."]
    assert main([*base, "-m", "psP@1", "--stream"]) == 2
    assert "--stream does not read --propensities" in capsys.readouterr().err
    assert main([*base, "-m", "psP@1", "-f", "json"]) == 0
    capsys.readouterr()
