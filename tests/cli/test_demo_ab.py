"""The demo's A/B section: it runs after a plain install, leaves no folder in the temporary
directory (on success and on error), and its install hint survives rich's markup."""

from __future__ import annotations

import importlib.util
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

pytest.importorskip("ibis", reason="the A/B analysis needs ibis (a dependency: pip install .)")
pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB (a dependency: pip install .)")

from serpeval.cli.demo import ab
from serpeval.cli.demo.collection import make_collection


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory is ``tmp_path/tmp`` (TMPDIR, and tempfile's cached value reset)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert tempfile.gettempdir() == str(temp)
    return temp


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200, force_terminal=False), buffer


def test_ab_section_runs_and_leaves_no_temporary_folder(tmpdir_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ab, "USERS", 600)  # small and fast; the section's code path is the same
    seen: list[str] = []
    real = ab._analyse

    def spy(collection: Any, console: Any, state: Any, folder: str, il_folder: str) -> None:
        seen.extend([folder, il_folder])
        real(collection, console, state, folder, il_folder)
        # while the section runs, the logs are in the temporary directory
        assert sorted(p.name.rsplit("-", 1)[0] for p in tmpdir_env.iterdir()) == [
            "serpeval-demo-ab", "serpeval-demo-interleaving"]

    monkeypatch.setattr(ab, "_analyse", spy)
    console, buffer = _console()
    state: dict[str, Any] = {}
    ab.section(make_collection(n_queries=30, seed=3), console, state)
    out = buffer.getvalue()
    assert "skipped" not in out
    assert "A/B test from logs" in out
    assert "Interleaving log" in out
    assert {"ab", "ab_monitor", "interleaving_log"} <= set(state)
    assert len(seen) == 2
    assert all(Path(p).parent == tmpdir_env for p in seen)
    assert list(tmpdir_env.iterdir()) == []


def test_ab_section_removes_its_folders_on_error(tmpdir_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("analysis failed")

    monkeypatch.setattr(ab, "_analyse", fail)
    console, _ = _console()
    with pytest.raises(RuntimeError, match="analysis failed"):
        ab.section(make_collection(n_queries=10, seed=3), console, {})
    assert list(tmpdir_env.iterdir()) == []


def test_skip_hint_prints_the_exact_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from serpeval.core.errors import install_command

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "duckdb" else real(name, *a))
    console, buffer = _console()
    ab.section(make_collection(n_queries=10, seed=3), console, {})
    out = " ".join(buffer.getvalue().split())
    assert "skipped" in out
    assert "-m pip install 'serpeval[ab]'" in out  # rich did not swallow [ab] as markup
    assert install_command("ab") in out
