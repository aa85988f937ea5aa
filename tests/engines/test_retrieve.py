"""serpeval.retrieve: runs with provenance, counted skips, HTTP failures, TREC topics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import DATA, need
from tests.engines.fake_engines import FakeEngines

import serpeval
from serpeval.core.errors import DuplicateError, InputError, OptionError, ParseError
from serpeval.engines.base import Hit
from serpeval.engines.embedded import EmbeddedIndex
from serpeval.engines.http import EngineError
from serpeval.engines.retrieve import make_engine, parse_assignments, retrieve
from serpeval.engines.topics import read_any_topics

CRANFIELD = DATA / "cranfield"
DOCS = [{"id": "d1", "text": "wing lift drag"}, {"id": "d2", "text": "heat transfer in slabs"},
        {"id": "d3", "text": "lift of a wing at high speed"}]


def test_embedded_run_counts_and_provenance(tmp_path: Path) -> None:
    result = serpeval.retrieve({"q1": "wing lift", "q2": "  ", "q3": "zebra", "q4": "heat"}, corpus=DOCS, k=2,
                               params={"k1": "0.9", "b": "0.4"})
    assert result.run.to_dict().keys() == {"q1", "q4"}
    assert list(result.run.to_dict()["q1"]) == ["d1", "d3"]     # d1 is shorter: the higher BM25
    assert result.empty_queries == ("q2",)
    assert result.no_hits == ("q3",)
    assert result.short_lists == 1                              # q4 matched one document of k=2
    assert result.retrieved_queries == 2
    assert dict(result.params) == {"k1": 0.9, "b": 0.4, "method": "lucene"}
    engine, digest, stamp = result.tag.split(":")
    assert (engine, digest) == ("bm25", result.config_hash)
    assert len(stamp) == 16
    assert stamp.endswith("Z")
    notes = result.notes()
    assert notes[0] == "1 topic(s) with an empty query skipped: q2"
    assert notes[1].startswith("1 query(ies) retrieved no document (absent from the run; evaluate counts them")
    assert notes[2] == "1 query(ies) retrieved fewer than k=2 documents"
    path = result.write(tmp_path / "bm25.run")
    lines = path.read_text().splitlines()
    assert lines[0].split() == ["q1", "Q0", "d1", "1", lines[0].split()[4], result.tag]
    sidecar = json.loads((tmp_path / "bm25.run.json").read_text())
    assert sidecar["config_hash"] == result.config_hash
    assert sidecar["empty_queries"] == ["q2"]
    assert sidecar["no_hits"] == ["q3"]
    assert sidecar["params"] == {"k1": 0.9, "b": 0.4, "method": "lucene"}
    assert sidecar["source"]["documents"] == 3
    reread = serpeval.read_run(path)
    assert reread.to_dict() == result.run.to_dict()            # scores survive the text round trip exactly
    assert "<table>" in result._repr_html_()


def test_cranfield_retrieve_then_evaluate(tmp_path: Path) -> None:
    need(CRANFIELD / "corpus.jsonl")
    result = retrieve(CRANFIELD / "topics.tsv", corpus=CRANFIELD / "corpus.jsonl", k=100)
    assert result.queries == 225
    assert result.retrieved_queries == 225
    path = result.write(tmp_path / "bm25.run")
    from_file = serpeval.evaluate(CRANFIELD / "qrels.trec", path, ["nDCG@10"]).to_dicts()[0]
    in_memory = serpeval.evaluate(CRANFIELD / "qrels.trec", result.run, ["nDCG@10"]).to_dicts()[0]
    assert from_file["nDCG@10"] == in_memory["nDCG@10"]
    assert 0.30 < in_memory["nDCG@10"] < 0.45


def test_http_engine_through_retrieve(tmp_path: Path) -> None:
    index = EmbeddedIndex.build(DOCS)
    with FakeEngines(index.engine(), index="docs") as server:
        config = tmp_path / "es.toml"
        config.write_text(f'preset = "elasticsearch"\nurl = "{server.url}"\nindex = "docs"\n'
                          '[http]\nretries = 0\n')
        result = retrieve({"a": "wing", "b": "heat __dup__", "c": "lift __500__"}, config, k=3, on_error="skip")
        assert result.run.to_dict() == {"a": {h.doc_id: h.score for h in index.engine().search("wing", 3)},
                                        "b": {"d2": index.engine().search("heat", 1)[0].score}}
        assert result.duplicates_removed == 1
        assert [q for q, _ in result.failed] == ["c"]
        assert "query 'lift __500__': HTTP 500" in result.failed[0][1]
        assert result.retrieved_queries == 2
        assert result.requests == 3
        assert any(n.startswith("1 query(ies) failed and were skipped: c; first: engine") for n in result.notes())
        with pytest.raises(EngineError, match="query 'lift __500__'"):
            retrieve({"c": "lift __500__"}, config, k=3)
        by_mapping = retrieve({"a": "wing"}, {"preset": "es", "url": server.url, "index": "docs"},
                              params={"field": "title"}, k=3)
        assert by_mapping.params["field"] == "title"


class ListEngine:
    """An Engine given by hand (the protocol only), answering fixed lists."""

    name = "fixed"
    def __init__(self, lists: list[list[Hit]]) -> None:
        self.lists = lists
        self.params: dict[str, object] = {}

    def search(self, query: str, k: int) -> list[Hit]:
        return self.lists[0]

    def search_many(self, queries, k):
        return self.lists

    def config_hash(self) -> str:
        return "abc"


def test_any_engine_object_duplicates_and_bad_ids() -> None:
    result = retrieve({"q": "x"}, ListEngine([[Hit("a", 2.0), Hit("b", 1.0), Hit("a", 0.5)]]), k=5)
    assert result.run.to_dict() == {"q": {"a": 2.0, "b": 1.0}}
    assert result.duplicates_removed == 1
    with pytest.raises(InputError, match=r"engine 'fixed', query q: doc id 'a b' is empty or holds whitespace"):
        retrieve({"q": "x"}, ListEngine([[Hit("a b", 1.0)]]))
    with pytest.raises(InputError, match="has score nan"):
        retrieve({"q": "x"}, ListEngine([[Hit("a", float("nan"))]]))
    with pytest.raises(InputError, match="answered 2 lists for 1 queries"):
        retrieve({"q": "x"}, ListEngine([[], []]))
    with pytest.raises(OptionError, match="params apply to an engine made here"):
        retrieve({"q": "x"}, ListEngine([[]]), params={"k1": 1})


def test_argument_errors() -> None:
    with pytest.raises(OptionError, match=r"give a corpus \(--corpus DOCS.jsonl\)"):
        make_engine()
    with pytest.raises(OptionError, match="not both"):
        make_engine("x.toml", corpus=DOCS)
    with pytest.raises(OptionError, match="k=0"):
        retrieve({"q": "x"}, corpus=DOCS, k=0)
    with pytest.raises(InputError, match="query id 'q 1' is empty or holds whitespace"):
        retrieve({"q 1": "x"}, corpus=DOCS)
    assert parse_assignments(["k1=0.9", " b = 0.4"]) == {"k1": "0.9", "b": "0.4"}
    with pytest.raises(OptionError, match=r"--param 'k1': expected NAME=VALUE \(e.g. --param k1=0.9\)"):
        parse_assignments(["k1"])
    with pytest.raises(OptionError, match="--param k1 is given twice"):
        parse_assignments(["k1=1", "k1=2"])


TREC_TOPICS = """<top>
<num> Number: 401
<title> foreign minorities, Germany

