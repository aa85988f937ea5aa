"""``evaluate --backend spark`` fails early and starts quietly: bad measures, options and inputs
are refused before a JVM starts; Java is checked with a clear message; a session serpeval
starts prints no log4j or stage-progress lines and runs its Python workers with the running
interpreter; serpeval.online's session removes its warehouse folder at exit; the API on a
session the user built runs its workers with the running interpreter too. The fresh-session
checks observe one new process (one JVM start, the costly part) between them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyspark", reason="serpeval.spark needs pyspark (pip install '.[test]')")

from serpeval.cli import main
from serpeval.cli import spark_backend as spark_cli
from serpeval.core import sparkconf

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n")
    return str(tmp_path / "qrels.txt"), str(tmp_path / "a.run")


@pytest.fixture
def no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting (or finding) a Spark session, or checking Java, fails the test."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a Spark session was requested before the inputs were checked")

    monkeypatch.setattr(spark_cli, "session", refuse)
    monkeypatch.setattr(sparkconf, "java_problem", refuse)


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["-m", "nDCG@10,APP"], "Unknown measure 'APP' in 'APP'. Did you mean 'AP' or 'psP' or 'MAP'?"),
        (["-m", "P@x"], "P@x"),
        (["-m", "nDCG(gain=bogus)@10"], "must be one of linear, exp"),
        (["-m", "AP", "--ties", "rank"], "--ties rank reads the rank column of TREC run files on the local "
                                         "backend only; drop --backend spark, or use another --ties."),
    ],
)
def test_bad_measures_and_options_are_refused_before_spark(
    files: tuple[str, str], no_session: None, capsys: pytest.CaptureFixture[str], extra: list[str], error: str
) -> None:
    assert main(["evaluate", "--backend", "spark", *files, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("serpeval evaluate: error: ")
    assert error in err
    assert err.count("\n") == 1


def test_missing_unreadable_and_json_inputs_are_refused_before_spark(
    files: tuple[str, str], no_session: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, run = files
    missing = str(tmp_path / "nope.run")
    assert main(["evaluate", "--backend", "spark", qrels, run, missing]) == 2
    assert capsys.readouterr().err == f"serpeval evaluate: error: {missing}: no such file. Check the path.\n"
    (tmp_path / "run.json").write_text('{"q1": {"d1": 1.0}}')
    assert main(["evaluate", "--backend", "spark", qrels, str(tmp_path / "run.json")]) == 2
    assert "JSON is read by the local backend only" in capsys.readouterr().err
    if os.geteuid() != 0:  # root reads anything
        locked = tmp_path / "locked.run"
        locked.write_text("q1 Q0 d1 1 1.0 a\n")
        locked.chmod(0)
        assert main(["evaluate", "--backend", "spark", qrels, str(locked)]) == 2
        assert "permission denied" in capsys.readouterr().err


def test_input_sizes_decide_the_local_partitions(files: tuple[str, str], tmp_path: Path) -> None:
    import argparse

    args = argparse.Namespace(missing="skip", depth=None)
    qrels, run = files
    size = spark_cli.check_inputs([qrels, run], ["AP"], args)
    assert size == Path(qrels).stat().st_size + Path(run).stat().st_size  # 20 + 34 bytes
    assert spark_cli.check_inputs([qrels, "s3a://bucket/run.parquet"], ["AP"], args) is None
    # 1 partition per 32 MiB, at most 2 * cores (and 200); 2 * cores when the size is unknown
    assert sparkconf.shuffle_partitions(54, cores=8) == 1
    assert sparkconf.shuffle_partitions(100 * 2**20, cores=8) == 4  # ceil(100 / 32)
    assert sparkconf.shuffle_partitions(10 * 2**30, cores=8) == 16
    assert sparkconf.shuffle_partitions(None, cores=8) == 16
    assert sparkconf.shuffle_partitions(None, cores=256) == 200


def test_java_is_checked_with_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    problem = sparkconf.java_problem()
    assert problem is not None
    assert f"JAVA_HOME={tmp_path} has no bin/java" in problem
    assert "apt-get install -y openjdk-17-jre-headless" in problem
    (tmp_path / "bin").mkdir()
    java = tmp_path / "bin" / "java"
    java.write_text('#!/bin/sh\necho \'openjdk version "11.0.22" 2024-01-16\' >&2\n')
    java.chmod(0o755)
    assert sparkconf.java_problem() == (
        f"{java} is Java 11. Spark needs Java 17 or later: install it (Debian/Ubuntu: "
        "apt-get install -y openjdk-17-jre-headless) or set JAVA_HOME."
    )
    java.write_text('#!/bin/sh\necho \'openjdk version "21.0.1" 2023-10-17\' >&2\n')
    assert sparkconf.java_problem() is None
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert sparkconf.java_problem() == (
        "Java not found (no java on PATH and JAVA_HOME is not set). Spark needs Java 17 or later: "
        "install it (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless) or set JAVA_HOME."
    )
    assert sparkconf.java_major_version('java version "1.8.0_392"') == 8
    assert sparkconf.java_major_version('openjdk version "17.0.15" 2025-04-15') == 17
    assert sparkconf.java_major_version('openjdk version "21" 2023-09-19') == 21
    assert sparkconf.java_major_version("no version here") is None


#: What the fresh process runs, in one JVM (its start is the costly part):
#:
#: 1. the command line's Spark evaluation (its own new session, so a new JVM with serpeval's
#:    settings);
#: 2. with that session stopped, serpeval.online's own session
#:    (:func:`serpeval.online.logs.sources.spark_session`, a new SparkContext in the same JVM),
#:    whose warehouse folder it prints;
#: 3. with that one stopped too and ``PYSPARK_PYTHON`` (which the sessions serpeval starts set,
#:    :func:`serpeval.core.sparkconf.set_worker_python`) removed again, the README's API example
#:    twice, each on a session the user builds (a new SparkContext, whose workers' interpreter
#:    is PySpark's default ``python3``) with a SerpevalWarning an error: first with
#:    ``spark.pyspark.python`` still in its conf (the first session's options live on in the JVM
#:    as system properties, as a user's own ``.config("spark.pyspark.python", ...)`` would be
#:    recorded), then with it cleared from the JVM, so that nothing chose the workers' Python,
#:    as in a new process. Each prints one JSON line: the context's interpreter and conf before
#:    ``sp.evaluate`` (the premise) and the means.
FRESH = textwrap.dedent("""\
    import json, os, sys, warnings
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    from serpeval.cli import main
    qrels, run = sys.argv[1:3]
    status = main(sys.argv[3:])
    sys.stdout.flush()
    if status != 0:
        sys.exit(status)
    SparkSession.getActiveSession().stop()
    from serpeval.online.logs.sources import spark_session
    session = spark_session()
    print(session.conf.get("spark.sql.warehouse.dir"))
    session.stop()
    os.environ.pop("PYSPARK_PYTHON", None)
    from serpeval import spark as sp
    from serpeval.core.errors import SerpevalWarning
    warnings.simplefilter("error", SerpevalWarning)
    for conf_cleared in (False, True):
        if conf_cleared:
            for key in ("spark.pyspark.python", "spark.pyspark.driver.python"):
                SparkContext._jvm.System.clearProperty(key)
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.sql.shuffle.partitions", "2").getOrCreate())
        premise = {"python": spark.sparkContext.pythonExec,
                   "conf": spark.sparkContext.getConf().get("spark.pyspark.python", None)}
        res = sp.evaluate(spark.read.parquet(qrels), spark.read.parquet(run), ["P@1", "RR"], name="v42")
        print(json.dumps({**premise, "means": res.means()}))
        spark.stop()
    """)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """One new process, as a user would start it, observed by the tests below (one
    JVM start instead of one per test): the virtual environment not
    activated (its bin/ not on PATH, no ``PYSPARK_PYTHON``), a ``python3`` first on PATH that
    cannot run a Spark worker, and ``TMPDIR`` an empty folder. It runs ``serpeval evaluate
    --backend spark`` on a small collection, starts serpeval.online's session, then runs the
    README's API example on two sessions of its own (see :data:`FRESH`).

    Attributes: ``done`` (the finished process), ``args`` (the evaluate arguments),
    ``temp`` (its TMPDIR), ``env``, ``table`` (what the command line printed), ``warehouse``,
    ``api`` (what the API example printed on the user's sessions: with
    ``spark.pyspark.python`` in the conf, then with nothing chosen).
    """
    if sparkconf.java_problem() is not None:
        pytest.skip("Spark needs Java 17+ and none was found")
    folder = tmp_path_factory.mktemp("fresh")
    (folder / "qrels.txt").write_text("".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(20) for d in range(5)))
    (folder / "a.run").write_text("".join(f"q{q} Q0 d{d} {d} {10 - d} a\n" for q in range(20) for d in range(8)))
    parquet = (str(folder / "qrels.parquet"), str(folder / "run.parquet"))
    write_api_example_inputs(*parquet)
    fake = folder / "bin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\necho 'not the driver interpreter' >&2\nexit 3\n")
    (fake / "python3").chmod(0o755)
    temp = folder / "tmp"
    temp.mkdir()
    java = sparkconf.java_executable()
    assert java is not None
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "VIRTUAL_ENV", "PYSPARK_DRIVER_PYTHON", "COLUMNS")}
    env["PATH"] = os.pathsep.join([str(fake), "/usr/bin", "/bin", str(Path(java).parent)])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["TMPDIR"] = str(temp)
    args = [str(folder / "qrels.txt"), str(folder / "a.run"), "-m", "P@5,AP", "-f", "tsv"]
    done = subprocess.run([sys.executable, "-c", FRESH, *parquet, "evaluate", "--backend", "spark", *args],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    *table, warehouse, conf_chosen, none_chosen = done.stdout.splitlines(keepends=True)
    return SimpleNamespace(done=done, args=args, temp=temp, env=env, table="".join(table), warehouse=warehouse.strip(),
                           api=[json.loads(conf_chosen), json.loads(none_chosen)])


def write_api_example_inputs(qrels: str, run: str) -> None:
    """The API example's judgments and run, as Parquet (hand-worked means in test_worker_python.py)."""
    pq.write_table(pa.table({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d1", "d2", "é", "d1"],
                             "relevance": [1, 0, 2, 1]}), qrels)
    pq.write_table(pa.table({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d2", "d1", "é", "d1"],
                             "score": [2.0, 1.0, 1.0, 1.0]}), run)


