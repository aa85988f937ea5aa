"""Assessor agreement: kappa, alpha, Fleiss against statsmodels, the krippendorff package and
published worked examples; tau and tau_AP against scipy and hand cases; coverage counts."""

from __future__ import annotations

import numpy as np
import pytest

from serpeval.core.errors import InputError, OptionError
from serpeval.judgments.agreement import (
    agreement,
    alpha_from_coincidences,
    cohen_kappa,
    fleiss_kappa,
    kendall_tau,
    tau_ap,
)


def noisy_sets(n_sets: int = 3, queries: int = 25, seed: int = 1, p_judge: float = 0.85) -> list[dict]:
    """Label sets of one 'true' grade 0..3 plus assessor noise; ids of mixed lengths and Unicode."""
    rng = np.random.default_rng(seed)
    sets: list[dict] = [{} for _ in range(n_sets)]
    for q in range(queries):
        qid = f"{q}" if q % 3 else f"topic-ü{q:04d}"
        for d in range(int(rng.integers(2, 14))):
            doc = f"D{d}" if d % 2 else f"clueweb12-{d:07d}"
            true = rng.integers(0, 4)
            for s in range(n_sets):
                if rng.random() < p_judge:
                    sets[s].setdefault(qid, {})[doc] = int(np.clip(true + rng.integers(-1, 2), 0, 3))
    return sets


def reliability(sets: list[dict]) -> np.ndarray:
    keys = sorted({(q, d) for s in sets for q in s for d in s[q]})
    return np.array([[s.get(q, {}).get(d, np.nan) for q, d in keys] for s in sets], dtype=float)


# ------------------------------------------------------------------ Cohen's kappa

def test_cohen_kappa_textbook_example() -> None:
    # Wikipedia "Cohen's kappa", 50 proposals: yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 35/50 = 0.7; p_yes = 25/50 * 30/50 = 0.3, p_no = 25/50 * 20/50 = 0.2, p_e = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    assert cohen_kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4)
    # Two categories: linear and quadratic weights (0/1 off the diagonal) equal unweighted.
    assert cohen_kappa(np.array([[20, 5], [10, 15]]), "quadratic") == pytest.approx(0.4)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cohen_kappa_matches_statsmodels(seed) -> None:
    from statsmodels.stats.inter_rater import cohens_kappa

    result = agreement(noisy_sets(2, seed=seed), resamples=20)
    pair = result.pairs[0]
    assert pair.values["kappa"] == pytest.approx(cohens_kappa(pair.confusion).kappa, abs=1e-12)
    assert pair.values["kappa_linear"] == pytest.approx(cohens_kappa(pair.confusion, wt="linear").kappa, abs=1e-12)
    assert pair.values["kappa_quadratic"] == pytest.approx(
        cohens_kappa(pair.confusion, wt="quadratic").kappa, abs=1e-12)


def test_cohen_kappa_matches_sklearn_on_the_labels() -> None:
    metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is not installed (optional oracle)")
    sets = noisy_sets(2, seed=5)
    a, b = reliability(sets)
    both = ~np.isnan(a) & ~np.isnan(b)
    result = agreement(sets, resamples=20)
    for key, weights in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
        expected = metrics.cohen_kappa_score(a[both], b[both], labels=[0, 1, 2, 3], weights=weights)
        assert result.pairs[0].values[key] == pytest.approx(expected, abs=1e-12)


def test_an_unused_grade_between_is_an_empty_category() -> None:
    # Grades 0, 1, 3 (no 2): categories 0..3, so a 1-vs-3 disagreement weighs 2 (linear), not 1.
    a = {"q": {"d1": 0, "d2": 1, "d3": 3, "d4": 3}}
    b = {"q": {"d1": 0, "d2": 3, "d3": 3, "d4": 1}}
    result = agreement([a, b], resamples=10)
    assert result.grades == (0, 1, 2, 3)
    # O = diag(1/4 at 0, 1/4 at 3) + 1/4 at (1,3) and (3,1); row = col marginals (1/4, 1/4, 0, 1/2).
    # Linear: sum w O = (2 + 2)/4 = 1; sum w E = sum_ij |i-j| r_i c_j
    #   = 2 * (1/4*1/4*1 + 1/4*1/2*3 + 1/4*1/2*2) = 2 * (1/16 + 3/8 + 1/4) = 11/8; kappa = 1 - 8/11.
    assert result.pairs[0].values["kappa_linear"] == pytest.approx(1 - 8 / 11)


