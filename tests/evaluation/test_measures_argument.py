"""evaluate()'s measures argument: None is the defaults (it was a TypeError, 'NoneType' object is
not iterable), an empty list is refused (it returned a result with no measure, silently), a
generator is read once."""

from __future__ import annotations

import pytest

import serpeval
from serpeval.core.errors import OptionError
from serpeval.evaluation.evaluate import DEFAULT_MEASURES

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
RUN = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"d": 1.0, "c": 0.5}}


def test_none_is_the_defaults() -> None:
    assert serpeval.evaluate(QRELS, RUN, None).means("run") == serpeval.evaluate(QRELS, RUN).means("run")
    assert list(serpeval.evaluate(QRELS, RUN, None).means("run")) == list(DEFAULT_MEASURES)


@pytest.mark.parametrize("empty", [[], (), set()])
def test_an_empty_list_is_refused(empty: object) -> None:
    with pytest.raises(OptionError, match=r"^measures is empty: name at least one"):
        serpeval.evaluate(QRELS, RUN, empty)  # type: ignore[arg-type]


def test_a_generator_is_read_once() -> None:
    # by hand: q1 ranks a (relevant) first, RR 1; q2 ranks c second, RR 1/2; mean 0.75
    res = serpeval.evaluate(QRELS, RUN, (m for m in ["RR", "P@1"]))
    assert res.means("run") == {"RR": 0.75, "P@1": 0.5}
