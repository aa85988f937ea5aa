"""ranx as an oracle, run interpreted (``NUMBA_DISABLE_JIT=1``) in a child process.

ranx's metrics are numba kernels compiled on first use: with numba's cache cold (a fresh
environment, as in CI) importing ranx and compiling the kernels of the 27 names of
tests/integrations/test_ranx_parity.py took ~40 s of CPU (~3 s with the cache warm). With
``NUMBA_DISABLE_JIT=1`` numba's decorators return the functions undecorated and its typed
containers are Python lists and dicts, so the same ranx source (metric definitions, the
order it sorts tied scores in, its cutoffs and relevance levels) runs under CPython and NumPy.

Checked once by hand, ranx 0.3.21 and numba 0.68.1, on the DL20 document run of
test_ranx_parity.py, the run as it is and with its ties broken: every one of the 27 names on
every one of the 45 queries is the same, interpreted and compiled, within 4e-15 (not bit for
bit: compiled and interpreted arithmetic differ in the last bits; the comparisons' tolerance
is 1e-12), and the fractional-grades example of
tests/measures/test_fractional_grades.py gives the same float (0.38009376671593426).

A child process because numba reads ``NUMBA_DISABLE_JIT`` when a module applies its
decorators and its typed containers read it at every call: set in the test process, it would
change numba for every later test of that worker.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

_CHILD = r"""
import importlib.util, json, sys, types, warnings
import numpy as np

# ranx's package __init__s (ranx, ranx.meta) import every tool it has, compare, fuse, plot:
# matplotlib and scipy.stats, ~1.4 s of the child's ~2.8 s. Registered bare (their submodules
# found where the real ones are), only the modules ranx.evaluate needs load: its data
# structures, ranx.meta.evaluate and the metrics, the same source (ranx/__init__ also sets
# numba's threading layer, moot with the JIT off).
for name in ("ranx", "ranx.meta"):
    spec = importlib.util.find_spec(name)
    package = types.ModuleType(name)
    package.__path__, package.__spec__, package.__file__ = list(spec.submodule_search_locations), spec, spec.origin
    sys.modules[name] = package
from ranx.data_structures import Qrels, Run
from ranx.meta.evaluate import evaluate


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return np.asarray(value, dtype=np.float64).tolist()


job = json.load(sys.stdin)
out = []
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # ranx's and numba's warnings are not what is compared
    qrels = Qrels(job["qrels"])
    for run in job["runs"]:
        theirs = Run(run)
        result = evaluate(qrels, theirs, job["metrics"], return_mean=job["return_mean"], save_results_in_run=False)
        out.append({"query_ids": list(theirs.get_query_ids()), "result": plain(result)})
json.dump(out, sys.stdout)
"""


def need_ranx() -> None:
    """Skip (without importing ranx: that is the child's job) where ranx is not installed."""
    if importlib.util.find_spec("ranx") is None:
        pytest.skip("ranx is a test dependency: pip install '.[test]'")


def ranx_evaluate(qrels: dict, runs: list[dict], metrics: list[str] | str, *, return_mean: bool) -> list[dict]:
    """``ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics, return_mean=return_mean)`` for
    each run, in one child process: per run ``{"query_ids": ranx's query ids in its order,
    "result": what ranx returned}`` (NumPy arrays and floats as lists and floats; JSON carries
    grades, scores and values exactly: floats as their shortest repr)."""
    need_ranx()
    job = json.dumps({"qrels": qrels, "runs": runs, "metrics": metrics, "return_mean": return_mean})
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", _CHILD], input=job, capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert done.returncode == 0, f"ranx failed (exit {done.returncode}):\n{done.stderr}"
    out = json.loads(done.stdout)
    assert len(out) == len(runs)
    return out
