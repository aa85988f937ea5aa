"""gate(): the one-sided non-inferiority decision against scipy on the same per-query values."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import serpeval
from serpeval.cli.demo.collection import make_collection
from serpeval.comparison.gate import gate, gate_results
from serpeval.core.errors import OptionError
from serpeval.evaluation.evaluate import evaluate
from serpeval.report.gate import explain_gate


@pytest.fixture(scope="module")
def collection():
    return make_collection(n_queries=200)


def _values(collection, run: str, measure: str = "nDCG@10") -> np.ndarray:
    res = evaluate(collection.qrels, collection.runs, [measure])
    return res[run].column(0)


def test_non_inferiority_p_and_bound_equal_scipy(collection) -> None:
    base, cand = collection.runs["candidate"], collection.runs["baseline"]  # a real drop
    x, y = _values(collection, "baseline"), _values(collection, "candidate")
    for margin in (0.0, 0.05, 0.2):
        result = gate(collection.qrels, base, cand, ["nDCG@10"], max_drop=margin)
        check = result.checks[0]
        # H0: mean(x - y) <= -margin  <=>  one-sided t-test of (x + margin) vs y, "greater".
        ref = stats.ttest_rel(x + margin, y, alternative="greater")
        assert check.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        low = stats.ttest_rel(x, y, alternative="greater").confidence_interval(0.95).low
        assert check.bound == pytest.approx(low, rel=1e-9)
        assert check.passed == (ref.pvalue <= 0.05) == (low > -margin)
        assert result.exit_code == (0 if check.passed else 1)
        assert check.delta == pytest.approx(x.mean() - y.mean())
    assert not gate(collection.qrels, base, cand, ["nDCG@10"], max_drop=0.0).passed
    assert gate(collection.qrels, base, cand, ["nDCG@10"], max_drop=0.2).passed


def test_identical_runs_pass_with_a_margin_and_fail_superiority(collection) -> None:
    run = collection.runs["baseline"]
    ok = gate(collection.qrels, run, run, ["nDCG@10", "AP"], max_drop=0.01)
    assert ok.passed
    assert all(c.p_value == 0.0 for c in ok.checks)
    strict = gate(collection.qrels, run, run, ["nDCG@10"], max_drop=0.0)
    assert not strict.passed
    assert strict.checks[0].p_value == 1.0
    assert any("margin 0" in note for note in strict.notes())


def test_every_measure_must_pass(collection) -> None:
    # candidate vs baseline: large gains in both -> pass; swapped: both fail.
    better = gate(collection.qrels, collection.runs["baseline"], collection.runs["candidate"],
                  ["nDCG@10", "AP"])
    assert better.passed
    assert len(better.checks) == 2
    worse = gate(collection.qrels, collection.runs["candidate"], collection.runs["baseline"],
                 ["nDCG@10", "AP"])
    assert not worse.passed
    assert not any(c.passed for c in worse.checks)
    regressions = worse.checks[0].regressions
    assert len(regressions) == 10
    assert [r.delta for r in regressions] == sorted(r.delta for r in regressions)
    assert all(r.delta < 0 for r in regressions)
    assert regressions[0].delta == pytest.approx(regressions[0].candidate - regressions[0].baseline)


def test_no_significant_drop_rule(collection) -> None:
    base, cand = collection.runs["candidate"], collection.runs["baseline"]
    x, y = _values(collection, "baseline"), _values(collection, "candidate")
    result = gate(collection.qrels, base, cand, ["nDCG@10"], max_drop=0.01,
                  rule="no-significant-drop")
    ref = stats.ttest_rel(x + 0.01, y, alternative="less")
    assert result.checks[0].p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert result.passed == (ref.pvalue > 0.05)
    up = stats.ttest_rel(x, y, alternative="less").confidence_interval(0.95).high
    assert result.checks[0].bound == pytest.approx(up, rel=1e-9)
    # A tiny drop in a noisy measure: not shown non-inferior, and not shown worse either.
    tiny = gate(collection.qrels, base, base, ["nDCG@10"], max_drop=0.0, rule="no-significant-drop")
    assert tiny.passed


def test_queries_the_candidate_drops_count_as_zero(collection) -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
    base = {q: {doc: 1.0} for q, docs in qrels.items() for doc in docs}  # RR 1 everywhere
    cand = {q: base[q] for q in ("q1", "q2", "q3")}                       # q4 answered no more
    result = gate(qrels, base, cand, ["RR"], max_drop=0.1)
    check = result.checks[0]
    assert check.queries == 4
    assert check.candidate_mean == 0.75  # (1 + 1 + 1 + 0) / 4
    assert [(r.query_id, r.delta) for r in check.regressions] == [("q4", -1.0)]
    assert not result.passed
    with pytest.warns(serpeval.core.errors.MissingQueriesWarning):
        skipped = gate(qrels, base, cand, ["RR"], max_drop=0.1, missing="skip")
    assert skipped.checks[0].queries == 3  # trec_eval's default hides the lost query


def test_relative_margin(collection) -> None:
    base, cand = collection.runs["candidate"], collection.runs["baseline"]
    absolute = gate(collection.qrels, base, cand, ["nDCG@10"], max_drop=0.1)
    mean = absolute.checks[0].baseline_mean
    relative = gate(collection.qrels, base, cand, ["nDCG@10"], max_drop=0.1 / mean, relative=True)
    assert relative.checks[0].margin == pytest.approx(0.1)
    assert relative.checks[0].p_value == pytest.approx(absolute.checks[0].p_value)
    assert any("of the baseline mean" in n for n in relative.notes())


@pytest.mark.parametrize("test", ["wilcoxon", "randomization", "bootstrap"])
def test_other_tests_agree_with_t_on_clear_cases(collection, test: str) -> None:
    run_a, run_b = collection.runs["baseline"], collection.runs["candidate"]
    assert gate(collection.qrels, run_a, run_b, ["nDCG@10"], test=test, rng=0).passed
    assert not gate(collection.qrels, run_b, run_a, ["nDCG@10"], test=test, rng=0).passed


def test_report_and_explanation(collection) -> None:
    result = gate(collection.qrels, collection.runs["candidate"], collection.runs["baseline"],
                  ["nDCG@10"], max_drop=0.01)
    report = result.to_dict()
    assert report["decision"] == "fail"
    assert report["exit_code"] == 1
    fields = {"p_value", "p_value_corrected", "bound", "margin", "regressions"}
    assert fields <= set(report["checks"][0])
    json.dumps(report, allow_nan=False)
    text = explain_gate(result, top=3)
    assert text.startswith("serpeval gate: FAIL - candidate baseline vs baseline candidate")
    assert "cannot rule out a drop of more than 0.0100" in text
    assert "Largest per-query drops on nDCG@10" in text
    assert len(text.splitlines()) < 25  # one screen


def test_gate_results_picks_measures_and_checks_options(collection) -> None:
    res = evaluate(collection.qrels, collection.runs, ["nDCG@10", "AP"])
    only = gate_results(res, ["AP"])
    assert [c.measure for c in only.checks] == ["AP"]
    with pytest.raises(OptionError, match="P@5 not evaluated"):
        gate_results(res, ["P@5"])
    with pytest.raises(OptionError, match="at least one measure"):
        gate_results(res, [])
    with pytest.raises(OptionError, match="max_drop must be >= 0"):
        gate_results(res, max_drop=-0.1)
    gmap = evaluate(collection.qrels, collection.runs, ["GMAP"])
    with pytest.raises(OptionError, match="GMAP: a margin on a geometric mean"):
        gate_results(gmap)
    with pytest.raises(OptionError, match="rule must be one of"):
        gate_results(res, rule="lenient")
    runs = {**collection.runs, "c": collection.runs["baseline"]}
    three = evaluate(collection.qrels, runs, ["AP"])
    with pytest.raises(OptionError, match="exactly two runs"):
        gate_results(three)
    assert serpeval.gate is gate


def test_count_and_lower_is_better_measures_equal_scipy(collection) -> None:
    """A sum measure's margin and bound are in counts; a lower-is-better measure is flipped."""
    base, cand = collection.runs["candidate"], collection.runs["baseline"]
    res = evaluate(collection.qrels, {"candidate": base, "baseline": cand},
                   ["NumRelRet", "Unjudged@10"], missing="zero")
    x, y = res["baseline"].values.T, res["candidate"].values.T   # candidate x, baseline y
    n = x.shape[1]
    margin = 5.0                                                 # 5 relevant docs over all queries
    counted = gate_results(res, ["NumRelRet"], max_drop=margin).checks[0]
    # H0: sum(x - y) <= -margin  <=>  mean(x - y) <= -margin / n.
    ref = stats.ttest_rel(x[0] + margin / n, y[0], alternative="greater")
    assert counted.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    low = stats.ttest_rel(x[0], y[0], alternative="greater").confidence_interval(0.95).low
    assert counted.bound == pytest.approx(low * n, rel=1e-9)
    assert counted.delta == pytest.approx((x[0] - y[0]).sum())
    assert counted.margin == margin
    # Unjudged@10: lower is better, so the improvement is y - x.
    flipped = gate_results(res, ["Unjudged@10"], max_drop=0.02).checks[0]
    ref = stats.ttest_rel(y[1] + 0.02, x[1], alternative="greater")
    assert flipped.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert flipped.delta == pytest.approx((y[1] - x[1]).mean())
    d = y[1] - x[1]
    assert (flipped.wins, flipped.ties, flipped.losses) == (
        int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))


