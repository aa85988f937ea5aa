"""Per-query parity with ir_measures' default providers on the real TREC runs (docs/ecosystem.md).

Every ir_measures measure that a provider installed here computes, on robust04, dl19-passage,
dl20-doc and core18, one run each, query by query:

* the pytrec_eval measures (trec_eval's rules, trec_eval's tie order) on the runs as they are:
  identical within 1e-12 (in fact bit-identical on these runs);
* gdeval's ``nDCG(dcg='exp-log2')`` and ``ERR``: within 5e-6, gdeval prints 5 decimals;
* cwl_eval's C/W/L measures (``RBP(rel=k)``, ``SDCG``, ``INST``, ``INSQ``, ``BPM``, the NERR
  family; skipped when cwl-eval is not installed), which rank the run in ir_measures' sorted
  order: identical on the runs with every tie broken the same way;
* the compat, judged and msmarco providers break score ties by doc id *ascending* (serpeval
  and trec_eval: descending): identical on the runs with every tie broken the same way
  (scores rewritten in serpeval's order), and on the runs as they are, different only on
  queries that have tied scores.
"""

from __future__ import annotations

import collections
import functools
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import serpeval
from serpeval.core.data import Qrels
from serpeval.core.errors import MissingQueriesWarning
from serpeval.io import read_qrels, read_run
from serpeval.measures import parse_measure

irm = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")

COLLECTIONS = [
    ("robust04", "qrels.txt.gz", "bm25.run.gz"),
    ("dl19-passage", "qrels.txt", "bm25-default.run.gz"),
    ("dl20-doc", "qrels.txt", "d_bm25.run.gz"),
    ("core18", "qrels.txt", "title-rm3.run.gz"),
]


def _trec_rule() -> list:
    return [
        irm.P @ 10, irm.P(rel=2) @ 10, irm.RR, irm.Rprec, irm.AP, irm.AP @ 100, irm.AP(rel=2), irm.nDCG,
        irm.nDCG @ 10, irm.nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 10, irm.R @ 100, irm.R @ 1000, irm.Bpref,
        irm.infAP, irm.NumQ, irm.NumRet, irm.NumRelRet, irm.NumRet(rel=2), irm.NumRel, irm.SetP, irm.SetRelP,
        irm.SetR, irm.SetF, irm.SetF(beta=0.5), irm.SetAP, irm.Success @ 1, irm.Success @ 10, irm.IPrec @ 0.0,
        irm.IPrec @ 0.1, irm.IPrec @ 0.3, irm.IPrec @ 0.5, irm.IPrec @ 0.7, irm.IPrec @ 1.0,
    ]


def _judged_only() -> list:
    # In a call of their own: ir_measures' pytrec_eval provider puts NumRet and NumQ into
    # whichever pytrec_eval invocation comes first, a judged-only one included (then NumRet
    # counts judged docs only), and the order is that of a Python set.
    return [irm.P(judged_only=True) @ 10, irm.AP(judged_only=True), irm.nDCG(judged_only=True) @ 10,
            irm.RR(judged_only=True), irm.Rprec(judged_only=True), irm.SetP(judged_only=True),
            irm.Success(judged_only=True) @ 10, irm.R(judged_only=True) @ 100]


def _gdeval() -> list:
    return [irm.nDCG(dcg="exp-log2") @ 10, irm.nDCG(dcg="exp-log2") @ 20, irm.ERR @ 10, irm.ERR @ 20]


def _own_ties(family: str) -> list:
    # Compat apart (one test each): ir_measures' pure-Python rank-biased overlap takes most
    # of the time, as long as the others together on Robust04
    return {"compat": [irm.Compat, irm.Compat(p=0.8), irm.Compat(normalize=False)],
            "judged-rr": [irm.Judged @ 10, irm.Judged @ 100, irm.Judged, irm.RR @ 10, irm.RR(rel=2) @ 10]}[family]


def _cwl(top: int, family: str) -> list:
    # max_rel = the collection's top grade (robust04, core18: 2; DL: 3). In three calls of
    # cwl_eval (one test each): its pure-Python C/W/L vectors take ~0.1 s a measure on robust04.
    return {
        "rbp-sdcg": [irm.RBP(rel=1), irm.RBP(rel=2, p=0.95), irm.SDCG(max_rel=top) @ 10,
                     irm.SDCG(min_rel=1, max_rel=top) @ 20],
        "inst-insq-bpm": [irm.INST(max_rel=top), irm.INST(max_rel=top, T=3.0), irm.INSQ(max_rel=top),
                          irm.BPM(max_rel=top) @ 20, irm.BPM(max_rel=top, T=2.0) @ 10],
        "nerr": [irm.NERR8(max_rel=top) @ 10, irm.NERR9(max_rel=top) @ 10, irm.NERR10(max_rel=top),
                 irm.NERR11(max_rel=top, T=2.0)],
    }[family]


