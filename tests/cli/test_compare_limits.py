"""Options of compare/gate that used to be accepted silently or hang (issue 27, item 15):
``--group-column`` naming no column, and resample counts that cannot finish."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.cli import main
from serpeval.cli.demo.collection import make_collection
from serpeval.comparison.compare import compare
from serpeval.comparison.gate import gate
from serpeval.core.errors import InputError, OptionError
from serpeval.io import write_trec_qrels, write_trec_run
from serpeval.stats import paired_bootstrap, randomization_test
from serpeval.stats.tukey import randomized_tukey
from serpeval.stats.validation import MAX_RESAMPLES


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("limits")
    collection = make_collection(n_queries=30)
    write_trec_qrels(collection.qrels, folder / "qrels.txt")
    write_trec_run(collection.runs["baseline"], folder / "bm25.run")
    write_trec_run(collection.runs["candidate"], folder / "dense.run")
    qids = sorted(collection.qrels.to_dict())
    (folder / "g.tsv").write_text("".join(f"{q}\t{'kurz' if i % 2 else 'längere Gruppe'}\n"
                                          for i, q in enumerate(qids)), encoding="utf-8")
    (folder / "g.jsonl").write_text("".join(json.dumps({"qid": q, "lang": "de" if i % 2 else "日本語"}) + "\n"
                                            for i, q in enumerate(qids)), encoding="utf-8")
    pq.write_table(pa.table({"query_id": qids, "lang": ["de" if i % 2 else "ja" for i in range(len(qids))],
                             "device": ["m"] * len(qids)}), folder / "g.parquet")
    return {"qrels": folder / "qrels.txt", "bm25": folder / "bm25.run", "dense": folder / "dense.run",
            "tsv": folder / "g.tsv", "jsonl": folder / "g.jsonl", "parquet": folder / "g.parquet"}


def _compare(files: dict[str, Path], *extra: str) -> list[str]:
    return ["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "AP", *extra]


def _one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(("kind", "columns"), [
    ("tsv", ["no named columns", "query_id<TAB>group"]),
    ("jsonl", ["qid", "lang"]),
    ("parquet", ["query_id", "lang", "device"]),
])
def test_a_group_column_that_is_not_there_is_refused_with_the_columns(files, kind: str, columns: list[str],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_compare(files, "--groups", str(files[kind]), "--group-column", "nosuch")) == 2
    line = _one_error(capsys.readouterr().err)
    assert line.startswith(f"serpeval compare: error: {files[kind]}")
    assert "'nosuch'" in line
    for word in columns:
        assert word in line


def test_a_group_column_that_is_there_is_read(files, capsys: pytest.CaptureFixture[str]) -> None:
    for kind in ("jsonl", "parquet"):
        assert main(_compare(files, "--groups", str(files[kind]), "--group-column", "lang", "-f", "json")) == 0
        groups = json.loads(capsys.readouterr().out)["segments"]["groups"]
        assert sorted(groups) == (["de", "日本語"] if kind == "jsonl" else ["de", "ja"])


def test_a_group_column_with_a_builtin_grouping_is_refused(files, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_compare(files, "--groups", "builtin:relevant", "--group-column", "lang")) == 2
    line = _one_error(capsys.readouterr().err)
    assert "--group-column" in line
    assert "builtin:relevant" in line
    with pytest.raises(OptionError, match="column"):
        compare(files["qrels"], [files["bm25"], files["dense"]], ["AP"], groups="builtin:relevant",
                group_column="lang")


def test_the_api_refuses_a_tsv_column_too(files) -> None:
    from serpeval.io.groups import read_groups

    with pytest.raises(InputError, match="no named columns"):
        read_groups(files["tsv"], "nosuch")


@pytest.mark.parametrize("value", ["1e20", str(MAX_RESAMPLES + 1), "99999999999999999999999"])
@pytest.mark.parametrize("command", ["compare", "gate", "report"])
def test_resample_counts_that_cannot_finish_are_refused_at_once(files, value: str, command: str,
                                                                tmp_path: Path) -> None:
    """In a separate process with a time limit: the old code accepted 1e20 and never returned.
    ``report`` refuses it where its arguments are parsed, before any file is read (its run
    here does not exist: the error is the count's, not the missing file's)."""
    argv = {"compare": _compare(files, "--test", "randomization"),
            "gate": ["gate", str(files["qrels"]), "--baseline", str(files["bm25"]), "--candidate",
                     str(files["dense"]), "--test", "bootstrap"],
            "report": ["report", str(files["qrels"]), str(files["bm25"]), str(tmp_path / "nosuch.run"),
                       "--test", "randomization", "-o", str(tmp_path / "r.html")]}[command]
    done = subprocess.run([sys.executable, "-m", "serpeval", *argv, "--resamples", value],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    line = _one_error(done.stderr)
    assert line.startswith(f"serpeval {command}: error: argument --resamples: must be at most 10,000,000")
    assert value in line


def test_the_bound_itself_is_accepted_by_the_parser() -> None:
    from serpeval.cli.common import RESAMPLES

    assert RESAMPLES(str(MAX_RESAMPLES)) == MAX_RESAMPLES
    assert RESAMPLES("1e4") == 10_000


def test_the_api_refuses_them_before_any_work(files) -> None:
    d = np.array([[0.1, -0.2, 0.3, 0.05]])
    too_many = MAX_RESAMPLES + 1
    for call in (lambda: randomization_test(d, n_permutations=too_many),
                 lambda: paired_bootstrap(d, n_resamples=too_many),
                 lambda: randomized_tukey(np.ones((3, 4)), n_permutations=too_many),
                 lambda: compare(files["qrels"], [files["bm25"], files["dense"]], ["AP"], test="randomization",
                                 n_resamples=10**20),
                 lambda: gate(files["qrels"], files["bm25"], files["dense"], ["AP"], test="bootstrap",
                              n_resamples=10**20)):
        with pytest.raises(OptionError, match="at most 10,000,000"):
            call()