def test_no_significant_drop_is_holm_corrected_over_measures(collection) -> None:
    from statsmodels.stats.multitest import multipletests

    base, cand = collection.runs["candidate"], collection.runs["baseline"]
    result = gate(collection.qrels, base, cand, ["nDCG@10", "AP"], max_drop=0.02,
                  rule="no-significant-drop")
    res = evaluate(collection.qrels, [base, cand], ["nDCG@10", "AP"], missing="zero")
    y, x = (run.values.T for run in res.runs)
    raw = [stats.ttest_rel(x[j] + 0.02, y[j], alternative="less").pvalue for j in range(2)]
    reject, corrected, _, _ = multipletests(raw, alpha=0.05, method="holm")
    assert [c.p_value for c in result.checks] == pytest.approx(raw, rel=1e-9)
    assert [c.p_value_corrected for c in result.checks] == pytest.approx(corrected, rel=1e-9)
    assert [c.passed for c in result.checks] == (~reject).tolist()
    assert "Holm over measures" in result.method


def test_regressions_of_a_lower_is_better_measure_are_oriented_like_the_delta() -> None:
    """One report, one sign: a per-query drop on Unjudged@2 is negative, like the headline.

    Each query has 2 judged docs; ``good`` ranks judged docs only (Unjudged@2 = 0, but 1/2 on
    query 4 whose second doc is unjudged), ``worse`` puts two unjudged docs on top (1 each).
    Headline delta: -(1 - 0.125) = -0.875; per-query: -1, -1, -1, -0.5 (raw would be +1...)."""
    qrels = {"1": {"a": 1, "b": 0}, "2": {"a": 1, "b": 0}, "3": {"a": 1, "b": 0}, "4": {"a": 1}}
    good = {q: {"a": 3.0, "b": 2.0} for q in qrels}
    worse = {q: {"u1": 3.0, "u2": 2.0, "a": 1.0} for q in qrels}
    result = gate(qrels, serpeval.Run.from_dict(good, "good"), serpeval.Run.from_dict(worse, "worse"),
                  ["Unjudged@2"])
    check = result.checks[0]
    assert check.delta == pytest.approx(-0.875)
    assert [(r.query_id, r.baseline, r.candidate, r.delta) for r in check.regressions] == [
        ("1", 0.0, 1.0, -1.0), ("2", 0.0, 1.0, -1.0), ("3", 0.0, 1.0, -1.0), ("4", 0.5, 1.0, -0.5)]
    report = json.loads(json.dumps(result.to_dict()))
    assert [r["delta"] for r in report["checks"][0]["regressions"]] == [-1.0, -1.0, -1.0, -0.5]
    text = explain_gate(result)
    assert "-0.8750" in text
    assert "│ 1     │   0.0000 │    1.0000 │ -1.0000 │" in text
    assert "+1.0000" not in text


