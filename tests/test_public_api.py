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


def test_judgments_workflow_is_public_and_lazy() -> None:
    # The judgments functions at the top level, their result classes in serpeval.judgments; neither
    # import loads numpy, and a function stays the function after its module is imported.
    code = ("import sys, serpeval, serpeval.judgments as j; "
            "print(sorted({'numpy', 'pyarrow', 'scipy'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    import serpeval.judgments as j
    import serpeval.judgments.agreement
    import serpeval.judgments.judged
    import serpeval.judgments.pool

    for name in ("pool", "judged", "diff_runs", "agreement", "clicks_to_qrels"):
        assert callable(getattr(serpeval, name))
        assert not isinstance(getattr(serpeval, name), type(sys))
    assert sorted(j.__all__) == sorted(j._LAZY)
    for name in j.__all__:
        assert getattr(j, name) is not None
    assert serpeval.diff_runs is j.diff_runs
    diff = serpeval.diff_runs({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 2.0, "a": 1.0}}, k=2)
    assert isinstance(diff, j.RunDiff)
    assert diff.overlap.tolist() == [1.0]   # both top 2 = {a, b}
    assert isinstance(serpeval.pool([{"q": {"a": 1.0}}], depth=1), j.Pool)
