"""The Python API on Spark starts its workers with the running interpreter, as the CLI does.

The README's example (``sp.evaluate(spark.read..., ...)`` on a session the user built) used
to fail from a virtual environment that was not activated: PySpark starts workers with
``$PYSPARK_PYTHON`` or else the first ``python3`` on PATH, which is then the system's,
without pyarrow or serpeval. Here the driver is the venv's interpreter called by its path,
with a clean environment whose PATH holds a ``python3`` that cannot run a worker.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.core import sparkconf
from serpeval.core.errors import SerpevalWarning

#: The README's example (Parquet read by Spark) on a session the user builds, printing the means as JSON.
EXAMPLE = textwrap.dedent("""\
    import json, sys
    from pyspark.sql import SparkSession
    from serpeval import spark as sp

    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    res = sp.evaluate(spark.read.parquet(sys.argv[1]), spark.read.parquet(sys.argv[2]), ["P@1", "RR"], name="v42")
    print(json.dumps(res.means()))
    spark.stop()
    """)



def test_api_runs_workers_with_the_running_interpreter_from_an_unactivated_venv(tmp_path):
    """The example exits 0 with the hand-worked means although ``python3`` on PATH is broken.

    q1: d2 (grade 0) first, d1 (grade 1) second: P@1 = 0, RR = 1/2.
    q2: scores tie at 1.0; ties are broken by doc id descending (trec_eval's order): "é"
    (U+00E9, bytes C3 A9) sorts after "d1", so "é" (grade 2) is first: P@1 = 1, RR = 1.
    Means: P@1 = (0 + 1) / 2 = 0.5, RR = (0.5 + 1) / 2 = 0.75.
    """
    pytest.importorskip("pyspark", reason="serpeval.spark needs pyspark (pip install '.[test]')")
    java = sparkconf.java_executable()
    if java is None:
        pytest.skip("Spark needs Java (17) and none was found on PATH or in JAVA_HOME")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\necho 'not the driver interpreter' >&2\nexit 3\n")
    (fake / "python3").chmod(0o755)
    path = os.pathsep.join([str(fake), str(Path(java).resolve().parent), "/usr/bin", "/bin"])
    pq.write_table(pa.table({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d1", "d2", "é", "d1"],
                             "relevance": [1, 0, 2, 1]}), tmp_path / "qrels.parquet")
    pq.write_table(pa.table({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d2", "d1", "é", "d1"],
                             "score": [2.0, 1.0, 1.0, 1.0]}), tmp_path / "run.parquet")
    env = {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    for name in ("JAVA_HOME", "SPARK_SUBMIT_OPTS"):  # where Java is; the tests' JVM options (tests/conftest.py)
        if os.environ.get(name):
            env[name] = os.environ[name]
    done = subprocess.run([sys.executable, "-W", "error::serpeval.core.errors.SerpevalWarning", "-c", EXAMPLE,
                           str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    means = json.loads(done.stdout.strip().splitlines()[-1])
    assert means == pytest.approx({"P@1": 0.5, "RR": 0.75}, abs=1e-12)


def context(python_exec: str, master: str = "local[2]", conf: dict[str, str] | None = None) -> SimpleNamespace:
    """A stand-in for a SparkContext: what :func:`sparkconf.use_running_python` reads."""
    settings = conf or {}
    return SimpleNamespace(pythonExec=python_exec, master=master,
                           getConf=lambda: SimpleNamespace(get=lambda key, default=None: settings.get(key, default)))


def test_local_context_with_the_default_python_gets_the_running_interpreter(monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    sc = context("python3")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sparkconf.use_running_python(sc)
    assert sc.pythonExec == sys.executable


def test_a_python_the_user_chose_is_kept(monkeypatch):
    """``PYSPARK_PYTHON`` or ``spark.pyspark.python`` set by the user: kept, silently."""
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python3")
    sc = context("/opt/py/bin/python3")
    sparkconf.use_running_python(sc)
    assert sc.pythonExec == "/opt/py/bin/python3"
    monkeypatch.delenv("PYSPARK_PYTHON")
    sc = context("python3", conf={"spark.pyspark.python": "python3"})
    sparkconf.use_running_python(sc)
    assert sc.pythonExec == "python3"


def test_a_cluster_context_with_the_default_python_is_warned_about(monkeypatch):
    """On a cluster the driver's interpreter path means nothing to the executors: serpeval
    cannot choose the workers' Python there, and says so."""
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    sc = context("python3", master="yarn")
    with pytest.warns(SerpevalWarning, match=r"PYSPARK_PYTHON.*python3"):
        sparkconf.use_running_python(sc)
    assert sc.pythonExec == "python3"


def test_a_session_without_a_context_is_warned_about():
    """Spark Connect: no SparkContext on the client, so the workers' Python is the server's."""
    with pytest.warns(SerpevalWarning, match="Spark Connect"):
        sparkconf.use_running_python(None)


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs /bin/sh")
def test_cli_session_and_api_share_one_rule():
    """The CLI's session builder and the API use the same function (one place per decision)."""
    import inspect

    pytest.importorskip("pyspark")
    from serpeval.cli import spark_backend as cli
    from serpeval.spark import evaluate

    assert "use_running_python" in inspect.getsource(evaluate)
    assert "set_worker_python" in inspect.getsource(cli.session)
