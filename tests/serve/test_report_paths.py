"""The analysis reads what serve stored: the same numbers from the store (DuckDB, PostgreSQL),
from UBI NDJSON exports, and from a log written independently from the HTTP answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.serve.conftest import Failing, app_for, click_event, counter_ids, run_async, with_client

from serpeval.online.events.logs import is_event_source, read_event_logs, read_records
from serpeval.online.events.schema import validate_events
from serpeval.online.events.store import open_store, query_row
from serpeval.online.experiments.interleaving_analysis import analyze_interleaving_logs
from serpeval.serve.backends import Backend, build_backends
from serpeval.serve.config import quick_config


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any, small_corpus: Path) -> dict[str, Any]:
    """300 impressions served in-process to 40 users with random clicks, and the same
    impressions and clicks written as a Parquet log straight from the HTTP answers."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("served")
    # a deadline no search misses: under a loaded CI machine an inline search past the default
    # 250 ms was a fault, the page came back empty and the clicks drawn for it failed (the
    # deadline is tested on its own in test_app.py)
    config = quick_config(str(small_corpus), "k1=0.2,b=0.0", str(folder / "events.duckdb"), deadline_ms=10_000)
    backends = build_backends(config)
    queries = ["wing flow", "boundary layer", "supersonic heat", "pressure distribution", "shock waves",
               "flutter", "slip stream", "laminar transition"]
    rng = np.random.default_rng(11)

    async def body(client: Any) -> list[dict[str, Any]]:
        rows = []
        pending: list[dict[str, Any]] = []
        for _ in range(300):
            user = f"u{int(rng.integers(40))}"
            query = queries[int(rng.integers(len(queries)))]
            answer = (await client.get("/search", params={"q": query, "user": user})).json()
            clicks = sorted({int(p) for p in rng.integers(1, len(answer["hits"]) + 1, size=int(rng.integers(0, 3)))})
            pending.extend(click_event(answer["query_id"], p, answer["hits"][p - 1]["id"]) for p in clicks)
            rows.append({"impression_id": answer["query_id"], "experiment": "quickstart", "variant": "interleaved",
                         "user_id": user, "query_id": query, "shown": [h["id"] for h in answer["hits"]],
                         "n_shown": len(answer["hits"]), "teams": [h["team"] for h in answer["hits"]],
                         "clicks": clicks})
        # the clicks in batches of 50, sent concurrently (one group commit); an orphan click
        batches = [pending[i:i + 50] for i in range(0, len(pending), 50)]
        answers = await asyncio.gather(*(client.post("/events", json=b) for b in batches))
        assert [a.json()["written"] for a in answers] == [len(b) for b in batches]
        await client.post("/events", json=click_event("not-served", 1, "x"))
        return rows

    rows = run_async(with_client(app_for(config, backends, query_ids=counter_ids()), body))
    log = folder / "impressions.parquet"
    pq.write_table(pa.Table.from_pylist(rows), log)
    return {"store": config.store, "log": log, "rows": rows, "folder": folder, "config": config}


def report_rows(logs: Any, **kwargs: Any) -> list[dict[str, Any]]:
    report = analyze_interleaving_logs(logs, n_resamples=500, rng=3, period=None, **kwargs)
    return report.to_dicts()


@pytest.fixture(scope="module")
def log_report(served: dict[str, Any]) -> list[dict[str, Any]]:
    """The report of the Parquet log written from the HTTP answers (what every source must give)."""
    return report_rows(str(served["log"]))


def test_store_and_independent_log_give_the_same_report(served: dict[str, Any],
                                                        log_report: list[dict[str, Any]]) -> None:
    read = read_event_logs(served["store"])
    assert read.counts["impressions read"] == 300
    assert read.counts["impressions used"] == 300
    assert read.counts["clicks used"] == sum(len(r["clicks"]) for r in served["rows"])
    assert read.counts["orphan clicks (unknown query_id)"] == 1
    from_store = report_rows(read.impressions, clicks=read.clicks)
    assert from_store == log_report
    assert from_store[0]["impressions"] == 300


def test_ndjson_export_and_postgres_give_the_same_report(served: dict[str, Any], log_report: list[dict[str, Any]],
                                                         pg_url: str) -> None:
    label, queries, events = read_records(served["store"])
    assert label == served["store"]
    export = served["folder"] / "export"
    export.mkdir(exist_ok=True)
    with (export / "ubi_queries.ndjson").open("w") as out:
        for q in queries:  # OpenSearch's export shape: each document under _source
            doc = dict(q, timestamp=q["timestamp"].isoformat())
            out.write(json.dumps({"_index": "ubi_queries", "_id": q["query_id"], "_source": doc}) + "\n")
    with (export / "ubi_events.ndjson").open("w") as out:
        for e in events:
            out.write(json.dumps(e) + "\n")
    store = open_store(pg_url)
    store.write([query_row(dict(q, timestamp=q["timestamp"].isoformat())) for q in queries],
                validate_events(events))
    store.close()
    # Each source reads the store's impressions and clicks exactly (schema, order, values): the
    # analysis, a function of those two tables (its resampling seeded), then reports the same
    # numbers from each, and from PostgreSQL's it is run to show it.
    base = read_event_logs(served["store"])
    assert base.counts["impressions used"] == 300
    for source in (export, export / "ubi_queries.ndjson", pg_url):
        assert is_event_source(source)
        read = read_event_logs(source)
        assert read.counts == base.counts, source
        assert read.impressions.equals(base.impressions, check_metadata=True), source
        assert read.clicks.equals(base.clicks, check_metadata=True), source
    from_postgres = read_event_logs(pg_url)  # (the reads are equal: PostgreSQL's stands for all)
    assert report_rows(from_postgres.impressions, clicks=from_postgres.clicks) == log_report


