"""The serve app in-process (httpx's ASGI transport): routes, designs, faults, limits."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from tests.serve.conftest import Failing, Hanging, Junk, app_for, click_event, counter_ids, run_async, with_client

from serpeval.core.errors import InputError, OptionError
from serpeval.online.events.store import open_store
from serpeval.serve.backends import Backend, build_backends
from serpeval.serve.config import BackendConfig, ServeConfig, load_config, quick_config
from serpeval.serve.design import assign_variant, derive_seed, interleave_impression, replay_impression
from serpeval.serve.replay import replay


@pytest.fixture(scope="module")
def quick_backends(small_corpus: Path) -> list[Backend]:
    config = quick_config(str(small_corpus), "k1=1.2,b=0.3", "unused.duckdb")
    return build_backends(config)


def quick(tmp_path: Path, small_corpus: Path, **overrides: Any) -> ServeConfig:
    return quick_config(str(small_corpus), "k1=1.2,b=0.3", str(tmp_path / "events.duckdb"), **overrides)


# ---------------------------------------------------------------- designs (pure functions)

def test_seed_is_a_function_of_experiment_and_query_id() -> None:
    import hashlib

    # SHA-256("e\x00q1")[:8] as a big-endian integer, shifted right by 11 bits
    expected = int.from_bytes(hashlib.sha256(b"e\x00q1").digest()[:8], "big") >> 11
    assert derive_seed("e", "q1") == expected
    assert derive_seed("e", "q1") < 2**53
    assert derive_seed("e", "q2") != expected
    assert derive_seed("f", "q1") != expected


def test_ab_assignment_is_sticky_and_follows_the_weights() -> None:
    users = [f"user-{i}" for i in range(4000)]
    arms = [assign_variant("salt", u, ["A", "B"], [0.25, 0.75]) for u in users]
    assert arms == [assign_variant("salt", u, ["A", "B"], [0.25, 0.75]) for u in users]  # same every time
    share = arms.count("A") / len(arms)
    # Binomial(4000, 0.25): sd 0.0068; 5 sd either side
    assert 0.25 - 0.035 < share < 0.25 + 0.035
    # another salt reshuffles: about half the users change arm under equal weights
    moved = sum(assign_variant("s1", u, ["A", "B"]) != assign_variant("s2", u, ["A", "B"]) for u in users)
    assert 0.4 * len(users) < moved < 0.6 * len(users)
    with pytest.raises(OptionError, match="one non-negative weight per arm"):
        assign_variant("s", "u", ["A", "B"], [1.0])
    with pytest.raises(OptionError, match="at least one arm"):
        assign_variant("s", "u", [])


@pytest.mark.parametrize(("method", "options"), [("team_draft", {}), ("probabilistic", {"tau": 3.0}),
                                                 ("balanced", {}), ("optimized", {})])
def test_every_method_replays_exactly(method: str, options: dict[str, Any]) -> None:
    rankings = [["a", "b", "c", "d"], ["c", "a", "e", "f"]]
    shown = interleave_impression(rankings, ["A", "B"], method=method, k=4, seed=derive_seed("e", method),
                                  options=options)
    assert replay_impression(list(shown.docs), shown.attributes) is None
    assert len(shown.docs) == len(shown.teams) == 4
    if method == "probabilistic":
        probs = shown.attributes["probabilities"]
        assert len(probs) == 4
        assert all(len(p) == 2 and all(0 < x <= 1 for x in p) for p in probs)
    tampered = dict(shown.attributes, teams=list(reversed(shown.attributes["teams"])))
    if tampered["teams"] != shown.attributes["teams"]:
        assert replay_impression(list(shown.docs), tampered).startswith("teams ")
    assert replay_impression(["z", *shown.docs[1:]], shown.attributes).startswith("shown ")
    assert replay_impression(list(shown.docs), {"method": method}).startswith("cannot replay (KeyError")


def test_multileaving_three_rankers() -> None:
    shown = interleave_impression([["a", "b"], ["b", "c"], ["c", "d"]], ["A", "B", "C"], method="team_draft", k=10,
                                  seed=3)
    assert len(shown.docs) == 4  # k capped at the distinct documents
    assert set(shown.teams) <= {"A", "B", "C"}
    assert replay_impression(list(shown.docs), shown.attributes) is None


# ---------------------------------------------------------------- config

def test_toml_config(tmp_path: Path, small_corpus: Path) -> None:
    path = tmp_path / "serve.toml"
    path.write_text(f'''
[server]
port = 9000
store = "ev.duckdb"
api_key_env = "SERPEVAL_TEST_KEY"
[experiment]
name = "b-test"
method = "probabilistic"
options = {{tau = 2.0}}
deadline_ms = 100
[[backends]]
name = "base"
corpus = "{small_corpus}"
[[backends]]
name = "cand"
params = {{k1 = 0.9}}
''')
    import os

    os.environ["SERPEVAL_TEST_KEY"] = "s3cret"
    try:
        config = load_config(path, port=9001)
    finally:
        del os.environ["SERPEVAL_TEST_KEY"]
    assert config.port == 9001
    assert config.store == str(tmp_path / "ev.duckdb")
    assert config.api_key == "s3cret"
    assert config.host == "127.0.0.1"
    assert (config.method, config.options, config.deadline_ms, config.control) == ("probabilistic", {"tau": 2.0},
                                                                                   100.0, "base")
    backends = build_backends(config)
    assert [b.name for b in backends] == ["base", "cand"]
    assert backends[1].engine.params["k1"] == 0.9
    assert backends[0].engine.index is backends[1].engine.index  # one index per corpus


@pytest.mark.parametrize(("text", "message"), [
    ("[oops]\n", "unknown section(s) oops"),
    ("x = ", "not valid TOML"),
    ("[experiment]\nname = 'x'\n", "no [[backends]]"),
    ("[[backends]]\nkind = 'embedded'\n", "needs a name"),
    ("[[backends]]\nname = 'A'\n[[backends]]\nname = 'A'\n", "must be distinct"),
    ("[experiment]\ndesign = 'bandit'\n[[backends]]\nname = 'A'\n[[backends]]\nname = 'B'\n", "design 'bandit'"),
    ("[[backends]]\nname = 'A'\n", "needs two or more backends"),
    ("[experiment]\nmethod = 'team_drafts'\n[[backends]]\nname = 'A'\n[[backends]]\nname = 'B'\n", "Did you mean"),
    ("[experiment]\nk = 0\n[[backends]]\nname = 'A'\n[[backends]]\nname = 'B'\n", "k must be an integer"),
])
def test_bad_configs(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises((InputError, OptionError), match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        load_config(path)


TWO_BACKENDS = "[[backends]]\nname = 'A'\n[[backends]]\nname = 'B'\n"


@pytest.mark.parametrize(("server", "message"), [
    ("port = 99999", "server.port is 99999; expected a port number from 1 to 65535."),
    ("port = 65536", "server.port is 65536; expected a port number from 1 to 65535."),
    ("port = 0", "server.port is 0; expected a port number from 1 to 65535."),
    ("port = -1", "server.port is -1; expected a port number from 1 to 65535."),
    ("port = 80.5", "server.port is 80.5; expected a port number from 1 to 65535."),
    ("port = true", "server.port is True; expected a port number from 1 to 65535."),
])
def test_config_port_out_of_range_is_refused(tmp_path: Path, server: str, message: str) -> None:
    """A port of the config file over 65535 was bound modulo 65536 (99999 bound 34463)."""
    path = tmp_path / "serve.toml"
    path.write_text(f"[server]\n{server}\n{TWO_BACKENDS}")
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: {message}"
    path.write_text(f"[server]\nport = 65535\n{TWO_BACKENDS}")
    assert load_config(path).port == 65535
    path.write_text(f"[server]\nport = '8081'\n{TWO_BACKENDS}")  # digits as a string, as int() took them
    assert load_config(path).port == 8081
    with pytest.raises(OptionError, match="port must be an integer from 1 to 65535; got 70000"):
        ServeConfig((BackendConfig("A"), BackendConfig("B")), port=70000)


@pytest.mark.parametrize("value", [None, ""])
def test_api_key_env_unset_or_empty_is_refused(tmp_path: Path, monkeypatch: Any, value: str | None) -> None:
    """``api_key_env`` naming an unset or empty variable turned authentication off in silence."""
    path = tmp_path / "serve.toml"
    path.write_text(f'[server]\napi_key_env = "SERPEVAL_TEST_UNSET_KEY"\n{TWO_BACKENDS}')
    monkeypatch.delenv("SERPEVAL_TEST_UNSET_KEY", raising=False)
    if value is not None:
        monkeypatch.setenv("SERPEVAL_TEST_UNSET_KEY", value)
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: server.api_key_env names the environment variable SERPEVAL_TEST_UNSET_KEY, which is unset or "
        "empty, so /events would take events without a key; export SERPEVAL_TEST_UNSET_KEY=KEY before starting "
        "serve, or remove api_key_env to run without a key.")
    assert "\n" not in str(caught.value)
    monkeypatch.setenv("SERPEVAL_TEST_UNSET_KEY", "s3cret")
    assert load_config(path).api_key == "s3cret"
    # a key written in the file stays the fallback: authentication is on either way
    monkeypatch.delenv("SERPEVAL_TEST_UNSET_KEY")
    path.write_text(f'[server]\napi_key_env = "SERPEVAL_TEST_UNSET_KEY"\napi_key = "k3y"\n{TWO_BACKENDS}')
    assert load_config(path).api_key == "k3y"
    path.write_text(f'[server]\napi_key_env = ""\n{TWO_BACKENDS}')
    with pytest.raises(InputError, match=r"server\.api_key_env is ''; expected the name of the environment variable"):
        load_config(path)
    path.write_text(f'[server]\napi_key = ""\n{TWO_BACKENDS}')  # a key asked for, but empty: refused too
    with pytest.raises(InputError, match=r"server\.api_key is empty; give the key, or remove api_key"):
        load_config(path)
    path.write_text(TWO_BACKENDS)  # no key asked for: none needed
    assert load_config(path).api_key is None


def test_embedded_backends_share_an_index_only_with_the_same_index_options(tmp_path: Path,
                                                                          small_corpus: Path) -> None:
    """Two embedded backends on one corpus with other ``fields`` (or ``id_field``) shared the
    first one's index: B indexed on ``text`` silently served A's title-only index (an A/A test)."""
    from serpeval.engines.embedded import EmbeddedIndex

    docs = tmp_path / "docs.jsonl"  # every document has a second id field, "alt"
    docs.write_text("".join(json.dumps({**json.loads(line), "alt": "x" + json.loads(line)["docid"]}) + "\n"
                            for line in small_corpus.read_text().splitlines()))
    config = ServeConfig((
        BackendConfig("A", "embedded", {"corpus": str(docs), "fields": ["title"]}),
        BackendConfig("B", "embedded", {"corpus": str(docs), "fields": ["text"]}),
        BackendConfig("C", "embedded", {"corpus": str(docs), "fields": ["title"], "params": {"k1": 0.9}}),
        BackendConfig("D", "embedded", {"fields": ["title"], "id_field": "alt"}),  # A's corpus by default
        BackendConfig("E", "embedded", {"corpus": str(docs)}),  # the default fields
    ))
    a, b, c, d, e = (backend.engine for backend in build_backends(config))
    assert a.index is c.index  # the same index options: one index, other search parameters
    assert c.params["k1"] == 0.9
    assert len({id(x.index) for x in (a, b, d, e)}) == 4
    queries = ["wing flow", "boundary layer", "supersonic heat transfer", "slip stream"]
    for engine, options in ((a, {"fields": ["title"]}), (b, {"fields": ["text"]}),
                            (d, {"fields": ["title"], "id_field": "alt"}), (e, {})):
        expected = EmbeddedIndex.build(docs, **options).engine(**engine.params)
        assert [[(h.doc_id, h.score) for h in q] for q in engine.search_many(queries, 10)] \
            == [[(h.doc_id, h.score) for h in q] for q in expected.search_many(queries, 10)]
    assert [h.doc_id for h in a.search("wing", 10)] != [h.doc_id for h in b.search("wing", 10)]
    assert all(h.doc_id.startswith("x") for h in d.search("wing", 10))


def test_bad_backend_settings(tmp_path: Path, small_corpus: Path) -> None:
    with pytest.raises(OptionError, match=r"expected NAME=VALUE pairs"):
        quick_config(str(small_corpus), "k1", "x.duckdb")
    with pytest.raises(OptionError, match="unknown parameter 'k2'"):
        build_backends(quick_config(str(small_corpus), "k2=1", "x.duckdb"))
    config = ServeConfig((BackendConfig("A", "embedded", {"corpus": str(small_corpus), "colour": 1}),
                          BackendConfig("B")))
    with pytest.raises(OptionError, match="unknown setting"):
        build_backends(config)
    with pytest.raises(OptionError, match="needs corpus"):
        build_backends(ServeConfig((BackendConfig("A"), BackendConfig("B"))))


# ---------------------------------------------------------------- /search

def test_search_interleaves_logs_and_replays(tmp_path: Path, small_corpus: Path,
                                             quick_backends: list[Backend]) -> None:
    config = quick(tmp_path, small_corpus)
    app = app_for(config, quick_backends, query_ids=counter_ids())

    async def body(client: Any) -> Any:
        answers = [(await client.get("/search", params={"q": q, "user": "u1", "session": "s1"})).json()
                   for q in ("wing flow", "boundary layer", "heat transfer in slabs")]
        health = (await client.get("/healthz")).json()
        return answers, health

    answers, health = run_async(with_client(app, body))
    first = answers[0]
    assert first["query_id"] == "q000000"
    assert first["variant"] == "interleaved"
    assert first["interleaved"] is True
    assert len(first["hits"]) == 10
    assert {h["team"] for h in first["hits"]} <= {"A", "B"}
    # the hits are the interleaving of what the two engines return, redrawn from the seed
    a = [h.doc_id for h in quick_backends[0].engine.search("wing flow", 10)]
    b = [h.doc_id for h in quick_backends[1].engine.search("wing flow", 10)]
    again = interleave_impression([a, b], ["A", "B"], method="team_draft", k=10,
                                  seed=derive_seed("quickstart", "q000000"))
    assert [h["id"] for h in first["hits"]] == list(again.docs)
    assert [h["team"] for h in first["hits"]] == list(again.teams)
    assert health["status"] == "ok"
    assert health["backends"] == ["A", "B"]
    store = open_store(config.store)
    rows = store.read("ubi_queries").to_pylist()
    store.close()
    assert [r["query_id"] for r in rows] == ["q000000", "q000001", "q000002"]
    attributes = json.loads(rows[0]["query_attributes"])
    assert attributes["experiment"] == "quickstart"
    assert attributes["interleaving"]["rankings"] == [a, b]
    assert rows[0]["user_query"] == "wing flow"
    assert rows[0]["session_id"] == "s1"
    report = replay(config.store)
    assert (report.checked, report.equal, report.differing) == (3, 3, [])


def test_ab_design_is_sticky_per_user(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend]) -> None:
    config = quick(tmp_path, small_corpus, design="ab", salt="s")

    async def body(client: Any) -> Any:
        out = []
        for user in ("ann", "bob", "cy", "dee", "ann", "bob", "cy", "dee"):
            out.append((user, (await client.get("/search", params={"q": "wing", "user": user})).json()))
        return out

    answers = run_async(with_client(app_for(config, quick_backends), body))
    for user, answer in answers:
        assert answer["variant"] == assign_variant("s", user, ["A", "B"])
        assert answer["interleaved"] is False
        assert {h["team"] for h in answer["hits"]} == {answer["variant"]}
        engine = quick_backends[["A", "B"].index(answer["variant"])].engine
        assert [h["id"] for h in answer["hits"]] == [h.doc_id for h in engine.search("wing", 10)]


class Late(Hanging):
    """An engine that answers after 80 ms (an inline backend cannot hang without blocking the loop)."""

    def search(self, query: str, k: int) -> list[Any]:
        time.sleep(0.08)
        return []


@pytest.mark.parametrize("inline", [False, True], ids=["thread", "inline"])  # inline: every backend is
@pytest.mark.parametrize("fault", ["hang", "error", "not a list", "no id", "twice"])  # called in turn, no gather
def test_a_faulty_backend_gives_the_control_list(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend],
                                                 fault: str, inline: bool) -> None:
    engine = {"hang": Late() if inline else Hanging(), "error": Failing()}.get(fault) or Junk(fault)
    assert quick_backends[0].inline
    backends = [quick_backends[0], Backend("B", engine, is_async=False, inline=inline)]
    config = quick(tmp_path, small_corpus, deadline_ms=50)

    async def body(client: Any) -> Any:
        answer = await client.get("/search", params={"q": "wing flow", "user": "u"})
        metrics = (await client.get("/metrics")).text
        return answer, metrics

    try:
        answer, metrics = run_async(with_client(app_for(config, backends), body))
    finally:
        engine.release.set()
    assert answer.status_code == 200
    data = answer.json()
    assert data["variant"] == "control"
    assert data["interleaved"] is False
    assert [h["id"] for h in data["hits"]] == [h.doc_id for h in quick_backends[0].engine.search("wing flow", 10)]
    assert {h["team"] for h in data["hits"]} == {"A"}
    reason = {"hang": "timeout", "error": "error"}.get(fault, "junk")
    assert f'serpeval_backend_faults_total{{backend="B",reason="{reason}"}} 1.0' in metrics
    assert 'serpeval_impressions_total{outcome="excluded"} 1.0' in metrics
    store = open_store(config.store)
    row = store.read("ubi_queries").to_pylist()[0]
    store.close()
    assert json.loads(row["query_attributes"])["excluded"].startswith(f"backend B: {reason}")
    assert row["interleaved"] is False


def test_every_backend_failing_is_still_200(tmp_path: Path, small_corpus: Path) -> None:
    config = quick(tmp_path, small_corpus, deadline_ms=50)
    backends = [Backend("A", Failing(), False), Backend("B", Failing(), False)]

    async def body(client: Any) -> Any:
        return await client.get("/search", params={"q": "x"})

    answer = run_async(with_client(app_for(config, backends), body))
    assert answer.status_code == 200
    assert answer.json()["hits"] == []
    ab = quick(tmp_path, small_corpus, design="ab", deadline_ms=50)
    answer = run_async(with_client(app_for(ab, backends), body))
    assert answer.status_code == 200
    assert answer.json()["hits"] == []


def test_ab_arm_failure_falls_back_to_control(tmp_path: Path, small_corpus: Path,
                                              quick_backends: list[Backend]) -> None:
    config = quick(tmp_path, small_corpus, design="ab", salt="s", weights=(0.0, 1.0))  # everyone in B
    backends = [quick_backends[0], Backend("B", Failing(), False)]

    async def body(client: Any) -> Any:
        return (await client.get("/search", params={"q": "wing flow", "user": "u"})).json()

    data = run_async(with_client(app_for(config, backends), body))
    assert data["variant"] == "B"
    assert {h["team"] for h in data["hits"]} == {"A"}
    assert [h["id"] for h in data["hits"]] == [h.doc_id for h in quick_backends[0].engine.search("wing flow", 10)]


def test_query_matching_nothing(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend]) -> None:
    async def body(client: Any) -> Any:
        return (await client.get("/search", params={"q": "zzzzqqq"})).json()

    data = run_async(with_client(app_for(quick(tmp_path, small_corpus), quick_backends), body))
    assert data["hits"] == []
    assert data["interleaved"] is False


@pytest.mark.parametrize(("path", "status", "message"), [
    ("/search", 400, "parameter q is required (e.g. /search?q=...)."),
    ("/search?q=", 400, "parameter q is required (e.g. /search?q=...)."),
    ("/search?q=" + "x" * 1025, 400, "parameter q is 1025 characters long; at most 1024."),
    ("/search?q=a&user=" + "u" * 101, 400, "parameter user is 101 characters long; at most 100."),
    ("/search?q=a%00b", 400, "parameter q holds a NUL character (%00); remove it."),
    ("/search?q=a&session=s%00", 400, "parameter session holds a NUL character (%00); remove it."),
    ("/search?q=a&experiment=other", 404, "unknown experiment 'other'; this service runs 'quickstart'."),
    ("/nowhere", 404, "GET /nowhere: no such route; see /openapi.json."),
])
def test_search_bad_requests(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend], path: str,
                             status: int, message: str) -> None:
    async def body(client: Any) -> Any:
        return await client.get(path)

    answer = run_async(with_client(app_for(quick(tmp_path, small_corpus), quick_backends), body))
    assert answer.status_code == status
    assert answer.json() == {"error": message}


def test_metrics_count_each_label_set_apart(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend]) -> None:
    """The series of /metrics after a mix of answers: one per label set seen, none for the others."""
    async def body(client: Any) -> Any:
        for path in ["/search?q=wing", "/search?q=flow", "/search", "/search?q=a&experiment=other",
                     "/search?q=wing+flow"]:
            await client.get(path)
        return (await client.get("/metrics")).text

    text = run_async(with_client(app_for(quick(tmp_path, small_corpus), quick_backends), body))
    series = {line.rsplit(" ", 1)[0]: line.rsplit(" ", 1)[1] for line in text.splitlines()
              if line.startswith(("serpeval_requests_total", "serpeval_impressions_total",
                                  "serpeval_request_seconds_count", "serpeval_backend_seconds_count",
                                  "serpeval_backend_faults_total"))}
    assert series == {
        'serpeval_requests_total{route="/search",status="200"}': "3.0",
        'serpeval_requests_total{route="/search",status="400"}': "1.0",
        'serpeval_requests_total{route="/search",status="404"}': "1.0",
        'serpeval_request_seconds_count{route="/search"}': "5.0",
        'serpeval_backend_seconds_count{backend="A"}': "3.0",
        'serpeval_backend_seconds_count{backend="B"}': "3.0",
        'serpeval_impressions_total{outcome="interleaved"}': "3.0",
    }


# ---------------------------------------------------------------- /events

def test_events_written_once_orphans_counted(tmp_path: Path, small_corpus: Path,
                                             quick_backends: list[Backend]) -> None:
    config = quick(tmp_path, small_corpus)

    async def body(client: Any) -> Any:
        shown = (await client.get("/search", params={"q": "wing flow", "user": "u"})).json()
        qid, doc = shown["query_id"], shown["hits"][2]["id"]
        one = await client.post("/events", json=click_event(qid, 3, doc))
        again = await client.post("/events", json=click_event(qid, 3, doc))  # a retry
        batch = await client.post("/events", json={"events": [
            click_event(qid, 1, shown["hits"][0]["id"], event_id="e1"),
            click_event("no-such-query", 1, "x", event_id="e2"),
            {"action_name": "purchase", "query_id": qid, "timestamp": "2026-12-05T01:00:03Z",
             "event_attributes": {"object": {"object_id": doc}}},
        ]})
        ndjson = await client.post("/events", content="\n".join(json.dumps(click_event(qid, 2, "d", event_id=f"n{i}"))
                                                                 for i in range(3)),
                                   headers={"content-type": "application/x-ndjson"})
        metrics = (await client.get("/metrics")).text
        return one, again, batch, ndjson, metrics

    one, again, batch, ndjson, metrics = run_async(with_client(app_for(config, quick_backends), body))
    assert one.json() == {"written": 1, "duplicates": 0, "orphans": 0}
    assert again.json() == {"written": 0, "duplicates": 1, "orphans": 0}
    assert batch.json() == {"written": 3, "duplicates": 0, "orphans": 1}
    assert ndjson.json() == {"written": 3, "duplicates": 0, "orphans": 0}
    assert "serpeval_events_written_total 7.0" in metrics
    assert "serpeval_events_duplicate_total 1.0" in metrics
    assert "serpeval_events_orphan_total 1.0" in metrics
    store = open_store(config.store)
    assert store.counts() == {"impressions": 1, "events": 7, "orphans": 1}
    store.close()


@pytest.mark.parametrize(("kwargs", "status", "start"), [
    ({"content": b"{not json"}, 400, "body is not JSON"),
    ({"json": {"action_name": "click"}}, 422, "event: 'timestamp' is a required property"),
    ({"json": [click_event("q", 1, "d")] * 3}, 422, "the batch holds 3 events; at most 2 per request."),
    ({"content": b"x" * 10_000_001}, 413, "body of 10000001 bytes; at most 1048576."),
    ({"content": b"<a/>", "headers": {"content-type": "application/xml"}}, 415, "content type 'application/xml'"),
])
def test_events_bad_input(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend], kwargs: dict[str, Any],
                          status: int, start: str) -> None:
    config = quick(tmp_path, small_corpus, max_batch=2)

    async def body(client: Any) -> Any:
        return await client.post("/events", **kwargs)

    answer = run_async(with_client(app_for(config, quick_backends), body))
    assert answer.status_code == status
    assert answer.json()["error"].startswith(start)
    assert "\n" not in answer.json()["error"]


def test_streamed_body_over_the_limit(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend]) -> None:
    config = quick(tmp_path, small_corpus, max_body_bytes=1000)

    async def chunks() -> Any:
        for _ in range(20):
            yield b"[" + b" " * 99

    async def body(client: Any) -> Any:
        return await client.post("/events", content=chunks())  # no content-length: chunked

    answer = run_async(with_client(app_for(config, quick_backends), body))
    assert answer.status_code == 413
    assert answer.json() == {"error": "body over 1000 bytes; send smaller batches."}


def test_api_key(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend]) -> None:
    config = quick(tmp_path, small_corpus, api_key="k3y")
    event = click_event("q", 1, "d")

    async def body(client: Any) -> Any:
        return [await client.post("/events", json=event),
                await client.post("/events", json=event, headers={"authorization": "Bearer wrong"}),
                await client.post("/events", json=event, headers={"authorization": "Bearer k3y"}),
                await client.post("/events", json=event, headers={"x-api-key": "k3y"})]

    answers = run_async(with_client(app_for(config, quick_backends), body))
    assert [a.status_code for a in answers] == [401, 401, 200, 200]
    assert answers[0].json()["error"] == "missing or wrong API key; send 'Authorization: Bearer <key>'."
    assert answers[3].json()["duplicates"] == 1


def test_cors_only_when_configured(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend]) -> None:
    async def body(client: Any) -> Any:
        return await client.get("/healthz", headers={"origin": "https://shop.example"})

    plain = run_async(with_client(app_for(quick(tmp_path, small_corpus), quick_backends), body))
    assert "access-control-allow-origin" not in plain.headers
    cors = run_async(with_client(app_for(quick(tmp_path, small_corpus, cors_origins=("https://shop.example",)),
                                         quick_backends), body))
    assert cors.headers["access-control-allow-origin"] == "https://shop.example"


def test_dead_database_is_503_with_retry_after(small_corpus: Path, quick_backends: list[Backend],
                                               pg_url: str) -> None:
    import psycopg

    config = quick_config(str(small_corpus), "k1=1.2,b=0.3", pg_url)
    store = open_store(pg_url)
    app = app_for(config, quick_backends, store=store)

    async def body(client: Any) -> Any:
        ok = await client.post("/events", json=click_event("q", 1, "d", event_id="a"))
        with psycopg.connect(pg_url.split("?")[0], autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (store._con.info.backend_pid,))
        refused = await client.post("/events", json=click_event("q", 1, "d", event_id="b"))
        health = (await client.get("/healthz")).json()
        retried = await client.post("/events", json=click_event("q", 1, "d", event_id="b"))
        return ok, refused, health, retried

    ok, refused, health, retried = run_async(with_client(app, body))
    assert ok.status_code == 200
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert "nothing was acknowledged, retry later" in refused.json()["error"]
    assert health["status"] == "degraded"
    assert retried.json() == {"written": 1, "duplicates": 0, "orphans": 1}


def test_openapi_and_mismatched_backends(tmp_path: Path, small_corpus: Path, quick_backends: list[Backend]) -> None:
    async def body(client: Any) -> Any:
        return (await client.get("/openapi.json")).json()

    spec = run_async(with_client(app_for(quick(tmp_path, small_corpus), quick_backends), body))
    assert set(spec["paths"]) == {"/search", "/events", "/healthz", "/metrics"}
    with pytest.raises(InputError, match="do not match"):
        app_for(quick(tmp_path, small_corpus), quick_backends[::-1])


def test_full_disk_is_503_and_acknowledged_events_stay(tmp_path: Path, small_corpus: Path,
                                                       quick_backends: list[Backend]) -> None:
    import shutil
    import subprocess

    mount = tmp_path / "tiny"
    mount.mkdir()
    if shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("mounting a small tmpfs needs root (the full-disk test runs in CI as root)")
    try:
        config = quick_config(str(small_corpus), "k1=1.2,b=0.3", str(mount / "events.duckdb"))

        async def body(client: Any) -> Any:
            acked: list[str] = []
            for i in range(2000):
                batch = [click_event("q", 1, "d", event_id=f"{i}-{j}", message="x" * 900) for j in range(50)]
                answer = await client.post("/events", json=batch)
                if answer.status_code != 200:
                    return acked, answer
                acked += [e["event_id"] for e in batch]
            return acked, None

        acked, refused = run_async(with_client(app_for(config, quick_backends), body))
        assert refused is not None
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "1"
        assert "nothing was acknowledged, retry later" in refused.json()["error"]
        shutil.copy(mount / "events.duckdb", tmp_path / "copy.duckdb")
        if (mount / "events.duckdb.wal").exists():
            shutil.copy(mount / "events.duckdb.wal", tmp_path / "copy.duckdb.wal")
        store = open_store(tmp_path / "copy.duckdb")
        stored = set(store.read("ubi_events").column("event_id").to_pylist())
        store.close()
        assert acked
        assert set(acked) <= stored
    finally:
        subprocess.run(["umount", str(mount)], check=False)