def test_a_fresh_session_prints_the_local_table(fresh: SimpleNamespace, capsys: pytest.CaptureFixture[str]) -> None:
    """The Python workers ran (the table is there) although the ``python3`` on PATH exits 3:
    they are this interpreter; and the numbers are the local backend's."""
    assert main(["evaluate", *fresh.args]) == 0
    local = capsys.readouterr().out
    assert "AP" in local
    assert fresh.table == local
    assert shutil.which("python3", path=fresh.env["PATH"]) != sys.executable  # the venv is not on PATH


def test_a_fresh_session_is_quiet(fresh: SimpleNamespace) -> None:
    """stderr has no log4j, stage-progress or JVM start-up lines (from either session)."""
    noise = [line for line in fresh.done.stderr.splitlines()
             if "[Stage" in line or "log4j" in line or " WARN " in line or " INFO " in line
             or "log level" in line or "WARNING: Using incubator modules" in line]
    assert noise == [], fresh.done.stderr
    assert "not the driver interpreter" not in fresh.done.stderr


def test_the_online_session_leaves_no_folder_in_the_temp_directory(fresh: SimpleNamespace) -> None:
    """serpeval.online's session keeps its warehouse in a temporary folder, removed at exit."""
    assert str(fresh.temp) in fresh.warehouse  # the folder was made where TMPDIR says...
    assert "serpeval-spark-" in fresh.warehouse
    assert not [p.name for p in fresh.temp.iterdir() if p.name.startswith("serpeval-spark-")]  # ...and removed


