"""serpeval.spark.evaluate(ties=...) equals the local path under every score-based tie policy
(issue 29 item 1): the policy travels in the group plan to each worker's rank()."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("pyspark", reason="serpeval.spark needs pyspark (pip install '.[test]')")

from tests.spark.test_evaluate import assert_same, frame, local

from serpeval.core import errors
from serpeval.core.errors import InvalidParameterError
from serpeval.spark import evaluate

MEASURES = ["nDCG@10", "AP", "P@5", "RR", "R@20", "Success@3", "DCG(gain=exp)@10", "Rprec", "SetP"]


@pytest.mark.parametrize("ties", ["optimistic", "pessimistic", "expected"])
def test_ties_equal_the_local_path(spark, tied, ties: str) -> None:
    qrels, run = tied
    expected = local(qrels, {"tied": run}, MEASURES, ties=ties)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.MissingQueriesWarning)
        results = evaluate(frame(spark, qrels), frame(spark, run), MEASURES, name="tied", buckets=3, ties=ties)
    assert_same(results, expected)
    assert results.settings.ties == ties
    baseline = local(qrels, {"tied": run}, MEASURES)
    assert (expected["tied"].values != baseline["tied"].values).any()  # the policy changed something


def test_unknown_policy_before_any_job(spark, tied) -> None:
    qrels, run = tied
    with pytest.raises(InvalidParameterError, match="unknown tie policy 'random'"):
        evaluate(frame(spark, qrels), frame(spark, run), ["AP"], ties="random")  # type: ignore[arg-type]


def test_rank_policy_is_one_clean_refusal_before_any_job(spark, tied, tmp_path) -> None:
    """The rank column is not kept by the Spark readers: refused up front, once (the groups
    each refused it, and the message ended with '(N more error(s) in other query groups.)')."""
    from serpeval.spark import read_run

    qrels, run = tied
    path = tmp_path / "a.run"
    path.write_text("q1 Q0 d1 1 2.0 a\n")
    for given in (frame(spark, run), read_run(spark, str(path))):
        with pytest.raises(InvalidParameterError, match=r"^ties='rank' reads the rank column of a TREC run file, "
                                                        r"which the Spark backend does not keep .*tie policy\.$"):
            evaluate(frame(spark, qrels), given, ["AP"], ties="rank")
