"""A comparison's p-value is the one it gets alone, whatever else is tested with it (issue 27, item 1).

scipy.stats.wilcoxon chooses its method (exact, permutation, normal approximation) once per
call from the zeros and ties of the whole input, so testing AP beside P@10 (ties) used to
switch AP from the exact distribution to the normal approximation. Each check here tests a
measure alone and inside a larger set and asserts the same p-value; the Wilcoxon ones are
also checked against scipy.stats.wilcoxon on that measure alone (the reference).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from tests.conftest import TREC, need

import serpeval
from serpeval.cli.demo.collection import make_collection
from serpeval.comparison.compare import compare, compare_results
from serpeval.comparison.gate import gate_results
from serpeval.comparison.results import CORRECTION_NAMES, TESTS
from serpeval.comparison.segment_gate import gate_groups
from serpeval.comparison.segments import Groups, with_segments
from serpeval.evaluation.evaluate import evaluate
from serpeval.stats import wilcoxon

ALONE = ["AP"]
#: AP (continuous: no ties) beside measures full of ties (P@10, nDCG@10 with many equal values).
TOGETHER = ["P@10", "AP", "nDCG@10", "RR"]


def _differences_with_and_without_ties(n: int, rng: np.random.Generator) -> np.ndarray:
    """Rows: distinct non-zero values; ties; zeros; ties and zeros; one value per query."""
    clean = rng.permutation(np.arange(1, n + 1)) * 0.01 * rng.choice([-1, 1], n)
    tied = np.round(rng.normal(0.05, 0.2, n), 1)
    tied[tied == 0] = 0.1
    tied[:2] = [0.3, -0.3]                                   # at least one tie in |d|
    zeros = clean.copy()
    zeros[::4] = 0.0
    both = tied.copy()
    both[::5] = 0.0
    return np.stack([clean, tied, zeros, both, clean[::-1] * 1.5])


@pytest.mark.parametrize("n", [9, 30, 50, 70])         # permutation, exact, exact, normal approximation
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_rows_equal_scipy_alone(n: int, alternative: str, zero_method: str) -> None:
    d = _differences_with_and_without_ties(n, np.random.default_rng(n))
    together = wilcoxon(d, alternative=alternative, zero_method=zero_method)
    for i, row in enumerate(d):
        alone = stats.wilcoxon(row, alternative=alternative, zero_method=zero_method)
        assert together.p_value[i] == pytest.approx(alone.pvalue, rel=1e-12, abs=1e-15), i
        assert together.statistic[i] == pytest.approx(alone.statistic, rel=1e-12), i
        assert wilcoxon(row, alternative=alternative, zero_method=zero_method).p_value == \
            pytest.approx(alone.pvalue, rel=1e-12, abs=1e-15)


@pytest.fixture(scope="module")
def collection() -> tuple[object, dict[str, serpeval.Run]]:
    """40 queries (small enough for scipy's exact Wilcoxon), three systems."""
    made = make_collection(n_queries=40)
    runs = dict(made.runs)
    base = runs["baseline"]
    noise = np.random.default_rng(5).normal(0, 0.8, len(base.scores))
    runs["noisy"] = serpeval.Run(base.query_ids, base.doc_ids, base.scores + noise, name="noisy")
    return made.qrels, runs


def _evaluated(collection: tuple[object, dict[str, serpeval.Run]], measures: list[str]) -> serpeval.Results:
    qrels, runs = collection
    return evaluate(qrels, runs, measures)


def _by_key(rows: object) -> dict[tuple[str, ...], tuple[float, float]]:
    return {(r.measure, r.system, r.baseline): (r.p_value, r.p_value_corrected) for r in rows}  # type: ignore[attr-defined]


def test_the_collection_mixes_exact_and_approximate_wilcoxon(collection) -> None:
    """The guard that makes the other tests able to fail: AP alone is exact, P@10 is not."""
    results = _evaluated(collection, TOGETHER)

    def d(measure: str) -> np.ndarray:
        per_query = [results.per_query(run, measure) for run in ("candidate", "baseline")]
        return np.array([per_query[0][q] - per_query[1][q] for q in sorted(per_query[0])])

    ap = d("AP")
    assert len(ap) <= 50                                              # exact alone: n <= 50,
    assert np.all(ap != 0)                                            # no zero,
    assert len(np.unique(np.abs(ap))) == len(ap)                      # no tie
    tied = d("P@10")
    assert len(np.unique(np.abs(tied))) < len(tied)                  # approximate


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("correction", list(CORRECTION_NAMES))
@pytest.mark.parametrize("pairs", ["baseline", "all"])
def test_compare_p_values_do_not_depend_on_the_other_measures(collection, test: str, correction: str,
                                                              pairs: str) -> None:
    if correction == "tukey" and test not in ("t", "randomization"):
        pytest.skip("Tukey goes with the t and randomization tests only")
    options = {"test": test, "correction": correction, "pairs": pairs, "n_resamples": 2000, "rng": 11}
    alone = _by_key(compare_results(_evaluated(collection, ALONE), **options).rows)
    together = _by_key(compare_results(_evaluated(collection, TOGETHER), **options).rows)
    assert alone
    for key, (p, corrected) in alone.items():
        assert together[key][0] == pytest.approx(p, rel=1e-12, abs=1e-15), key
        assert together[key][1] == pytest.approx(corrected, rel=1e-12, abs=1e-15), key


def test_compare_wilcoxon_equals_scipy_on_each_measure_alone(collection) -> None:
    results = _evaluated(collection, TOGETHER)
    c = compare_results(results, test="wilcoxon", correction="none")
    for row in c.rows:
        x = np.array([v for _, v in sorted(results.per_query(row.system, row.measure).items())])
        y = np.array([v for _, v in sorted(results.per_query(row.baseline, row.measure).items())])
        assert row.p_value == pytest.approx(stats.wilcoxon(x, y).pvalue, rel=1e-12), row.measure


def _groups(collection) -> Groups:
    _, runs = collection
    queries = sorted(set(np.asarray(runs["baseline"].query_ids).tolist()))
    # Three groups of mixed sizes, one query in two groups (several memberships are allowed).
    mapping: dict[str, object] = {q: ("α" if i % 3 == 0 else "beta-long-name" if i % 3 == 1 else "g")
                                  for i, q in enumerate(queries)}
    mapping[queries[1]] = ["α", "g"]
    return Groups.from_mapping(mapping, name="mixed")


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("correction", ["holm", "bonferroni", "bh", "none"])
def test_group_p_values_do_not_depend_on_the_other_measures(collection, test: str, correction: str) -> None:
    groups = _groups(collection)

    def breakdown(measures: list[str]) -> tuple[dict, dict]:
        c = compare_results(_evaluated(collection, measures), test=test, n_resamples=2000, rng=3)
        segments = with_segments(c, groups, correction=correction, n_permutations=500, rng=3).segments
        rows = {(r.measure, r.system, r.group): (r.p_value, r.p_value_corrected) for r in segments.rows}
        inter = {(i.measure, i.system): i.p_value for i in segments.interactions}
        return rows, inter

    rows_alone, inter_alone = breakdown(ALONE)
    rows_together, inter_together = breakdown(TOGETHER)
    for key, (p, corrected) in rows_alone.items():
        np.testing.assert_allclose(rows_together[key], (p, corrected), rtol=1e-12, atol=1e-15, err_msg=str(key))
    for key, p in inter_alone.items():
        assert inter_together[key] == p, key


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("rule", ["non-inferiority", "no-significant-drop"])
def test_gate_p_values_do_not_depend_on_the_other_measures(collection, test: str, rule: str) -> None:
    qrels, runs = collection
    two = {"baseline": runs["baseline"], "candidate": runs["candidate"]}
    alone = gate_results(evaluate(qrels, two, ALONE), rule=rule, test=test, n_resamples=2000, rng=4)
    together = gate_results(evaluate(qrels, two, TOGETHER), rule=rule, test=test, n_resamples=2000, rng=4)
    (check,) = alone.checks
    other = {c.measure: c for c in together.checks}[check.measure]
    assert other.p_value == pytest.approx(check.p_value, rel=1e-12, abs=1e-15)
    if test == "wilcoxon":
        x = np.array([v for _, v in sorted(evaluate(qrels, two, ALONE).per_query("candidate", "AP").items())])
        y = np.array([v for _, v in sorted(evaluate(qrels, two, ALONE).per_query("baseline", "AP").items())])
        alternative = "greater" if rule == "non-inferiority" else "less"
        shifted = x - y + check.margin
        assert check.p_value == pytest.approx(stats.wilcoxon(shifted, alternative=alternative).pvalue, rel=1e-12)


@pytest.mark.parametrize("test", TESTS)
def test_group_gate_p_values_do_not_depend_on_the_other_measures(collection, test: str) -> None:
    qrels, runs = collection
    two = {"baseline": runs["baseline"], "candidate": runs["candidate"]}
    groups = _groups(collection)
    options = {"test": test, "n_resamples": 2000, "rng": 9, "min_queries": 5}
    alone = gate_groups(evaluate(qrels, two, ALONE), groups, **options)
    together = gate_groups(evaluate(qrels, two, TOGETHER), groups, **options)
    theirs = {(c.group, c.measure): c.p_value for c in together.checks}
    for check in alone.checks:
        assert theirs[(check.group, check.measure)] == pytest.approx(check.p_value, rel=1e-12, abs=1e-15)


def test_core18_ap_wilcoxon_is_scipys_alone() -> None:
    """The reported case: title-rm3 vs desc-rm3 on Core18, AP alone vs AP with nDCG@10."""
    root = need(TREC / "core18")
    qrels = root / "qrels.txt"
    runs = [root / "runs" / "title-rm3.run.gz", root / "runs" / "desc-rm3.run.gz"]
    results = evaluate(qrels, runs, ["AP"])
    x = np.array([v for _, v in sorted(results.per_query("desc-rm3", "AP").items())])
    y = np.array([v for _, v in sorted(results.per_query("title-rm3", "AP").items())])
    reference = stats.wilcoxon(x, y).pvalue                  # 0.38818 (exact: 50 queries, no ties)
    for measures in (["AP"], ["AP", "nDCG@10"], ["nDCG@10", "AP", "P@10"]):
        row = compare(qrels, runs, measures, test="wilcoxon").row("desc-rm3", "AP")
        assert row.p_value == pytest.approx(reference, rel=1e-12), measures
    assert reference == pytest.approx(0.38818, abs=5e-6)


@pytest.mark.parametrize("comparisons", [1, 3, 600])
def test_randomization_p_values_do_not_depend_on_how_many_comparisons_share_the_flips(comparisons: int) -> None:
    """600 comparisons (e.g. 20 measures x 30 pairs) used to shrink the chunk of flips drawn,
    and random bytes drawn in other chunk sizes are other bytes: another p-value."""
    from serpeval.stats import randomization_test

    rng = np.random.default_rng(8)
    d = np.round(rng.normal(0.02, 0.1, (comparisons, 21)), 3)   # 3 bytes of flips per row
    together = np.atleast_1d(randomization_test(d, n_permutations=10_000, rng=21).p_value)
    for i in sorted({0, comparisons - 1}):
        alone = randomization_test(d[i], n_permutations=10_000, rng=21).p_value
        assert together[i] == alone, i
