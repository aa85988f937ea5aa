"""The declared dependency bounds are ones the project is tested with.

``pip install serpeval rbo`` once resolved numpy 1.26.4 beside pyarrow 26, which refuses to
import under NumPy 1 ("pyarrow requires NumPy 2.0 or newer"), and every command exited 70.
The lower bounds in pyproject.toml are now the versions ``scripts/test-lowest.sh`` installs
and tests (CI step of ``.ci/run``); the main run is pinned by ``constraints/test.txt``.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: The extras whose lower bounds scripts/test-lowest.sh installs beside the dependencies.
LOWEST_EXTRAS = ("pandas", "polars", "plot")


def _lowest_versions():
    spec = importlib.util.spec_from_file_location("_lowest_versions", ROOT / "scripts" / "lowest_versions.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _requirements(*extras: str) -> list[Requirement]:
    found = [Requirement(r) for r in PROJECT["dependencies"]]
    for extra in extras:
        found += [Requirement(r) for r in PROJECT["optional-dependencies"][extra]]
    return found


def _lower(requirement: Requirement) -> Version:
    bounds = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==")]
    assert bounds, f"{requirement} declares no lower bound"
    return max(bounds)


def test_numpy_lower_bound_admits_no_numpy_1():
    """pyarrow has no upper bound, and pyarrow's newest releases refuse NumPy 1 at import
    (reproduced: numpy 1.26.4 + pyarrow 26.0.1, ``serpeval demo`` exit 70). NumPy 2.0.0 is
    out too: its ``np.isin`` overflows on uint64 keys (``OverflowError: Python int too large
    to convert to C long`` in the duplicate check of ranking.py); 2.0.2 passes."""
    numpy = next(r for r in _requirements() if r.name == "numpy")
    assert _lower(numpy) >= Version("2.0.2")
    assert not numpy.specifier.contains("1.26.4")


def test_numpy_2_capable_lower_bounds_of_compiled_dependencies():
    """Packages built against NumPy 1 fail to import under NumPy 2 ("A module that was
    compiled using NumPy 1.x cannot be run in NumPy 2"): the lowest allowed versions must be
    NumPy-2 builds. pyarrow 16 imports but its RunEndEncodedArray.from_arrays rejects the
    reader's arrays (TypeError); pyarrow 17 aborts the interpreter at exit after an input error
    in 3 of 5 runs of ``serpeval evaluate dup.json r.txt`` ("Fatal Python error:
    PyGILState_Release", exit 134; 0 of 5 with 18), so pyarrow >= 18; scipy >= 1.13; pandas >=
    2.2.2. matplotlib before 3.10.7 calls pyparsing's ``enablePackrat``, deprecated by
    pyparsing 3.3 (a DeprecationWarning, an error under the tests' settings), so >= 3.10.7."""
    lowest = {r.name: _lower(r) for r in _requirements("pandas", "polars", "spark", "plot")}
    assert lowest["pyarrow"] >= Version("18")
    assert lowest["scipy"] >= Version("1.13")
    assert lowest["pandas"] >= Version("2.2.2")
    assert lowest["matplotlib"] >= Version("3.10.7")


def test_every_direct_dependency_has_a_lower_bound_the_lowest_job_pins():
    """scripts/lowest_versions.py pins each dependency and each tested extra's requirement to
    its declared lower bound, and refuses a requirement without one."""
    module = _lowest_versions()
    pins = module.lowest_pins(list(LOWEST_EXTRAS))
    expected = {r.name.lower(): f"{r.name}=={_lower(r)}" for r in _requirements(*LOWEST_EXTRAS)}
    got = {p.split("==")[0].lower(): p for p in pins}
    assert set(got) == set(expected)
    for name, pin in got.items():
        assert Version(pin.split("==")[1]) == Version(expected[name].split("==")[1])
    with pytest.raises(ValueError, match="declares no lower bound"):
        module.lower_bound("rich<14")
    assert module.lower_bound("ibis-framework[duckdb]>=12.0,<13") == ("ibis-framework", "12.0")


def test_lowest_versions_script_prints_pins_or_a_clear_error():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "lowest_versions.py"), "--extras", "nosuch"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("lowest_versions.py: error: pyproject.toml has no extra 'nosuch'")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "lowest_versions.py")],
                          capture_output=True, text=True, timeout=60, check=True)
    assert re.fullmatch(r"(\S+==\S+\n)+", done.stdout)


def test_constraints_pin_the_main_run_within_the_declared_ranges():
    """constraints/test.txt pins every requirement of the test extra and each dependency,
    at a version the declared specifiers allow (else scripts/test.sh could not install)."""
    pins = {}
    for line in (ROOT / "constraints" / "test.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    assert "serpeval" not in pins
    for requirement in _requirements("test", "spark", "pandas", "polars", "plot"):
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        assert name in pins, f"constraints/test.txt does not pin {requirement.name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (requirement, pins[name])


def test_ci_runs_the_pinned_suite_and_the_lowest_versions():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_sh = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "scripts/test-lowest.sh" in ci
    assert re.search(r"pip install .*-c constraints/test\.txt", test_sh)