CWL_FAMILIES = ["rbp-sdcg", "inst-insq-bpm", "nerr"]


def _ranked_judgments(qrels: dict, run: dict) -> dict:
    """cwl_eval's input: of each query's judgments, those of the docs the run ranks (a query
    the run leaves out, or none of whose ranked docs is judged, keeps all of them, so that
    ir_measures still knows it as judged).

    cwl_eval reads a query's judgments for the gain of each ranked doc, and for the query's
    total gain and number of relevant docs (``Ranking.total_qrel_*``), which only its AP uses,
    not a measure tested here: their values come out the same
    (:func:`test_cwl_eval_reads_only_the_judgments_of_ranked_docs`). Storing the 311k robust04
    judgments in cwl_eval's dictionaries once per (rel, min_rel, max_rel), then summing them
    query by query, was 40% of the robust04 test. serpeval is given every judgment."""
    out = {}
    for qid, judged in qrels.items():
        ranked = run.get(qid, {})
        out[qid] = {doc: grade for doc, grade in judged.items() if doc in ranked} or judged
    return out


def _positive_judgments(qrels: dict, run: dict) -> dict:
    """gdeval's input: the judgments with a grade above 0 (a query with none keeps all its
    judgments, so that ir_measures still knows it as judged). gdeval.pl keeps only those as it
    reads the qrels (``if ($judgment > 0)``): its values are the same
    (:func:`test_gdeval_reads_only_the_positive_judgments`), and the 17k positive ones of
    Robust04's 311k are what ir_measures writes to a file and perl reads, twice (cutoffs 10
    and 20), instead of all."""
    return {qid: {doc: grade for doc, grade in judged.items() if grade > 0} or judged for qid, judged in qrels.items()}


Reduce = Callable[[dict, dict], dict]


def _reference(measures: list, qrels: dict, *runs: dict, reduce: Reduce | None = None) -> list[dict]:
    """ir_measures' values, run by run, from one evaluator (ir_measures' providers convert the
    qrels when the evaluator is made: once for all runs). A measure with a gain map gets an
    evaluator of its own: in one, ``nDCG`` and ``nDCG(gains=...)`` share pytrec_eval's
    evaluator, and in about one process in three (it depends on the order of a set, so on
    ``PYTHONHASHSEED``) the gain map reaches both, changing both references (seen as a flaky
    failure of this test)."""
    if reduce is not None:
        (run,) = runs
        qrels = reduce(qrels, run)
    outs: list[dict] = [collections.defaultdict(dict) for _ in runs]
    own = [m for m in measures if m.params.get("gains") is not None]
    batches = [[m for m in measures if m not in own], *([m] for m in own)]
    # cwl_eval formats NumPy vectors for its debug log at every measure and query
    # (``logger.debug("...".format(..., cvec[0:11]))``, built although the log is off): with
    # NumPy's default print options a sixth of the robust04 C/W/L tests' time. These print
    # options make those discarded strings cheap; no value depends on them.
    with np.printoptions(formatter={"all": lambda _: "."}, threshold=0, edgeitems=0):
        for batch in (b for b in batches if b):
            evaluator = irm.evaluator(batch, qrels)
            for run, out in zip(runs, outs, strict=True):
                for metric in evaluator.iter_calc(run):
                    out[metric.measure][metric.query_id] = metric.value
    return outs


def _ours(judgments: Qrels, run: dict, measures: list) -> tuple[list[str], list[list[float]], tuple[str, ...]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        result = serpeval.evaluate(judgments, run, [parse_measure(m) for m in measures])
    (one,) = result.runs
    return one.query_ids.tolist(), [one.column(j).tolist() for j in range(len(measures))], one.coverage.missing


def _untied(run: dict) -> dict:
    """The run with scores n, n-1, ..., 1 in serpeval's (trec_eval's) order: no ties left."""
    out = {}
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda d: (-d[1], [-b for b in d[0].encode()]))
        out[qid] = {doc: float(len(ranked) - i) for i, (doc, _) in enumerate(ranked)}
    return out


