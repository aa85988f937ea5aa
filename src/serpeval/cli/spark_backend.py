"""``serpeval evaluate --backend spark``: read the files through Spark, evaluate there.

The command (:mod:`serpeval.cli.cmd_evaluate`) parses the arguments and renders the table;
this module only reads and evaluates, returning what the local branch returns, so both
backends print the same table and notes. It reads the command's argparse namespace, so it
lives in ``cli/`` (it was ``serpeval/spark/cli.py``): ``spark/`` knows nothing of argparse.
"""

from __future__ import annotations

import argparse
import os
import re
import warnings
from dataclasses import replace
from typing import Any

from pyspark.sql import SparkSession

from serpeval.core import sparkconf
from serpeval.core.errors import MissingQueriesWarning, OptionError, SerpevalError
from serpeval.core.progress import Progress, progress_callback
from serpeval.evaluation.evaluate import unique_names
from serpeval.io.inputs import reading_error
from serpeval.measures import parse_measures
from serpeval.measures.propensity import weight_key
from serpeval.spark.evaluate import check_options, evaluate
from serpeval.spark.io import input_format, read_qrels, read_run
from serpeval.spark.results import SparkResults

__all__ = ["check_inputs", "evaluate_files", "local_size", "session"]


def session(master: str | None = None, input_bytes: int | None = None) -> Any:
    """The active SparkSession, or a new one (``master`` or Spark's default, ``local[*]``).

    A session serpeval starts is quiet and uses the running interpreter for its Python
    workers; in local mode its shuffle partitions are sized to ``input_bytes``
    (:mod:`serpeval.core.sparkconf`). Java is checked first: a missing or old Java is a
    :class:`~serpeval.core.errors.SerpevalError` with the command that installs one.
    """

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    problem = sparkconf.java_problem()
    if problem:
        raise SerpevalError(problem)
    builder = SparkSession.builder.appName("serpeval evaluate")
    if master:
        builder = builder.master(master)
    configured = master or os.environ.get("MASTER") or "local[*]"
    options = {"spark.ui.showConsoleProgress": "false"}
    if configured.startswith("local"):
        sparkconf.set_worker_python()
        options = sparkconf.local_options(sparkconf.shuffle_partitions(input_bytes))
    for key, value in options.items():
        builder = builder.config(key, value)
    spark = sparkconf.get_or_create_quietly(builder)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def check_inputs(paths: list[str], measures: list[str], args: argparse.Namespace) -> int | None:
    """Everything that can be checked without Spark, before a JVM starts: the measure names,
    the options, each local input's existence, readability and format. Returns the local
    inputs' total size in bytes (None when one is on object storage or a glob).

    Raises:
        UnknownMeasureError, MeasureError: a measure name (as the local backend says it).
        InvalidParameterError: ``--missing`` or ``--depth``.
        OptionError: ``--ties rank``, a propensity measure or ``--propensities`` (local backend only).
        ReadError: a local input is missing or unreadable (path and cause).
        ParseError: a ``.json`` input (read by the local backend only).
    """
    parse_measures(measures)
    check_options(args.missing, args.depth, None)

    scored = [str(m) for m in parse_measures(measures) if weight_key(m) is not None]
    if scored or getattr(args, "propensities", None):
        raise OptionError(f"{scored[0] if scored else '--propensities'} works on the local backend only (the "
                          "propensities come from the whole qrels); drop --backend spark.")

    if getattr(args, "ties", "trec_eval") == "rank":
        raise OptionError("--ties rank reads the rank column of TREC run files on the local backend only; "
                          "drop --backend spark, or use another --ties.")

    total: int | None = 0
    for path in paths:
        input_format(path)
        size = local_size(path)
        total = None if size is None or total is None else total + size
    return total


def local_size(path: str) -> int | None:
    """The bytes of a local file or folder (a Parquet dataset); None for a URI with a scheme
    (``s3a://``, ``hdfs://``) or a glob, which Spark resolves. A missing or unreadable local
    path is a :class:`~serpeval.core.errors.ReadError` naming it."""

    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path) and not path.startswith("file://"):
        return None
    local = path.removeprefix("file://")
    if any(c in local for c in "*?[{"):
        return None
    try:
        if os.path.isdir(local):
            os.listdir(local)
            return sum(os.path.getsize(os.path.join(root, name))
                       for root, _, names in os.walk(local) for name in names)
        with open(local, "rb") as handle:
            handle.read(1)
        return os.path.getsize(local)
    except OSError as exc:
        raise reading_error(exc, path) from None


def evaluate_files(
    args: argparse.Namespace, measures: list[str], progress: Progress | None = None
) -> tuple[Any, list[Any], SparkResults]:
    """Read ``args.qrels`` and ``args.runs`` with Spark and evaluate them.

    Everything :func:`check_inputs` can check is checked before the session starts.
    ``progress(done, total)`` is called after each step: the session, each input read and
    checked (one Spark job per TREC file), the evaluation (``2 + len(inputs)`` steps).

    Returns the qrels and runs as :class:`~serpeval.spark.frames.SparkSource` (for the
    notes on skipped lines) and the :class:`~serpeval.spark.results.SparkResults`.
    """
    report = progress_callback(progress)
    paths = [args.qrels, *args.runs]
    total = len(paths) + 2
    size = check_inputs(paths, measures, args)
    report(0, total)
    spark = session(getattr(args, "spark_master", None), size)
    report(1, total)
    qrels = read_qrels(spark, args.qrels, grades=getattr(args, "grades", "int"))
    report(2, total)
    runs = []
    for path in args.runs:
        runs.append(read_run(spark, path))
        report(2 + len(runs), total)
    names = unique_names(run.name for run in runs)
    runs = [run if run.name == name else replace(run, name=name) for run, name in zip(runs, names, strict=True)]
    with warnings.catch_warnings():
        # The command's notes report the same counts, next to the table.
        warnings.simplefilter("ignore", MissingQueriesWarning)
        results = evaluate(qrels, {run.name: run for run in runs}, measures, missing=args.missing,
                           depth=args.depth, judged_only=args.judged_only, ties=getattr(args, "ties", "trec_eval"),
                           grades=getattr(args, "grades", "int"))
    report(total, total)
    return qrels, runs, results