def test_api_runs_workers_with_the_running_interpreter_from_an_unactivated_venv(fresh: SimpleNamespace) -> None:
    """The README's API example (``sp.evaluate`` on Parquet read by a session the user built)
    gives the hand-worked means although ``python3`` on PATH exits 3 and the user's sessions
    started with PySpark's default worker interpreter, ``python3``: ``sp.evaluate`` made the
    workers this interpreter, the one ``spark.pyspark.python`` named in the first session and,
    with nothing chosen, the running one in the second (without it the workers fail and the
    process exits non-zero).

    q1: d2 (grade 0) first, d1 (grade 1) second: P@1 = 0, RR = 1/2.
    q2: scores tie at 1.0; ties are broken by doc id descending (trec_eval's order): "é"
    (U+00E9, bytes C3 A9) sorts after "d1", so "é" (grade 2) is first: P@1 = 1, RR = 1.
    Means: P@1 = (0 + 1) / 2 = 0.5, RR = (0.5 + 1) / 2 = 0.75.
    """
    conf_chosen, none_chosen = fresh.api
    # the premises: PySpark's default interpreter, first with the conf naming this one, then nothing chosen
    assert conf_chosen["python"] == none_chosen["python"] == sparkconf.PYSPARK_DEFAULT_PYTHON
    assert conf_chosen["conf"] == sys.executable
    assert none_chosen["conf"] is None
    for printed in (conf_chosen, none_chosen):
        assert printed["means"] == pytest.approx({"P@1": 0.5, "RR": 0.75}, abs=1e-12)


def test_the_jvm_start_up_warning_is_dropped_and_other_lines_kept(capfd: pytest.CaptureFixture[str]) -> None:
    """get_or_create_quietly: a child launched by getOrCreate (as the JVM is) inherits fd 2; its
    incubator-module warning is dropped, its other lines (errors) still reach stderr, in order."""
    import threading

    class Builder:
        def getOrCreate(self) -> str:  # pyspark's name
            script = ("import os; os.write(2, b'before\\n'); "
                      "os.write(2, b'WARNING: Using incubator modules: jdk.incubator.vector\\n'); "
                      "os.write(2, b'ERROR real problem\\n')")
            subprocess.run([sys.executable, "-c", script], check=True)
            return "session"

    assert sparkconf.get_or_create_quietly(Builder()) == "session"
    for thread in threading.enumerate():
        if thread.name == "serpeval-jvm-stderr":
            thread.join(timeout=30)  # the child has exited: the pipe is at its end
    assert capfd.readouterr().err == "before\nERROR real problem\n"


def test_progress_is_reported_step_by_step(spark: Any, files: tuple[str, str]) -> None:
    import argparse

    qrels, run = files
    args = argparse.Namespace(qrels=qrels, runs=[run, run], missing="skip", depth=None, judged_only=False,
                              spark_master=None)
    calls: list[tuple[int, int]] = []
    _, runs, results = spark_cli.evaluate_files(args, ["AP"], lambda done, total: calls.append((done, total)))
    # the session, the qrels, two runs, the evaluation: 5 steps
    assert calls == [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    assert len({r.name for r in runs}) == 2  # the same file twice gets two names
    assert results.means("a")["AP"] == pytest.approx(1.0)  # the one relevant doc d1 is ranked first
