"""Commands under an address-space limit (``ulimit -v``, ``prlimit --as``): whatever the limit,
each ends, in seconds, with its output (exit 0) or the documented out-of-memory line (exit 2),
never an internal error (exit 70), a traceback, OpenBLAS's own exit, or a spin at 100% CPU
inside ``import scipy.stats`` (scipy's OpenBLAS retries a failed mapping forever).

The limits sweep the start-up: below numpy, numpy's and pyarrow's loads, and the late load of
scipy's BLAS module. Each process runs under a timeout: a hang fails the test rather than
stalling the suite. See :mod:`serpeval.cli.memory`.
"""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest
from tests.faults.helpers import Inputs, Outcome, assert_one_error, run_process, serpeval_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")

MiB = 2**20

#: Limits (MiB) across the start-up of a command on a 2-core machine (where they fell, before
#: the fix: 50-80 a numpy traceback, 150 and 320 exit 70, 410-430 a spin in scipy's OpenBLAS).
LIMITS = [50, 150, 320, 400, 410, 420, 430, 450, 480, 620, 700]


def _argv(name: str, inputs: Inputs, logs: dict) -> list[str]:
    q, r, o = str(inputs.qrels), str(inputs.run), str(inputs.other)
    return {
        "compare": ["compare", q, r, o, "--resamples", "100"],
        "report": ["report", q, r, o, "--resamples", "100", "-o", "/dev/null"],
        "ab": ["ab", str(logs["ab"]), "-m", "ctr"],
        "interleaving-report": ["interleaving-report", str(logs["interleaving"]), "--resamples", "50"],
    }[name]


@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("name", ["compare", "report", "ab", "interleaving-report"])
def test_a_low_address_space_limit_ends_cleanly(name, limit, inputs, logs) -> None:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit * MiB, resource.RLIM_INFINITY))

    try:
        outcome = run_process(_argv(name, inputs, logs), preexec=cap, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"serpeval {name} under a {limit} MiB limit hung (60 s)")
    if outcome.status == 0:
        assert "Traceback" not in outcome.err, outcome.err
        return
    line = assert_one_error(outcome, f"serpeval {name}: error:", status=2)
    assert "out of memory" in line.lower(), line  # a reader may name its file first (DuckDB's words)


def test_blas_threads_fit_the_limit(monkeypatch) -> None:
    """OPENBLAS_NUM_THREADS: left alone without a limit or when the user set it; one thread
    under a low limit; an eighth of the limit at 80 MiB a thread, capped by the cores."""
    from serpeval.cli import memory

    monkeypatch.setattr(memory.os, "cpu_count", lambda: 64)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delitem(sys.modules, "numpy", raising=False)  # as at start-up, before numpy loads
    assert memory.fit_blas_threads(None) is None
    assert "OPENBLAS_NUM_THREADS" not in memory.os.environ
    assert memory.fit_blas_threads(650_000_000) == 1  # 650 MB / 8 = 81 MB: one 80 MiB thread
    assert memory.os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    assert memory.fit_blas_threads(8 * 2**30) == 12  # 1 GiB / 80 MiB = 12.8
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    assert memory.fit_blas_threads(2**40) is None  # room for every core
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert memory.fit_blas_threads(650_000_000) == 3  # the user's choice stands


def test_scipy_special_gets_the_room_of_scipys_blas(monkeypatch) -> None:
    """scipy.special's ``_ufuncs`` links scipy's OpenBLAS (the paired t-test loads it without
    scipy.stats): refused like ``scipy.linalg._fblas`` when the limit leaves too little room;
    once either is loaded (the library mapped), the other is not checked again."""
    from serpeval.cli import memory
    from serpeval.core.errors import OutOfMemoryError

    monkeypatch.setattr(memory, "address_space_used", lambda: 400 * MiB)
    for name in memory._SCIPY_BLAS:
        monkeypatch.delitem(sys.modules, name, raising=False)   # as at start-up
    for name in memory._SCIPY_BLAS:
        with pytest.raises(OutOfMemoryError, match="loading scipy needs about 128 MiB"):
            memory.ImportHeadroom(450 * MiB, 1).find_spec(name)
        assert memory.ImportHeadroom(600 * MiB, 1).find_spec(name) is None
    monkeypatch.setitem(sys.modules, "scipy.linalg._fblas", sys)   # loaded: the library is mapped
    assert memory.ImportHeadroom(450 * MiB, 1).find_spec("scipy.special._ufuncs") is None