def test_a_signed_rank_gate_shows_the_bound_it_decides_on() -> None:
    """19 queries gain 1 relevant doc in the top 20 (+0.05 on P@20), one loses all 20 (-1):
    the mean delta, -0.0025, is below the allowed -0.001, yet the signed-rank test passes, as
    it is about the typical query (the pseudo-median). The bound shown is that test's own
    (Hodges-Lehmann, +0.05: every Walsh average but those with query 20's -1), not the t
    bound of the mean (-0.093), which contradicted the verdict; the sentence names the
    pseudo-median and says what the mean does. With --test t the same runs fail."""
    relevant = [f"r{i}" for i in range(20)]
    junk = [f"j{i}" for i in range(20)]
    qrels = {f"q{q}": dict.fromkeys(relevant, 1) for q in range(1, 21)}

    def ranking(docs: list[str]) -> dict[str, float]:
        return {d: float(20 - i) for i, d in enumerate(docs)}

    base = {f"q{q}": ranking(relevant[:5] + junk[:15]) for q in range(1, 20)} | {"q20": ranking(relevant)}
    cand = {f"q{q}": ranking(relevant[:6] + junk[:14]) for q in range(1, 20)} | {"q20": ranking(junk)}
    runs = serpeval.Run.from_dict(base, "base"), serpeval.Run.from_dict(cand, "cand")
    ranked = gate(qrels, *runs, ["P@20"], max_drop=0.001, test="wilcoxon")
    check = ranked.checks[0]
    assert ranked.passed
    assert check.delta == pytest.approx(-0.0025)
    assert check.bound == pytest.approx(0.05, abs=1e-9)
    assert check.bound >= -check.margin  # the verdict and the bound agree
    text = explain_gate(ranked)
    assert "95% lower bound (pseudo-median)" in text
    assert "H0: the pseudo-median of the per-query deltas <= -0.0010 rejected" in text
    assert "The mean delta, -0.0025, is below the allowed drop" in text
    mean = gate(qrels, *runs, ["P@20"], max_drop=0.001, test="t").checks[0]
    assert not mean.passed
    assert mean.bound < -mean.margin