<desc> Description:
What language and cultural differences impede the integration?

<narr> Narrative:
A relevant document will focus on the causes.
</top>

<top>
<num> Number: 402 <title> Topic: behavioral genetics
<desc> Description: What is known?
</top>
"""


def test_trec_topics_file(tmp_path: Path) -> None:
    path = tmp_path / "topics.401-402.txt"
    path.write_text(TREC_TOPICS)
    assert read_any_topics(path) == {"401": "foreign minorities, Germany", "402": "behavioral genetics"}
    described = read_any_topics(path, field="desc")
    assert described["401"] == "What language and cultural differences impede the integration?"
    path.write_text(TREC_TOPICS + "<top>\n<num> Number: 401\n<title> again\n</top>\n")
    with pytest.raises(DuplicateError, match=r"topics.401-402.txt:16: topic 401 appears twice"):
        read_any_topics(path)
    path.write_text("<top>\n<title> no number\n</top>\n")
    with pytest.raises(ParseError, match=r":1: a topic without <num>"):
        read_any_topics(path)
    path.write_text("<top>\n<num> 5\n<title> open")
    with pytest.raises(ParseError, match="is not closed by </top>"):
        read_any_topics(path)
    tsv = tmp_path / "t.tsv"
    tsv.write_text("1\twing lift\n")
    assert read_any_topics(tsv) == {"1": "wing lift"}
    result = retrieve(tsv, corpus=DOCS, k=3)
    assert np.array_equal(result.run.scores, np.sort(result.run.scores)[::-1])


def test_trec_topics_edge_cases(tmp_path: Path) -> None:
    from serpeval.engines.topics import read_trec_topics

    with pytest.raises(InputError, match="field='narr'"):
        read_trec_topics(b"<top><num> 1 <title> a </top>", "t", field="narr")
    assert read_trec_topics("<top><num> 1 <title> caf\xe9 </top>".encode("latin-1"), "t") == {"1": "caf\xe9"}
    with pytest.raises(ParseError, match="topic 1 has no <desc>"):
        read_trec_topics(b"<top><num> 1 <title> a </top>", "t", field="desc")
    from serpeval.core.errors import EmptyInputError

    with pytest.raises(EmptyInputError, match="no <top> topic found"):
        read_trec_topics(b"<top", "t")


@pytest.mark.parametrize(("original", "field", "published"), [
    ("trec/core18/original/topics.core18.txt", "title", "trec/core18/topics.tsv"),
    ("trec/core18/original/topics.core18.txt", "desc", "trec/core18/topics.desc.tsv"),
    ("vaswani/original/query-text.trec", "title", "vaswani/topics.tsv"),
    ("trec/robust04/original/topics.robust04.txt", "title", "trec/robust04/topics.tsv"),
])
def test_trec_topic_files_with_closing_tags(original: str, field: str, published: str) -> None:
    # Core18's and Vaswani's topic files close each field (<num>321</num>, <title>..</title>).
    # The closing tags were read as text: Core18 failed (query id '321 </num>'), Vaswani's
    # queries silently got the ids '1</num>', '2</num>'... (no qrels match) and a '</title>'
    # word. The oracle is the TSV published next to each file in the shared data.
    from serpeval.io.topics import read_topics

    need(DATA / original)
    assert read_any_topics(DATA / original, field=field) == read_topics(DATA / published)


def test_a_query_id_that_is_not_a_string_is_named_as_such() -> None:
    # {1: "wing"} was refused as "query id 1 is empty or holds whitespace"
    with pytest.raises(InputError, match=r"query id 1 is int, expected a string; write it as '1'"):
        retrieve({1: "wing"}, corpus=[{"id": "d1", "text": "wing"}])


def test_corpus_options_with_an_engine_config_are_refused_not_ignored() -> None:
    # retrieve --engine es.toml --fields title used to run with the engine's own field, silently
    config = {"preset": "elasticsearch", "url": "http://127.0.0.1:9", "index": "docs"}
    with pytest.raises(OptionError, match=r"--fields \(fields=\) choose what the embedded engine indexes"):
        retrieve({"q": "wing"}, config, fields=["title"])
    with pytest.raises(OptionError, match=r"--id-field \(id_field=\)"):
        retrieve({"q": "wing"}, config, id_field="docno")
    with pytest.raises(OptionError, match=r"--fields \(fields=\)"):
        serpeval.sweep({"q": "wing"}, {"q": {"d": 1}}, config, grid=["field=a,b"], fields=["title"])
    with pytest.raises(OptionError, match="not both"):
        serpeval.sweep({"q": "wing"}, {"q": {"d": 1}}, config, corpus=[{"id": "d", "text": "wing"}],
                       grid=["field=a,b"])


def test_delta_without_a_method_that_reads_it_is_refused() -> None:
    # --param delta=0.7 with the default method (lucene) ran Lucene BM25 and recorded nothing of
    # delta: it was ignored silently
    docs = [{"id": "d1", "text": "wing lift"}, {"id": "d2", "text": "wing"}]
    with pytest.raises(OptionError, match=r"delta='0.7' applies to method=bm25l and method=bm25\+ only"):
        retrieve({"q": "wing"}, corpus=docs, params={"delta": "0.7"})
    r = retrieve({"q": "wing"}, corpus=docs, params={"delta": "0.7", "method": "bm25+"})
    assert r.params["delta"] == 0.7
