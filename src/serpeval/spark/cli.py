"""``serpeval evaluate --backend spark``: read the files through Spark, evaluate there.

The command (:mod:`serpeval.cli.cmd_evaluate`) parses the arguments and renders the table;
this module only reads and evaluates, returning what the local branch returns, so both
backends print the same table and notes.
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import replace
from typing import Any

from serpeval.core.errors import MissingQueriesWarning
from serpeval.evaluation.evaluate import unique_names
from serpeval.spark.evaluate import evaluate
from serpeval.spark.io import read_qrels, read_run
from serpeval.spark.results import SparkResults

__all__ = ["evaluate_files", "session"]


def session(master: str | None = None) -> Any:
    """The active SparkSession, or a new one (``master`` or Spark's default, ``local[*]``)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName("serpeval evaluate")
    if master:
        builder = builder.master(master)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def evaluate_files(
    args: argparse.Namespace, measures: list[str]
) -> tuple[Any, list[Any], SparkResults]:
    """Read ``args.qrels`` and ``args.runs`` with Spark and evaluate them.

    Returns the qrels and runs as :class:`~serpeval.spark.frames.SparkSource` (for the
    notes on skipped lines) and the :class:`~serpeval.spark.results.SparkResults`.
    """
    spark = session(getattr(args, "spark_master", None))
    qrels = read_qrels(spark, args.qrels)
    runs = [read_run(spark, path) for path in args.runs]
    names = unique_names(run.name for run in runs)
    runs = [run if run.name == name else replace(run, name=name) for run, name in zip(runs, names, strict=True)]
    with warnings.catch_warnings():
        # The command's notes report the same counts, next to the table.
        warnings.simplefilter("ignore", MissingQueriesWarning)
        results = evaluate(qrels, {run.name: run for run in runs}, measures, missing=args.missing,
                           depth=args.depth, judged_only=args.judged_only)
    return qrels, runs, results
