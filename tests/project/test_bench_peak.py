"""The benchmarks' peak-memory figures are the measured program's own, not their parent's.

Linux keeps a process's pre-``exec`` memory high-water mark in ``ru_maxrss``: a program
spawned straight from a large process reports at least that process's peak. The bench
(``bench/bench_production.py``) measures through ``bench/peak.py``; here the parent holds
500 MB while it measures small children, and each reported peak is checked against the
child's own ``VmHWM`` (from ``/proc/self/status``, read by the child just before it exits),
an independent reading of the same high-water mark.
"""

from __future__ import annotations

import importlib.util
import resource
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists() or sys.platform != "linux",
                                reason="VmHWM and the pre-exec ru_maxrss rule are Linux's")

#: A child that touches ``argv[1]`` MB, then prints its own VmHWM (kB) as its last line.
CHILD = """\
import sys
block = bytearray(int(sys.argv[1]) * 2**20)
block[::4096] = b"x" * len(block[::4096])
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
print(int(hwm.split()[1]))
"""


def _bench_module(name: str) -> ModuleType:
    """``bench/NAME.py`` imported by path (bench/ is scripts, not a package)."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def large_parent():
    """500 MB held (and touched) by this process while the children run."""
    held = np.ones(500 * 2**20 // 8)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 >= 500
    yield held
    del held


@pytest.mark.parametrize("child_mb", [0, 120])
def test_production_bench_reports_the_childs_own_peak(large_parent, child_mb):
    """bench_production's measurement of a child holding ``child_mb`` MB: the child's own
    VmHWM (within 2 MB: the launcher's ~10 MB floor is below both), never the parent's
    500 MB; with the old direct ``wait4`` both children reported >= 500 MB."""
    production = _bench_module("bench_production")
    done = production.spawn([sys.executable, "-c", CHILD, str(child_mb)], 60)
    own_kb = int(done.out.strip().splitlines()[-1])
    assert done.peak < 250, f"{done.peak:.0f} MB reported for a {child_mb} MB child of a 500 MB parent"
    assert done.peak == pytest.approx(own_kb / 1024, abs=2.0)
    assert done.peak >= child_mb


def test_peak_spawn_stops_a_program_past_its_timeout():
    """A program past its timeout is killed with its launcher (one session), reported stopped."""
    peak = _bench_module("peak")
    done = peak.spawn([sys.executable, "-c", "import time; time.sleep(30)"], 0.5)
    assert done.stopped
    assert done.wall < 10


def test_peak_spawn_reports_a_failing_program():
    """A non-zero exit is raised with the program's stderr (check=True) or returned."""
    peak = _bench_module("peak")
    argv = [sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"]
    with pytest.raises(RuntimeError, match="exit 3:\nboom"):
        peak.spawn(argv, 30)
    assert peak.spawn(argv, 30, check=False).returncode == 3
