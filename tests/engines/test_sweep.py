"""The sweep's statistics (null: no winner; planted: found), max-T against a direct computation, the
sweep on Cranfield, its renderers and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import DATA, need

import serpeval
from serpeval.core.errors import OptionError
from serpeval.engines.sweep import max_t_adjusted, parse_grid, random_settings, select, sweep
from serpeval.report.sweep import heatmap_text, sweep_html

CRANFIELD = DATA / "cranfield"


def null_scores(rng: np.random.Generator, settings: int = 20, queries: int = 100, shuffled: bool = False
                ) -> np.ndarray:
    """Per-query scores of settings equivalent to the baseline (row 0): the baseline plus
    mean-zero noise (a real per-query effect of each setting, but no systematic one), or, with
    ``shuffled``, each query's values permuted across the settings."""
    base = rng.beta(2, 3, size=queries)
    if shuffled:
        values = np.clip(base + rng.normal(0, 0.08, size=(settings, queries)), 0, 1)
        return rng.permuted(values, axis=0)
    noise = rng.normal(0, 0.06, size=(settings, queries))
    noise[0] = 0
    return base + noise


@pytest.mark.parametrize("shuffled", [False, True])
def test_equivalent_settings_give_no_significant_winner_in_95_percent_of_repeats(shuffled: bool) -> None:
    rng = np.random.default_rng(20261205)
    repeats = 60
    cv_wins = sample_wins = 0
    kept = []
    for r in range(repeats):
        result = select(null_scores(rng, shuffled=shuffled), 0, folds=5, rng=r, permutations=1000)
        cv_wins += result["significant"]
        sample_wins += bool(result["in_sample_significant"])
        if result["in_sample_gain"] > 0:
            kept.append(result["kept"])
    assert cv_wins <= 0.05 * repeats            # >= 95% of repeats: no significant cross-validated winner
    assert sample_wins <= 0.05 * repeats        # nor a corrected in-sample one
    # the winner's curse, measured: the in-sample best gain is mostly noise, the CV keeps little of it
    assert np.median(kept) < 0.5


def test_a_planted_improvement_is_found() -> None:
    rng = np.random.default_rng(7)
    found = 0
    for r in range(20):
        scores = null_scores(rng)
        scores[13] = scores[0] + 0.03 + rng.normal(0, 0.03, size=scores.shape[1])   # a real +0.03
        result = select(scores, 0, folds=5, rng=r, permutations=200)
        found += result["significant"] and result["best"] == 13 and 13 in result["in_sample_significant"]
        assert 0.0 < result["cv_gain"] <= result["in_sample_gain"] + 0.01
    assert found >= 19


def test_identical_settings_keep_the_baseline() -> None:
    scores = np.tile(np.linspace(0, 1, 30), (5, 1))
    result = select(scores, 2, folds=3)
    assert result["best"] == 2
    assert result["fold_choices"] == (2, 2, 2)
    assert (result["cv_gain"], result["cv_low"], result["cv_high"]) == (0.0, 0.0, 0.0)
    assert not result["significant"]
    assert np.isnan(result["kept"])
    assert np.all(result["p_max_t"][[0, 1, 3, 4]] == 1.0)


def test_cross_validation_by_hand() -> None:
    # 2 settings, 4 queries, 2 folds. Setting 1 is better on queries 0, 1 and worse on 2, 3.
    scores = np.array([[0.5, 0.5, 0.5, 0.5],
                       [0.9, 0.8, 0.1, 0.3]])
    rng = np.random.default_rng(0)
    assignment = rng.permutation(4) % 2               # what select draws with rng=0
    result = select(scores, 0, folds=2, rng=0)
    for f in range(2):
        train = assignment != f
        expected = 1 if scores[1, train].mean() > scores[0, train].mean() else 0
        assert result["fold_choices"][f] == expected
    out_of_fold = np.array([scores[result["fold_choices"][assignment[q]], q] for q in range(4)])
    assert result["cv_gain"] == pytest.approx((out_of_fold - scores[0]).mean())
    assert result["in_sample_gain"] == pytest.approx(0.025)   # mean(0.9, .8, .1, .3) - .5
    assert result["best"] == 1


