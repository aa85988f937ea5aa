"""Every table command fits 80, 100 and 120 columns (``COLUMNS``) and never splits a number."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serpeval.cli.app import main
from serpeval.cli.demo.collection import make_collection
from serpeval.io.trec import write_trec_qrels, write_trec_run

# A number as printed: sign, digits with thousands commas, decimals, exponent, percent.
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?%?")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("width")
    collection = make_collection(n_queries=30, docs_per_query=30, judged_per_query=20, depth=20)
    write_trec_qrels(collection.qrels, folder / "qrels.txt")
    for name, run in collection.runs.items():
        write_trec_run(run, folder / f"{name}.run")
    assert main(["generate-logs", str(folder / "ab"), "--users", "600"]) == 0
    assert main(["generate-logs", str(folder / "il"), "--users", "600", "--interleaving"]) == 0
    assert main(["generate-logs", str(folder / "abt"), "--users", "600", "--changed-queries", "0.4"]) == 0
    assert main(["generate-logs", str(folder / "ilt"), "--users", "600", "--interleaving",
                 "--changed-queries", "0.4"]) == 0
    return folder


def commands(folder):
    qrels, runs = str(folder / "qrels.txt"), [str(folder / "baseline.run"), str(folder / "candidate.run")]
    return {
        "evaluate": ["evaluate", qrels, *runs],
        "evaluate -q": ["evaluate", qrels, *runs, "-q", "-m", "nDCG@10"],
        "compare": ["compare", qrels, *runs],
        "measures": ["measures"],
        "ab": ["ab", str(folder / "ab")],
        "ab --monitor": ["ab", str(folder / "ab"), "--monitor", "--looks", "3"],
        "ab --triggered": ["ab", str(folder / "abt"), "--triggered"],
        "interleaving-report --triggered": ["interleaving-report", str(folder / "ilt"), "--resamples", "200",
                                            "--triggered"],
        "interleaving-report": ["interleaving-report", str(folder / "il"), "--resamples", "200"],
        "interleaving-report --over-time": ["interleaving-report", str(folder / "il"), "--resamples",
                                            "200", "--over-time"],
        "simulate": ["simulate", "--generate", "0.05", "--queries", "30", "--replicates", "10",
                     "--bootstrap", "50", "--mc-impressions", "5000"],
    }


NAMES = list(commands(Path(".")))


def output(argv, columns, monkeypatch, capsys) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_table_fits_and_keeps_numbers_whole(name, inputs, monkeypatch, capsys) -> None:
    argv = commands(inputs)[name]
    wide = output(argv, 400, monkeypatch, capsys)
    wide_numbers = set(NUMBER.findall(wide))
    assert len(wide_numbers) > 5, wide  # the table and its numbers are there
    for width in (80, 100, 120):
        text = output(argv, width, monkeypatch, capsys)
        too_long = [line for line in text.splitlines() if len(line) > width]
        assert not too_long, f"{name} at {width} columns:\n" + "\n".join(too_long)
        missing = wide_numbers - set(NUMBER.findall(text))
        assert not missing, f"{name} at {width} columns lost or split {sorted(missing)}:\n{text}"


def test_split_number_is_caught(monkeypatch, capsys) -> None:
    """The check above fails on the bug it guards against: ``8.0e-14`` wrapped as ``8.0e-1`` / ``4``."""
    assert "8.0e-14" not in set(NUMBER.findall("p adj. 8.0e-1\n       4"))


def test_pipes_keep_the_fixed_layout(inputs, monkeypatch, capsys) -> None:
    """Without COLUMNS (a pipe, as under pytest), the 200-column layout of before: one table row a line."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(commands(inputs)["ab"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("│ ctr ") and "│" in line[6:] for line in lines)
    assert max(map(len, lines)) > 120
