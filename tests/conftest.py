"""Shared fixtures: where the real data lives, and Hypothesis profiles."""

from __future__ import annotations

import os
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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


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
