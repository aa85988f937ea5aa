"""serpeval's Spark path under every pyspark the ``spark`` extra allows (4.0.5 to 4.3).

pyspark 4.3 warns ("PySpark does not yet fully support pandas >= 3.0.0 ...", a FutureWarning)
whenever an Arrow UDF is created or Arrow data collected while pandas 3 is installed, whether
or not pandas is used; with the tests' ``filterwarnings = error`` that failed 33 Spark tests.
serpeval exchanges Arrow tables only, so it drops that one advisory around its own calls
(``sparkconf.pandas_advisory_ignored``) and shows every other warning.
``scripts/test-latest.sh`` runs these with the newest pyspark and pandas.
"""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest

from serpeval.core import sparkconf

#: pyspark 4.3.0's message (pyspark/sql/pandas/utils.py, require_minimum_pandas_version).
ADVISORY = ("PySpark does not yet fully support pandas >= 3.0.0. Some features may not work correctly. "
            "It is recommended to use pandas < 3.0.0 for now.")


def test_the_advisory_and_only_it_is_dropped():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with sparkconf.pandas_advisory_ignored():
            warnings.warn(ADVISORY, FutureWarning, stacklevel=1)
        with pytest.raises(FutureWarning, match="something else"), sparkconf.pandas_advisory_ignored():
            warnings.warn("something else", FutureWarning, stacklevel=1)
        with pytest.raises(UserWarning, match="PySpark does not yet"), sparkconf.pandas_advisory_ignored():
            warnings.warn(ADVISORY, UserWarning, stacklevel=1)  # another category: shown


def test_evaluate_and_collect_raise_no_warning_under_any_allowed_pyspark(spark):
    """``evaluate`` and ``to_local`` with every warning an error (the suite's own ignore of
    the advisory switched off): fails with pyspark 4.3 + pandas 3 unless serpeval drops it.

    q1: d2 (grade 0) ranked first, d1 (grade 1) second: RR = 1/2; q2: "é" (grade 2) first:
    RR = 1. Mean RR = 0.75.
    """
    from serpeval.spark import evaluate

    qrels = spark.createDataFrame(pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "é"],
                                            "relevance": [1, 0, 2]}))
    run = spark.createDataFrame(pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["d2", "d1", "é"],
                                          "score": [2.0, 1.0, 1.0]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", r"unclosed <socket\.socket", ResourceWarning)  # pyspark's, as in pyproject
        results = evaluate(qrels, run, ["RR"], name="v42")
        local = results.to_local()
    assert results.means() == pytest.approx({"RR": 0.75}, abs=1e-12)
    assert local.runs[0].values[:, 0].tolist() == [0.5, 1.0]
