"""A pool from real runs (TREC DL 2020 documents): simulated interleaving of bm25 and
bm25+RM3, and a perturbed candidate estimated within its interval of the exact truth."""

from __future__ import annotations

import pytest
from tests.conftest import TREC, need

from serpeval.online.counterfactual import counterfactual
from serpeval.online.simulation.counterfactual import perturbed, pool_from_runs, simulate_log, true_value
from serpeval.report.counterfactual import counterfactual_text


@pytest.fixture(scope="module")
def pool():
    folder = need(TREC / "dl20-doc")
    p = pool_from_runs(folder / "qrels.txt", {"A": folder / "runs" / "d_bm25.run.gz",
                                              "B": folder / "runs" / "d_bm25rm3.run.gz"}, k=3, levels=4)
    return perturbed(p, "B", "B-swap", swaps=1, rng=1)


def test_pool_from_real_runs(pool) -> None:
    assert len(pool.queries) == 45  # the judged DL 2020 queries both runs answer
    # the runs answer 200 queries, 45 of them judged: the other 155 are counted, not silently dropped
    assert pool.skipped == {"judged but not answered by every run": 0, "answered by every run but not judged": 155}
    assert pool.grades.max() <= 3
    lists = pool.lists("A")
    assert all(len(v) == 3 for v in lists.values())


def test_estimate_on_real_runs(pool) -> None:
    log = simulate_log(pool, 20_000, "informational", user_sd=0.5, rng=2)
    res = counterfactual(log, {"B-swap": pool.lists("B-swap")}, k=2, estimators=["dr", "snips"])
    truth = true_value(pool, "B-swap", "informational", user_sd=0.5, k=2)
    for name in ("dr", "snips"):
        est = res.get("B-swap", name)
        assert est.refused is None
        assert abs(est.value - truth) < 4 * est.se, name
    csv = counterfactual_text(res, "csv")
    assert csv.splitlines()[0].startswith("candidate,estimator,value")
    assert "Every estimator" in counterfactual_text(res, "markdown")
