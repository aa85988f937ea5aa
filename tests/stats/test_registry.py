"""The registry of statistics: one declaration per statistic, read by comparison/ and the CLI."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import get_args

import numpy as np
import pytest
from scipy import stats as sps

from serpeval.core.errors import OptionError
from serpeval.stats import registry
from serpeval.stats.registry import CORRECTIONS, PAIRED_TESTS, Test


def test_every_entry_names_an_importable_function() -> None:
    tables = (registry.PAIRED_TESTS, registry.CORRECTIONS, registry.AGREEMENT, registry.GROUP_TESTS)
    checked = 0
    for table in tables:
        for name, spec in table.items():
            assert spec.name == name
            if spec.target is not None:
                assert callable(spec.function), name
                checked += 1
    assert checked >= 8   # the four paired tests and the four corrections from p-values


def test_names_and_aliases_are_unique_ignoring_case() -> None:
    for table in (registry.PAIRED_TESTS, registry.CORRECTIONS, registry.AGREEMENT, registry.GROUP_TESTS):
        spellings = [s.lower() for spec in table.values() for s in (spec.name, *spec.aliases)]
        assert len(spellings) == len(set(spellings))


def test_the_literal_matches_the_table() -> None:
    assert get_args(Test) == tuple(PAIRED_TESTS) == registry.TESTS


def test_comparison_and_cli_read_the_registry() -> None:
    from serpeval.cli import cmd_agreement, cmd_compare
    from serpeval.comparison.results import CORRECTION_NAMES, TEST_NAMES, TESTS

    assert TESTS == cmd_compare.TESTS == cmd_agreement.TESTS == tuple(PAIRED_TESTS)
    assert cmd_compare.CORRECTIONS == cmd_agreement.CORRECTIONS == tuple(CORRECTIONS)
    assert TEST_NAMES["wilcoxon"] == "Wilcoxon signed-rank test"
    assert CORRECTION_NAMES["bh"] == "Benjamini-Hochberg"


def test_a_new_paired_test_is_one_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test added to the table is accepted by name and alias and dispatched with its options."""
    from serpeval.comparison.paired import canonical_test, paired_test

    sign = registry.PairedTestSpec(name="t-again", aliases=("T2",), label="t again",
                                   description="the paired t-test under another name",
                                   target="serpeval.stats.paired:paired_t")
    monkeypatch.setitem(registry.PAIRED_TESTS, "t-again", sign)
    assert canonical_test("t2") == "t-again"
    x = np.array([0.5, 0.6, 0.7, 0.2])
    y = np.array([0.4, 0.4, 0.5, 0.3])
    result = paired_test("T2", x, y)
    assert result.p_value == pytest.approx(sps.ttest_rel(x, y).pvalue, rel=1e-12)


def test_resampling_tests_get_their_own_keywords() -> None:
    """randomization takes n_permutations, bootstrap n_resamples and ci: the entry says which."""
    from serpeval.comparison.paired import paired_test

    d = np.array([0.1, 0.2, 0.2, -0.05, 0.3])   # 5 queries: 2**5 = 32 sign flips, exact
    r = paired_test("fisher", d, n_resamples=1000, rng=0)
    # Exact enumeration: a flip's sum is 0.85 - 2N, N = the |d| made negative; |sum| >= 0.75
    # (the observed sum) needs N <= 0.05 (N = 0 or 0.05) or N >= 0.8 (their mirrors):
    # 4 of the 32 flips, p = 4/32 = 0.125.
    assert r.test == "randomization"
    assert r.p_value == pytest.approx(0.125)
    b = paired_test("bootstrap", d, n_resamples=500, ci="percentile", rng=0)
    assert (b.test, b.resamples) == ("bootstrap", 500)
    assert PAIRED_TESTS["randomization"].resamples == "n_permutations"
    assert dataclasses.replace(PAIRED_TESTS["t"]).interval


def test_unknown_names_list_the_choices() -> None:
    from serpeval.comparison.paired import canonical_test
    from serpeval.stats.multiplicity import canonical_correction

    with pytest.raises(OptionError, match="choose one of: t, wilcoxon, randomization, bootstrap"):
        canonical_test("z")
    with pytest.raises(OptionError, match=r"choose one of: holm, bonferroni, bh, none\."):
        canonical_correction("tukey")
    assert canonical_correction("tukey", extra=("tukey",)) == "tukey"
    assert canonical_correction("FDR_BH") == "bh"
    assert canonical_correction(None) == "none"


def test_the_registry_and_the_choices_load_without_numpy() -> None:
    """The CLI builds its choices from the registry: that must not load NumPy or SciPy."""
    code = ("import sys; import serpeval.stats.registry, serpeval.cli.cmd_agreement; "
            "print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_package_lists_every_function_of_the_registry() -> None:
    """``serpeval.stats`` exports each registry table and each function a registry entry
    names (the same object the entry loads), and nothing it cannot import."""
    import importlib

    import serpeval.stats as stats

    tables = [name for name in registry.__all__ if name.isupper() and isinstance(getattr(registry, name), dict)]
    assert len(tables) >= 9
    targets = {}
    for table in tables:
        assert getattr(stats, table) is getattr(registry, table)
        for spec in getattr(registry, table).values():
            if spec.target is not None:
                targets[spec.target.partition(":")[2]] = spec
    assert len(targets) >= 30
    # ``power`` is the module serpeval.stats.power (a function of that name would shadow it)
    assert "power" not in stats.__all__
    assert importlib.import_module("serpeval.stats.power").power is targets.pop("power").function
    missing = sorted(set(targets) - set(stats.__all__))
    assert missing == [], f"add these registry functions to serpeval/stats/__init__.py: {missing}"
    for name, spec in targets.items():
        assert getattr(stats, name) is spec.function, name
    assert set(stats.__all__) <= set(dir(stats))
    for name in stats.__all__:
        getattr(stats, name)
