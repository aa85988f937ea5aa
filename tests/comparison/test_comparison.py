"""compare(): every number against scipy/statsmodels on per-query values; bad input; renderers."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import serpeval
from serpeval.cli.demo.collection import make_collection
from serpeval.comparison.compare import compare, compare_results
from serpeval.core.errors import InputError, MissingQueriesWarning, OptionError, StatsError
from serpeval.evaluation.evaluate import evaluate
from serpeval.report.comparison import human_rows, render_comparison

# Three queries, one relevant doc each. RR per query:
#   bad:  x first everywhere -> 1/2, 1/2, 1/2     good: 1, 1, 1/2      (q3: x before c in both)
QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
GOOD = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 2.0, "x": 1.0}, "q3": {"x": 2.0, "c": 1.0}}
BAD = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"x": 2.0, "b": 1.0}, "q3": {"x": 2.0, "c": 1.0}}


@pytest.fixture(scope="module")
def demo() -> serpeval.Results:
    """Four systems on the demo collection: the two demo rankers and two noisy variants."""
    collection = make_collection(n_queries=80)
    runs = dict(collection.runs)
    rng = np.random.default_rng(3)
    for name, base in (("noisy", "baseline"), ("shuffled", "candidate")):
        run = runs[base]
        runs[name] = serpeval.Run(run.query_ids, run.doc_ids,
                                  run.scores + rng.normal(0, 0.8, len(run.scores)), name=name)
    return evaluate(collection.qrels, runs, ["nDCG@10", "AP", "P@10"])


def _per_query(results: serpeval.Results, run: str, measure: str) -> np.ndarray:
    values = results.per_query(run, measure)
    return np.array([values[q] for q in sorted(values)])


def test_hand_worked_pair() -> None:
    c = compare(QRELS, {"bad": BAD, "good": GOOD}, ["RR"])
    row = c.row("good", "RR")
    # d = .5, .5, 0: mean 1/3, sd = sqrt(((1/6)^2 * 2 + (1/3)^2) / 2) = 1/sqrt(12) = 0.2887
    # t = (1/3) / (0.2887 / sqrt 3) = 2, df 2 -> p = 1 - 2 / sqrt(6); d_z = (1/3) / 0.2887 = 1.1547
    assert row.delta == pytest.approx(1 / 3)
    assert row.statistic == pytest.approx(2.0)
    assert row.p_value == pytest.approx(1 - 2 / np.sqrt(6))
    assert row.effect_size == pytest.approx(2 / np.sqrt(3))
    assert (row.wins, row.ties, row.losses) == (2, 1, 0)
    assert row.p_value_corrected == row.p_value  # one comparison: Holm changes nothing
    assert not row.significant
    assert row.marker == ""


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_p_values_and_intervals_equal_scipy(demo: serpeval.Results, test: str) -> None:
    c = compare_results(demo, test=test, correction="none")
    for row in c.rows:
        x = _per_query(demo, row.system, row.measure)
        y = _per_query(demo, row.baseline, row.measure)
        ref = stats.ttest_rel(x, y) if test == "t" else stats.wilcoxon(x, y)
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        ci = stats.ttest_rel(x, y).confidence_interval()
        assert (row.ci_low, row.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
        assert row.mean == pytest.approx(x.mean())
        assert row.baseline_mean == pytest.approx(y.mean())
        d = x - y
        assert row.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
        assert (row.wins, row.ties, row.losses) == (int((d > 0).sum()), int((d == 0).sum()),
                                                    int((d < 0).sum()))


@pytest.mark.parametrize(("correction", "method"), [("holm", "holm"), ("bonferroni", "bonferroni"),
                                                    ("bh", "fdr_bh")])
def test_correction_is_per_measure_and_equals_statsmodels(demo: serpeval.Results, correction: str,
                                                          method: str) -> None:
    c = compare_results(demo, correction=correction, pairs="all")
    assert len(c.rows) == 3 * 6  # 3 measures x C(4, 2) pairs
    for measure in ("nDCG@10", "AP", "P@10"):
        rows = [r for r in c.rows if r.measure == measure]
        expected = multipletests([r.p_value for r in rows], alpha=0.05, method=method)
        np.testing.assert_allclose([r.p_value_corrected for r in rows], expected[1], rtol=1e-12)
        assert [r.significant for r in rows] == expected[0].tolist()


def test_all_pairs_orientation(demo: serpeval.Results) -> None:
    c = compare_results(demo, pairs="all")
    pairs = [(r.system, r.baseline) for r in c.rows if r.measure == "AP"]
    assert pairs == [("candidate", "baseline"), ("noisy", "baseline"), ("shuffled", "baseline"),
                     ("noisy", "candidate"), ("shuffled", "candidate"), ("shuffled", "noisy")]
    row = c.row("noisy", "AP", baseline="candidate")
    assert row.delta == pytest.approx(row.mean - row.baseline_mean)


def test_tukey_correction(demo: serpeval.Results) -> None:
    from serpeval.stats import randomization_test, randomized_tukey, tukey_hsd

    c = compare_results(demo, correction="tukey", pairs="all")
    scores = np.stack([[_per_query(demo, s, m) for s in demo.run_names]
                       for m in ("nDCG@10", "AP", "P@10")])
    hsd = tukey_hsd(scores)
    row = c.row("shuffled", "AP", baseline="candidate")
    assert row.p_value_corrected == pytest.approx(hsd.p_value[1, 3, 1], rel=1e-9)
    rand = compare_results(demo, test="randomization", correction="tukey", pairs="all", rng=4,
                           n_resamples=2000)
    # compare draws the sign flips first, then the Tukey permutations, from one generator.
    generator = np.random.default_rng(4)
    index = [(j, i) for i in range(4) for j in range(i + 1, 4)]
    x = scores[:, [j for j, _ in index]]
    y = scores[:, [i for _, i in index]]
    flips = randomization_test(x, y, n_permutations=2000, rng=generator)
    expected = randomized_tukey(scores, n_permutations=2000, rng=generator).p_value
    row = rand.row("shuffled", "AP", baseline="candidate")
    assert row.p_value == flips.p_value[1, 4]
    assert row.p_value_corrected == expected[1, 3, 1]
    assert "randomized Tukey HSD" in rand.method
    with pytest.raises(OptionError, match="correction='tukey' goes with test='t'"):
        compare_results(demo, test="wilcoxon", correction="tukey")


def test_randomization_and_bootstrap_are_seeded(demo: serpeval.Results) -> None:
    for test in ("randomization", "bootstrap"):
        a = compare_results(demo, test=test, rng=1, n_resamples=2000)
        b = compare_results(demo, test=test, rng=1, n_resamples=2000)
        assert [r.p_value for r in a.rows] == [r.p_value for r in b.rows]
        t = compare_results(demo, test="t")
        for mine, parametric in zip(a.rows, t.rows, strict=True):
            assert abs(mine.p_value - parametric.p_value) < 0.05  # same data, similar answer
    boot = compare_results(demo, test="bootstrap", rng=2, n_resamples=2000)
    assert boot.ci == "bca"
    assert "BCa" in boot.method


def test_identical_systems_give_p_one_for_every_test() -> None:
    collection = make_collection(n_queries=30)
    run = collection.runs["baseline"]
    same = {"a": run, "b": serpeval.Run(run.query_ids, run.doc_ids, run.scores, name="b")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for test in ("t", "wilcoxon", "randomization", "bootstrap"):
            c = compare(collection.qrels, same, ["nDCG@10", "AP"], test=test, rng=0)
            for row in c.rows:
                assert (row.p_value, row.p_value_corrected, row.delta) == (1.0, 1.0, 0.0)
                assert row.effect_size == 0.0
                assert row.ties == 30
        c = compare(collection.qrels, same, ["AP"], correction="tukey")
        assert c.rows[0].p_value_corrected == 1.0


def test_different_query_sets_are_compared_on_common_queries() -> None:
    partial = {q: docs for q, docs in GOOD.items() if q != "q3"}
    qrels = {**QRELS, "q4": {"d": 1}}
    full = {**BAD, "q4": {"d": 1.0}}
    with pytest.warns(MissingQueriesWarning):
        c = compare(qrels, {"full": full, "partial": partial}, ["RR"])
    assert c.query_ids.tolist() == ["q1", "q2"]
    assert c.coverage[0].dropped == ("q3", "q4")
    assert c.coverage[0].evaluated == 4
    assert c.coverage[1].dropped == ()
    assert any("2 of 4 evaluated queries are not in every run" in n for n in c.notes())
    assert c.rows[0].queries == 2
    with pytest.warns(MissingQueriesWarning), pytest.raises(
            InputError, match=r"different queries \(full: 4, partial: 2; 2 in common\)"):
        compare(qrels, {"full": full, "partial": partial}, ["RR"], strict=True)
    c = compare(qrels, {"full": full, "partial": partial}, ["RR"], missing="zero", strict=True)
    assert len(c.query_ids) == 4  # -c semantics: every judged query counts


def test_bad_input_messages() -> None:
    with pytest.raises(StatsError, match="at least two runs; got 1"):
        compare(QRELS, {"good": GOOD}, ["RR"])
    with pytest.raises(StatsError, match="at least 2 queries evaluated in every run; 1 in common"):
        compare({"q1": {"a": 1}}, {"bad": {"q1": BAD["q1"]}, "good": {"q1": GOOD["q1"]}}, ["RR"])
    with pytest.raises(OptionError,
                       match="no run named 'bm25' to use as the baseline; runs: bad, good"):
        compare(QRELS, {"bad": BAD, "good": GOOD}, ["RR"], baseline="bm25")
    with pytest.raises(OptionError, match="unknown test 'z'"):
        compare(QRELS, {"bad": BAD, "good": GOOD}, ["RR"], test="z")
    with pytest.raises(OptionError, match="exclude each other"):
        compare(QRELS, {"bad": BAD, "good": GOOD}, ["RR"], baseline="bad", pairs="all")
    with pytest.raises(OptionError, match="alpha must be"):
        compare(QRELS, {"bad": BAD, "good": GOOD}, ["RR"], alpha=5)


def test_baseline_by_name_or_index_and_ranx_aliases() -> None:
    by_name = compare(QRELS, {"bad": BAD, "good": GOOD}, ["RR"], baseline="good", test="student")
    by_index = compare(QRELS, {"bad": BAD, "good": GOOD}, ["RR"], baseline=1)
    assert by_name.rows[0].system == by_index.rows[0].system == "bad"
    assert by_name.rows[0].delta == pytest.approx(-1 / 3)
    assert by_name.rows[0].losses == 2
    assert by_name.test == "t"


def test_to_dicts_json_and_per_query(demo: serpeval.Results) -> None:
    c = compare_results(demo)
    rows = c.to_dicts()
    assert len(rows) == 9
    assert {"p_value", "p_value_corrected", "effect_size", "ci_low"} <= set(rows[0])
    per_query = c.to_dicts(per_query=True)
    assert len(per_query) == 9 * 80
    first = per_query[0]
    assert first["delta"] == pytest.approx(first["value"] - first["baseline_value"])
    payload = json.loads(render_comparison(c, "json", per_query=True))
    assert payload["comparisons"][0]["p_value"] == pytest.approx(rows[0]["p_value"])
    assert payload["queries"] == 80
    assert len(payload["per_query"]) == 720
    assert payload["means"]["baseline"]["AP"] == pytest.approx(demo.aggregate("baseline", "AP"))


def test_non_finite_values_become_null_in_json() -> None:
    runs = {"bad": {q: BAD[q] for q in ("q1", "q2")}, "good": {q: GOOD[q] for q in ("q1", "q2")}}
    c = compare({"q1": {"a": 1}, "q2": {"b": 1}}, runs, ["RR"])
    assert c.rows[0].effect_size == np.inf  # d = .5, .5: constant
    payload = c.to_json_dict()
    assert payload["comparisons"][0]["effect_size"] is None
    json.dumps(payload, allow_nan=False)


def test_renderers(demo: serpeval.Results) -> None:
    c = compare_results(demo, pairs="all")
    latex = render_comparison(c, "latex")
    assert "\\toprule" in latex
    assert "\\midrule" in latex
    assert "\\bottomrule" in latex
    # candidate (b) is significantly better than baseline (a) on every measure at n = 80.
    b_row = next(line for line in latex.splitlines() if line.startswith("b & candidate"))
    assert b_row.count("$^{a") == 3
    assert "Holm correction" in latex
    assert "$p \\le 0.05$" in latex
    markdown = render_comparison(c, "markdown")
    assert markdown.splitlines()[2].startswith("| measure | system | vs |")
    table = render_comparison(c, "table")
    assert "▲" in table
    assert "p (Holm)" in table
    csv = render_comparison(c, "csv").splitlines()
    assert csv[0].split(",")[:3] == ["measure", "system", "baseline"]
    assert len(csv) == 19
    assert "query_id" in render_comparison(c, "tsv", per_query=True).splitlines()[0]


def test_geometric_and_count_measures() -> None:
    collection = make_collection(n_queries=80)
    results = evaluate(collection.qrels, collection.runs, ["GMAP", "AP", "NumRelRet"])
    c = compare_results(results)
    gmap, _, counted = c.rows
    x, y = (np.log(np.maximum(_per_query(results, run, "AP"), 1e-5))
            for run in ("candidate", "baseline"))
    # GMAP = exp(mean log AP): its difference is tested on the per-query log values.
    assert gmap.p_value == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-9)
    assert gmap.mean == pytest.approx(np.exp(x.mean()))
    assert np.isnan(gmap.ci_low)
    assert any("GMAP: tested on per-query log" in note for note in c.notes())
    # Sums: the delta and its interval are in counts (the per-query interval times n).
    d = _per_query(results, "candidate", "NumRelRet") - _per_query(results, "baseline", "NumRelRet")
    low = stats.ttest_rel(d, np.zeros_like(d)).confidence_interval().low
    assert counted.delta == pytest.approx(d.sum())
    assert counted.ci_low == pytest.approx(low * 80)
    rows, _, _ = human_rows(c)
    assert rows[-1]["mean"] == f"{counted.mean:.0f}"


def test_letters_go_past_z() -> None:
    from serpeval.report.comparison import system_letter

    letters = [system_letter(i) for i in (0, 25, 26, 27, 701, 702)]
    assert letters == ["a", "z", "aa", "ab", "zz", "aaa"]


def test_real_pairs_equal_scipy_on_pytrec_eval_values(trec: Path) -> None:
    """End to end: serpeval's p-values equal scipy's on per-query values from pytrec_eval."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from serpeval.io import read_qrels, read_run

    pairs = [("robust04", "qrels.txt.gz", "bm25", "bm25-rm3", 249),
             ("core18", "qrels.txt", "title-rm3", "desc-rm3", 50),
             ("dl20-doc", "qrels.txt", "d_bm25", "d_bm25rm3", 45)]
    for folder, qrels_name, first, second, n_queries in pairs:
        qrels = read_qrels(trec / folder / qrels_name)
        runs = [read_run(trec / folder / "runs" / f"{name}.run.gz") for name in (first, second)]
        oracle = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), {"ndcg_cut.10", "map"})
        truth = [oracle.evaluate(run.to_dict()) for run in runs]
        common = sorted(set(truth[0]) & set(truth[1]))
        c = compare(qrels, runs, ["nDCG@10", "AP"])
        assert c.query_ids.tolist() == common
        assert len(common) == n_queries
        for row, key in zip(c.rows, ("ndcg_cut_10", "map"), strict=True):
            y, x = ([t[q][key] for q in common] for t in truth)
            assert row.p_value == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-6)
            assert row.delta == pytest.approx(np.mean(x) - np.mean(y), abs=1e-9)