def test_max_t_matches_a_direct_enumeration() -> None:
    # every sign pattern of n = 8 queries enumerated directly; with many random flips the estimate converges
    rng = np.random.default_rng(3)
    d = rng.normal(0.2, 1.0, size=(3, 8))
    n = d.shape[1]

    def tstat(x: np.ndarray) -> np.ndarray:
        return np.abs(x.mean(axis=-1) / (x.std(axis=-1, ddof=1) / np.sqrt(n)))

    patterns = np.array([[1 - 2 * ((code >> i) & 1) for i in range(n)] for code in range(2**n)], dtype=float)
    maxima = np.array([tstat(d * s).max() for s in patterns])
    exact = np.array([(maxima >= t - 1e-12).mean() for t in tstat(d)])
    estimate = max_t_adjusted(d, permutations=20000, rng=1)
    np.testing.assert_allclose(estimate, exact, atol=0.015)
    assert np.all(np.diff(estimate[np.argsort(-tstat(d))]) >= 0)   # larger |t|, smaller adjusted p


def test_select_errors() -> None:
    with pytest.raises(OptionError, match="at least 2 settings"):
        select(np.zeros((1, 5)))
    with pytest.raises(OptionError, match="folds=6 is more than the 5 queries"):
        select(np.zeros((2, 5)), folds=6)
    with pytest.raises(OptionError, match="unknown test 'z'"):
        select(np.zeros((2, 5)), test="z")
    with pytest.raises(OptionError, match="correction 'tukey' needs all pairs"):
        select(np.zeros((2, 5)), correction="tukey")
    result = select(np.random.default_rng(0).random((3, 12)), test="randomization", permutations=99)
    assert result["test"] == "randomization"


def test_grid_and_random_settings() -> None:
    assert parse_grid(["k1=0.6,0.9", "method=lucene,bm25+"]) == {"k1": [0.6, 0.9], "method": ["lucene", "bm25+"]}
    with pytest.raises(OptionError, match=r"expected NAME=V1,V2"):
        parse_grid(["k1"])
    with pytest.raises(OptionError, match="given twice"):
        parse_grid(["k1=1", "k1=2"])
    with pytest.raises(OptionError, match="a value is repeated"):
        parse_grid(["k1=1,1.0"])
    drawn = random_settings(5, {"k1": (0.2, 2.0), "b": (0.0, 1.0)}, rng=4)
    assert drawn == random_settings(5, {"k1": (0.2, 2.0), "b": (0.0, 1.0)}, rng=4)
    assert all(0.2 <= s["k1"] <= 2.0 and 0 <= s["b"] <= 1 for s in drawn)


@pytest.fixture(scope="module")
def cranfield_sweep():
    need(CRANFIELD / "corpus.jsonl")
    return sweep(CRANFIELD / "topics.tsv", CRANFIELD / "qrels.trec", corpus=CRANFIELD / "corpus.jsonl",
                 grid=["k1=0.6,0.9,1.2", "b=0.3,0.5,0.75"], k=100, permutations=200, keep_runs=True)


def test_cranfield_sweep(cranfield_sweep) -> None:
    r = cranfield_sweep
    assert len(r.settings) == 9                       # the default (1.2, 0.75) is in the grid
    assert r.label(r.baseline) == "k1=1.2 b=0.75"
    assert len(r.query_ids) == 225
    # each setting's mean is what evaluate gives its run
    for j in (0, 4, 8):
        direct = serpeval.evaluate(CRANFIELD / "qrels.trec", r.runs[j], ["nDCG@10"], missing="zero")
        assert r.means[j] == pytest.approx(direct.to_dicts()[0]["nDCG@10"], abs=1e-12)
    heat = r.heatmap()
    assert heat["rows"] == "k1"
    assert heat["column_values"] == [0.3, 0.5, 0.75]
    assert heat["values"][2][2] == pytest.approx(r.means[r.baseline])
    sentences = r.sentences()
    assert sentences[1].startswith("cross-validated gain over the baseline (5-fold over 225 queries, seed 0): ")
    payload = json.loads(json.dumps(r.to_json_dict()))
    assert payload["summary"]["settings"] == 9
    assert len(payload["table"]) == 9
    text = heatmap_text(heat)
    assert "0.3695*" in text
    html = sweep_html(payload)
    assert "cross-validated gain" in html
    assert 'class="heatmap"' in html
    assert "&#9733;" in html
    assert r.to_pandas().shape[0] == 9
    assert "<table>" in r._repr_html_()


