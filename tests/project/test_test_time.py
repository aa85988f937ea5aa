"""The closing "test time" line of a whole run (tests/conftest.py): the share of the suite's
time its slowest tests take (issue 28's target: the 40 slowest at most 10%), and the tests over
10 s that tests/conftest.py does not name."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import NAMED_LONG_TESTS, long_tests, slowest_share


def test_slowest_share_hand_worked() -> None:
    seconds = {f"t{i}": float(i) for i in range(1, 11)}  # 1 + 2 + ... + 10 = 55
    assert slowest_share(seconds, count=3) == (27.0, 55.0, pytest.approx(27 / 55))
    assert slowest_share(seconds, count=40) == (55.0, 55.0, 1.0)
    assert slowest_share({}, count=40) == (0.0, 0, 0.0)


def test_long_tests_are_split_into_named_and_not_named_slowest_first() -> None:
    seconds = {"a": 12.0, "b": 10.0, "c": 31.5, "d": 10.5, "e": 0.2}  # 10.0 is not over 10
    assert long_tests(seconds, limit=10.0, named={"c": "why", "z": "why"}) == (["c"], ["a", "d"])
    assert long_tests({}, limit=10.0, named={"c": "why"}) == ([], [])


def test_the_named_long_tests_exist() -> None:
    """Each name is a test that is still there (a renamed test would drop out of the list)."""
    root = Path(__file__).resolve().parents[2]
    for nodeid in NAMED_LONG_TESTS:
        path, name = nodeid.split("::")
        assert f"def {name}(" in (root / path).read_text(encoding="utf-8"), nodeid
