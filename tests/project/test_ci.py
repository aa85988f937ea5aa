"""What CI runs (.ci/run -> scripts/test.sh): the pinned environment, the doctests, both cores,
Hypothesis's derandomized profile, coverage with a floor; and the run with the latest allowed
versions of the extras (scripts/test-latest.sh)."""

from __future__ import annotations

import re
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