def test_sweep_random_and_http(tmp_path: Path) -> None:
    from tests.engines.fake_engines import FakeEngines

    from serpeval.engines.embedded import EmbeddedIndex

    docs = [{"id": f"d{i}", "text": t} for i, t in enumerate(
        ["wing lift", "wing wing drag", "heat", "lift force on a wing", "heat flow", "drag of a body"])]
    topics = {"1": "wing lift", "2": "heat flow", "3": "drag", "4": "wing"}
    qrels = {"1": {"d0": 1, "d3": 1}, "2": {"d4": 1}, "3": {"d5": 1}, "4": {"d1": 1}}
    r = sweep(topics, qrels, corpus=docs, random=4, seed=3, folds=2, permutations=50)
    assert len(r.settings) == 5                      # 4 draws + the default baseline first
    assert r.baseline == 0
    assert r.heatmap() is not None
    index = EmbeddedIndex.build(docs)
    with FakeEngines(index.engine(), index="docs") as server:
        config = {"preset": "elasticsearch", "url": server.url, "index": "docs", "params": {"field": "text"}}
        h = sweep(topics, qrels, config, grid=["field=text,title"], folds=2, permutations=50)
        assert [s["field"] for s in h.settings] == ["text", "title"]
        assert h.baseline == 0
        assert h.heatmap() is None
    with pytest.raises(OptionError, match="give a grid"):
        sweep(topics, qrels, corpus=docs)
    with pytest.raises(OptionError, match="no judged query is in the topics"):
        sweep({"x": "wing"}, qrels, corpus=docs, grid=["k1=1,2"], folds=2)


def test_heatmap_rendering_colour_and_gaps() -> None:
    heat = {"rows": "k1", "columns": "b", "row_values": [0.5, 1.0], "column_values": [0.3, 0.7],
            "values": [[0.30, float("nan")], [0.35, 0.35]], "measure": "nDCG@10", "best": [1, 0]}
    plain = heatmap_text(heat)
    assert "0.3500*" in plain
    assert "-" in plain                                     # the pair not tried
    coloured = heatmap_text(heat, color=True)
    assert "\x1b[" in coloured                              # ANSI shading
    flat = dict(heat, values=[[0.3, 0.3], [0.3, 0.3]])
    assert "0.3000*" in heatmap_text(flat, color=True)
    page = sweep_html({"summary": {"measure": "nDCG@10", "cv_ci": [-0.01, 0.02], "kept": None, "selected": "k1=1",
                                   "selected_mean": 0.35, "baseline": "k1=0.5", "baseline_mean": 0.3,
                                   "cv_gain": 0.01, "cv_ci_level": 95, "significant": False, "in_sample_gain": 0.05,
                                   "settings": 4},
                       "sentences": ["a"], "heatmap": heat, "table": []})
    assert page.count("<td>-</td>") == 1


def test_a_baseline_value_of_a_parameter_the_sweep_does_not_vary_is_refused() -> None:
    # --grid k1=0.6,0.9 --baseline b=0.4 used to ignore b=0.4: every setting, the baseline
    # too, ran with b=0.75, and the output named the baseline "k1=0.9" with no word of b.
    docs = [{"id": f"d{i}", "text": t} for i, t in enumerate(["wing lift", "wing wing drag", "heat flow"])]
    topics, qrels = {"1": "wing lift", "2": "heat"}, {"1": {"d0": 1}, "2": {"d2": 1}}
    with pytest.raises(OptionError, match=r"--baseline b=0.4: 'b' is not a swept parameter.*add --grid b=VALUE"):
        sweep(topics, qrels, corpus=docs, grid=["k1=0.6,0.9"], baseline={"k1": 0.9, "b": 0.4}, folds=2)
    # held by a one-value grid instead, b=0.4 applies to every setting: k1=0.9 b=0.4 is the
    # baseline, and its means equal those of the engine made with b=0.4 directly
    r = sweep(topics, qrels, corpus=docs, grid=["k1=0.6,0.9", "b=0.4"], baseline={"k1": 0.9, "b": 0.4},
              folds=2, permutations=20)
    assert r.label(r.baseline) == "k1=0.9 b=0.4"
    direct = serpeval.retrieve(topics, corpus=docs, params={"k1": 0.9, "b": 0.4}, k=10)
    assert r.means[r.baseline] == serpeval.evaluate(qrels, direct.run, ["nDCG@10"], missing="zero").means(
        "bm25")["nDCG@10"]


