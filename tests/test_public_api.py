"""The public API: a complete __all__ without repeats, and a light import."""

from __future__ import annotations

import subprocess
import sys

import serpeval


def test_all_is_unique_and_resolves() -> None:
    # Its order is ruff's (RUF022, checked by scripts/test.sh).
    assert len(set(serpeval.__all__)) == len(serpeval.__all__)
    for name in serpeval.__all__:
        assert getattr(serpeval, name) is not None


def test_import_is_light() -> None:
    code = ("import sys, serpeval; heavy = {'numpy', 'pyarrow', 'rich', 'pandas', 'scipy', 'polars'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_evaluate_stays_the_function_after_its_module_is_imported() -> None:
    import serpeval.evaluation.evaluate

    assert callable(serpeval.evaluate)
    assert serpeval.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["AP"]).means("run") == {"AP": 1.0}
