"""The Python API on Spark starts its workers with the running interpreter, as the CLI does.

The README's example (``sp.evaluate(spark.read..., ...)`` on a session the user built) used
to fail from a virtual environment that was not activated: PySpark starts workers with
``$PYSPARK_PYTHON`` or else the first ``python3`` on PATH, which is then the system's,
without pyarrow or serpeval. The example itself runs in the one fresh process of
test_early_checks.py (``test_api_runs_workers_with_the_running_interpreter_from_an_unactivated_venv``:
the venv's interpreter called by its path, a PATH whose ``python3`` cannot run a worker);
here, the rule on stand-ins for every kind of context.
"""

from __future__ import annotations

import shutil
import sys
import warnings
from types import SimpleNamespace

import pytest

from serpeval.core import sparkconf
from serpeval.core.errors import SerpevalWarning


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
    """``PYSPARK_PYTHON`` set by the user, or ``pythonExec`` set by hand: kept, silently, on
    any master (a conf naming another interpreter does not override them)."""
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python3")
    for master in ("local[2]", "yarn"):
        sc = context("/opt/py/bin/python3", master=master, conf={"spark.pyspark.python": "/other/python"})
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sparkconf.use_running_python(sc)
        assert sc.pythonExec == "/opt/py/bin/python3"
    monkeypatch.delenv("PYSPARK_PYTHON")
    sc = context("/by/hand/python", conf={"spark.pyspark.python": "/other/python"})
    sparkconf.use_running_python(sc)
    assert sc.pythonExec == "/by/hand/python"


@pytest.mark.parametrize("master", ["local[2]", "yarn"])
def test_a_python_chosen_in_the_conf_only_is_applied(monkeypatch, master):
    """``spark.pyspark.python`` recorded in the conf (a builder's ``.config``) with
    ``PYSPARK_PYTHON`` unset: PySpark's context ignored it (``pythonExec`` is still
    ``python3``), so the workers would run ``python3`` from PATH; it becomes the workers'
    interpreter, on a cluster too (it is what the user chose for the executors), silently."""
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    sc = context("python3", master=master, conf={"spark.pyspark.python": "/opt/env/bin/python"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sparkconf.use_running_python(sc)
    assert sc.pythonExec == "/opt/env/bin/python"
    sc = context("python3", master=master, conf={"spark.pyspark.python": "python3"})
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
