"""``-m ''``, ``-m ','`` and ``-m ' '`` name no measure: each command that takes ``-m`` refuses
them with one line and status 2 (issue 27, item 15); they were read as "no -m" and so as
the default measures, silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from serpeval.cli import main

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\nq2 0 d3 1\n"
RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq2 Q0 d3 1 1.0 a\nq2 Q0 d1 2 0.5 a\n"
RUN_B = "q1 Q0 d2 1 3.0 b\nq1 Q0 d1 2 2.0 b\nq2 Q0 d1 1 1.0 b\nq2 Q0 d3 2 0.5 b\n"


@pytest.mark.parametrize("value", ["", ",", " ", " , ,"])
@pytest.mark.parametrize("command", ["evaluate", "compare", "gate", "report", "agreement"])
def test_a_measure_option_naming_no_measure_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       command: str, value: str) -> None:
    qrels, a, b = tmp_path / "q.txt", tmp_path / "a.txt", tmp_path / "b.txt"
    qrels.write_text(QRELS)
    a.write_text(RUN_A)
    b.write_text(RUN_B)
    files = {"evaluate": [qrels, a], "compare": [qrels, a, b], "report": [qrels, a, b],
             "gate": [qrels, "--baseline", a, "--candidate", b],
             "agreement": [qrels, qrels, "--runs", a, b]}[command]
    status = main([command, *map(str, files), "-m", "P@1", "-m", value])
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert err.splitlines() == [f"serpeval {command}: error: -m {value!r}: no measure name; give one or more, "
                                "e.g. -m nDCG@10 -m AP or -m nDCG@10,AP (leave -m out for the defaults)."]
