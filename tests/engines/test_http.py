"""HTTP engines against a real server on 127.0.0.1 answering in each engine's documented format."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.conftest import DATA, need
from tests.engines.fake_engines import FakeEngines

from serpeval.core.errors import InputError, OptionError
from serpeval.engines import AsyncEngine, Engine
from serpeval.engines.embedded import EmbeddedIndex
from serpeval.engines.http import EngineError, HttpEngine, http_engine, load_engine_config

CRANFIELD = DATA / "cranfield"


@pytest.fixture(scope="module")
def embedded() -> tuple[object, list[str]]:
    from serpeval.io.topics import read_topics

    need(CRANFIELD / "corpus.jsonl")
    index = EmbeddedIndex.build(CRANFIELD / "corpus.jsonl")
    return index.engine(), list(read_topics(CRANFIELD / "topics.tsv").values())[:30]


@pytest.fixture
def server(embedded):
    with FakeEngines(embedded[0], slow=1.0, flaky=2) as fake:
        yield fake


def engine(server: FakeEngines, preset: str, **http: object) -> HttpEngine:
    key = "collection" if preset == "solr" else "index"
    return http_engine({"preset": preset, "url": server.url, key: "docs",
                        "http": {"retries": 1, "backoff": 0.01, "timeout": 5.0, **http}})


@pytest.mark.parametrize(("preset", "batch", "path"), [
    ("elasticsearch", 0, "/docs/_search"),
    ("opensearch", 10, "/docs/_msearch"),
    ("solr", 0, "/solr/docs/select"),
    ("vespa", 0, "/search/"),
])
def test_presets_return_the_engines_hits_exactly(server, embedded, preset: str, batch: int, path: str) -> None:
    bm25, queries = embedded
    http = engine(server, preset, batch=batch, concurrency=4)
    assert isinstance(http, AsyncEngine)
    assert isinstance(http, Engine)
    fetched = http.fetch(queries, 20)
    assert fetched.hits == bm25.search_many(queries, 20)   # same ids, same scores (JSON keeps float64)
    assert fetched.failures == []
    assert fetched.duplicates_removed == 0
    assert server.requests[path] == (3 if batch else 30)
    assert fetched.requests == server.requests[path]


def test_generic_template_with_named_parameters(server, embedded) -> None:
    bm25, queries = embedded
    http = http_engine({
        "url": server.url, "name": "custom",
        "params": {"where": "docs", "fieldname": "title"},
        "request": {"method": "POST", "path": "/{{where}}/_search",
                    "body": {"query": {"match": {"{{fieldname}}": "{{query}}"}}, "size": "{{size}}"}},
        "response": {"hits": "hits.hits", "id": "_id", "score": "_score"},
    })
    request = http.build_request("wing flutter", 7)
    assert request["json"] == {"query": {"match": {"title": "wing flutter"}}, "size": 7}  # size stays a number
    assert request["url"] == f"{server.url}/docs/_search"
    assert http.search(queries[0], 5) == bm25.search(queries[0], 5)
    assert http.params["fieldname"] == "title"
    changed = http_engine({**http_config(server), "params": {"where": "docs", "fieldname": "text"}})
    assert changed.config_hash() != http.config_hash()


def http_config(server: FakeEngines) -> dict[str, object]:
    return {"url": server.url, "request": {"path": "/{{where}}/_search", "body": {"q": "{{query}}"}},
            "response": {"hits": "hits.hits", "id": "_id", "score": "_score"}}


def test_a_template_placeholder_without_a_value_is_refused(server) -> None:
    with pytest.raises(OptionError) as info:
        http_engine({"url": server.url, "_source": "es.toml", "request": {"path": "/{{index}}/_search",
                     "body": {"query": {"match": {"{{field}}": "{{query}}"}}}},
                     "response": {"hits": "hits.hits", "id": "_id", "score": "_score"}})
    assert str(info.value) == ("es.toml: the request template uses {{field}}, {{index}} but no value is given; "
                               "add 'field' and 'index' under [params] or pass --param field=VALUE.")


def test_http_500_is_one_line_naming_the_query_and_the_answer(server) -> None:
    http = engine(server, "elasticsearch")
    with pytest.raises(EngineError) as info:
        http.fetch(["wing", "lift __500__"], 10)
    message = str(info.value)
    assert message.startswith(f"engine 'elasticsearch' ({server.url}), query 'lift __500__': HTTP 500: ")
    assert "all shards failed" in message
    assert message.endswith("(after 1 retry)")
    assert "\n" not in message
    assert server.asked["lift __500__"] == 2   # asked, then retried once


def test_timeout_is_retried_then_reported(server) -> None:
    http = engine(server, "solr", timeout=0.2, retries=0)
    with pytest.raises(EngineError, match=r"query 'shock __slow__': no answer within the 0.2 s timeout$"):
        http.fetch(["shock __slow__"], 5)


def test_non_json_answer(server) -> None:
    http = engine(server, "vespa")
    with pytest.raises(EngineError, match=r"query 'x __notjson__': the answer is not JSON \(Content-Type "
                                          r"'text/html'\): <html><body>Service temporarily unavailable"):
        http.fetch(["x __notjson__"], 5)


def test_flaky_engine_recovers_with_retries_and_counts_them(server, embedded) -> None:
    bm25, queries = embedded
    http = engine(server, "elasticsearch", retries=3)
    fetched = http.fetch([queries[0] + " __flaky__"], 10)
    assert fetched.hits[0] == bm25.search(queries[0], 10)
    assert (fetched.retries, fetched.requests) == (2, 3)


def test_duplicate_ids_are_removed_and_counted(server, embedded) -> None:
    bm25, queries = embedded
    fetched = engine(server, "solr").fetch([queries[1] + " __dup__"], 10)
    expected = bm25.search(queries[1], 10)
    assert fetched.hits[0] == expected[:9]            # the answer's 10 rows held 9 distinct ids
    assert fetched.duplicates_removed == 1


def test_failures_skipped_when_asked_and_listed(server, embedded) -> None:
    bm25, queries = embedded
    fetched = engine(server, "opensearch", batch=2, retries=0).fetch([queries[0], "lift __500__", queries[2]], 10,
                                                                     on_error="skip")
    assert fetched.hits[0] == bm25.search(queries[0], 10)
    assert fetched.hits[1] is None
    assert fetched.hits[2] == bm25.search(queries[2], 10)
    assert len(fetched.failures) == 1
    position, message = fetched.failures[0]
    assert position == 1
    assert "the engine answered with an error (status 500)" in message


def test_cache_resumes_without_asking_again(server, embedded, tmp_path: Path) -> None:
    _, queries = embedded
    cache = tmp_path / "cache.jsonl"
    first = engine(server, "elasticsearch", cache=str(cache)).fetch(queries[:10], 10)
    asked = server.requests["/docs/_search"]
    assert asked == 10
    with cache.open("a") as handle:
        handle.write('{"key": "cut sho')                 # a line cut by an interrupted run is ignored
    again = engine(server, "elasticsearch", cache=str(cache)).fetch(queries[:12], 10)
    assert again.cached == 10
    assert server.requests["/docs/_search"] == asked + 2
    assert again.hits[:10] == first.hits
    other_k = engine(server, "elasticsearch", cache=str(cache)).fetch(queries[:1], 5)
    assert other_k.cached == 0                           # keyed by k too


def test_asearch_on_the_callers_client(server, embedded) -> None:
    import httpx

    bm25, queries = embedded
    http = engine(server, "vespa")

    async def go() -> list[object]:
        async with httpx.AsyncClient() as client:
            return await http.asearch(client, queries[3], 8)

    assert asyncio.run(go()) == bm25.search(queries[3], 8)
    assert http.search("zzzqqq", 5) == []                # Vespa answers without children: no hits


def test_bad_answers_name_what_is_missing(server) -> None:
    http = http_engine({"url": server.url, "request": {"path": "/docs/_search",
                        "body": {"query": {"match": {"text": "{{query}}"}}, "size": "{{size}}"}},
                        "response": {"hits": "results", "id": "_id", "score": "_score"}})
    with pytest.raises(EngineError, match=r"no hit list at 'results' in the answer .*set \[response\] hits"):
        http.search("wing", 3)
    with pytest.raises(EngineError, match="hit 1 has no id at 'doc'"):
        http_engine({**_generic(server), "response": {"hits": "hits.hits", "id": "doc", "score": "_score"}}
                    ).search("wing", 3)
    with pytest.raises(EngineError, match=r"hit 1 \(\d+\) has no finite score at 'relevance'"):
        http_engine({**_generic(server), "response": {"hits": "hits.hits", "id": "_id", "score": "relevance"}}
                    ).search("wing", 3)


def _generic(server: FakeEngines) -> dict[str, object]:
    return {"url": server.url, "request": {"path": "/docs/_search",
                                           "body": {"query": {"match": {"text": "{{query}}"}}, "size": "{{size}}"}}}


@pytest.mark.parametrize(("config", "message"), [
    ({"preset": "lucene", "url": "http://x"}, "preset 'lucene' is unknown; choose one of elasticsearch, solr, vespa"),
    ({"preset": "solr"}, "url must be an http:// or https:// address of the engine, found None."),
    ({"preset": "solr", "url": "http://x", "colection": "a"}, "unknown key(s) colection"),
    ({"preset": "solr", "url": "http://x", "collection": "a", "http": {"timeout": 0}},
     "[http] timeout = 0; expected a number >= 0.001."),
    ({"preset": "solr", "url": "http://x", "collection": "a", "http": {"retry": 2}}, "unknown [http] key(s) retry"),
    ({"url": "http://x", "request": {"path": "/s"}}, "[response] needs 'hits'"),
    # batch = "ten" was a ValueError from int(); -1 was accepted (no batching); a Solr batch
    # was accepted and ignored (Solr has no _msearch)
    ({"preset": "es", "url": "http://x", "index": "a", "http": {"batch": "ten"}},
     "[http] batch = 'ten'; expected an integer >= 0."),
    ({"preset": "es", "url": "http://x", "index": "a", "http": {"batch": -1}},
     "[http] batch = -1; expected an integer"),
    ({"preset": "solr", "url": "http://x", "collection": "a", "http": {"batch": 5}},
     "[http] batch = 5, but this engine has no batched request"),
])
def test_config_errors(config: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError) as info:
        http_engine(config)
    assert message in str(info.value)


def test_config_files(tmp_path: Path) -> None:
    toml = tmp_path / "es.toml"
    toml.write_text('preset = "elasticsearch"\nurl = "http://127.0.0.1:9200"\nindex = "cranfield"\n'
                    '[params]\nfield = "title"\n[http]\nbatch = 50\n')
    config = load_engine_config(toml)
    http = http_engine(config, {"field": "text"})
    assert http.params["field"] == "text"
    assert http.build_batch(["a", "b"], 3)["content"] == (
        b'{}\n{"query":{"match":{"text":"a"}},"size":3,"_source":false}\n'
        b'{}\n{"query":{"match":{"text":"b"}},"size":3,"_source":false}\n')
    as_json = tmp_path / "es.json"
    as_json.write_text(json.dumps({"preset": "vespa", "url": "http://h:8080"}))
    assert http_engine(load_engine_config(as_json)).build_request("q", 4)["json"]["hits"] == 4
    bad = tmp_path / "bad.toml"
    bad.write_text("preset = \n")
    with pytest.raises(InputError, match=r"bad.toml: not valid TOML"):
        load_engine_config(bad)
    with pytest.raises(InputError, match="cannot read the engine config"):
        load_engine_config(tmp_path / "missing.toml")


def test_the_event_loop_path_gives_the_same_answers(server, embedded) -> None:
    bm25, queries = embedded
    for preset, batch in [("elasticsearch", 0), ("opensearch", 4), ("solr", 0)]:
        http = engine(server, preset, batch=batch, concurrency=4)
        fetched = asyncio.run(http.afetch(queries[:8], 10))
        assert fetched.hits == bm25.search_many(queries[:8], 10)
    http = engine(server, "elasticsearch", retries=2)
    fetched = asyncio.run(http.afetch([queries[0] + " __flaky__", "x __500__", "y __notjson__"], 5, on_error="skip"))
    assert fetched.hits[0] == bm25.search(queries[0], 5)
    assert fetched.retries == 2 + 2          # two for the flaky query, two for the 500
    assert [i for i, _ in fetched.failures] == [1, 2]
    with pytest.raises(EngineError, match="HTTP 500"):
        asyncio.run(engine(server, "solr", retries=0).afetch(["x __500__"], 5))
    with pytest.raises(OptionError, match="on_error='maybe'"):
        asyncio.run(http.afetch(["x"], 5, on_error="maybe"))


def test_fetch_inside_a_running_event_loop(server, embedded) -> None:
    bm25, queries = embedded
    http = engine(server, "vespa")

    async def inside() -> object:
        return http.search_many(queries[:3], 4)

    assert asyncio.run(inside()) == bm25.search_many(queries[:3], 4)


def test_rate_limit_spaces_requests(server) -> None:
    http = engine(server, "elasticsearch", rate=50.0)
    fetched = http.fetch(["wing", "lift", "drag", "heat"], 3)
    assert fetched.requests == 4
    assert http.rate == 50.0


def test_a_parameter_no_placeholder_reads_is_refused_not_ignored(server) -> None:
    # --param fiel=title (a typo of field) used to be accepted: the request still matched the
    # default field "text", while RUN.json and the config hash recorded fiel=title as applied.
    config = {"preset": "elasticsearch", "url": server.url, "index": "docs"}
    with pytest.raises(OptionError, match=r"'fiel' is not used.*\{\{fiel\}\}.*Did you mean 'field'\?"):
        http_engine(config, {"fiel": "title"})
    with pytest.raises(OptionError, match=r"'size' cannot be set.*-k"):
        http_engine(config, {"size": 3})           # {{size}} is always k: the value would be dropped
    # a parameter the template reads is applied
    built = http_engine(config, {"field": "title"}).build_request("wing", 5)
    assert built["json"]["query"] == {"match": {"title": "wing"}}


def test_an_unknown_charset_in_the_answer_is_read_as_utf8() -> None:
    # Content-Type: application/json; charset=bogus used to raise LookupError (a traceback)
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            data = json.dumps({"hits": {"hits": [{"_id": "d1", "_score": 1.5}]}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=bogus")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        config = {"preset": "elasticsearch", "url": f"http://127.0.0.1:{server.server_address[1]}", "index": "docs",
                  "http": {"retries": 0}}
        hits = http_engine(config).search("wing", 5)
    finally:
        server.shutdown()
        server.server_close()
    assert [(h.doc_id, h.score) for h in hits] == [("d1", 1.5)]
