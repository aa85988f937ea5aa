"""Document ids of str or int subclasses (``numpy.str_`` from an array of ids, an ``IntEnum``)
are accepted by every method and stored as plain str/int: the same composite list as the
plain ids, with the same seed. bool, float and ``numpy.int64`` (not an int subclass) are
refused, naming the id."""

from __future__ import annotations

import enum
import json

import numpy as np
import pytest

from serpeval.core.errors import InputError
from serpeval.online.interleaving import METHODS, credit, interleave

A = ["d1", "d2", "d3", "d4"]
B = ["d2", "d5", "d1", "d6"]


@pytest.mark.parametrize("method", METHODS)
def test_numpy_str_ids_give_the_plain_ids_list(method: str) -> None:
    plain = interleave([A, B], method=method, k=4, rng=7)
    arrays = interleave([list(np.array(A)), list(np.array(B))], method=method, k=4, rng=7)
    assert arrays.docs == plain.docs
    assert all(type(d) is str for d in arrays.docs)
    json.dumps(arrays.to_dict())  # stored as plain str: serialisable
    assert credit(arrays, [0]).outcome == credit(plain, [0]).outcome


class Doc(enum.IntEnum):
    X = 1
    Y = 2
    Z = 3


def test_int_subclass_ids_are_plain_ints() -> None:
    result = interleave([[Doc.X, Doc.Y], [Doc.Z, 1]], k=3, rng=1)
    assert sorted(result.docs) == [1, 2, 3]
    assert all(type(d) is int for d in result.docs)


@pytest.mark.parametrize("bad", [True, 1.5, np.int64(3)])
def test_other_id_types_are_refused(bad) -> None:
    with pytest.raises(InputError, match=r"ranking 1: document ids must be str or int; got"):
        interleave([["a", "b"], ["c", bad]], k=2, rng=0)