#: Limits (MiB) across the start-up of trec_eval (before the fix, the ``trec_eval`` program: 50-100
#: OpenBLAS's "giving up" (exit 1), 150-200 a pyarrow ImportError traceback; then, 190-204 pyarrow's
#: own failures: jemalloc's line on stderr, a std::bad_alloc abort).
TREC_EVAL_LIMITS = [50, 100, 150, 190, 200, 210, 230, 260, 300]


def _trec_eval(entry: str, inputs: Inputs, limit: int) -> Outcome:
    """``trec_eval QRELS RUN`` as the console script runs it (``from serpeval.cli.cmd_trec_eval
    import main``), or as ``python -m serpeval trec_eval``, under an address-space limit."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit * MiB, resource.RLIM_INFINITY))

    args = [str(inputs.qrels), str(inputs.run)]
    if entry == "serpeval trec_eval":
        return run_process(["trec_eval", *args], preexec=cap, timeout=60)
    script = "import sys; from serpeval.cli.cmd_trec_eval import main; sys.argv[0] = 'trec_eval'; main()"
    done = subprocess.run([sys.executable, "-c", script, *args], stdin=subprocess.DEVNULL, capture_output=True,
                          preexec_fn=cap, timeout=60, env=serpeval_env(), check=False)
    return Outcome(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


@pytest.mark.parametrize("limit", TREC_EVAL_LIMITS)
@pytest.mark.parametrize("entry", ["trec_eval", "serpeval trec_eval"])
def test_trec_eval_under_a_low_address_space_limit_ends_cleanly(entry, limit, inputs) -> None:
    """Its output (exit 0), or trec_eval's one line ``trec_eval: out of memory ...`` and exit 2
    (README, "Drop-in trec_eval": 2 for out of memory), never OpenBLAS's exit or a traceback."""
    try:
        outcome = _trec_eval(entry, inputs, limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{entry} under a {limit} MiB limit hung (60 s)")
    if outcome.status == 0:
        assert "Traceback" not in outcome.err, outcome.err
        assert "P_5" in outcome.out, outcome.out
        return
    line = assert_one_error(outcome, "trec_eval: out of memory", status=2)
    assert line.startswith("trec_eval: "), line


def test_a_c_extension_failing_without_an_exception_under_a_limit_is_out_of_memory(monkeypatch) -> None:
    """Under ``ulimit -v`` a C extension sometimes fails an allocation by returning NULL without
    raising (CPython: SystemError "error return without exception set"), seen for ``ab`` at
    450 MiB in 2 of 4 CI runs: that is the address space running out, said as such; without a
    limit it stays an internal error to report."""
    from serpeval.cli import failures, memory

    exc = SystemError("<built-in method execute of duckdb.DuckDBPyConnection> returned NULL without "
                      "exception set")
    monkeypatch.setattr(memory, "address_space_limit", lambda: 450 * MiB)
    line, status = failures.describe(exc)
    assert status == 2
    assert line.startswith("out of memory (a library failed to allocate under the address-space limit).")
    # another SystemError under the limit, and this one without a limit: internal errors
    line, status = failures.describe(SystemError("some other failure"))
    assert (status, line.split(":")[0]) == (failures.EXIT_INTERNAL, "internal error"), line
    monkeypatch.setattr(memory, "address_space_limit", lambda: None)
    line, status = failures.describe(exc)
    assert (status, line.split(":")[:2]) == (failures.EXIT_INTERNAL, ["internal error", " SystemError"]), line