def test_excluded_and_unplaceable_clicks_are_counted(tmp_path: Path, small_corpus: Path) -> None:
    config = quick_config(str(small_corpus), "k1=0.2,b=0.0", str(tmp_path / "e.duckdb"), deadline_ms=10_000)
    backends = build_backends(config)
    broken = [backends[0], Backend("B", Failing(), False)]

    async def body(client: Any) -> Any:
        answer = (await client.get("/search", params={"q": "wing flow", "user": "u"})).json()
        await client.post("/events", json=[click_event(answer["query_id"], 1, answer["hits"][0]["id"])])
        return answer

    run_async(with_client(app_for(config, broken, query_ids=counter_ids("x")), body))

    async def body2(client: Any) -> Any:
        answer = (await client.get("/search", params={"q": "wing flow", "user": "u"})).json()
        qid = answer["query_id"]
        await client.post("/events", json=[
            click_event(qid, 99, "not-shown"),  # ordinal beyond the list, id not shown
            {"action_name": "click", "query_id": qid, "timestamp": "2026-12-05T01:00:00Z",
             "event_attributes": {"object": {"object_id": answer["hits"][3]["id"]}}},  # placed by its id
        ])
        return answer

    run_async(with_client(app_for(config, backends, query_ids=counter_ids("y")), body2))
    read = read_event_logs(config.store)
    assert read.counts["impressions excluded (backend failure or lateness)"] == 1
    assert read.counts["clicks on excluded impressions"] == 1
    assert read.counts["clicks that could not be placed"] == 1
    assert read.clicks.to_pylist() == [{"impression_id": "y000000", "position": 4}]
    assert any("impressions excluded (backend failure or lateness): 1" in n for n in read.notes())


def test_a_query_no_backend_answers_is_counted_apart_from_failures(tmp_path: Path, small_corpus: Path) -> None:
    """A query matching no document in either ranker is an empty page, stored as excluded:
    the reading counts it as such, not as a backend failure or a late answer."""
    config = quick_config(str(small_corpus), "k1=0.2,b=0.0", str(tmp_path / "e.duckdb"), deadline_ms=10_000)

    async def body(client: Any) -> Any:
        for q in ("zzzqqq", "wing flow"):
            answer = await client.get("/search", params={"q": q, "user": "u"})
            assert answer.status_code == 200
        return None

    run_async(with_client(app_for(config, build_backends(config), query_ids=counter_ids("n")), body))
    read = read_event_logs(config.store)
    assert read.counts["impressions excluded (no backend returned a document)"] == 1
    assert read.counts["impressions excluded (backend failure or lateness)"] == 0
    assert read.counts["impressions used"] == 1
    assert any("impressions excluded (no backend returned a document): 1" in n for n in read.notes())


def test_experiment_choice_and_bad_sources(tmp_path: Path) -> None:
    from serpeval.core.errors import InputError

    export = tmp_path / "ubi_queries.ndjson"
    records = [{"query_id": f"q{i}", "user_query": "a", "timestamp": "2026-12-05T00:00:00Z",
                "query_response_hit_ids": ["d"], "query_attributes": {"experiment": name, "variant": "x"}}
               for i, name in enumerate(["e1", "e2"])]
    export.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(InputError, match=r"holds 2 experiments \(e1, e2\); name one with --experiment"):
        read_event_logs(export)
    with pytest.raises(InputError, match="no impressions of experiment 'e3'"):
        read_event_logs(export, "e3")
    read = read_event_logs(export, "e1", design="ab")
    assert read.counts["impressions used"] == 1
    assert read.impressions.column("variant").to_pylist() == ["x"]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "ubi_queries.ndjson").write_text('{"query_id": "q"}\nnot json\n')
    with pytest.raises(InputError, match=r"ubi_queries.ndjson:2: not JSON"):
        read_event_logs(tmp_path / "bad")
    with pytest.raises(InputError, match="no such store or UBI export"):
        read_records(tmp_path / "missing.duckdb")
    assert not is_event_source(tmp_path / "missing.duckdb")
    assert not is_event_source(3)


def test_cli_report_and_replay(served: dict[str, Any], tmp_path: Path, capsys: Any) -> None:
    from serpeval.cli import main

    out = tmp_path / "report.json"
    assert main(["interleaving-report", served["store"], "-f", "json", "-o", str(out), "--resamples", "500"]) == 0
    data = json.loads(out.read_text())
    assert data["store"]["impressions read"] == 300
    assert data["store"]["clicks used"] == sum(len(r["clicks"]) for r in served["rows"])
    assert main(["interleaving-report", served["store"], "--resamples", "200"]) == 0
    text = capsys.readouterr().out
    assert "read 300 impressions and" in text
    assert "orphan clicks (unknown query_id): 1" in text
    assert main(["replay", served["store"]]) == 0
    assert "replayed 300 interleaved impressions" in capsys.readouterr().out
