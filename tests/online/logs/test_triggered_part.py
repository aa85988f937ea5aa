"""Which impressions the triggered part of an A/B log keeps (``triggered_logs(keep_mixed=True)``):
the triggered pages, and every page of a unit seen in more than one variant of its experiment,
decided per unit by a window over the log (on Spark one scan, no semi-join). Checked against
the same rule computed in Python, NULLs included: a NULL variant is no variant of its unit, a
page whose unit or experiment is NULL belongs to no unit (it is not kept unless triggered), and
a page whose trigger flag is NULL is in neither part (the whole log's analysis leaves it out and
counts it), so it makes no unit mixed."""

from __future__ import annotations

import random

import pyarrow as pa

from serpeval.online.experiments.triggered import triggered_logs


def test_the_triggered_part_keeps_triggered_pages_and_mixed_units() -> None:
    rng = random.Random(1)
    rows = [{"impression_id": i, "experiment": rng.choice(["e", "f", None]),
             "variant": rng.choice(["control", "treatment", None]), "user_id": rng.choice([*range(8), None]),
             "n_shown": 10, "clicks": [1], "triggered": rng.choice([True, False, None])} for i in range(400)]
    variants: dict[tuple, set] = {}
    for r in rows:
        if r["variant"] is not None and r["triggered"] is not None:
            variants.setdefault((r["user_id"], r["experiment"]), set()).add(r["variant"])
    expected = sorted(r["impression_id"] for r in rows if r["triggered"] or (
        r["triggered"] is not None and r["user_id"] is not None and r["experiment"] is not None
        and len(variants.get((r["user_id"], r["experiment"]), ())) > 1))
    _, part = triggered_logs(pa.Table.from_pylist(rows), keep_mixed=True)
    kept = sorted(part.impressions.to_pyarrow().column("impression_id").to_pylist())
    assert kept == expected
    assert 0 < sum(1 for r in rows if r["triggered"]) < len(kept) < len(rows)