# ------------------------------------------------------------------ Krippendorff's alpha

def test_alpha_published_example() -> None:
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 observers x 12
    units with missing values: alpha ordinal = 0.815 (nominal .743, interval .849)."""
    coders = {"A": "1 2 3 3 2 1 4 1 2 . . .", "B": "1 2 3 3 2 2 4 1 2 5 . 3",
              "C": ". 3 3 3 2 3 4 2 2 5 1 .", "D": "1 2 3 3 2 4 4 1 2 5 1 ."}
    sets = [{"q": {f"u{i}": int(v) for i, v in enumerate(s.split()) if v != "."}} for s in coders.values()]
    result = agreement(sets, names=list(coders), resamples=10)
    assert round(result.alpha, 3) == 0.815
    assert result.alpha_items == 11  # unit 12 has one value only: not pairable
    assert result.all_judged == 8


@pytest.mark.parametrize("seed", [1, 7])
def test_alpha_matches_the_krippendorff_package(seed) -> None:
    import krippendorff

    sets = noisy_sets(4, seed=seed, p_judge=0.7)
    result = agreement(sets, resamples=10)
    expected = krippendorff.alpha(reliability_data=reliability(sets), level_of_measurement="ordinal")
    assert result.alpha == pytest.approx(expected, abs=1e-12)
    for p in result.pairs:
        i, j = result.names.index(p.a), result.names.index(p.b)
        pair = reliability([sets[i], sets[j]])
        assert p.values["alpha"] == pytest.approx(
            krippendorff.alpha(reliability_data=pair, level_of_measurement="ordinal"), abs=1e-12)


def test_the_bootstrap_alpha_formula_equals_the_package() -> None:
    """The replicates use alpha_from_coincidences; on the full sample it equals the package."""
    import krippendorff

    from serpeval.judgments.agreement import _coincidences

    rng = np.random.default_rng(3)
    counts = rng.integers(0, 3, size=(60, 5))
    query = rng.integers(0, 7, size=60)
    per_query = _coincidences(counts, query, 7)
    mine = alpha_from_coincidences(per_query.sum(axis=0).reshape(5, 5))
    pairable = counts[counts.sum(axis=1) >= 2]
    assert mine == pytest.approx(krippendorff.alpha(value_counts=pairable, level_of_measurement="ordinal",
                                                    value_domain=list(range(5))), abs=1e-12)


# ------------------------------------------------------------------ Fleiss' kappa

def test_fleiss_kappa_published_example() -> None:
    # Wikipedia "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories; kappa = 0.210
    # (P-bar = 0.378, P_e = 0.213).
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                      [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    # Unrounded: P-bar = 0.378022, P_e = sum p_j^2 = 0.212755, (0.378022 - 0.212755) / 0.787245 = 0.20993.
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=5e-6)
    assert fleiss_kappa(table) == pytest.approx(sm_fleiss(table), abs=1e-12)


def test_fleiss_matches_statsmodels_on_documents_every_set_judged() -> None:
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    sets = noisy_sets(3, seed=11)
    result = agreement(sets, resamples=20)
    data = reliability(sets)
    everyone = data[:, ~np.isnan(data).any(axis=0)].T.astype(int)
    table, _ = aggregate_raters(everyone, n_cat=4)
    assert result.all_judged == len(everyone)
    assert result.fleiss == pytest.approx(sm_fleiss(table), abs=1e-12)
    assert agreement(sets[:2], resamples=10).fleiss is None  # two sets: Cohen, not Fleiss


# ------------------------------------------------------------------ coverage, bootstrap

def test_documents_judged_by_one_set_are_counted_not_compared() -> None:
    a = {"q1": {"d1": 1, "d2": 0, "d3": 2, "d9": -1}, "q2": {"x": 1}}
    b = {"q1": {"d1": 1, "d2": 1, "d4": 0}, "q3": {"y": 0, "z": 1}}
    result = agreement([a, b], names=["alice", "bob"], resamples=10)
    p = result.pair("bob", "alice")
    # both: q1/d1, q1/d2; alice only: q1/d3, q2/x (d9 is -1: not a label); bob only: q1/d4, q3/y, q3/z.
    assert (p.both, p.only_a, p.only_b, p.queries) == (2, 2, 3, 1)
    # rows: alice (the first set) 0, 1, 2; columns: bob. d1: (1, 1); d2: (0, 1).
    assert p.confusion.tolist() == [[0, 1, 0], [0, 1, 0], [0, 0, 0]]
    assert [s.unjudged for s in result.sets] == [1, 0]
    assert result.coverage_dicts()[0] == {"a": "alice", "b": "bob", "both": 2, "only a": 2, "only b": 3,
                                          "queries": 1}
    assert "documents judged by one set only are counted" in result.notes()[0]


def test_bootstrap_is_seeded_and_equals_a_loop_over_resampled_queries() -> None:
    sets = noisy_sets(2, queries=12, seed=4)
    one = agreement(sets, resamples=200, rng=42)
    two = agreement(sets, resamples=200, rng=42)
    assert one.pairs[0].intervals == two.pairs[0].intervals
    # The matrix-product bootstrap equals recomputing kappa on explicitly resampled queries.
    from serpeval.judgments.agreement import _align

    data = _align([__import__("serpeval").io.as_qrels(s) for s in sets], ["a", "b"])
    rng = np.random.default_rng(42)
    draws = rng.multinomial(data.n_queries, np.full(data.n_queries, 1 / data.n_queries), size=200)
    replicates = []
    for w in draws:
        picked = np.repeat(np.arange(data.n_queries), w)
        confusion = np.zeros((4, 4))
        for q in picked:
            items = (data.query == q) & (data.grades >= 0).all(axis=0)
            np.add.at(confusion, (data.grades[0, items], data.grades[1, items]), 1)
        replicates.append(float(cohen_kappa(confusion)))
    expected = np.quantile(np.array(replicates)[np.isfinite(replicates)], [0.025, 0.975])
    assert one.pairs[0].intervals["kappa"] == pytest.approx(tuple(expected), abs=1e-12)
    low, high = one.pairs[0].intervals["kappa"]
    assert low < one.pairs[0].kappa < high


def test_errors_name_the_problem() -> None:
    with pytest.raises(InputError, match="at least two label sets"):
        agreement([{"q": {"d": 1}}])
    with pytest.raises(InputError, match="share no judged"):
        agreement([{"q": {"d": 1}}, {"q": {"e": 1}}])
    with pytest.raises(InputError, match="no non-negative grade"):
        agreement([{"q": {"d": -1}}, {"q": {"d": 1}}])
    with pytest.raises(OptionError, match="distinct non-empty names"):
        agreement([{"q": {"d": 1}}, {"q": {"d": 1}}], names=["x", "x"])


# ------------------------------------------------------------------ tau, tau_AP, stability

def test_tau_ap_hand_cases() -> None:
    ref = np.array([4.0, 3.0, 2.0, 1.0])  # a > b > c > d
    # Estimated b > a > c > d: C(2) = 0 (b is not above a), C(3) = 2, C(4) = 3;
    # tau_AP = 2/3 * (0/1 + 2/2 + 3/3) - 1 = 1/3 (Kendall's tau: (5 - 1)/6 = 2/3).
    assert tau_ap(ref, np.array([3.0, 4.0, 2.0, 1.0])) == pytest.approx(1 / 3)
    assert kendall_tau(ref, np.array([3.0, 4.0, 2.0, 1.0])) == pytest.approx(2 / 3)
    # The same single swap at the bottom (a > b > d > c): 2/3 * (1 + 1 + 2/3) - 1 = 7/9.
    assert tau_ap(ref, np.array([4.0, 3.0, 1.0, 2.0])) == pytest.approx(7 / 9)
    assert tau_ap(ref, ref) == 1.0
    assert tau_ap(ref, -ref) == -1.0


def test_tau_ap_leaves_ties_out() -> None:
    """Identical orderings with a tie scored 0 (a tied pair counted as discordant)."""
    tied = np.array([0.5, 0.5, 0.2])
    # Positions: 2 (the other 0.5: tied, skipped), 3 (0.2: both above, both higher) -> 1/1 used.
    assert tau_ap(tied, tied) == 1.0
    assert tau_ap(tied, -tied) == -1.0
    assert kendall_tau(tied, tied) == 1.0
    # Ref a > b = c > d, estimated a > c > b > d: the b-c pair is tied in ref and left out;
    # position 2 (c): a above, higher -> 1/1; 3 (b): a counts, c tied -> 1/1; 4 (d): 3/3 -> tau_AP 1.
    assert tau_ap(np.array([3.0, 2.0, 2.0, 1.0]), np.array([4.0, 2.0, 3.0, 1.0])) == 1.0
    # Ties in the estimate: ref a > b > c, estimated a = b > c: the a-b pair is left out;
    # position 2 (b) skipped, 3 (c): 2/2 -> 1; a swap below still costs: ref a > b > c > d,
    # estimated a = b > d > c: positions 3 (d): 2/2, 4 (c): 2/3 -> 2/2 * (1 + 2/3) - 1 = 2/3.
    assert tau_ap(np.array([3.0, 2.0, 1.0]), np.array([2.0, 2.0, 1.0])) == 1.0
    assert tau_ap(np.array([4.0, 3.0, 2.0, 1.0]), np.array([3.0, 3.0, 1.0, 2.0])) == pytest.approx(2 / 3)
    assert np.isnan(tau_ap(np.array([1.0, 1.0]), np.array([2.0, 1.0])))


@pytest.mark.parametrize("seed", range(5))
def test_kendall_tau_matches_scipy(seed) -> None:
    from scipy.stats import kendalltau

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, 9).astype(float)  # ties on purpose
    y = x + rng.integers(-2, 3, 9)
    assert kendall_tau(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)


def test_ranking_stability_against_evaluate_and_compare() -> None:
    from scipy.stats import kendalltau

    from serpeval import compare, evaluate

    rng = np.random.default_rng(0)
    queries = [f"q{i}" for i in range(20)]
    docs = [f"d{j}" for j in range(15)]
    truth = {q: {d: int(rng.integers(0, 3)) for d in docs} for q in queries}
    other = {q: {d: int(np.clip(g + rng.integers(-1, 2), 0, 2)) for d, g in row.items()} for q, row in truth.items()}
    runs = {}
    for i, noise in enumerate([0.3, 0.8, 1.5, 3.0]):
        runs[f"sys{i}"] = {q: {d: truth[q][d] + rng.normal(0, noise) for d in docs} for q in queries}
    result = agreement([truth, other], names=["A", "B"], runs=runs, measures=["nDCG@10"], resamples=10)
    st = result.stability
    assert st is not None
    assert st.queries == 20
    assert st.left_out == 0
    means_a = [evaluate(truth, runs, ["nDCG@10"]).aggregate(s, "nDCG@10") for s in runs]
    means_b = [evaluate(other, runs, ["nDCG@10"]).aggregate(s, "nDCG@10") for s in runs]
    row = st.rows[0]
    assert row.tau == pytest.approx(kendalltau(means_a, means_b).statistic)
    assert row.tau_ap == pytest.approx(tau_ap(np.array(means_a), np.array(means_b)))
    sig = [{(r.system, r.baseline): (r.significant, r.improved) for r in
            compare(q, runs, ["nDCG@10"], pairs="all").rows} for q in (truth, other)]
    decision = [{k: (v[1] * 2 - 1) * v[0] for k, v in s.items()} for s in sig]
    assert row.decisions == 6
    assert row.flips == sum(decision[0][k] != decision[1][k] for k in decision[0])
    assert row.significant_a == sum(v != 0 for v in decision[0].values())


def test_stability_uses_the_queries_every_set_judges() -> None:
    a = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 1}, "q3": {"d5": 1}}
    b = {"q1": {"d1": 1, "d2": 1}, "q2": {"d1": 0}}
    runs = {"x": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0}},
            "y": {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d3": 1.0}}}
    st = agreement([a, b], runs=runs, measures=["P@1"], resamples=10).stability
    assert st is not None
    assert (st.queries, st.left_out) == (2, 1)
    # Under a: x gets P@1 = (1 + 1)/2 = 1, y (0 + 0)/2 = 0; under b: x (1 + 0)/2, y (1 + 0)/2.
    assert st.means[:, :, 0].tolist() == [[1.0, 0.0], [0.5, 0.5]]


# ------------------------------------------------------------------ the command line

def _write(path, sets) -> list[str]:
    from serpeval.io import as_qrels
    from serpeval.io.trec import write_trec_qrels

    paths = []
    for i, s in enumerate(sets):
        p = path / f"assessor{i}.qrels"
        write_trec_qrels(as_qrels(s), p)
        paths.append(str(p))
    return paths


def test_cli_json_carries_the_same_numbers(tmp_path, capsys) -> None:
    import json

    from serpeval.cli.app import main

    sets = noisy_sets(3, seed=2)
    paths = _write(tmp_path, sets)
    assert main(["agreement", *paths, "--names", "x,y,z", "--resamples", "50", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    direct = agreement(paths, names=["x", "y", "z"], resamples=50)
    assert [p["kappa"] for p in payload["pairs"]] == [p.kappa for p in direct.pairs]
    assert payload["fleiss_kappa"] == direct.fleiss
    assert payload["alpha"] == direct.alpha
    assert payload["pairs"][0]["confusion"] == direct.pairs[0].confusion.tolist()


def test_cli_table_and_errors(tmp_path, capsys) -> None:
    from serpeval.cli.app import main

    paths = _write(tmp_path, noisy_sets(2, seed=3))
    assert main(["agreement", *paths, "--resamples", "50"]) == 0
    text = capsys.readouterr().out
    assert "assessor agreement: assessor0, assessor1" in text
    assert "confusion: assessor0 (rows) vs assessor1 (columns)" in text
    assert main(["agreement", paths[0]]) == 2
    assert "at least two label sets" in capsys.readouterr().err


def test_opposite_label_sets_reverse_the_ranking_and_the_decision() -> None:
    """Set A calls d1 relevant, set B d5; run x ranks d1 first, y ranks d5 first, except on 3 of
    20 queries where both put the other document first. Under A: P@1 of x = 17/20, of y = 3/20;
    under B the reverse. Both differences are significant, in opposite directions."""
    queries = [f"q{i}" for i in range(20)]
    a = {q: {"d1": 1, "d5": 0} for q in queries}
    b = {q: {"d1": 0, "d5": 1} for q in queries}
    x = {q: {"d1": 2.0, "d5": 1.0} if i >= 3 else {"d1": 1.0, "d5": 2.0} for i, q in enumerate(queries)}
    y = {q: {"d5": 2.0, "d1": 1.0} if i >= 3 else {"d5": 1.0, "d1": 2.0} for i, q in enumerate(queries)}
    st = agreement([a, b], names=["A", "B"], runs={"x": x, "y": y}, measures=["P@1"], resamples=10).stability
    assert st is not None
    assert st.means[:, :, 0].tolist() == [[0.85, 0.15], [0.15, 0.85]]
    row = st.rows[0]
    assert (row.tau, row.tau_ap) == (-1.0, -1.0)
    assert (row.decisions, row.significant_a, row.significant_b, row.flips, row.reversals) == (1, 1, 1, 1, 1)


def test_order_of_the_sets_only_transposes() -> None:
    sets = noisy_sets(2, seed=9)
    ab, ba = agreement(sets, resamples=50), agreement(sets[::-1], resamples=50)
    assert (ab.pairs[0].confusion == ba.pairs[0].confusion.T).all()
    for key in ("observed", "kappa", "kappa_linear", "kappa_quadratic", "alpha"):
        assert ab.pairs[0].values[key] == pytest.approx(ba.pairs[0].values[key], abs=1e-12)
    assert (ab.pairs[0].only_a, ab.pairs[0].only_b) == (ba.pairs[0].only_b, ba.pairs[0].only_a)


def test_three_sets_without_a_common_document_have_no_fleiss() -> None:
    a, b, c = {"q": {"d1": 1, "d2": 0}}, {"q": {"d1": 1, "d3": 1}}, {"q": {"d2": 0, "d3": 1}}
    result = agreement([a, b, c], resamples=10)
    assert result.fleiss is None
    assert result.all_judged == 0
    assert result.alpha_items == 3
    assert any("no Fleiss kappa" in n for n in result.notes())


def test_results_display_in_notebooks() -> None:
    from tests.core.test_notebook_display import check_display

    sets = noisy_sets(3, seed=4)
    rng = np.random.default_rng(0)
    runs = {f"r{i}": {q: {d: g + rng.normal(0, i + 0.5) for d, g in row.items()} for q, row in sets[0].items()}
            for i in range(3)}
    result = agreement(sets, runs=runs, measures=["P@5"], resamples=20)
    check_display(result)
    assert result.stability is not None
    check_display(result.stability)


def test_queries_a_run_does_not_answer_are_reported() -> None:
    a = {"q1": {"d1": 1}, "q2": {"d1": 1}, "q3": {"d1": 0}}
    runs = {"x": {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}, "q3": {"d1": 1.0}},
            "y": {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}}
    st = agreement([a, a], runs=runs, measures=["P@1"], resamples=10).stability
    assert st is not None
    assert st.missing == {"x": 0, "y": 1}
    assert "queries without results, skipped: y 1" in st.notes()[-1]


def test_identical_label_sets_flip_no_randomized_decision() -> None:
    """Two copies of the same qrels: every decision must agree. With a randomization test each
    set drew its own permutations, and a p-value near alpha flipped (this case: 1 flip)."""
    rng = np.random.default_rng(16)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 2)) for j in range(10)} for i in range(30)}
    runs = {f"s{s}": {q: {f"d{j}": float(rng.normal(j * 0.05 * s, 1)) for j in range(10)} for q in qrels}
            for s in range(4)}
    st = agreement([qrels, qrels], names=["a", "b"], runs=runs, measures=["AP"], test="randomization",
                   correction="none", resamples=10, rng=16).stability
    assert st.rows[0].decisions == 6
    assert st.rows[0].significant_a == st.rows[0].significant_b
    assert st.rows[0].flips == 0
    assert (st.rows[0].tau, st.rows[0].tau_ap) == (1.0, 1.0)


# ------------------------------------------------------------------ ties in system means

def _exact_tau_ap(reference: list, scores: list) -> float:
    """tau_AP with ties left out (the module's rule), in exact arithmetic, one loop per position."""
    from fractions import Fraction

    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    total, used = Fraction(0), 0
    for pos in range(1, len(order)):
        i = order[pos]
        above = [order[j] for j in range(pos) if scores[order[j]] != scores[i] and reference[order[j]] != reference[i]]
        if above:
            total += Fraction(sum(reference[j] > reference[i] for j in above), len(above))
            used += 1
    return float(2 * total / used - 1)


def _split_sets_runs(hits: dict[str, tuple[list[int], list[int]]], n_queries: int) -> tuple[dict, dict, dict]:
    """Set A calls the docs ``a*`` relevant, set B the docs ``b*`` (both judge both); a system's
    ranking of query i has ``hits[A][i]`` docs ``a*``, ``hits[B][i]`` docs ``b*`` and fillers in
    its top 10, so P@10 under A is ``hits[A][i] / 10`` and under B ``hits[B][i] / 10``."""
    qids = [f"q-ü{i}" if i % 2 else f"topic{i:05d}" for i in range(n_queries)]
    a = {q: {**{f"a{j}": 1 for j in range(10)}, **{f"b{j}": 0 for j in range(10)}} for q in qids}
    b = {q: {**{f"a{j}": 0 for j in range(10)}, **{f"b{j}": 1 for j in range(10)}} for q in qids}
    runs = {}
    for name, (in_a, in_b) in hits.items():
        runs[name] = {}
        for q, ha, hb in zip(qids, in_a, in_b, strict=True):
            docs = [f"a{j}" for j in range(ha)] + [f"b{j}" for j in range(hb)]
            docs += [f"filler-{j}" for j in range(10 - len(docs))]
            runs[name][q] = {d: float(10 - r) for r, d in enumerate(docs)}
    return a, b, runs


def test_tied_means_are_ties_not_float_noise() -> None:
    """The issue's case: P@10 6/30 under both sets for s2 and s3, summed in other orders.
    In floats s2 = 0.2 + 4e-17 > s3 under A and s2 < s3 under B, which ranked them 2 and 3 and
    gave tau (5 - 1)/6 = 0.667. Exact means: A = B = (0.3, 0.2, 0.2, 0.1), so tau-b = 1
    (5 concordant / sqrt(5 * 5)) and tau_AP = 1 (the tied pair left out)."""
    hits = {"s1": ([3, 3, 3], [3, 3, 3]), "s2": ([1, 2, 3], [3, 2, 1]),
            "s3": ([3, 2, 1], [1, 2, 3]), "s4": ([1, 1, 1], [1, 1, 1])}
    a, b, runs = _split_sets_runs(hits, 3)
    st = agreement([a, b], names=["A", "B"], runs=runs, measures=["P@10"], resamples=10).stability
    assert st is not None
    assert st.means[0, 1, 0] != st.means[0, 2, 0]       # the float noise is there ...
    row = st.rows[0]
    assert (row.tau, row.tau_ap) == (pytest.approx(1.0), pytest.approx(1.0))  # ... and ignored
    assert (row.ties_a, row.ties_b) == (1, 1)
    ranks = {(r["system"]): (r["A rank"], r["B rank"]) for r in st.means_dicts()}
    assert ranks == {"s1": (1, 1), "s2": (2, 2), "s3": (2, 2), "s4": (4, 4)}
    assert any("ties" in n for n in st.notes())


@pytest.mark.parametrize("seed", range(6))
def test_generated_exactly_tied_means_match_scipy_on_exact_values(seed) -> None:
    """Systems whose P@10 hits under each set are permutations of a few multisets: their means
    are equal in exact arithmetic, not always in float. tau-b must equal scipy's kendalltau of
    the exact means (Fractions -> the same double when equal), tau_AP the exact-arithmetic loop."""
    from fractions import Fraction

    from scipy.stats import kendalltau

    rng = np.random.default_rng(seed)
    n_queries = int(rng.integers(3, 12))
    pool = [list(rng.integers(0, 6, size=n_queries)) for _ in range(3)]  # 3 multisets of hits
    hits = {}
    for s in range(7):
        in_a = [int(h) for h in rng.permutation(pool[int(rng.integers(0, 3))])]
        in_b = [int(h) for h in rng.permutation(pool[int(rng.integers(0, 3))])]
        hits[f"sys{s}" + "x" * s] = (in_a, in_b)
    a, b, runs = _split_sets_runs(hits, n_queries)
    st = agreement([a, b], names=["A", "B"], runs=runs, measures=["P@10"], resamples=10).stability
    exact_a = [Fraction(sum(h[0]), 10 * n_queries) for h in hits.values()]
    exact_b = [Fraction(sum(h[1]), 10 * n_queries) for h in hits.values()]
    expected = kendalltau([float(x) for x in exact_a], [float(x) for x in exact_b]).statistic
    row = st.rows[0]
    if np.isnan(expected):
        assert np.isnan(row.tau)
    else:
        assert row.tau == pytest.approx(expected, abs=1e-12)
        assert row.tau_ap == pytest.approx(_exact_tau_ap(exact_a, exact_b), abs=1e-12)
    tied = sum(x == y for i, x in enumerate(exact_a) for y in exact_a[i + 1:])
    assert row.ties_a == tied


def test_resamples_beyond_the_limit_are_refused_before_any_allocation(tmp_path, capsys) -> None:
    # resamples=10**13 used to go straight to a [10**13, queries] multinomial draw: a
    # MemoryError, and on the command line "out of memory. Try fewer runs at once..." about
    # a run-free command. Now the same limit as every resampling statistic (10 million).
    from serpeval.cli.app import main
    from serpeval.stats.validation import MAX_RESAMPLES

    sets = noisy_sets(2, queries=5, seed=4)
    with pytest.raises(OptionError, match="resamples must be at most 10,000,000"):
        agreement(sets, resamples=10**13)
    with pytest.raises(OptionError, match="resamples must be at most"):
        agreement(sets, resamples=MAX_RESAMPLES + 1)
    assert agreement(sets, resamples=20).resamples == 20
    paths = _write(tmp_path, sets)
    with pytest.raises(SystemExit) as exit_:   # argparse refuses it: status 2, one line
        main(["agreement", *paths, "--resamples", str(10**13)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --resamples: must be at most 10,000,000" in err.splitlines()[-1]
    assert "Traceback" not in err


def test_cli_csv_reports_what_was_not_compared_on_stderr(tmp_path, capsys) -> None:
    # Set a judges d1-d4 of q1, set b d3-d6 (its d4 graded -1: not a label), both judge e1, e2
    # of q2. By hand: both = {d3, e1, e2}, only a = {d1, d2, d4}, only b = {d5, d6}; one
    # negative grade set aside.
    # The csv rows carry the statistics; these counts used to be printed nowhere.
    from serpeval.cli.app import main

    a = tmp_path / "a.qrels"
    b = tmp_path / "b.qrels"
    a.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq1 0 d4 1\nq2 0 e1 1\nq2 0 e2 0\n")
    b.write_text("q1 0 d3 2\nq1 0 d4 -1\nq1 0 d5 0\nq1 0 d6 1\nq2 0 e1 1\nq2 0 e2 1\n")
    assert main(["agreement", str(a), str(b), "--resamples", "20", "-f", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "sets,statistic,value,ci_low,ci_high,documents"
    assert "a vs b: 3 documents compared; not compared: 3 judged by a only, 2 by b only" in captured.err
    assert "negative grades are not labels (1 set aside)" in captured.err
    assert "csv: the agreement statistics only" in captured.err


def test_a_grade_span_too_wide_names_the_files(tmp_path) -> None:
    # Grades 0 .. 500 would be 501 categories: refused, naming where the extremes are.
    wide, narrow = tmp_path / "scores.qrels", tmp_path / "labels.qrels"
    wide.write_text("q1 0 d1 0\nq1 0 d2 500\n")
    narrow.write_text("q1 0 d1 1\nq1 0 d2 2\n")
    with pytest.raises(InputError, match=r"grades span 0 \(.*scores\.qrels\) \.\. 500 \(.*scores\.qrels\)"):
        agreement([narrow, wide], resamples=10)
