"""small_pages(): NumPy's huge pages off while evaluate() runs, the caller's setting back after,
also when calls overlap in threads."""

from __future__ import annotations

import threading

import pytest

import serpeval
from serpeval.core import pages
from serpeval.evaluation import evaluate as evaluate_module


@pytest.fixture
def switch():
    switch = pages._switch()
    if switch is None:
        pytest.skip("this NumPy has no huge-page switch")
    before = switch(True)
    yield switch
    switch(before)


def _current(switch) -> bool:
    value = switch(False)
    switch(value)
    return value


@pytest.mark.parametrize("setting", [True, False])
def test_evaluate_runs_on_small_pages_and_restores_the_setting(switch, setting: bool, monkeypatch) -> None:
    switch(setting)
    seen = []
    original = evaluate_module._evaluate

    def spy(*args, **kwargs):
        seen.append(_current(switch))
        return original(*args, **kwargs)

    monkeypatch.setattr(evaluate_module, "_evaluate", spy)
    res = serpeval.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["P@1"])
    assert res.means("run") == {"P@1": 1.0}
    assert seen == [False]
    assert _current(switch) is setting


def test_an_error_restores_the_setting_too(switch) -> None:
    with pytest.raises(ValueError, match="boom"), pages.small_pages():
        raise ValueError("boom")
    assert _current(switch) is True


def test_overlapping_blocks_in_threads_restore_the_first_setting(switch) -> None:
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with pages.small_pages():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with pages.small_pages():
        thread.start()
        assert entered.wait(10)
    assert _current(switch) is False  # the other block is still under way
    leave.set()
    thread.join(10)
    assert _current(switch) is True
