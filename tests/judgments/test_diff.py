"""Run diffs: overlap@k, RBO (min, residual, extrapolated) and Kendall's tau, hand-worked and
against independent references (the definitions summed term by term, the ``rbo`` package,
scipy's kendalltau)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from serpeval.core.data import Qrels, Run
from serpeval.core.errors import OptionError
from serpeval.judgments.diff import diff_runs


def run(name: str, lists: dict[str, list[str]]) -> Run:
    """A run whose rankings are the lists given (scores descending)."""
    return Run.from_dict({q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in lists.items()},
                         name=name)


def row(result, query: str) -> int:
    return result.query_ids.tolist().index(query)


def test_hand_worked_rbo_overlap_and_tau() -> None:
    # A = a b c d, B = b a c e, p = 0.5, so (1 - p) / p = 1 and w_d = 0.5^d / d.
    # X_1 = 0, X_2 = 2, X_3 = 3, X_4 = 3 (s = l = 4).
    a = run("A", {"q": ["a", "b", "c", "d"]})
    b = run("B", {"q": ["b", "a", "c", "e"]})
    r = diff_runs(a, b, k=2, p=0.5)
    # RBO_ext = sum X_d w_d + X_4/4 * p^4 = (2*.25/2 + 3*.125/3 + 3*.0625/4) + .75*.0625
    #         = 0.421875 + 0.046875 = 0.46875
    assert r.rbo_ext[0] == pytest.approx(0.46875, abs=1e-12)
    # RBO_min = sum (X_d - X_4) w_d - X_4 ln(1 - p) = (-3*.5 - 1*.25/2) + 3 ln 2
    assert r.rbo_min[0] == pytest.approx(-1.5 - 0.125 + 3 * math.log(2), abs=1e-12)
    # RBO_res: f = 4 + 4 - 3 = 5; at d = 5 Xmax = min(5, 3 + 10 - 8) = 5: (5 - 3) * .5^5 / 5;
    # past f: p^5 - X_4 (ln 2 - sum_{d<=5} .5^d / d).
    tail = 0.5 ** 5 - 3 * (math.log(2) - sum(0.5 ** d / d for d in range(1, 6)))
    assert r.rbo_res[0] == pytest.approx(2 * 0.5 ** 5 / 5 + tail, abs=1e-12)
    assert r.overlap[0] == 1.0  # top 2: {a, b} both ways
    # Shared a, b, c: (a, b) swapped, (a, c) and (b, c) kept: tau = (2 - 1) / 3.
    assert r.tau[0] == pytest.approx(1 / 3)
    assert r.shared[0] == 3
    assert r.entered[0] == 0
    assert r.left[0] == 0


def test_identical_disjoint_and_empty_rankings() -> None:
    a = run("A", {"same": ["x", "y", "z"], "apart": ["x", "y"], "only_a": ["x"]})
    b = run("B", {"same": ["x", "y", "z"], "apart": ["u", "v"], "only_b": ["w"]})
    r = diff_runs(a, b, k=3, p=0.9, missing="zero")  # one-sided queries as empty rankings
    same, apart, only_a = row(r, "same"), row(r, "apart"), row(r, "only_a")
    # Identical prefixes: RBO_min + RBO_res = 1 and RBO_ext = 1 (the agreement continues).
    assert r.rbo_ext[same] == pytest.approx(1.0)
    assert r.rbo_min[same] + r.rbo_res[same] == pytest.approx(1.0)
    assert r.tau[same] == 1.0
    assert r.rbo_min[apart] == 0.0
    assert r.rbo_ext[apart] == 0.0
    assert np.isnan(r.tau[apart])
    # One ranking empty: nothing shared, everything possible beyond.
    assert (r.rbo_min[only_a], r.rbo_ext[only_a], r.rbo_res[only_a]) == (0.0, 0.0, pytest.approx(1.0))
    assert r.overlap[apart] == 0.0
    assert r.entered[apart] == 2
    assert r.left[apart] == 2


def _brute(s_list, t_list, p, horizon=4000):
    """RBO_min and RBO_res from the definition: (1 - p) sum p^(d-1) X_d / d, with unseen
    documents never matching (min) or matching whenever possible (max)."""
    s, big = sorted((len(s_list), len(t_list)))

    def x(d):
        return len(set(s_list[:d]) & set(t_list[:d]))

    x_l = x(big)
    low = high = 0.0
    for d in range(1, horizon):
        seen = x(min(d, big))
        if d <= s:
            most = seen
        elif d <= big:
            most = min(d, seen + d - s)
        else:
            most = min(d, x_l + 2 * d - s - big)
        low += (1 - p) * p ** (d - 1) * seen / d
        high += (1 - p) * p ** (d - 1) * most / d
    return low, high - low


def _ext_from_the_paper(s_list, t_list, p):
    """RBO_ext for uneven lists, Webber, Moffat & Zobel 2010, eq. 32, term by term: with s and l
    the shorter and longer lengths and X_d the overlap at depth d (the shorter list taken whole
    beyond its end), (1-p)/p * (sum_{d<=l} X_d/d p^d + sum_{s<d<=l} X_s (d-s)/(s d) p^d)
    + ((X_l - X_s)/l + X_s/s) p^l."""
    short, long_ = sorted((s_list, t_list), key=len)
    s, big = len(short), len(long_)

    def x(d):
        return len(set(short[:d]) & set(long_[:d]))

    x_s, x_l = x(s), x(big)
    total = sum(x(d) / d * p**d for d in range(1, big + 1))
    total += sum(x_s * (d - s) / (s * d) * p**d for d in range(s + 1, big + 1))
    return (1 - p) / p * total + ((x_l - x_s) / big + x_s / s) * p**big


def test_rbo_against_the_definitions_in_the_paper() -> None:
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(14)] + ["é", "doc-with-a-long-id-0000001", "7"]
    lists_a, lists_b = {}, {}
    for i in range(40):
        la, lb = rng.integers(1, 13, 2)
        lists_a[f"q{i}"] = list(rng.choice(docs, la, replace=False))
        lists_b[f"q{i}"] = list(rng.choice(docs, lb, replace=False))
    for p in (0.5, 0.9, 0.98):
        r = diff_runs(run("A", lists_a), run("B", lists_b), p=p)
        for i, q in enumerate(r.query_ids.tolist()):
            low, res = _brute(lists_a[q], lists_b[q], p)
            assert r.rbo_min[i] == pytest.approx(low, abs=1e-9), q
            assert r.rbo_res[i] == pytest.approx(res, abs=1e-9), q
            ext = _ext_from_the_paper(lists_a[q], lists_b[q], p)
            assert r.rbo_ext[i] == pytest.approx(ext, abs=1e-9), q
            assert r.rbo_min[i] - 1e-12 <= r.rbo_ext[i] <= r.rbo_min[i] + r.rbo_res[i] + 1e-12


def test_tau_against_scipy() -> None:
    from scipy.stats import kendalltau

    rng = np.random.default_rng(3)
    lists_a, lists_b = {}, {}
    for i in range(30):
        docs = [f"x{j}" for j in range(int(rng.integers(2, 60)))]
        lists_a[f"q{i}"] = list(rng.permutation(docs))
        lists_b[f"q{i}"] = list(rng.permutation(docs))[: max(2, len(docs) - 3)]
    r = diff_runs(run("A", lists_a), run("B", lists_b))
    for i, q in enumerate(r.query_ids.tolist()):
        shared = [d for d in lists_a[q] if d in lists_b[q]]
        expected = kendalltau([lists_a[q].index(d) for d in shared], [lists_b[q].index(d) for d in shared])[0]
        assert r.tau[i] == pytest.approx(expected), q


def test_changed_unjudged_documents_and_most_changed() -> None:
    a = run("A", {"q1": ["a", "b", "c"], "q2": ["x", "y"]})
    b = run("B", {"q1": ["a", "n1", "n2"], "q2": ["x", "y"]})
    qrels = Qrels.from_dict({"q1": {"a": 1, "n1": 0, "b": 1}, "q2": {"x": 1}})
    r = diff_runs(a, b, k=3, qrels=qrels)
    assert r.entered.tolist() == [2, 0]
    assert r.left.tolist() == [2, 0]
    assert r.entered_unjudged.tolist() == [1, 0]
    assert r.left_unjudged.tolist() == [1, 0]
    assert r.unjudged == (("q1", "n2", "entered"), ("q1", "c", "left"))
    assert [x["query_id"] for x in r.most_changed(1)] == ["q1"]
    summary = r.summary()
    assert summary["entered unjudged"] == 1
    assert summary["queries"] == 2


def test_depth_cut_and_options() -> None:
    a = run("A", {"q": ["a", "b", "c", "d"]})
    b = run("B", {"q": ["a", "b", "d", "c"]})
    assert diff_runs(a, b, depth=2).tau[0] == 1.0  # only a, b are compared
    # k defaults to the depth when it is smaller: identical runs overlap fully (it was 2/10).
    same = diff_runs(a, a, depth=2)
    assert (same.k, same.overlap[0]) == (2, 1.0)
    assert diff_runs(a, a).k == 10
    with pytest.raises(OptionError, match=r"k \(10\) is deeper than depth \(2\).*overlap@10 = 0.2"):
        diff_runs(a, a, k=10, depth=2)
    with pytest.raises(OptionError, match="p must be"):
        diff_runs(a, b, p=1.0)
    with pytest.raises(OptionError, match="k must be"):
        diff_runs(a, b, k=0)


def test_queries_missing_from_one_run_are_reported_and_left_out() -> None:
    """A answers q1, q2, "tópico-3"; B answers q1 (the same ranking) and "z9". Scoring the
    one-sided queries as empty rankings gave overlap@2 (1 + 0 + 0 + 0) / 4 = 0.25 and RBO_ext
    0.25 for identical runs. By default the diff is on the 1 shared query: overlap 1, RBO_ext 1,
    and the one-sided queries are counted and named."""
    a = run("A", {"q1": ["a", "b"], "q2": ["c"], "tópico-3": ["d", "e"]})
    b = run("B", {"q1": ["a", "b"], "z9": ["x"]})
    r = diff_runs(a, b, k=2)
    assert r.query_ids.tolist() == ["q1"]
    assert r.only_a == ("q2", "tópico-3")
    assert r.only_b == ("z9",)
    assert r.missing == "skip"
    s = r.summary()
    assert (s["queries"], s["overlap@2"], s["RBO_ext"]) == (1, 1.0, pytest.approx(1.0))
    assert (s["queries only in A"], s["queries only in B"]) == (2, 1)
    assert (s["entered"], s["left"]) == (0, 0)
    payload = r.to_json_dict()
    assert payload["missing"] == "skip"
    assert payload["only_a"] == ["q2", "tópico-3"]
    assert payload["only_b"] == ["z9"]
    assert any("only in A: 2 (q2, tópico-3)" in n for n in r.notes())
    old = diff_runs(a, b, k=2, missing="zero")
    assert old.summary()["queries"] == 4
    assert old.summary()["overlap@2"] == pytest.approx(0.25)
    assert old.summary()["RBO_ext"] == pytest.approx(0.25)
    assert (old.summary()["entered"], old.summary()["left"]) == (1, 3)  # x entered; c, d, e left
    assert any("empty rankings" in n for n in old.notes())
    with pytest.raises(OptionError, match="missing"):
        diff_runs(a, b, missing="drop")


def test_no_shared_query_is_an_error() -> None:
    from serpeval.core.errors import InputError

    with pytest.raises(InputError, match="no query"):
        diff_runs(run("A", {"q1": ["a"]}), run("B", {"q2": ["a"]}))
