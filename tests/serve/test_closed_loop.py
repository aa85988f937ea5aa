"""Closed loop: simulated users (serpeval's click models over Cranfield's qrels) send real HTTP
requests and UBI events to a running server; the analysis of what the store holds must pick
the better ranker and agree with the simulator's prediction; an A/A experiment must give about
5% positives."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np
import pyarrow as pa
import pytest
from tests.serve.conftest import LiveServer, app_for, counter_ids, run_async

from serpeval.online.clicks import click_model
from serpeval.online.events.logs import read_event_logs
from serpeval.online.experiments.interleaving_analysis import analyze_interleaving_logs
from serpeval.online.interleaving.batch import credit_batch, interleave_batch
from serpeval.online.logs.sources import duckdb_connection
from serpeval.serve.backends import Backend
from serpeval.serve.config import BackendConfig, ServeConfig

WORSE = {"k1": 0.1, "b": 0.0}  # BM25 with almost no term-frequency saturation or length norm: worse on Cranfield


def grades_of(ids: list[str], judged: dict[str, int]) -> np.ndarray:
    row = np.full(10, -1, dtype=np.int64)
    row[:len(ids)] = [judged.get(d, 0) for d in ids]
    return row


def predicted_delta(a: list[list[str]], b: list[list[str]], judged: list[dict[str, int]], model: Any,
                    reps: int = 400) -> float:
    """The simulator's Delta (B-A) for uniform queries: team draft over every query ``reps``
    times, the same click model, (wins B + ties/2) / n - 1/2."""
    vocab = sorted({d for r in a + b for d in r})
    code = {d: i for i, d in enumerate(vocab)}
    n = len(a)
    ca, cb = np.full((n, 10), -1), np.full((n, 10), -1)
    for i in range(n):
        ca[i, :len(a[i])] = [code[d] for d in a[i]]
        cb[i, :len(b[i])] = [code[d] for d in b[i]]
    query = np.repeat(np.arange(n), reps)
    shown = interleave_batch(np.repeat(ca, reps, 0), np.repeat(cb, reps, 0), k=10, rng=12)
    table = np.zeros((n, len(vocab)), dtype=np.int64)  # grade of (query, doc); 0 unjudged
    for q in range(n):
        for d, g in judged[q].items():
            if d in code:
                table[q, code[d]] = g
    grades = np.where(shown.docs >= 0, table[query[:, None], np.maximum(shown.docs, 0)], -1)
    outcome = credit_batch(shown, model.sample(grades, rng=13)).outcome
    return float((outcome == -1).mean() + (outcome == 0).mean() / 2 - 0.5)


def test_live_server_picks_the_better_ranker(tmp_path: Path, cranfield_index: Any, cranfield_topics: Any,
                                             cranfield_qrels: Any) -> None:
    import httpx

    topics = [(q, text) for q, text in cranfield_topics if q in cranfield_qrels]
    a_engine, b_engine = cranfield_index.engine(), cranfield_index.engine(**WORSE)
    config = ServeConfig((BackendConfig("A"), BackendConfig("B")), store=str(tmp_path / "events.duckdb"),
                         experiment="closed-loop", deadline_ms=5000)
    app = app_for(config, [Backend("A", a_engine, False), Backend("B", b_engine, False)], query_ids=counter_ids())
    model = click_model("navigational", levels=5)
    rng = np.random.default_rng(2026)
    impressions = 400
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        pending: list[dict[str, Any]] = []
        for i in range(impressions):
            qid, text = topics[int(rng.integers(len(topics)))]
            answer = client.get("/search", params={"q": text, "user": f"user{int(rng.integers(150))}"}).json()
            ids = [h["id"] for h in answer["hits"]]
            clicks = model.sample(grades_of(ids, cranfield_qrels[qid])[None, :], rng=rng)[0]
            pending += [{"action_name": "click", "query_id": answer["query_id"], "client_id": "sim",
                         "timestamp": "2026-12-05T01:00:00Z",
                         "event_attributes": {"object": {"object_id": ids[int(p)]},
                                              "position": {"ordinal": int(p) + 1}}}
                        for p in np.flatnonzero(clicks[:len(ids)])]
            if len(pending) >= 100 or i == impressions - 1:
                assert client.post("/events", json=pending).json()["duplicates"] == 0
                pending = []
        metrics = client.get("/metrics").text
    assert f'serpeval_impressions_total{{outcome="interleaved"}} {impressions}.0' in metrics
    read = read_event_logs(config.store)
    assert read.counts["impressions used"] == impressions
    report = analyze_interleaving_logs(read.impressions, clicks=read.clicks, n_resamples=2000, rng=1, period=None)
    row = report.to_dicts()[0]
    assert row["winner"] == "A"
    assert row["CI 95% high"] < 0
    texts = [t for _, t in topics]
    a = [[h.doc_id for h in hits] for hits in a_engine.search_many(texts, 10)]
    b = [[h.doc_id for h in hits] for hits in b_engine.search_many(texts, 10)]
    expected = predicted_delta(a, b, [cranfield_qrels[q] for q, _ in topics], model)
    assert expected < -0.05  # the pair differs by a known, clear amount
    assert row["CI 95% low"] <= expected <= row["CI 95% high"]


async def asgi_call(app: Any, method: str, path: str, query: dict[str, str] | None = None,
                    body: Any = None) -> tuple[int, Any]:
    """``(status, JSON body)`` of one request to ``app``, called as the ASGI application it is.

    What an HTTP client library (httpx's ASGITransport) adds is request and response objects,
    not a different path through the app; for the A/A runs' 6,000 requests it cost as much CPU
    as the app itself.
    """
    data = b"" if body is None else json.dumps(body).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
             "query_string": urlencode(query or {}).encode(), "client": ("127.0.0.1", 50000),
             "server": ("serve.test", 80), "state": {},
             "headers": [(b"host", b"serve.test"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(data)).encode())]}
    received = False
    answered = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": data, "more_body": False}
        # no disconnect while the app answers; once it has, as httpx's ASGITransport (an app
        # that listens for a disconnect after its response ends instead of waiting forever)
        await answered.wait()
        return {"type": "http.disconnect"}

    messages: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            answered.set()

    await app(scope, receive, send)
    assert messages[0]["type"] == "http.response.start"
    return messages[0]["status"], json.loads(b"".join(m.get("body", b"") for m in messages[1:]))


class Remembered:
    """An engine's answers, each ``(query, k)`` searched once and then answered from memory.

    The A/A runs' 12,000 searches (A and B are one engine) ask the same 225 Cranfield topics
    over and over: searching each time cost a third of the runs' serving CPU, for answers that
    are the same every time. The app still calls ``search`` per backend and request, inline,
    and checks what it returns; what the engine computes is tested with the engine.
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.answers: dict[tuple[str, int], list[Any]] = {}

    def search(self, query: str, k: int) -> list[Any]:
        hits = self.answers.get((query, k))
        if hits is None:
            hits = self.answers[(query, k)] = self.engine.search(query, k)
        return list(hits)


@pytest.fixture(scope="module")
def small_engine(small_corpus: Path) -> Any:
    """The engine both A and B of the A/A experiments serve (built once for both A/A tests),
    its answers remembered (:class:`Remembered`)."""
    from serpeval.engines.embedded import EmbeddedIndex

    return Remembered(EmbeddedIndex.build(small_corpus).engine())


def aa_positives(engine: Any, topics: list[str], runs: int, impressions: int, tmp_path: Path) -> int:
    """How many of ``runs`` A/A experiments (identical rankers) the analysis calls significant.

    Each run is an experiment of its own (``aa-<run>``: its own app, store file, query ids and
    seed). The runs are served one after the other in one event loop; a run's clicks are drawn
    in one call of the random click model once its searches are answered (the model ignores
    the order and content of the lists: only how many results each page shows matters). Each
    store is read as a user reads it (``read_event_logs``); the runs' logs then form one log
    of ``runs`` experiments, and ``analyze_interleaving_logs`` analyses each experiment by its
    name, with the run's own bootstrap seed: the same rows, bit for bit, as analysing the run's
    log alone (checked for 40 runs once; the first run's row here, at every call), with the
    log handed to DuckDB once instead of twice a run.
    """
    model = click_model("random", levels=2)
    stores = [str(tmp_path / f"aa{run}.duckdb") for run in range(runs)]

    async def serve(run: int) -> None:
        # the store written by a thread of this process: the A/A rate is the analysis's property,
        # and a writer process per run would cost ~0.4 s each (the process is tested elsewhere)
        config = ServeConfig((BackendConfig("A"), BackendConfig("B")), store=stores[run],
                             experiment=f"aa-{run}", store_process=False)
        # inline, as serve runs an embedded engine (build_backends): no thread hop per search
        app = app_for(config, [Backend("A", engine, False, inline=True), Backend("B", engine, False, inline=True)],
                      query_ids=counter_ids(f"r{run}-"))
        rng = np.random.default_rng(run)
        async with app.router.lifespan_context(app):  # the store opened and closed as serve does
            answers = []
            for _ in range(impressions):
                text = topics[int(rng.integers(len(topics)))]
                status, answer = await asgi_call(app, "GET", "/search",
                                                 {"q": text, "user": f"u{int(rng.integers(60))}"})
                assert status == 200, answer
                answers.append(answer)
            shown = np.array([len(a["hits"]) for a in answers])
            clicks = model.sample(np.where(np.arange(10) < shown[:, None], 0, -1), rng=rng)
            shown_at, clicked = np.nonzero(clicks)
            events = [{"action_name": "click", "query_id": answers[i]["query_id"],
                       "timestamp": "2026-12-05T01:00:00Z", "event_attributes": {"position": {"ordinal": p}}}
                      for i, p in zip(shown_at.tolist(), (clicked + 1).tolist(), strict=True)]
            for start in range(0, len(events), config.max_batch):  # one commit per request
                status, answer = await asgi_call(app, "POST", "/events", body=events[start:start + config.max_batch])
                assert status == 200, answer
                assert answer["duplicates"] == 0

    async def serve_all() -> None:
        for run in range(runs):
            await serve(run)

    run_async(serve_all())
    reads = [read_event_logs(store) for store in stores]
    con = duckdb_connection()
    log_impressions = con.create_table("aa_impressions", pa.concat_tables([r.impressions for r in reads]))
    log_clicks = con.create_table("aa_clicks", pa.concat_tables([r.clicks for r in reads]))
    positives = 0
    for run in range(runs):
        row = analyze_interleaving_logs(log_impressions, f"aa-{run}", clicks=log_clicks, n_resamples=300,
                                        rng=run, period=None).to_dicts()[0]
        assert row["impressions"] == reads[run].counts["impressions used"]  # this run's, and only this run's
        if run == 0:  # the row is what the run's log analysed alone gives, bit for bit
            alone = analyze_interleaving_logs(reads[0].impressions, clicks=reads[0].clicks, n_resamples=300,
                                              rng=0, period=None).to_dicts()[0]
            assert repr(row) == repr(alone)
        positives += row["winner"] != "none"
    con.disconnect()
    return positives


def test_aa_gives_few_positives(tmp_path: Path, small_engine: Any, cranfield_topics: Any) -> None:
    topics = [text for _, text in cranfield_topics]
    runs = int(os.environ.get("SERPEVAL_AA_RUNS", "5"))
    positives = aa_positives(small_engine, topics, runs, 100, tmp_path)
    # Binomial(runs, 0.05): P(X >= 3) = 0.001 for 5 runs; bench/bench_serve.py runs 100
    assert positives <= max(2, int(0.05 * runs + 3 * (0.05 * 0.95 * runs) ** 0.5))


@pytest.mark.slow
def test_aa_forty_runs(tmp_path: Path, small_engine: Any, cranfield_topics: Any) -> None:
    topics = [text for _, text in cranfield_topics]
    positives = aa_positives(small_engine, topics, 40, 150, tmp_path)
    assert positives <= 6  # Binomial(40, 0.05): P(X >= 7) = 0.0005
