"""The docs' A/B table (docs/how-to/ab.md, from the README before issue 33) is what
``serpeval ab -f markdown`` prints on the log it describes.

The page generates the log with ``serpeval generate-logs logs/ --users 200000 --effect 0.05
--pre-days 14`` (deterministic: the generator's default seed) and shows the markdown table of
``serpeval ab logs/ --experiment ranker-v2 -m ctr -m abandonment -m clicks_at_1 -m mrr`` with
its sample-ratio line. This test runs both commands and requires every table row and the
sample-ratio line to stand in the page as printed, so the block cannot drift from the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ibis", reason="the A/B analysis needs ibis (a dependency: pip install .)")
pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB (a dependency: pip install .)")

from serpeval.cli import main

README = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "ab.md"


def test_readme_ab_table_is_what_ab_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    assert main(["generate-logs", str(logs), "--users", "200000", "--effect", "0.05", "--pre-days", "14"]) == 0
    capsys.readouterr()
    assert main(["ab", str(logs), "--experiment", "ranker-v2", "-m", "ctr", "-m", "abandonment",
                 "-m", "clicks_at_1", "-m", "mrr", "-f", "markdown"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    table = [line for line in printed if line.startswith("|")]
    srm = [line for line in printed if line.startswith("_sample ratio")]
    assert len(table) == 6, printed  # header, rule, 4 metrics
    assert len(srm) == 1, printed
    readme = README.read_text(encoding="utf-8").splitlines()
    for line in [*table, *srm]:
        assert line in readme, f"README's A/B table is out of date; ab prints: {line}"
