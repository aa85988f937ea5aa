"""A NULL ``triggered`` flag is neither triggered nor untriggered: the triggered analyses
(A/B and interleaving) leave such impressions out of both the whole and the triggered
analysis and count them, with a note, rather than reading them as untriggered (which would
change the trigger rate and the scaled effect with no word). Checked against the same
analysis of the log without those rows: every number equal."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from serpeval.online.experiments.triggered import analyze_ab_triggered, analyze_interleaving_triggered
from serpeval.online.simulation.generate import LogGenerator


def _null_some(table: pa.Table, every: int = 7) -> tuple[pa.Table, pa.Table, int]:
    """(the log with the flag NULL on every ``every``-th row, the log without those rows, how many)."""
    hit = np.arange(table.num_rows) % every == 3
    flags = table.column("triggered").to_pylist()
    nulled = pa.array([None if h else f for h, f in zip(hit, flags, strict=True)], pa.bool_())
    with_nulls = table.set_column(table.schema.get_field_index("triggered"), "triggered", nulled)
    return with_nulls, table.filter(pa.array(~hit)), int(hit.sum())


def _same(got: dict, expected: dict) -> None:
    """Equal rows: the same keys and labels, the numbers to 1e-12."""
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), key
        else:
            assert got[key] == value, key


@pytest.fixture(scope="module")
def ab_log() -> pa.Table:
    return LogGenerator(1_500, noise_b=0.5, changed_queries=0.3).generate(rng=5).impressions


@pytest.fixture(scope="module")
def il_log() -> pa.Table:
    return LogGenerator(1_500, interleaving=True, noise_b=0.5, changed_queries=0.3).generate(rng=6).impressions


def test_ab_triggered_leaves_null_flags_out_and_counts_them(ab_log) -> None:
    with_nulls, without, n = _null_some(ab_log)
    got = analyze_ab_triggered(with_nulls, metrics=["ctr", "clicks_per_user"])
    expected = analyze_ab_triggered(without, metrics=["ctr", "clicks_per_user"])
    assert n > 0
    assert got.trigger_rate == expected.trigger_rate
    assert got.unit_trigger_rate == expected.unit_trigger_rate
    assert got.rates == expected.rates
    for g, e in zip(got.to_dicts(), expected.to_dicts(), strict=True):
        _same(g, e)
    assert got.untriggered.exclusions.missing_trigger == n
    assert got.untriggered.exclusions.kept_rows == without.num_rows
    assert got.triggered.exclusions.missing_trigger == 0  # counted once, in the whole log's
    assert f"{n:,} impression(s) with a missing trigger flag" in " ".join(got.notes())


def test_interleaving_triggered_leaves_null_flags_out_and_counts_them(il_log) -> None:
    with_nulls, without, n = _null_some(il_log)
    got = analyze_interleaving_triggered(with_nulls, rng=1, n_resamples=200)
    expected = analyze_interleaving_triggered(without, rng=1, n_resamples=200)
    assert n > 0
    assert got.trigger_rate == expected.trigger_rate
    for g, e in zip(got.to_dicts(), expected.to_dicts(), strict=True):
        _same(g, e)
    assert got.untriggered.exclusions.missing_trigger == n
    assert f"{n:,} impression(s) with a missing trigger flag" in " ".join(got.notes())