def test_integer_grid_values_reach_an_http_template_as_integers() -> None:
    # --grid rows=1,3 used to send rows=1.0 and rows=3.0; Solr's integer parameters (rows, mm)
    # refuse "1.0" (the fake Solr too, with HTTP 400), so the sweep failed.
    from tests.engines.fake_engines import FakeEngines

    from serpeval.engines.embedded import EmbeddedIndex

    assert parse_grid(["rows=1,3", "k1=0.5,1.5"]) == {"rows": [1, 3], "k1": [0.5, 1.5]}
    assert [type(v) for v in parse_grid(["rows=1,3"])["rows"]] == [int, int]
    docs = [{"id": f"d{i}", "text": t} for i, t in enumerate(
        ["wing lift", "wing wing drag", "heat", "lift force on a wing", "heat flow", "drag of a body"])]
    topics = {"1": "wing lift", "2": "heat flow", "3": "drag"}
    qrels = {"1": {"d0": 1, "d3": 1}, "2": {"d4": 1}, "3": {"d5": 1}}
    with FakeEngines(EmbeddedIndex.build(docs).engine(), index="docs") as server:
        config = {"preset": "solr", "url": server.url, "collection": "docs", "params": {"rows": 10},
                  "request": {"method": "GET", "path": "/solr/{{collection}}/select",
                              "query_params": {"q": "{{query}}", "qf": "{{qf}}", "rows": "{{rows}}",
                                               "fl": "id,score", "wt": "json"}}}
        r = sweep(topics, qrels, config, grid=["rows=1,3"], baseline={"rows": 3}, folds=2, permutations=20,
                  keep_runs=True)
    assert [s["rows"] for s in r.settings] == [1, 3]
    # rows=1: one document per query; rows=3: up to 3 ("wing lift" matches d0, d1, d3; "heat flow"
    # d2, d4; "drag" d1, d5)
    assert [len(r.runs[0].to_dict()[q]) for q in ("1", "2", "3")] == [1, 1, 1]
    assert [len(r.runs[1].to_dict()[q]) for q in ("1", "2", "3")] == [3, 2, 2]


def test_judged_queries_left_out_or_empty_are_counted_and_said() -> None:
    # 4 judged queries: "1" and "2" compared, "3" has an empty query (compared at 0 in every
    # setting), "9" is not in the topics (not compared). Nothing said so before.
    docs = [{"id": f"d{i}", "text": t} for i, t in enumerate(["wing lift", "wing wing drag", "heat flow"])]
    topics = {"1": "wing lift", "2": "heat", "3": "  ", "4": "drag"}
    qrels = {"1": {"d0": 1}, "2": {"d2": 1}, "3": {"d1": 1}, "9": {"d1": 1}}
    r = sweep(topics, qrels, corpus=docs, grid=["k1=0.6,0.9"], folds=2, permutations=20)
    assert sorted(r.query_ids) == ["1", "2", "3"]
    assert np.all(r.scores[:, list(r.query_ids).index("3")] == 0)
    summary = r.summary()
    assert (summary["judged_not_in_topics"], summary["empty_queries"]) == (1, 1)
    assert "note: 1 judged query(ies) are not in the topics and are not compared" in r.sentences()
    assert "note: 1 judged topic(s) have an empty query: compared at 0 in every setting" in r.sentences()


def test_ranges_without_random_are_refused_not_ignored() -> None:
    # sweep --grid k1=0.6,0.9 --range b=0:1 ran the grid and ignored the range, silently
    with pytest.raises(OptionError, match=r"--range .* with --grid it would be ignored"):
        sweep({"1": "wing"}, {"1": {"d0": 1}}, corpus=[{"id": "d0", "text": "wing"}], grid=["k1=0.6,0.9"],
              ranges={"b": (0.0, 1.0)}, folds=2)


def test_a_swept_delta_that_no_setting_reads_is_refused() -> None:
    # --grid delta=0.3,1 with Lucene BM25 compared identical runs (delta is bm25l/bm25+ only)
    docs = [{"id": "d0", "text": "wing lift"}, {"id": "d1", "text": "wing"}]
    topics, qrels = {"1": "wing", "2": "lift"}, {"1": {"d0": 1}, "2": {"d0": 1}}
    with pytest.raises(OptionError, match=r"delta is swept, but it applies to method=bm25l and method=bm25\+ only"):
        sweep(topics, qrels, corpus=docs, grid=["delta=0.3,1"], folds=2)
    r = sweep(topics, qrels, corpus=docs, grid=["delta=0.3,1", "method=bm25+"], baseline={"method": "bm25+"},
              folds=2, permutations=20)
    assert [s["delta"] for s in r.settings] == [0.5, 0.3, 1]   # the default delta 0.5 is the baseline, added
