"""Team labels that never occur in an interleaving log are an error naming the labels there.

Before, ``--teams X,Y`` on a log labelled A/B credited no click, reported "no preference"
and passed the balance checks on zero counts. The labels are counted in the engine (one
query, a handful of rows back); the counts in the message are checked against counts taken
straight from the Arrow lists.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.cli.app import main
from serpeval.core.errors import InputError, OptionError
from serpeval.online.experiments import analyze_interleaving_logs


def _label_counts(table: pa.Table) -> Counter[str]:
    return Counter(label for labels in table.column("teams").to_pylist() if labels
                   for label in labels if label is not None)


def test_labels_absent_from_the_log_name_the_labels_there(interleaving_logs) -> None:
    impressions = interleaving_logs.impressions
    counts = _label_counts(impressions)
    assert set(counts) == {"A", "B"}
    shown = f"'A' ({counts['A']:,} results), 'B' ({counts['B']:,} results)"
    with pytest.raises(OptionError) as both:
        analyze_interleaving_logs(impressions, teams=("X", "Y"), n_resamples=50, rng=0)
    assert str(both.value) == (
        "<Table>: team labels 'X' and 'Y' (teams 'X', 'Y') never occur in column 'teams', so no "
        f"click could be credited to either ranker; the labels there: {shown}. Did you mean "
        "teams=('A', 'B') (--teams A,B)?")
    # one label right, one wrong: ranker A would have won every clicked impression
    with pytest.raises(OptionError, match=r"team label 'Z' \(teams 'A', 'Z'\) never occurs in column "
                                          r"'teams', so no click could be credited to that ranker"):
        analyze_interleaving_logs(impressions, teams=("A", "Z"), n_resamples=50, rng=0)


def test_neutral_labels_are_listed_and_many_labels_are_cut_in_the_engine(monkeypatch) -> None:
    """30 distinct labels: the message lists the 12 most frequent (most first, ties by label)
    and says there are more; the engine query returns at most 14 rows."""
    import serpeval.online.experiments.interleaving_analysis as module

    n = 60
    labels = [f"L{i:02d}" for i in range(30)]
    teams = [[labels[i % 30], labels[(i * 7) % 30], "shared"] for i in range(n)]
    table = pa.table({"impression_id": np.arange(n), "user_id": np.arange(n) % 10,
                      "n_shown": np.full(n, 3), "teams": teams, "clicks": [[1]] * n})
    counts = _label_counts(table)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:12]
    returned: list[int] = []
    original = module.collect

    def counting(expr):
        out = original(expr)
        if "label" in out.column_names:
            returned.append(out.num_rows)
        return out

    monkeypatch.setattr(module, "collect", counting)
    with pytest.raises(OptionError) as info:
        analyze_interleaving_logs(table, teams=("A", "B"), n_resamples=50, rng=0)
    expected = ", ".join(f"{label!r} ({c:,} results)" for label, c in top)
    assert f"the labels there: {expected} and more. Give the labels of rankers A and B " \
           "(teams=, --teams)." in str(info.value)
    assert top[0] == ("shared", 60)
    assert returned == [14]


@pytest.mark.parametrize(
    "teams",
    [
        pa.array([None] * 4, pa.list_(pa.string())),
        pa.array([[]] * 4, pa.list_(pa.string())),
        pa.array([[None, None]] * 4, pa.list_(pa.string())),
        pa.array([None] * 4, pa.string()),  # a text column, all null
    ],
    ids=["null lists", "empty lists", "null labels", "null text"],
)
def test_a_teams_column_without_labels_is_an_input_error(teams: pa.Array) -> None:
    table = pa.table({"impression_id": np.arange(4), "user_id": [1, 2, 3, 4],
                      "n_shown": np.full(4, 2), "teams": teams, "clicks": [[1]] * 4})
    with pytest.raises(InputError, match=r"^<Table>: column 'teams' holds no team label \(every "
                                         r"value is null, an empty list or a list of nulls\)"):
        analyze_interleaving_logs(table, n_resamples=50, rng=0)


def test_labels_that_occur_still_work(interleaving_logs) -> None:
    report = analyze_interleaving_logs(interleaving_logs.impressions, teams=("B", "A"),
                                       n_resamples=50, rng=0)
    swapped = analyze_interleaving_logs(interleaving_logs.impressions, n_resamples=50, rng=0)
    assert (report.analysis.wins_a, report.analysis.wins_b) == (swapped.analysis.wins_b,
                                                                swapped.analysis.wins_a)


def test_cli_exits_2_with_one_line(interleaving_logs, tmp_path, capsys) -> None:
    pq.write_table(interleaving_logs.impressions, tmp_path / "impressions.parquet")
    assert main(["interleaving-report", str(tmp_path), "--teams", "X,Y", "--resamples", "50"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"serpeval interleaving-report: error: {tmp_path}: team labels 'X' "
                               "and 'Y'")
    assert lines[0].endswith("Did you mean teams=('A', 'B') (--teams A,B)?")
    # an all-null teams column, through a log folder as generate-logs writes it
    nulls = interleaving_logs.impressions.set_column(
        interleaving_logs.impressions.schema.get_field_index("teams"), "teams",
        pa.nulls(interleaving_logs.impressions.num_rows, pa.list_(pa.string())))
    pq.write_table(nulls, tmp_path / "impressions.parquet")
    assert main(["interleaving-report", str(tmp_path), "-f", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "column 'teams' holds no team label" in captured.err
    assert captured.err.count("\n") == 1
