"""Shared fixtures: where the real data lives, and Hypothesis profiles."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SERPEVAL_DATA", ROOT.parent / "shared" / "data"))
REFERENCE = DATA / "trec_eval-reference"
TREC = DATA / "trec"

settings.register_profile("dev", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])


def hypothesis_profile(environ: Mapping[str, str]) -> str:
    """The Hypothesis profile to load: ``HYPOTHESIS_PROFILE`` when set; else ``ci`` (derandomized:
    the same examples on every run) where ``CI`` is set to anything but ``0``/``false`` (CI
    services export ``CI=true``; scripts/test.sh exports ``HYPOTHESIS_PROFILE=ci``); else ``dev``."""
    if environ.get("HYPOTHESIS_PROFILE"):
        return environ["HYPOTHESIS_PROFILE"]
    return "ci" if environ.get("CI", "").strip().lower() not in ("", "0", "false", "no") else "dev"


settings.load_profile(hypothesis_profile(os.environ))


@pytest.hookimpl(trylast=True)  # after Hypothesis' own: it refuses storage access before
def pytest_sessionstart(session: pytest.Session) -> None:
    """Build Hypothesis' tables of Unicode categories and of the characters UTF-8 encodes (what
    every ``st.text()`` and ``st.characters()`` draws from), or read them from
    ``.hypothesis/unicode_data``, before any test.

    Without those files (a clean clone, CI) the first text strategy of each process builds
    them: ~1 s of CPU, 2.6 s under coverage, inside whichever test comes first (test_arrays'
    first test took 3.3 s, 0.6 s of it its own), once per pytest-xdist worker. Here the xdist
    controller builds and stores them while the workers start and collect, and they read them
    back (milliseconds); Hypothesis does the same for its local constants (at collection)."""
    import warnings

    try:
        from hypothesis.internal.charmap import charmap, intervals_from_codec
    except ImportError:  # pragma: no cover - a Hypothesis that moved them builds them lazily, as before
        return
    with warnings.catch_warnings():  # its advice not to touch storage this early, if its plugin is off
        warnings.simplefilter("ignore")
        charmap()
        intervals_from_codec("utf-8")


#: The JVM options of every Spark the tests start (the ``spark`` fixture's, and the fresh
#: sessions the tests start in child processes, which inherit the environment): Spark's launcher
#: adds ``SPARK_SUBMIT_OPTS`` to the driver's ``java`` command, silently. The tests' sessions are
#: short and their queries small, so the JVM's optimizing compiler (C2) and its parallel
#: collector cost more CPU than they save: with the client compiler only and the serial
#: collector, a session's start and first evaluation took 15 s of CPU instead of 28 s (the
#: same numbers: the compiler changes speed, not results). Nor is the bytecode of Spark's own
#: jars verified as it loads (a diagnostic option; a JVM without it ignores it): a fresh
#: session's start and first evaluation 0.7 to 1.5 s of CPU less (of ~10; medians of 3). A
#: value the user set is kept.
SPARK_TEST_JVM = ("-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:+IgnoreUnrecognizedVMOptions "
                  "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote")
os.environ.setdefault("SPARK_SUBMIT_OPTS", SPARK_TEST_JVM)


def _one_blas_thread_per_worker() -> None:
    """In a pytest-xdist worker, numpy's OpenBLAS runs matrix products on one thread.

    The workers already keep every core busy; OpenBLAS's own threads (one per core) then wait
    for a core, spinning: beside a busy worker, tests/engines/test_sweep.py's null-selection
    test (small products, 120 of them) took 3 to 5 s of wall time and 2 s of CPU instead of 0.3
    to 0.8 s and 0.3 s. Only this process is limited (threadpoolctl), not the children tests
    start (tests/faults checks the library's own choice of BLAS threads there); a value of
    ``OPENBLAS_NUM_THREADS`` the user set is kept."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    try:
        import numpy  # noqa: F401  (loads the OpenBLAS to limit)
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - without threadpoolctl, OpenBLAS's default
        return
    threadpool_limits(1, user_api="blas")


_one_blas_thread_per_worker()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("serpeval")
    group.addoption("--big", action="store_true", default=False,
                    help="differential tests (tests/differential): many more and larger generated "
                         "collections, files over Arrow's block size by their rows alone (minutes)")
    group.addoption("--differential-seed", type=int, default=20261202,
                    help="seed of the generated collections in tests/differential (fixed in CI)")


def need(path: Path) -> Path:
    """Return ``path`` or skip the test with the reason that the shared data is absent."""
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (set SERPEVAL_DATA to the data folder)")
    return path


@pytest.fixture
def reference() -> Path:
    """trec_eval's own test inputs and expected outputs."""
    return need(REFERENCE)


@pytest.fixture
def trec() -> Path:
    """Real TREC qrels and runs."""
    return need(TREC)


@pytest.fixture(scope="session")
def spark():
    """One local-mode SparkSession for the whole test run (2 cores, 4 shuffle partitions; one
    per pytest-xdist worker), with the JVM options of :data:`SPARK_TEST_JVM`. The serpeval
    code under test (``backend="spark"``, ``serpeval evaluate --backend spark``) takes this
    active session instead of starting its own.

    Skips with the reason when pyspark or Java is not installed.
    """
    import shutil
    import sys

    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install '.[test]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java (17) and none was found on PATH or in JAVA_HOME")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("serpeval-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _sigint_restored() -> Iterator[None]:
    """Ctrl-C's handler back to Python's default after each test. A handler left ignored in a
    worker (seen after in-process Spark and ab runs; a disposition of SIG_IGN is inherited
    across exec) made every child process started later deaf to SIGINT, so the tests that
    interrupt a child waited out their 60 s timeouts on that worker only."""
    yield
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see the piped layout (fixed width) unless they set COLUMNS themselves: a CI
    environment that exports COLUMNS must not change what table-parsing tests read."""
    monkeypatch.delenv("COLUMNS", raising=False)


# The differential harness's tally (tests/differential/compare.py), here rather than in
# tests/differential/conftest.py because a pytest-xdist controller collects nothing and so
# never loads that file: each worker sends its tally back, the controller adds them up,
# counts the failed harness tests from the reports it receives, and prints the summary.
_XDIST_WORKER = False


def pytest_configure(config: pytest.Config) -> None:
    global _XDIST_WORKER
    _XDIST_WORKER = hasattr(config, "workerinput")


#: Seconds each test took (setup + call + teardown), gathered where the reports arrive (the
#: xdist controller, or the only process): the closing line of a run says what share of the
#: suite's time its slowest tests take (issue 28: the 40 slowest at most 10%).
_TEST_SECONDS: dict[str, float] = {}
SLOWEST_COUNTED = 40


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _XDIST_WORKER:
        _TEST_SECONDS[report.nodeid] = _TEST_SECONDS.get(report.nodeid, 0.0) + report.duration
    if report.failed and "tests/differential/" in report.nodeid and not _XDIST_WORKER:
        from tests.differential.compare import TALLY

        TALLY.failed_tests += 1


def slowest_share(seconds: Mapping[str, float], count: int = SLOWEST_COUNTED) -> tuple[float, float, float]:
    """``(seconds of the count slowest tests, seconds of all, their share)``."""
    times = sorted(seconds.values(), reverse=True)
    total = sum(times)
    top = sum(times[:count])
    return top, total, (top / total if total else 0.0)


#: No test takes over LONG_SECONDS except these, each with why it cannot be split or made
#: shorter without dropping what it checks (the closing line names any other).
LONG_SECONDS = 10.0
NAMED_LONG_TESTS: dict[str, str] = {
    # its module fixture: a fresh process as a user starts it (a new JVM, the command line's
    # Spark session, serpeval.online's, and the README's API example on two sessions of its own)
    "tests/spark/test_early_checks.py::test_a_fresh_session_prints_the_local_table": "a fresh JVM",
    # forty A/A experiments served over the app and analysed: the false-positive bound needs forty
    "tests/serve/test_closed_loop.py::test_aa_forty_runs": "forty A/A experiments",
    # twenty server processes, each killed with SIGKILL under load while the next one starts
    "tests/serve/test_kill.py::test_kill_9_twenty_times": "twenty kill -9 cycles",
}


def long_tests(seconds: Mapping[str, float], limit: float = LONG_SECONDS,
               named: Mapping[str, str] = NAMED_LONG_TESTS) -> tuple[list[str], list[str]]:
    """The tests that took over ``limit`` seconds, slowest first: ``(named, not named)``."""
    over = sorted((nodeid for nodeid, took in seconds.items() if took > limit), key=lambda n: -seconds[n])
    return [n for n in over if n in named], [n for n in over if n not in named]


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None and "tests.differential.compare" in sys.modules:
        workeroutput["differential_tally"] = sys.modules["tests.differential.compare"].TALLY.shared()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Under -n N (--dist load), the work units are files, and every test whose node id names
    Spark is one unit:

    - one JVM starts and warms up instead of one per worker (about 38 s of CPU saved with 2
      workers, ~5 s to start a session and ~6.5 s for its first query);
    - a module-scoped fixture is computed once, not once on each worker that runs one of its
      tests (simulated logs, fitted models, a browser, a built index: ~2 s each, twice).

    (--dist loadgroup would do the first with xdist_group marks, but pytest 9.2 ignores them:
    pytest-xdist#1386; --dist loadfile would do the second only.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FilesAndSparkOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "spark" if "spark" in nodeid else nodeid.split("::", 1)[0]

    return FilesAndSparkOnOneWorker(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    tally = getattr(node, "workeroutput", {}).get("differential_tally")
    if tally:
        from tests.differential.compare import TALLY

        TALLY.merge(tally)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    tally = sys.modules.get("tests.differential.compare")
    if tally is not None and tally.TALLY.values:
        terminalreporter.write_sep("-", "differential harness")
        terminalreporter.write_line(tally.TALLY.summary())
    if len(_TEST_SECONDS) > 10 * SLOWEST_COUNTED:  # a whole run, not a few files
        top, total, share = slowest_share(_TEST_SECONDS)
        terminalreporter.write_sep("-", "test time")
        terminalreporter.write_line(f"{len(_TEST_SECONDS):,} tests took {total:,.0f} s (setup, call and teardown "
                                    f"summed over workers); the {SLOWEST_COUNTED} slowest took {top:,.0f} s "
                                    f"({share:.1%}; --durations={SLOWEST_COUNTED} lists them)")
        named, others = long_tests(_TEST_SECONDS)
        line = (f"{len(named) + len(others)} tests took over {LONG_SECONDS:.0f} s, {len(named)} of them among the "
                f"{len(NAMED_LONG_TESTS)} that tests/conftest.py names (NAMED_LONG_TESTS)")
        if others:
            line += "; not named: " + ", ".join(f"{n} ({_TEST_SECONDS[n]:.1f} s)" for n in others)
        terminalreporter.write_line(line)
