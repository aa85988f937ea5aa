"""Fractional grades on Spark (issue 29 item 2): ``spark.evaluate(grades="float")`` and
``spark.read_qrels(grades="float")`` give the local values; the default refuses 2.5 as the
local path does."""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pytest

pytest.importorskip("pyspark", reason="serpeval.spark needs pyspark (pip install '.[test]')")

from serpeval.core import errors
from serpeval.evaluation.evaluate import evaluate as local_evaluate
from serpeval.spark import evaluate, read_qrels

MEASURES = ["nDCG@10", "nDCG(gain=exp)@5", "ERR@10", "RBP", "P@5", "AP", "NCG@5"]


def tables() -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(29)
    q, d, g, rq, rd, rs = [], [], [], [], [], []
    for i in range(30):
        for j in range(12):
            q.append(f"q{i}")
            d.append(f"d{j}")
            g.append(float(rng.choice([0.0, 0.5, 1.0, 1.5, 2.75, -0.5, 3.0])))
        for j in range(15):
            rq.append(f"q{i}")
            rd.append(f"d{j}")
            rs.append(float(rng.integers(0, 6)))  # ties
    return (pa.table({"query_id": q, "doc_id": d, "relevance": g}),
            pa.table({"query_id": rq, "doc_id": rd, "score": rs}))


def test_fractional_grades_equal_the_local_path(spark, tmp_path) -> None:
    qrels, run = tables()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.MissingQueriesWarning)
        want = local_evaluate(qrels.to_pandas(), run.to_pandas(), MEASURES, grades="float")
    got = evaluate(spark.createDataFrame(qrels), spark.createDataFrame(run), MEASURES, grades="float").to_local()
    assert got.runs[0].query_ids.tolist() == want.runs[0].query_ids.tolist()
    np.testing.assert_allclose(got.runs[0].values, want.runs[0].values, rtol=0, atol=1e-12)
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{a} 0 {b} {c}\n" for a, b, c in zip(*(qrels[n].to_pylist() for n in qrels.column_names),
                                                                  strict=True)))
    from_text = evaluate(read_qrels(spark, str(path), grades="float"), spark.createDataFrame(run), MEASURES,
                         grades="float").to_local()
    np.testing.assert_allclose(from_text.runs[0].values, want.runs[0].values, rtol=0, atol=1e-12)
    with pytest.raises(errors.ParseError, match="not a whole number"):
        evaluate(spark.createDataFrame(qrels), spark.createDataFrame(run), ["P@5"]).to_local()
