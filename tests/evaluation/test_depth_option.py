"""``evaluate(depth=...)`` takes a positive integer and refuses anything else in one line.

Before: ``depth=2.5`` crashed with an IndexError inside the depth cut, ``depth=nan`` kept no
doc and reported NumRet = -9.2e18 (P@3 = 0), ``depth="3"`` raised a TypeError and
``depth=True`` was read as 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from serpeval import evaluate
from serpeval.core.errors import InvalidParameterError

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}}
RUN = {"q1": {"a": 1.0, "b": 0.5, "c": 0.2}}


@pytest.mark.parametrize("depth", [2.5, math.nan, math.inf, "3", True, 0, -1])
def test_a_depth_that_is_not_a_positive_integer_is_refused(depth: object) -> None:
    with pytest.raises(InvalidParameterError, match=r"^depth must be a positive number of docs \(an integer >= 1\); "
                                                    r"got "):
        evaluate(QRELS, RUN, ["P@3", "NumRet"], depth=depth)  # type: ignore[arg-type]


@pytest.mark.parametrize("depth", [2, np.int64(2)])
def test_an_integer_depth_cuts_the_ranking(depth: int) -> None:
    # the top 2 are a (grade 2) and b (0): P@3 = 1/3, AP = (1/1) / 2 relevant = 0.5, 2 retrieved
    means = evaluate(QRELS, RUN, ["P@3", "AP", "NumRet"], depth=depth).means("run")
    assert means == {"P@3": pytest.approx(1 / 3), "AP": 0.5, "NumRet": 2.0}


def test_streamed_evaluation_refuses_it_too(tmp_path) -> None:
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 0\n")
    run.write_text("q1 Q0 a 1 1.0 r\nq1 Q0 b 2 0.5 r\n")
    with pytest.raises(InvalidParameterError, match="depth must be a positive number of docs"):
        evaluate(str(qrels), str(run), ["P@3"], depth=1.5, stream=True)  # type: ignore[arg-type]
