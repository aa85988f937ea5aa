"""Fixtures of the fault suite: the command line in this process, inputs, outputs, logs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.faults.helpers import OTHER, QRELS, RUN, Inputs, Outcome, _table


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """``serpeval ARGS`` run in this process through the real entry point (fast: no start-up)."""
    from serpeval.cli import main

    def call(*args: str) -> Outcome:
        capsys.readouterr()
        try:
            status = main(list(args))
        except SystemExit as exc:  # argparse's own usage errors
            status = int(exc.code or 0)
        captured = capsys.readouterr()
        return Outcome(status, captured.out, captured.err)

    return call


@pytest.fixture
def inputs(tmp_path: Path) -> Inputs:
    import pyarrow.parquet as pq

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "qrels.txt").write_text(QRELS, encoding="utf-8")
    (folder / "bm25.run").write_text(RUN, encoding="utf-8")
    (folder / "dense.run").write_text(OTHER, encoding="utf-8")
    pq.write_table(_table(QRELS, "qrels"), folder / "qrels.parquet")
    pq.write_table(_table(RUN, "run"), folder / "bm25.parquet")
    (folder / "topics.tsv").write_text("301\tpolio vaccine\n302\tél nino\n303\tx\n", encoding="utf-8")
    return Inputs(folder, folder / "qrels.txt", folder / "bm25.run", folder / "dense.run",
                  folder / "qrels.parquet", folder / "bm25.parquet", folder / "topics.tsv")


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    """A folder for outputs; files written there beforehand hold :data:`GOOD`."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small A/B log folder and an interleaving log folder."""
    from serpeval.online.simulation.generate import write_logs

    root = tmp_path_factory.mktemp("logs")
    return {"ab": write_logs(root / "ab", 300, rng=1),
            "interleaving": write_logs(root / "il", 300, rng=1, interleaving=True, noise_b=1.0)}


