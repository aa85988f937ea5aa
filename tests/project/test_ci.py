"""What CI runs (.ci/run -> scripts/test.sh): the pinned environment, the doctests, both cores,
Hypothesis's derandomized profile, coverage with a floor; and the run with the latest allowed
versions of the extras (scripts/test-latest.sh)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from tests.conftest import hypothesis_profile

ROOT = Path(__file__).resolve().parents[2]
TEST_SH = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")


def test_the_ci_profile_is_selected_where_ci_is_set() -> None:
    assert hypothesis_profile({}) == "dev"
    assert hypothesis_profile({"CI": "true"}) == "ci"
    assert hypothesis_profile({"CI": "1"}) == "ci"
    assert hypothesis_profile({"CI": "false"}) == "dev"
    assert hypothesis_profile({"CI": "0"}) == "dev"
    assert hypothesis_profile({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}) == "dev"  # explicit wins
    assert re.search(r"^export HYPOTHESIS_PROFILE=\$\{HYPOTHESIS_PROFILE:-ci\}$", TEST_SH, re.M)


def test_scripts_test_sh_runs_the_pinned_suite_on_both_cores_with_coverage_and_the_doctests() -> None:
    # the docs extra: tests/project/test_docs_site.py builds the site
    assert re.search(r"pip install .*-e '\.\[test,docs\]' -c constraints/test\.txt", TEST_SH)
    assert re.search(r"pytest --doctest-modules src/serpeval", TEST_SH)
    # the bytecode the tests' child processes read where PYTHONDONTWRITEBYTECODE is set
    assert re.search(r"^python3 -m compileall -q src/serpeval$", TEST_SH, re.M)
    run = TEST_SH.strip().splitlines()[-1]
    assert run.startswith("exec python3 -m pytest")
    assert "parallel[@]" in run
    assert "coverage[@]" in run
    assert re.search(r"^coverage=\(--cov --cov-report=term\)$", TEST_SH, re.M)
    assert re.search(r"parallel=\(-n \"\$workers\"\)", TEST_SH)


def test_coverage_has_a_floor_and_the_plugins_are_pinned() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["coverage"]["run"]["source_pkgs"] == ["serpeval"]
    assert pyproject["tool"]["coverage"]["report"]["fail_under"] >= 80
    test_extra = " ".join(pyproject["project"]["optional-dependencies"]["test"])
    pins = (ROOT / "constraints" / "test.txt").read_text(encoding="utf-8")
    for plugin in ("pytest-xdist", "pytest-cov"):
        assert plugin in test_extra
        assert re.search(rf"^{plugin}==\S+$", pins, re.M), plugin


def test_the_latest_allowed_versions_run_unpinned_and_report() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    latest = (ROOT / "scripts" / "test-latest.sh").read_text(encoding="utf-8")
    assert "scripts/test-latest.sh" in ci
    install = next(line for line in latest.splitlines() if "pip install" in line and "-e '." in line)
    assert "--upgrade" in install
    assert "constraints/test.txt" not in install      # as a user would: the newest each bound allows
    assert "newer than constraints" in latest  # what changed is reported


def test_coverage_traces_through_sys_monitoring_on_python_3_12() -> None:
    # sys.monitoring is the cheap tracer for line coverage; with branch coverage, coverage falls
    # back to its C tracer before Python 3.14, and the saving is gone
    assert re.search(r"sys\.exit\(sys\.version_info < \(3, 12\)\)'; then\n"
                     r"\s+export COVERAGE_CORE=\$\{COVERAGE_CORE:-sysmon\}", TEST_SH)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["coverage"]["run"]["branch"] is False
    assert pyproject["tool"]["mypy"]["python_version"] == "3.11"  # the suite may run on 3.12; 3.11's API is checked


CI_RUN = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def suite_python(path: Path) -> str:
    """What .ci/run's ``suite_python`` prints with ``path`` on PATH, beside only the tools it
    uses (no Python of the machine's)."""
    function = re.search(r"^suite_python\(\) \{\n.*?^\}\n", CI_RUN, re.M | re.S)
    assert function is not None
    tools = path.parent / "tools"
    tools.mkdir(exist_ok=True)
    for tool in ("grep", "sort", "tail"):
        found = shutil.which(tool)
        assert found is not None
        (tools / tool).unlink(missing_ok=True)
        (tools / tool).symlink_to(found)
    done = subprocess.run(["/bin/bash", "-c", f"set -euo pipefail\n{function.group(0)}suite_python"],
                          env={"PATH": f"{path}{os.pathsep}{tools}"}, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{text}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_the_suite_runs_on_python_3_12_where_the_machine_has_one(tmp_path: Path) -> None:
    assert suite_python(tmp_path / "empty") == "python3"
    bin_ = tmp_path / "bin"
    # pyenv's shim of a version not selected fails (exit 127); the newest 3.12 pyenv has is taken
    shim = executable(bin_ / "python3.12", "exit 127")
    root = tmp_path / "pyenv"
    executable(bin_ / "pyenv", f'[ "$1" = root ] && echo {root} && exit 0\n'
                                "printf '3.11.7\\n3.12.10\\n3.12.9\\n3.13.0\\n3.12.1\\n'")
    for version in ("3.12.1", "3.12.9", "3.12.10", "3.13.0"):
        executable(root / "versions" / version / "bin" / "python3", "exit 0")
    assert suite_python(bin_) == str(root / "versions" / "3.12.10" / "bin" / "python3")
    # pyenv's newest 3.12 broken: python3
    (root / "versions" / "3.12.10" / "bin" / "python3").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    assert suite_python(bin_) == "python3"
    # a working python3.12 on PATH comes first
    executable(shim, "exit 0")
    assert suite_python(bin_) == str(shim)


def test_the_latest_run_goes_beside_the_lowest_and_the_suite_comes_last() -> None:
    lines = [line.strip() for line in CI_RUN.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    latest = lines.index('scripts/test-latest.sh -q || status=$?')
    lowest = lines.index("scripts/test-lowest.sh -q || lowest=$?")
    assert ') >"$latest_log" 2>&1 &' in lines[latest:lowest]  # in the background
    static = lines.index("SERPEVAL_STATIC_ONLY=1 scripts/test.sh || static=$?")
    shown = lines.index('cat "$latest_log"')
    assert latest < lowest < static < lines.index('wait "$latest_pid" || true') < shown
    # a failed lowest run or static check still shows the latest run's report
    assert shown < lines.index('exit "$lowest"') < lines.index('exit "$static"')
    assert lines[-1] == "scripts/test.sh -q"


def test_the_static_only_run_stops_after_the_checks_and_before_any_test() -> None:
    """SERPEVAL_STATIC_ONLY=1 (what .ci/run does beside the latest-versions step): the install,
    ruff, lint-imports and mypy, then nothing: no doctest, no suite."""
    stop = TEST_SH.index('if [ "${SERPEVAL_STATIC_ONLY:-0}" = 1 ]; then\n    exit 0\nfi')
    for step in ("pip install --quiet -e '.[test,docs]' -c constraints/test.txt", "ruff check", "lint-imports",
                 "python3 -m mypy"):
        assert TEST_SH.index(step) < stop, step
    assert stop < TEST_SH.index("--doctest-modules") < TEST_SH.index("exec python3 -m pytest")