def test_a_run_named_baseline_is_not_said_twice() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    runs = {"baseline": {"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}},
            "candidate": {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0}}}
    c = compare_results(serpeval.evaluate(qrels, runs, ["AP"]), rng=0)
    assert "against the baseline run;" in c.description()
    assert "baseline baseline" not in c.description()


def test_per_query_output_keeps_only_its_own_notes() -> None:
    """The per-query table has no CI, d_z, sig or p columns: their footnotes stay with the summary."""
    collection = make_collection(n_queries=12)
    c = compare_results(serpeval.evaluate(collection.qrels, collection.runs, ["AP"]), rng=0)
    summary = render_comparison(c, "table")
    per_query = render_comparison(c, "table", per_query=True)
    for footnote in ("d_z = mean delta", "sig: ", "p-values:"):
        assert footnote in summary
        assert footnote not in per_query


@pytest.mark.parametrize(("ci", "said", "p_note_end"), [
    ("t", "t distribution", "(B + 1)"),
    ("percentile", "paired bootstrap, percentile", "(B + 1), percentile interval"),
    ("bca", "paired bootstrap, BCa", "(B + 1), BCa interval")])
def test_bootstrap_p_value_note_names_the_interval_shown(ci: str, said: str, p_note_end: str) -> None:
    # --test bootstrap --ci t showed "p-values: paired bootstrap ..., BCa interval" above a
    # t interval: the p-value note named an interval that was not shown.
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
    good = {q: {d: 2.0, "x": 1.0} for q, d in zip(qrels, "abcd", strict=True)}
    bad = {q: {"x": 2.0, d: 1.0} for q, d in zip(qrels, "abcd", strict=True)}
    c = compare(qrels, {"bad": bad, "good": good}, ["RR"], test="bootstrap", ci=ci, n_resamples=200, rng=0)
    notes = c.notes()
    p_note = next(n for n in notes if n.startswith("p-values:"))
    assert p_note == f"p-values: paired bootstrap, 200 resamples: studentized p = (b + 1) / {p_note_end}"
    assert any(n.startswith(f"95% CI of the delta from the {said} ") for n in notes)
