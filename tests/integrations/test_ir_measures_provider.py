"""serpeval as an ir_measures provider: explicit use, installed first in ir_measures' default
pipeline, and PyTerrier's pt.Experiment computing through it (no index, no Java)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from serpeval.integrations import ir_measures_provider
from serpeval.io import read_qrels, read_run

irm = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")


def _measures() -> list:
    # measures ir_measures computes with pytrec_eval (trec_eval's tie rule, as serpeval)
    return [irm.nDCG @ 10, irm.AP, irm.MAP, irm.P @ 10, irm.R @ 100, irm.RR, irm.NumQ, irm.NumRelRet,
            irm.AP(judged_only=True), irm.SetF(beta=0.25), irm.IPrec @ 0.5]


@pytest.fixture
def dl20(trec: Path) -> tuple[dict, dict, dict]:
    folder = trec / "dl20-doc"
    qrels = read_qrels(folder / "qrels.txt").to_dict()
    bm25 = read_run(folder / "runs" / "d_bm25.run.gz").to_dict()
    rm3 = read_run(folder / "runs" / "d_bm25rm3.run.gz").to_dict()
    return qrels, bm25, rm3


@pytest.fixture
def installed():
    calls: list[int] = []
    provider = ir_measures_provider.install()
    original = provider._evaluator

    def counting(measures, qrels):
        calls.append(len(list(measures)))
        return original(measures, qrels)

    provider._evaluator = counting
    try:
        yield calls
    finally:
        del provider._evaluator
        ir_measures_provider.uninstall()


def _per_query(metrics) -> dict:
    return {(str(m.measure), m.query_id): m.value for m in metrics}


def test_explicit_provider_gives_ir_measures_values(dl20) -> None:
    qrels, run, _ = dl20
    ours = ir_measures_provider.provider().iter_calc(_measures(), qrels, run)
    theirs = irm.iter_calc(_measures(), qrels, run)
    ours_by_query, theirs_by_query = _per_query(ours), _per_query(theirs)
    assert ours_by_query.keys() == theirs_by_query.keys()
    assert len(ours_by_query) == 10 * 45  # MAP is AP
    for key, value in theirs_by_query.items():
        assert ours_by_query[key] == pytest.approx(value, abs=1e-12), key


def test_unanswered_queries_get_ir_measures_default(dl20) -> None:
    qrels, run, _ = dl20
    some = {q: docs for q, docs in run.items() if q in qrels}
    some = dict(list(some.items())[:5])  # 5 of the 45 judged queries answered: 40 get 0
    ours = ir_measures_provider.provider().calc_aggregate([irm.nDCG @ 10, irm.NumQ], qrels, some)
    theirs = irm.calc_aggregate([irm.nDCG @ 10, irm.NumQ], qrels, some)
    assert ours[irm.NumQ] == theirs[irm.NumQ] == 5
    assert ours[irm.nDCG @ 10] == pytest.approx(theirs[irm.nDCG @ 10], abs=1e-15)
    assert 0 < ours[irm.nDCG @ 10] < 5 / 45


def test_supports_what_the_grammar_parses() -> None:
    provider = ir_measures_provider.provider()
    assert provider.supports(irm.nDCG(dcg="exp-log2") @ 10)
    assert provider.supports(irm.Compat(p=0.8))
    assert provider.supports(irm.INST(max_rel=3))
    assert not provider.supports(irm.Accuracy @ 10)


def test_install_routes_ir_measures_through_serpeval(dl20, installed: list[int]) -> None:
    qrels, run, _ = dl20
    assert irm.DefaultPipeline.providers[0].NAME == "serpeval"
    assert irm.providers.registry["serpeval"] is ir_measures_provider.provider()
    values = irm.calc_aggregate([irm.nDCG @ 10, irm.AP], qrels, run)
    assert installed == [2]  # one evaluator, both measures
    ir_measures_provider.uninstall()
    assert [p.NAME for p in irm.DefaultPipeline.providers].count("serpeval") == 0
    reference = irm.calc_aggregate([irm.nDCG @ 10, irm.AP], qrels, run)
    assert values[irm.AP] == pytest.approx(reference[irm.AP], rel=1e-12)
    assert values[irm.nDCG @ 10] == pytest.approx(reference[irm.nDCG @ 10], rel=1e-12)


def test_a_measure_serpeval_lacks_falls_through(dl20, installed: list[int]) -> None:
    qrels, run, _ = dl20
    # Accuracy (over whole rankings, which all hold a non-relevant doc) is computed by
    # ir_measures' own provider; nDCG@10 by serpeval
    values = irm.calc_aggregate([irm.nDCG @ 10, irm.Accuracy @ 1000], qrels, run)
    assert installed == [1]
    assert 0 < values[irm.Accuracy @ 1000] < 1


def test_pyterrier_experiment_computes_through_serpeval(dl20, installed: list[int]) -> None:
    """pt.Experiment on two precomputed result frames: PyTerrier 1.1.2 runs it without Java."""
    pd = pytest.importorskip("pandas")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pt = pytest.importorskip("pyterrier")
    qrels, bm25, rm3 = dl20

    def frame(run: dict) -> object:
        rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
        return pd.DataFrame(rows, columns=["qid", "docno", "score"])

    qrels_frame = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                               columns=["qid", "docno", "label"])
    topics = pd.DataFrame({"qid": sorted(qrels), "query": "unused"})
    metrics = [irm.nDCG @ 10, irm.AP, irm.P @ 10, irm.RR]

    def experiment() -> object:
        return pt.Experiment([frame(bm25), frame(rm3)], topics, qrels_frame, eval_metrics=metrics,
                             names=["bm25", "bm25+rm3"], perquery=True)

    ours = experiment()
    assert len(installed) >= 2  # one evaluation per system, all through serpeval
    assert pt.java.started() is False
    ir_measures_provider.uninstall()
    theirs = experiment()
    merged = ours.merge(theirs, on=["name", "qid", "measure"], suffixes=("_serpeval", "_ir_measures"))
    assert len(merged) == len(theirs) == 2 * 45 * len(metrics)
    assert (merged["value_serpeval"] - merged["value_ir_measures"]).abs().max() <= 1e-12


def test_float32_scores_tie_as_in_pytrec_eval() -> None:
    # 1 + 1e-9 and 1 are one number in float32: pytrec_eval ties them and puts b (the higher
    # doc id, relevant) first, RR = 1; in float64 a is ranked first, RR = 1/2.
    qrels = {"q": {"b": 1, "a": 0}}
    run = {"q": {"a": 1.0 + 1e-9, "b": 1.0}}
    assert irm.calc_aggregate([irm.RR], qrels, run)[irm.RR] == 1.0
    assert ir_measures_provider.provider(float32_scores=True).calc_aggregate([irm.RR], qrels, run)[irm.RR] == 1.0
    assert ir_measures_provider.provider().calc_aggregate([irm.RR], qrels, run)[irm.RR] == 0.5
