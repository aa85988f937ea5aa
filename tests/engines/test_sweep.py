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
