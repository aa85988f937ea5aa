"""Offline evaluation on Spark: the same measures, the same numbers, beyond one machine.

:func:`evaluate` takes Spark DataFrames (a run ``query_id, doc_id, score`` and qrels
``query_id, doc_id, relevance``), partitions them by a hash of the query id and runs the
local path's ranking and measure kernels on each partition through Arrow, so every
registered measure works unchanged and gives the local values. :func:`read_run` and
:func:`read_qrels` read TREC text, JSON lines or Parquet files (local paths or object
storage) through Spark. Needs the ``spark`` extra: ``pip install 'serpeval[spark]'``.

Examples:
    >>> from serpeval import spark as sp                                  # doctest: +SKIP
    >>> res = sp.evaluate(spark.read.parquet("s3a://lake/qrels"),         # doctest: +SKIP
    ...                   spark.read.parquet("s3a://lake/runs/bm25"), ["nDCG@10", "AP"])
    >>> res.means()                                                       # doctest: +SKIP
    {'nDCG@10': 0.4238, 'AP': 0.2531}
    >>> res.per_query.write.parquet("s3a://lake/eval/bm25")               # doctest: +SKIP

Layer: beside comparison, online and trec_eval. May import evaluation, measures, ranking, io
and core; never comparison, online, trec_eval, report or cli.
"""

from __future__ import annotations

from serpeval.core.errors import require

require("pyspark", "spark")

from serpeval.spark.evaluate import evaluate  # noqa: E402
from serpeval.spark.frames import SparkSource  # noqa: E402
from serpeval.spark.io import read_qrels, read_run  # noqa: E402
from serpeval.spark.results import SparkResults, SparkRunResult  # noqa: E402

__all__ = ["SparkResults", "SparkRunResult", "SparkSource", "evaluate", "read_qrels", "read_run"]
