"""ir_measures' diversity measures: serpeval's provider against ir_measures' own (pyndeval) provider.

No real diversity qrels are in the shared data, so the collections are generated: several
subtopics per query, graded, zero and negative judgments, a query whose judgments are all 0,
unjudged and missing documents, a judged query the run does not answer, ids of mixed lengths
and Unicode. Scores are untied (pyndeval orders tied scores by doc id ascending, serpeval
descending, docs/diversity.md). ir_measures passes the subtopic in its ``iteration`` column.
Every per-query value must be bit-identical.
"""

from __future__ import annotations

import random
import warnings

import pytest

from serpeval.integrations import ir_measures_provider

irm = pytest.importorskip("ir_measures")
pytest.importorskip("pyndeval")
pd = pytest.importorskip("pandas")


def _measures() -> list:
    return [irm.alpha_nDCG @ 20, irm.alpha_nDCG(alpha=0.3) @ 5, irm.alpha_DCG @ 10, irm.ERR_IA @ 20,
            irm.nERR_IA @ 10, irm.NRBP, irm.NRBP(alpha=0.2, beta=0.8), irm.nNRBP, irm.P_IA @ 10,
            irm.P_IA(rel=2) @ 5, irm.AP_IA, irm.StRecall @ 20, irm.alpha_nDCG(rel=2) @ 20]


def collection(seed: int) -> tuple[object, object]:
    """Subtopic qrels (a DataFrame with ir_measures' ``iteration`` column) and an untied run."""
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(12):
        qid = rng.choice(["", "q", "wt09-", "ü"]) + str(q)
        n_sub = rng.choice([1, 2, 3, 5, 8])
        docs = [f"{rng.choice(['d', 'clueweb09-en0000-', '文書', 'x'])}{rng.randrange(10 ** rng.randint(1, 4))}-{i}"
                for i in range(rng.randint(1, 40))]
        none_relevant = q == 3
        for d in docs:
            for s in rng.sample(range(1, n_sub + 1), rng.randint(1, n_sub)):
                grade = 0 if none_relevant else rng.choice([0, 0, 1, 1, 2, 3, -1])
                qrels.append((qid, str(s), d, grade))
        if q == 5:
            continue  # a judged query the run does not answer: ir_measures' default, 0
        pool = docs + [f"u{i}" for i in range(rng.randint(0, 20))]
        for d in rng.sample(pool, rng.randint(1, len(pool))):
            run.append((qid, d, rng.random()))  # untied (with probability 1)
    qrels_frame = pd.DataFrame(qrels, columns=["query_id", "iteration", "doc_id", "relevance"])
    run_frame = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    return qrels_frame, run_frame


def _per_query(metrics) -> dict:
    return {(str(m.measure), m.query_id): m.value for m in metrics}


@pytest.mark.parametrize("seed", range(8))
def test_diversity_measures_equal_ir_measures_pyndeval(seed: int) -> None:
    qrels, run = collection(seed)
    assert not run.duplicated(["query_id", "score"]).any()
    pyndeval_provider = irm.providers.registry["pyndeval"]
    # One measure per call: ir_measures 0.4.3's pyndeval provider hands the run (a generator) to
    # its first pyndeval invocation only; measures needing another (rel, alpha, beta) get 0.
    theirs = {}
    for measure in _measures():
        theirs.update(_per_query(pyndeval_provider.iter_calc([measure], qrels, run)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # several subtopics per query: no single-subtopic warning
        ours = _per_query(ir_measures_provider.provider().iter_calc(_measures(), qrels, run))
    assert ours.keys() == theirs.keys()
    assert len(ours) == 12 * len(_measures())
    for key, value in theirs.items():
        if value != value:  # ndeval's nNRBP is 0/0 = nan on a query without relevant judgments
            assert key[0] == "nNRBP", key
            assert ours[key] == 0.0, key
        else:
            assert ours[key] == value, (key, ours[key], value)


def test_ir_measures_own_provider_drops_a_second_invocation() -> None:
    """Why the test above asks ir_measures one measure at a time (docs/ecosystem.md): with two
    parameter settings in one call, the second setting's values are all ir_measures' default."""
    qrels, run = collection(0)
    both = [irm.NRBP, irm.NRBP(alpha=0.2, beta=0.8)]
    together = _per_query(irm.providers.registry["pyndeval"].iter_calc(both, qrels, run))
    alone = _per_query(irm.providers.registry["pyndeval"].iter_calc(both[1:], qrels, run))
    second = {k: v for k, v in together.items() if k[0] == str(both[1])}
    assert set(second.values()) == {0.0}
    assert max(alone.values()) > 0
    ours = _per_query(ir_measures_provider.provider().iter_calc(both, qrels, run))
    assert {k: v for k, v in ours.items() if k[0] == str(both[1])} == alone


def test_judged_only_diversity_measures_fall_through() -> None:
    """serpeval's diversity measures have no per-measure judged_only (docs/ecosystem.md): the
    provider declines them, and ir_measures' pyndeval provider computes them."""
    provider = ir_measures_provider.provider()
    assert provider.supports(irm.alpha_nDCG @ 20)
    assert not provider.supports(irm.alpha_nDCG(judged_only=True) @ 20)
    assert not provider.supports(irm.AP_IA(judged_only=True))
