"""serpeval.core.options.resolve: keywords onto an options object, conflicts refused (issue 28 item 3)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from serpeval.core.errors import OptionError
from serpeval.core.options import check_rng, field_names, resolve, set_field


@dataclass(frozen=True)
class Opts:
    name: str = "holm"
    n: int = 1

    def __post_init__(self) -> None:
        set_field(self, "name", self.name.lower())   # canonical, as the real objects store it


def test_keywords_build_the_object() -> None:
    assert resolve(Opts, None, {"n": 3}, "f") == Opts(n=3)
    assert resolve(Opts, None, {}, "f") == Opts()
    assert field_names(Opts) == ("name", "n")


def test_an_object_is_used_as_is() -> None:
    given = Opts(n=5)
    assert resolve(Opts, given, {}, "f") is given


def test_a_keyword_equal_to_the_object_after_validation_is_accepted() -> None:
    given = Opts(name="BH")
    assert resolve(Opts, given, {"name": "bh"}, "f") is given
    assert resolve(Opts, given, {"name": "Bh"}, "f") is given


def test_a_conflicting_keyword_is_a_type_error_naming_both_values() -> None:
    with pytest.raises(TypeError, match=r"^f\(\): n=2 conflicts with Opts.n=5; give each option in one place "
                                        r"\(dataclasses.replace\(options, n=...\)\).$"):
        resolve(Opts, Opts(n=5), {"n": 2}, "f")


def test_unknown_and_unread_keywords_are_type_errors() -> None:
    with pytest.raises(TypeError, match=r"^f\(\) got an unexpected keyword argument 'x'; its options \(Opts\) "
                                        r"are: n, name.$"):
        resolve(Opts, None, {"x": 1}, "f")
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'name'; its options \(Opts\) are: n.$"):
        resolve(Opts, None, {"name": "a"}, "f", allowed=("n",))


def test_an_object_of_another_class_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^f\(\) takes its options as a Opts; got dict.$"):
        resolve(Opts, {"n": 1}, {}, "f")  # type: ignore[arg-type]


def test_renamed_keyword() -> None:
    got = resolve(Opts, None, {"one": "X"}, "f", renamed={"one": ("name", str.lower)})
    assert got == Opts(name="x")
    with pytest.raises(TypeError, match=r"one='y' conflicts with Opts.name='x'"):
        resolve(Opts, got, {"one": "y"}, "f", renamed={"one": ("name", str.lower)})


def test_check_rng() -> None:
    import numpy as np

    for ok in (None, 0, 7, np.int64(3), np.random.default_rng(1)):
        check_rng(ok)
    for bad in (-1, True, 1.5, "7"):
        with pytest.raises(OptionError, match=r"^rng must be an int seed >= 0"):
            check_rng(bad)
