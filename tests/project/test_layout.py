"""The tests mirror ``src/`` (issue 28 item 6): a test of ``src/serpeval/PKG/`` lives in
``tests/PKG/``; the only test files at the top of ``tests/`` test a top-level module of the
package (``tests/test_ranking.py`` and ``tests/test_ranking_ties.py`` test
``serpeval/ranking.py``) or the package's public index as a whole
(``tests/test_public_api.py``)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "serpeval"

#: Top-level test files that test the package as a whole rather than one module.
WHOLE_PACKAGE = {"test_public_api.py"}


def test_top_level_test_files_mirror_a_top_level_module() -> None:
    modules = {path.stem for path in PACKAGE.glob("*.py")}

    def mirrors(name: str) -> bool:
        return any(name == module or name.startswith(f"{module}_") for module in modules)

    stray = sorted(path.name for path in (ROOT / "tests").glob("test_*.py")
                   if path.name not in WHOLE_PACKAGE and not mirrors(path.stem.removeprefix("test_")))
    assert stray == [], f"move these into the tests/ folder of the package they test: {stray}"
    assert (ROOT / "tests" / "test_ranking.py").is_file()  # the rule is not vacuous: one top-level mirror


def test_test_folders_mirror_a_package() -> None:
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    folders = {path.name for path in (ROOT / "tests").iterdir()
               if path.is_dir() and any(path.rglob("test_*.py"))}
    extra = sorted(folders - packages - {"differential", "faults", "project"})
    assert extra == [], f"test folders that mirror no package of src/serpeval: {extra}"