def _compare(measures: list, data: tuple[Qrels, dict], run: dict, tolerance: float, *,
             reduce: Reduce | None = None) -> dict[str, list[str]]:
    """Per measure, the queries whose values differ by more than ``tolerance``. ``data``: the
    qrels as read (serpeval's input: the same judgments as the dict, without converting 311k
    robust04 judgments back from it in every call) and as a dict (ir_measures' input, with
    the judgments the oracle reads, ``reduce(qrels, run)``, when given)."""
    (differing,) = _compare_each(measures, data, [run], tolerance, reduce=reduce)
    return differing


def _compare_each(measures: list, data: tuple[Qrels, dict], runs: list[dict], tolerance: float, *,
                  reduce: Reduce | None = None) -> list[dict[str, list[str]]]:
    """:func:`_compare` of each run, with one ir_measures evaluator."""
    assert measures, "nothing to compare"
    judgments, qrels = data
    references = _reference(measures, qrels, *runs, reduce=reduce)
    out = []
    for run, reference in zip(runs, references, strict=True):
        qids, columns, missing = _ours(judgments, run, measures)
        differing = {}
        for measure, column in zip(measures, columns, strict=True):
            theirs = reference[measure]
            # ir_measures gives the judged queries the run does not answer their DEFAULT, 0
            assert {q: v for q, v in theirs.items() if q not in set(qids)} == {q: 0 for q in missing}, measure
            differing[str(measure)] = [q for q, v in zip(qids, column, strict=True) if abs(v - theirs[q]) > tolerance]
            assert len(qids) > 40
        out.append(differing)
    return out


@functools.lru_cache(maxsize=4)
def _load(folder: Path, qrels_name: str, run_name: str) -> tuple[tuple[Qrels, dict], dict]:
    """The qrels (as read, and as a dict) and the run (a dict)."""
    judgments = read_qrels(folder / qrels_name)
    run = read_run(folder / "runs" / run_name).to_dict()
    return (judgments, judgments.to_dict()), run


@functools.lru_cache(maxsize=4)
def _load_untied(folder: Path, qrels_name: str, run_name: str) -> dict:
    """:func:`_untied` of :func:`_load`'s run: the same for the gdeval, cwl_eval and tie-rule
    tests of a collection, made once (on robust04 as long as serpeval's evaluation of it)."""
    return _untied(_load(folder, qrels_name, run_name)[1])


@pytest.mark.parametrize(("folder", "qrels_name", "run_name"), COLLECTIONS)
def test_trec_eval_measures_are_identical(trec: Path, folder: str, qrels_name: str, run_name: str) -> None:
    data, run = _load(trec / folder, qrels_name, run_name)
    for measures in (_trec_rule(), _judged_only()):
        assert _compare(measures, data, run, 1e-12) == {str(m): [] for m in measures}


@pytest.mark.parametrize(("folder", "qrels_name", "run_name"), COLLECTIONS)
def test_gdeval_measures_agree_to_its_printed_decimals(trec: Path, folder: str, qrels_name: str,
                                                       run_name: str) -> None:
    data, _ = _load(trec / folder, qrels_name, run_name)
    measures = _gdeval()
    assert _compare(measures, data, _load_untied(trec / folder, qrels_name, run_name), 5e-6 + 1e-12,
                    reduce=_positive_judgments) == \
        {str(m): [] for m in measures}


@pytest.mark.parametrize("family", CWL_FAMILIES)
@pytest.mark.parametrize(("folder", "qrels_name", "run_name"), COLLECTIONS)
def test_cwl_eval_measures_are_identical(trec: Path, folder: str, qrels_name: str, run_name: str,
                                         family: str) -> None:
    pytest.importorskip("cwl", reason="cwl-eval (ir_measures' cwl_eval provider) is not installed")
    data, _ = _load(trec / folder, qrels_name, run_name)
    top = max(g for grades in data[1].values() for g in grades.values())
    measures = _cwl(top, family)
    untied = _load_untied(trec / folder, qrels_name, run_name)
    assert _compare(measures, data, untied, 1e-12, reduce=_ranked_judgments) == {str(m): [] for m in measures}


