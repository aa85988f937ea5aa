"""Old import paths of online/ modules that moved (issue 28): for one release they still work,
warn with a DeprecationWarning, and give the very same objects as the new paths."""

from __future__ import annotations

import importlib
import sys

import pytest

# (old module path, new module path, a public name it defines)
MOVED_MODULES = [
    ("serpeval.online.clicks.simulate", "serpeval.online.simulation.simulator", "simulate"),
    # the module's old name was the name of the function it defines: importing it made
    # ``from serpeval.online.simulation import simulate`` the module (test below)
    ("serpeval.online.simulation.simulate", "serpeval.online.simulation.simulator", "simulate"),
    ("serpeval.online.clicks.sensitivity", "serpeval.online.simulation.sensitivity", "build_tables"),
    ("serpeval.online.clicks.world", "serpeval.online.simulation.world", "make_world"),
    ("serpeval.online.logs.generate", "serpeval.online.simulation.generate", "LogGenerator"),
    ("serpeval.online.logs.effects", "serpeval.stats.effects", "compare_means"),
    ("serpeval.online.logs.srm", "serpeval.stats.srm", "srm_check"),
    ("serpeval.online.logs.sequential", "serpeval.stats.sequential", "always_valid"),
    ("serpeval.online.logs.analysis", "serpeval.online.experiments.analysis", "analyze_ab"),
    ("serpeval.online.logs.calibration", "serpeval.online.experiments.calibration", "rejection_rates"),
    (
        "serpeval.online.logs.interleaving_analysis",
        "serpeval.online.experiments.interleaving_analysis",
        "analyze_interleaving_logs",
    ),
    (
        "serpeval.online.logs.interleaving_over_time",
        "serpeval.online.experiments.interleaving_over_time",
        "preference_over_time",
    ),
    ("serpeval.online.logs.monitor", "serpeval.online.experiments.monitor", "monitor_ab"),
    ("serpeval.online.logs.plan", "serpeval.online.experiments.plan", "plan_ab"),
    ("serpeval.online.logs.results", "serpeval.online.experiments.results", "ABResults"),
    ("serpeval.online.logs.segments", "serpeval.online.experiments.segments", "analyze_ab_segments"),
    ("serpeval.online.logs.triggered", "serpeval.online.experiments.triggered", "analyze_ab_triggered"),
]

# (old package, name, new package)
MOVED_NAMES = [
    ("serpeval.online.logs", "generate_logs", "serpeval.online.simulation"),
    ("serpeval.online.logs", "LogGenerator", "serpeval.online.simulation"),
    ("serpeval.online.logs", "analyze_ab", "serpeval.online.experiments"),
    ("serpeval.online.logs", "analyze_interleaving_triggered", "serpeval.online.experiments"),
    ("serpeval.online.logs", "ABResults", "serpeval.online.experiments"),
    ("serpeval.online.logs", "srm_check", "serpeval.stats.srm"),
    ("serpeval.online.logs", "always_valid", "serpeval.stats.sequential"),
]


@pytest.mark.parametrize(("old", "new", "name"), MOVED_MODULES)
def test_old_module_path_warns_and_is_the_new_module(
    old: str, new: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = importlib.import_module(new)
    monkeypatch.delitem(sys.modules, old, raising=False)  # import it afresh, so it warns
    parent, _, child = old.rpartition(".")
    package = importlib.import_module(parent)
    # the import binds the package's attribute to the module: restored (or removed) afterwards
    monkeypatch.setattr(package, child, None, raising=False)
    monkeypatch.delattr(package, child)
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


def test_online_ab_serves_every_name_from_its_new_home() -> None:
    import serpeval.online.ab as ab
    import serpeval.online.experiments as experiments
    import serpeval.online.logs as logs
    import serpeval.online.simulation as simulation

    assert ab.analyze_ab is experiments.analyze_ab
    assert ab.plan_ab is experiments.plan_ab
    assert ab.LogSchema is logs.LogSchema
    assert ab.generate_logs is simulation.generate_logs
    # the per-segment analyses too (the module says it is the one public import; they were missing)
    assert ab.analyze_ab_segments is experiments.analyze_ab_segments
    assert ab.analyze_interleaving_segments is experiments.analyze_interleaving_segments
    for name in ab.__all__:
        assert getattr(ab, name) is not None


def test_the_simulate_function_is_not_shadowed_by_its_module() -> None:
    """``from serpeval.online.simulation import SimulationOptions, simulate`` (the docs' order)
    gave the module: loading SimulationOptions imported the module named ``simulate``, which
    Python binds on the package, so the lazy index never served the function. The module is
    ``simulator`` now; in a fresh interpreter, whatever is imported first."""
    import subprocess

    script = ("import types\n"
              "import serpeval.online.simulation.simulator\n"
              "from serpeval.online.simulation import SimulationOptions, simulate\n"
              "from serpeval.online import simulate as top\n"
              "assert not isinstance(simulate, types.ModuleType), simulate\n"
              "assert simulate is top is serpeval.online.simulation.simulator.simulate\n"
              "print(simulate.__name__, SimulationOptions.__name__)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "simulate SimulationOptions\n"), done.stderr
