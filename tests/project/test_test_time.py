"""The closing "test time" line of a whole run (tests/conftest.py): the share of the suite's
time its slowest tests take (issue 28's target: the 40 slowest at most 10%)."""

from __future__ import annotations

import pytest
from tests.conftest import slowest_share


def test_slowest_share_hand_worked() -> None:
    seconds = {f"t{i}": float(i) for i in range(1, 11)}  # 1 + 2 + ... + 10 = 55
    assert slowest_share(seconds, count=3) == (27.0, 55.0, pytest.approx(27 / 55))
    assert slowest_share(seconds, count=40) == (55.0, 55.0, 1.0)
    assert slowest_share({}, count=40) == (0.0, 0, 0.0)