def test_gdeval_reads_only_the_positive_judgments(trec: Path) -> None:
    """gdeval's values are the same from the positive judgments alone (the premise of giving it
    :func:`_positive_judgments`), on 12 dl19-passage queries (grades 0-3, most judgments 0)."""
    (_, qrels), run = _load(trec / "dl19-passage", "qrels.txt", "bm25-default.run.gz")
    qrels = {q: qrels[q] for q in sorted(qrels)[:12]}
    run = _untied({q: run[q] for q in qrels})
    reduced = _positive_judgments(qrels, run)
    assert sum(map(len, reduced.values())) < sum(map(len, qrels.values())) / 2
    measures = _gdeval()
    (full,) = _reference(measures, qrels, run)
    assert _reference(measures, reduced, run) == [full]
    # not vacuous: every measure has a value for each of the 12 queries, some of them not 0
    assert all(len(full[m]) == len(qrels) and any(full[m].values()) for m in measures), full


def test_cwl_eval_reads_only_the_judgments_of_ranked_docs(trec: Path) -> None:
    """cwl_eval's values of every measure above are the same with only the judgments of the
    ranked docs (the premise of giving it :func:`_ranked_judgments`), on 12 dl19-passage queries: grades
    0-3, relevant docs the run does not rank in most queries (a property of cwl_eval's code,
    not of the data: a few queries show it)."""
    pytest.importorskip("cwl", reason="cwl-eval (ir_measures' cwl_eval provider) is not installed")
    (_, qrels), run = _load(trec / "dl19-passage", "qrels.txt", "bm25-default.run.gz")
    qrels = {q: qrels[q] for q in sorted(qrels)[:12]}
    run = _untied({q: run[q] for q in qrels})
    reduced = _ranked_judgments(qrels, run)
    # cwl_eval's totals (of gain, of relevant docs) differ in most queries
    relevant = {q: sum(g > 0 for g in judged.values()) for q, judged in qrels.items()}
    assert sum(sum(g > 0 for g in reduced[q].values()) < n for q, n in relevant.items()) > len(qrels) / 2
    for family in CWL_FAMILIES:
        measures = _cwl(3, family)
        (full,) = _reference(measures, qrels, run)
        assert _reference(measures, reduced, run) == [full], family
        # not vacuous: every measure has a value for each of the 12 queries, some of them not 0
        assert all(len(full[m]) == len(qrels) and any(full[m].values()) for m in measures), (family, full)


@pytest.mark.parametrize(("folder", "qrels_name", "run_name"), COLLECTIONS)
@pytest.mark.parametrize("family", ["compat", "judged-rr"])
def test_own_tie_rule_measures_differ_only_on_ties(trec: Path, folder: str, qrels_name: str,
                                                   run_name: str, family: str) -> None:
    data, run = _load(trec / folder, qrels_name, run_name)
    measures = _own_ties(family)
    untied, as_is = _compare_each(measures, data, [_load_untied(trec / folder, qrels_name, run_name), run], 1e-12)
    assert untied == {str(m): [] for m in measures}
    tied = {q for q, docs in run.items() if len(set(docs.values())) < len(docs)}
    for name, queries in as_is.items():
        assert set(queries) <= tied, name


def test_compat_on_generated_shapes() -> None:
    """Compat against ir_measures' own function on many small generated queries: grades -1..3,
    relevant docs never retrieved, queries with no relevant doc, rankings shorter and longer
    than R, distinct positive scores (ir_measures' ideal order follows run scores)."""
    import random

    from ir_measures.providers.compat_provider import compatibility

    rng = random.Random(17)
    qrels: dict = {}
    run: dict = {}
    for q in range(300):
        qid = f"q{q}" if q % 3 else f"topic-{q:05d}-é"
        pool = [f"d{rng.randrange(10**rng.randint(1, 6))}" for _ in range(rng.randint(1, 30))]
        qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in pool}
        retrieved = rng.sample(pool, rng.randint(0, len(pool))) + [f"x{i}" for i in range(rng.randint(0, 10))]
        if retrieved:
            scores = rng.sample(range(1, 10**6), len(retrieved))
            run[qid] = {d: s / 7.0 for d, s in zip(retrieved, scores, strict=True)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        result = serpeval.evaluate(qrels, run, ["Compat", "Compat(p=0.5)", "Compat(p=0.99,normalize=False)"])
    (one,) = result.runs
    for j, (p, normalize) in enumerate([(0.95, True), (0.5, True), (0.99, False)]):
        for qid, value in zip(one.query_ids.tolist(), one.column(j).tolist(), strict=True):
            assert value == pytest.approx(compatibility(qrels[qid], run[qid], p, normalize), abs=1e-12), qid
    assert len(one.query_ids) > 250
