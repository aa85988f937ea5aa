"""``monitor_ab`` and impressions without a timestamp: they belong to no look, so they are left
out of every look (the last one included) and counted in a note, as the interleaving report's
preference over time does; they are not put into the last look. The last look is then the
fixed-horizon analysis of the impressions with a timestamp, and every look equals the monitor
of the log without the untimed rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from serpeval.online.experiments import analyze_ab, monitor_ab
from serpeval.online.simulation.generate import LogGenerator


def _approx(rows: list[dict]) -> list[dict]:
    """Rows compared with a relative tolerance on floats (the engine sums in another order)."""
    return [{k: pytest.approx(v, rel=1e-12, nan_ok=True) if isinstance(v, float) else v
             for k, v in r.items()} for r in rows]


@pytest.fixture(scope="module")
def logs() -> tuple[pa.Table, pa.Table, int]:
    """(a log with every 6th timestamp NULL, the same log without those rows, how many)."""
    table = LogGenerator(800, effect=0.3).generate(rng=3).impressions
    hit = np.arange(table.num_rows) % 6 == 2
    stamps = table.column("timestamp").to_pylist()
    nulled = pa.array([None if h else t for h, t in zip(hit, stamps, strict=True)],
                      table.schema.field("timestamp").type)
    index = table.schema.get_field_index("timestamp")
    return table.set_column(index, "timestamp", nulled), table.filter(pa.array(~hit)), int(hit.sum())


@pytest.mark.parametrize("looks", [3, "daily"])
def test_untimed_impressions_are_in_no_look_and_counted(logs, looks) -> None:
    with_nulls, timed, n = logs
    seq = monitor_ab(with_nulls, metric="ctr", looks=looks)
    assert f"{n:,} impression(s) without a timestamp left out of every look" in seq.notes
    expected = monitor_ab(timed, metric="ctr", looks=looks)
    assert seq.to_dicts() == _approx(expected.to_dicts())
    assert not any("timestamp" in note for note in expected.notes)


def test_last_look_is_the_fixed_analysis_of_the_timed_impressions(logs) -> None:
    with_nulls, timed, _ = logs
    last = monitor_ab(with_nulls, metric="ctr", looks=4).to_dicts()[-1]
    full = analyze_ab(timed, metrics="ctr").to_dicts()[0]
    for key in ("units_control", "units_treatment", "effect", "ci_lower", "ci_upper", "p_value"):
        assert last[key] == pytest.approx(full[key], rel=1e-9), key


def test_untimed_impressions_are_counted_when_repeated_ids_are_excluded(logs) -> None:
    """With repeated ids left out the span is not counted in prepare's pass (a query of its
    own): the untimed impressions are still left out and counted."""
    with_nulls, timed, n = logs
    repeated = pa.concat_tables([with_nulls, timed.slice(0, 1)])  # a timed row twice
    seq = monitor_ab(repeated, metric="ctr", looks=3, duplicates="exclude")
    assert f"{n:,} impression(s) without a timestamp left out of every look" in seq.notes
    assert seq.to_dicts() == _approx(monitor_ab(timed.slice(1), metric="ctr", looks=3).to_dicts())
