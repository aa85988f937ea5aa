"""The settings of the Spark sessions serpeval starts itself (``evaluate --backend spark``,
the A/B analysis on Spark), and the Java check that runs before one starts.

Pure Python (no pyspark import): the one place where :mod:`serpeval.spark` and
:mod:`serpeval.online.logs` get their session options, so both start Spark the same way.

- **Java first.** :func:`java_problem` finds ``$JAVA_HOME/bin/java`` or ``java`` on PATH and
  reads its major version (Spark 4 needs 17 or later) *before* a JVM is launched, so a
  missing Java is one clear line, not a py4j traceback.
- **Quiet.** log4j2 logs errors only (:data:`LOG4J2_PROPERTIES`, passed as
  ``-Dlog4j2.configurationFile``), and the console progress bar (``[Stage 9: ...]``) is off:
  serpeval reports its own progress.
- **The running interpreter for workers.** ``spark.pyspark.python`` and ``PYSPARK_PYTHON``
  (read by PySpark when the context starts) are ``sys.executable``, so Python workers import
  the same serpeval even from a virtual environment that is not activated. A
  ``PYSPARK_PYTHON`` the user set is kept. On a session the user built,
  :func:`use_running_python` (called by :func:`serpeval.spark.evaluate`) does the same for
  local mode, applies a ``spark.pyspark.python`` that PySpark recorded but ignored, and warns
  where it cannot choose (a cluster with no Python chosen, Spark Connect).
- **Local mode sized to the data.** ``spark.sql.shuffle.partitions`` (serpeval's query
  buckets) is :func:`shuffle_partitions` of the input size instead of Spark's 200: each
  partition costs a task and an Arrow round trip to a Python worker, which dominated small
  inputs (200 near-empty tasks); no UI, no network lookups (``spark.driver.host`` is
  localhost).
- **No start-up noise.** :func:`get_or_create_quietly` starts the session with the JVM's
  one start-up warning (Java's note on Spark's incubator vector module) filtered out of
  stderr.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "JAVA_INSTALL",
    "JVM_NOISE",
    "LOG4J2_PROPERTIES",
    "get_or_create_quietly",
    "java_problem",
    "local_options",
    "pandas_advisory_ignored",
    "set_worker_python",
    "shuffle_partitions",
    "use_running_python",
]

#: The command that installs a suitable Java on Debian and Ubuntu.
JAVA_INSTALL = "apt-get install -y openjdk-17-jre-headless"
#: Spark 4's minimum Java version.
JAVA_MIN = 17
#: log4j2 configuration of the sessions serpeval starts: errors only, on stderr.
LOG4J2_PROPERTIES = Path(__file__).with_name("spark-log4j2.properties")
#: The interpreter PySpark's workers run when neither ``PYSPARK_PYTHON`` nor
#: ``spark.pyspark.python`` is set (``SparkContext.pythonExec``'s default).
PYSPARK_DEFAULT_PYTHON = "python3"
#: Input bytes per shuffle partition in local mode (a partition is one Python worker call).
BYTES_PER_PARTITION = 32 * 2**20


def java_executable() -> str | None:
    """``$JAVA_HOME/bin/java`` when JAVA_HOME is set (as Spark's launcher does), else
    ``java`` on PATH; None when neither exists."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        return str(candidate) if candidate.is_file() else None
    return shutil.which("java")


def java_problem() -> str | None:
    """None when a Java >= 17 is found; otherwise one sentence saying what is wrong and the
    command that fixes it (Debian/Ubuntu). Runs ``java -version`` (about 0.1 s)."""
    java = java_executable()
    fix = f"Spark needs Java {JAVA_MIN} or later: install it (Debian/Ubuntu: {JAVA_INSTALL}) or set JAVA_HOME."
    if java is None:
        where = f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java" if os.environ.get("JAVA_HOME") else \
            "no java on PATH and JAVA_HOME is not set"
        return f"Java not found ({where}). {fix}"
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{java} -version failed ({exc}). {fix}"
    version = java_major_version(out.stderr + out.stdout)
    if out.returncode != 0 or version is None:
        return f"{java} -version failed (exit {out.returncode}). {fix}"
    if version < JAVA_MIN:
        return f"{java} is Java {version}. {fix}"
    return None


def java_major_version(text: str) -> int | None:
    """The major version in ``java -version``'s output: ``"17.0.15"`` -> 17, ``"1.8.0_392"``
    -> 8; None when there is none."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def shuffle_partitions(input_bytes: int | None, cores: int | None = None) -> int:
    """Shuffle partitions for local mode: one per :data:`BYTES_PER_PARTITION` of input,
    at least 1 and at most ``2 * cores`` (capped at Spark's default 200); ``2 * cores``
    when the size is unknown (object storage). 50 queries (a 300 KB file) -> 1."""
    cores = cores or os.cpu_count() or 2
    most = min(200, 2 * cores)
    if input_bytes is None:
        return most
    return max(1, min(most, -(-input_bytes // BYTES_PER_PARTITION)))


def local_options(partitions: int) -> dict[str, str]:
    """The options of a local session serpeval starts (see the module docstring)."""
    return {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(partitions),
        "spark.default.parallelism": str(partitions),
        "spark.sql.adaptive.coalescePartitions.initialPartitionNum": str(partitions),
        "spark.driver.host": "localhost",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J2_PROPERTIES.as_uri()}",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }


def set_worker_python() -> None:
    """Make PySpark start its Python workers with the running interpreter (``PYSPARK_PYTHON``,
    read when the SparkContext starts), unless the user chose one."""
    if sys.executable:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def use_running_python(context: Any) -> None:
    """Make the Python workers of an already running SparkContext start the running
    interpreter, as :func:`set_worker_python` does for the sessions serpeval starts.

    PySpark fixes the workers' interpreter when the context starts (``sc.pythonExec``:
    ``$PYSPARK_PYTHON``, else ``python3`` from PATH, which from a virtual environment that
    is not activated is the system's Python, without pyarrow or serpeval); every Python
    UDF created later carries it. So, with ``context`` a SparkContext:

    - nothing chosen (``$PYSPARK_PYTHON`` and ``spark.pyspark.python`` unset, ``pythonExec``
      still PySpark's default) and a local master (``local``, ``local[n]``,
      ``local-cluster``): ``pythonExec`` becomes ``sys.executable``;
    - ``$PYSPARK_PYTHON`` chosen (or ``pythonExec`` set by hand): kept, silently;
    - ``spark.pyspark.python`` in the context's conf, ``$PYSPARK_PYTHON`` unset and
      ``pythonExec`` still the default: ``pythonExec`` becomes the conf's interpreter, silently.
      Spark documents that setting as the Python of driver and executors, but only
      spark-submit turns it into ``$PYSPARK_PYTHON``; a session built in Python (a
      notebook's ``.config("spark.pyspark.python", ...)``, or a later context in a JVM whose
      first session had it, where it lives on as a system property) only records it, and
      PySpark's context ignores it, so without this its workers run ``python3``;
    - nothing chosen on a cluster master: kept (the driver's interpreter path means nothing
      on the executors), with a :class:`~serpeval.core.errors.SerpevalWarning` saying so;
    - ``context`` None (Spark Connect: the client has no SparkContext): a warning that the
      server's workers decide.
    """
    from serpeval.core.errors import SerpevalWarning

    fix = ("set PYSPARK_PYTHON (or spark.pyspark.python with spark-submit) to an interpreter that has "
           "serpeval and pyarrow installed")
    if context is None:
        warnings.warn(f"serpeval cannot choose the Python of the Spark workers on Spark Connect: the server starts "
                      f"them; if they fail to import serpeval or pyarrow, {fix} on the server.",
                      SerpevalWarning, stacklevel=3)
        return
    if os.environ.get("PYSPARK_PYTHON") or context.pythonExec != PYSPARK_DEFAULT_PYTHON:
        return
    configured = context.getConf().get("spark.pyspark.python", None)
    if configured:
        context.pythonExec = configured
        return
    if not sys.executable:
        return
    master = str(context.master)
    if master.startswith("local"):
        context.pythonExec = sys.executable
        return
    warnings.warn(f"serpeval cannot choose the Python of the Spark workers on master {master!r}: PYSPARK_PYTHON and "
                  f"spark.pyspark.python are unset, so the executors run {PYSPARK_DEFAULT_PYTHON!r} from their "
                  f"PATH; if it lacks serpeval or pyarrow the job fails: {fix}.", SerpevalWarning, stacklevel=3)


#: PySpark 4.3's FutureWarning, raised whenever an Arrow or pandas UDF is created (or Arrow
#: data collected) while pandas >= 3 is installed, whether or not pandas is used.
PANDAS_ADVISORY = r"PySpark does not yet fully support pandas >= 3\.0\.0"


@contextlib.contextmanager
def pandas_advisory_ignored() -> Iterator[None]:
    """Drop :data:`PANDAS_ADVISORY` inside the block (every other warning is shown as
    before). serpeval's Spark path exchanges Arrow tables only (``applyInArrow``,
    ``toArrow``), never pandas, so PySpark's advice to downgrade pandas does not apply to it."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=PANDAS_ADVISORY, category=FutureWarning)
        yield


#: What the JVM says on stderr at start-up that carries no information for a serpeval user:
#: Spark 4's launcher always adds ``--add-modules=jdk.incubator.vector``, and Java then prints
#: this line whatever the log level (no JVM flag turns it off).
JVM_NOISE = (b"WARNING: Using incubator modules: jdk.incubator.vector",)


def get_or_create_quietly(builder: Any) -> Any:
    """``builder.getOrCreate()`` with the JVM's start-up noise (:data:`JVM_NOISE`) dropped from
    stderr; every other line the JVM writes, then or later, still reaches stderr.

    The JVM inherits file descriptor 2 when it is launched, so for the launch fd 2 is pointed
    at a pipe; a daemon thread, started first, forwards the pipe's lines to the stderr of the
    moment of the launch, minus the noise, for the life of the process. A forwarding error
    (stderr closed) drops lines but keeps draining the pipe, so the JVM can never block on a
    full pipe.
    """

    sys.stderr.flush()
    read_end, write_end = os.pipe()
    real_stderr = os.dup(2)
    threading.Thread(target=_forward_stderr, args=(read_end, real_stderr), name="serpeval-jvm-stderr",
                     daemon=True).start()  # before the launch: the JVM must never wait on a full pipe
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        return builder.getOrCreate()
    finally:
        sys.stderr.flush()
        os.dup2(real_stderr, 2)


def _forward_stderr(read_end: int, target: int) -> None:
    """Copy lines from ``read_end`` to ``target`` until the pipe closes, minus :data:`JVM_NOISE`."""
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        for line in iter(pipe.readline, b""):
            if line.rstrip(b"\r\n") in JVM_NOISE:
                continue
            with contextlib.suppress(OSError):  # stderr gone: keep draining so the JVM never blocks
                os.write(target, line)
