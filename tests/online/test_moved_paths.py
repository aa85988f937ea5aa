"""Old import paths of online/ modules that moved (issue 28): for one release they still work,
warn with a DeprecationWarning, and give the very same objects as the new paths."""

from __future__ import annotations

import importlib
import sys

import pytest

# (old module path, new module path, a public name it defines)
MOVED_MODULES = [
    ("serpeval.online.clicks.simulate", "serpeval.online.simulation.simulate", "simulate"),
    ("serpeval.online.clicks.sensitivity", "serpeval.online.simulation.sensitivity", "build_tables"),
    ("serpeval.online.clicks.world", "serpeval.online.simulation.world", "make_world"),
    ("serpeval.online.logs.generate", "serpeval.online.simulation.generate", "LogGenerator"),
]

# (old package, name, new package)
MOVED_NAMES = [
    ("serpeval.online.logs", "generate_logs", "serpeval.online.simulation"),
    ("serpeval.online.logs", "LogGenerator", "serpeval.online.simulation"),
]


@pytest.mark.parametrize(("old", "new", "name"), MOVED_MODULES)
def test_old_module_path_warns_and_is_the_new_module(old: str, new: str, name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module(new)
    monkeypatch.delitem(sys.modules, old, raising=False)  # import it afresh, so it warns
    parent, _, child = old.rpartition(".")
    monkeypatch.delattr(importlib.import_module(parent), child, raising=False)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        old_module = importlib.import_module(old)
    assert old_module is module
    assert getattr(old_module, name) is getattr(module, name)


@pytest.mark.parametrize(("package", "name", "new"), MOVED_NAMES)
def test_old_package_name_warns_and_is_the_same_object(package: str, name: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        value = getattr(importlib.import_module(package), name)
    assert value is getattr(importlib.import_module(new), name)
    assert name not in importlib.import_module(package).__all__


def test_moved_names_are_not_listed_where_they_were() -> None:
    import serpeval.online.logs as logs

    assert {name for _, name, _ in MOVED_NAMES}.isdisjoint(dir(logs))
