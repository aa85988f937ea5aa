"""CompareOptions and GateOptions: every old keyword of compare/gate gives the result of the
options object that holds it (issue 28 item 3); the objects' checks; conflicts refused."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pytest

import serpeval
from serpeval.comparison.compare import CompareOptions, compare, compare_results
from serpeval.comparison.gate import GateOptions, MaxDrop, gate, gate_results
from serpeval.core.errors import OptionError

RNG = np.random.default_rng(3)
QUERIES = [f"q{i}" for i in range(12)]
QRELS = {q: {f"d{j}": int(g) for j, g in enumerate(RNG.integers(0, 3, 6))} for q in QUERIES}


def _run(seed: int, drop: str | None = None) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    run = {q: {f"d{j}": float(s) for j, s in enumerate(rng.random(6))} | {"unjudged": float(rng.random())}
           for q in QUERIES}
    if drop:
        del run[drop]
    return run


#: "third" ranks by the true grade (noise breaks the ties): significantly better than the others
RUNS = {"base": _run(1), "cand": _run(2, drop="q3"),
        "third": {q: {d: g + 0.1 * s for (d, g), s in zip(QRELS[q].items(), RNG.random(6), strict=True)}
                  for q in QUERIES}}


def _rows(result: Any) -> str:
    return str(result.to_dicts())          # repr: NaN compares equal to itself


# (keyword, value): each changes the comparison from the default one.
COMPARE_CASES = [
    ("baseline", "cand"), ("test", "randomization"), ("correction", "bonferroni"), ("pairs", "all"),
    ("alpha", 0.5), ("confidence", 0.5), ("ci", "percentile"), ("n_resamples", 50), ("rng", 5),
    ("strict", True), ("missing", "zero"), ("depth", 2), ("judged_only", True),
    ("group_correction", "bh"), ("group_column", "topic"),
]
#: keywords whose effect needs another one set (the resampling keywords need a resampling test,
#: the group ones groups)
NEEDS = {"n_resamples": {"test": "randomization", "rng": 0}, "rng": {"test": "randomization", "n_resamples": 50},
         "ci": {"n_resamples": 50, "rng": 0}}
#: what a keyword's value is compared with where the default cannot be: the default rng, None,
#: draws afresh at each call and may give seed 5's outcome by chance (50 resamples: p-values in
#: steps of 1/51), failing at random; another seed is a fixed comparison
DIFFERENT = {"rng": {"rng": 6}}


def _outcome(call: Any) -> Any:
    from serpeval.core.errors import MissingQueriesWarning

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)    # "cand" misses a query, by design
            return _rows(call())
    except Exception as exc:  # the two forms must raise the same
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize(("keyword", "value"), COMPARE_CASES, ids=[c[0] for c in COMPARE_CASES])
def test_compare_keyword_equals_options(keyword: str, value: Any, tmp_path: Any) -> None:
    extra = dict(NEEDS.get(keyword, {}))
    groups = None
    if keyword.startswith("group"):
        path = tmp_path / "groups.jsonl"
        path.write_text("".join(f'{{"qid": "{q}", "topic": "{"ab"[i % 2]}", "group": "{"xyz"[i % 3]}"}}\n'
                                for i, q in enumerate(QUERIES)))
        groups = str(path)
        extra |= {"test": "randomization", "n_resamples": 50, "rng": 0}

    def seg(c: Any) -> Any:
        return c if groups is None else c.segments

    old = _outcome(lambda: seg(compare(QRELS, RUNS, ["AP", "P@3"], groups=groups, **extra, **{keyword: value})))
    new = _outcome(lambda: seg(compare(QRELS, RUNS, ["AP", "P@3"], CompareOptions(**extra, **{keyword: value}),
                                       groups=groups)))
    assert old == new
    other = extra | DIFFERENT.get(keyword, {})
    assert old != _outcome(lambda: seg(compare(QRELS, RUNS, ["AP", "P@3"], CompareOptions(**other),
                                               groups=groups)))


def test_compare_results_reads_its_fields_only() -> None:
    # 8 of the 12 queries (q3, missing from "cand", among them): with ties, scipy's Wilcoxon
    # enumerates all 2^n sign flips, 2^11 (~1 s a call) on the 12 queries, 2^7 on these
    qrels = {q: QRELS[q] for q in QUERIES[:8]}
    runs = {name: {q: run[q] for q in QUERIES[:8] if q in run} for name, run in RUNS.items()}
    results = serpeval.evaluate(qrels, runs, ["AP"], missing="zero")
    options = CompareOptions(test="wilcoxon", correction="bh", baseline="third", missing="zero")
    assert _rows(compare_results(results, options)) == _rows(
        compare_results(results, test="wilcoxon", correction="bh", baseline="third"))
    with pytest.raises(TypeError, match=r"^compare\(\): missing='skip' conflicts with CompareOptions.missing='zero'"):
        compare(qrels, runs, ["AP"], options, missing="skip")
    with pytest.raises(TypeError, match=r"^compare_results\(\) got an unexpected keyword argument 'missing'"):
        compare_results(results, missing="zero")
    with pytest.raises(TypeError, match=r"^compare\(\): test='t' conflicts with CompareOptions.test='wilcoxon'"):
        compare(qrels, runs, ["AP"], options, test="t")
    # the same option in both places, in another spelling, is not a conflict
    assert compare(qrels, runs, ["AP"], options, test="signed-rank", missing="zero").test == "wilcoxon"


GATE_CASES = [
    ("max_drop", 0.2), ("relative", True), ("alpha", 0.3), ("rule", "no-significant-drop"),
    ("test", "randomization"), ("n_resamples", 50), ("rng", 5), ("top", 1), ("strict", True),
    ("missing", "skip"), ("depth", 2), ("judged_only", True),
]
GATE_NEEDS = {"n_resamples": {"test": "randomization", "rng": 0}, "rng": {"test": "randomization", "n_resamples": 50},
              "relative": {"max_drop": 0.5}, "strict": {"missing": "skip"}}


@pytest.mark.parametrize(("keyword", "value"), GATE_CASES, ids=[c[0] for c in GATE_CASES])
def test_gate_keyword_equals_options(keyword: str, value: Any) -> None:
    extra = dict(GATE_NEEDS.get(keyword, {}))

    def decide(**kw: Any) -> Any:
        return _outcome(lambda: gate(QRELS, RUNS["base"], RUNS["cand"], ["AP", "P@3"], **kw))

    old = decide(**extra, **{keyword: value})
    assert old == decide(options=GateOptions(**extra, **{keyword: value}))
    assert old != decide(options=GateOptions(**extra | DIFFERENT.get(keyword, {})))


def test_gate_results_and_conflicts() -> None:
    results = serpeval.evaluate(QRELS, [RUNS["base"], RUNS["cand"]], ["AP"], missing="zero")
    options = GateOptions(max_drop="5%", top=2)
    assert _rows(gate_results(results, None, options)) == _rows(gate_results(results, max_drop="5%", top=2))
    assert options.drop == MaxDrop(0.05, True)
    with pytest.raises(TypeError, match=r"^gate_results\(\) got an unexpected keyword argument 'depth'"):
        gate_results(results, depth=3)
    with pytest.raises(TypeError, match=r"^gate\(\): max_drop=0.01 conflicts with GateOptions.max_drop='5%'"):
        gate(QRELS, RUNS["base"], RUNS["cand"], ["AP"], options, max_drop=0.01)


@pytest.mark.parametrize(("cls", "fields", "message"), [
    (CompareOptions, {"test": "z"}, r"test"),
    (CompareOptions, {"correction": "hlom"}, r"correction"),
    (CompareOptions, {"pairs": "some"}, r"^pairs must be 'baseline' or 'all'; got 'some'\.$"),
    (CompareOptions, {"alpha": 0}, r"^alpha must be a number between 0 and 1"),
    (CompareOptions, {"confidence": 1}, r"^confidence must be a number between 0 and 1 \(e\.g\. 0\.95\)"),
    (CompareOptions, {"ci": "exact"}, r"^ci must be one of t, bca, percentile; got 'exact'\.$"),
    (CompareOptions, {"n_resamples": 0}, r"^n_resamples must be an integer >= 1; got 0\.$"),
    (CompareOptions, {"rng": -1}, r"^rng must be an int seed >= 0"),
    (CompareOptions, {"baseline": True}, r"^baseline must be a run name, an index or None; got True\.$"),
    (CompareOptions, {"missing": "drop"}, r"^missing must be one of skip, zero, error; got 'drop'\.$"),
    (CompareOptions, {"depth": 0}, r"^depth must be a positive number of docs; got 0\.$"),
    (CompareOptions, {"group_correction": "x"}, r"correction"),
    (CompareOptions, {"group_column": 3}, r"^group_column must be a column name; got 3\.$"),
    (GateOptions, {"max_drop": -1}, r"^max_drop must be >= 0"),
    (GateOptions, {"max_drop": 1.5, "relative": True}, r"a relative drop must be below 100%"),
    (GateOptions, {"alpha": 0.6}, r"^alpha must be a number between 0 and 0\.5"),
    (GateOptions, {"rule": "loose"}, r"^rule must be one of non-inferiority, no-significant-drop; got 'loose'\.$"),
    (GateOptions, {"top": -1}, r"^top must be an integer >= 0; got -1\.$"),
    (GateOptions, {"missing": "x"}, r"^missing must be one of skip, zero, error"),
    (GateOptions, {"depth": 1.5}, r"^depth must be a positive number of docs; got 1\.5\.$"),
])
def test_options_check_their_fields(cls: Any, fields: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        cls(**fields)


def test_canonical_forms_and_public_names() -> None:
    o = CompareOptions(test="Student", correction=None)
    assert (o.test, o.correction) == ("t", "none")
    assert dataclasses.replace(o, correction="none") == o
    assert GateOptions(test="fisher").test == "randomization"
    assert serpeval.CompareOptions is CompareOptions
    assert serpeval.GateOptions is GateOptions
    from serpeval import comparison

    assert comparison.CompareOptions is CompareOptions
    assert comparison.GateOptions is GateOptions
