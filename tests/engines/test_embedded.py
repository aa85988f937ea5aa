"""The embedded BM25 engine: scores against an independent formula, ties, real retrieval on Cranfield."""

from __future__ import annotations

import gzip
import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import DATA, need

from serpeval.core.errors import DuplicateError, EmptyInputError, OptionError, ParseError
from serpeval.engines import Engine, Hit
from serpeval.engines.embedded import BM25_DEFAULTS, BM25_METHODS, EmbeddedIndex, parse_params

CRANFIELD = DATA / "cranfield"

DOCS = [
    {"docid": "d1", "text": "the quick brown fox jumps over the lazy dog"},
    {"docid": "d2", "text": "quick quick quick fox"},
    {"docid": "d3", "text": "a dog and a cat"},
    {"docid": "d4", "text": ""},
    {"docid": "d5", "text": "brown bears eat fish in the river near the brown hills"},
]


def lucene_bm25(docs: list[list[str]], query: list[str], k1: float, b: float) -> list[float]:
    """Lucene's BM25 (BM25Similarity since Lucene 8, LUCENE-8563: no (k1 + 1) factor in the numerator),
    written from the formula, independent of bm25s:
    idf = ln(1 + (N - df + .5)/(df + .5)), tf part = tf / (tf + k1 (1 - b + b dl/avgdl))."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    df = Counter(t for d in docs for t in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        score = 0.0
        for t in query:
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(d) / avgdl))
        out.append(score)
    return out


def test_scores_match_the_lucene_formula_computed_independently() -> None:
    index = EmbeddedIndex.build(DOCS, stemmer=None, stopwords=None)
    # bm25s's default splitter keeps words of two or more word characters, lower-cased
    tokens = [re.findall(r"(?u)\b\w\w+\b", d["text"].lower()) for d in DOCS]
    assert tokens[2] == ["dog", "and", "cat"]
    for k1, b in [(1.2, 0.75), (0.9, 0.4), (2.0, 1.0), (0.0, 0.0)]:
        engine = index.engine(k1=k1, b=b)
        for query in ["quick fox", "brown dog dog", "cat", "brown"]:
            expected = lucene_bm25(tokens, query.split(), k1, b)
            hits = engine.search(query, 10)
            got = {h.doc_id: h.score for h in hits}
            matching = {DOCS[i]["docid"]: s for i, s in enumerate(expected)
                        if any(t in tokens[i] for t in query.split())}
            assert set(got) == set(matching), (k1, b, query)
            for doc, score in matching.items():
                assert got[doc] == pytest.approx(score, rel=1e-6), (k1, b, query, doc)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_only_matching_documents_and_the_empty_document_is_never_retrieved() -> None:
    index = EmbeddedIndex.build(DOCS, stemmer=None, stopwords=None)
    assert index.empty_documents == 1
    engine = index.engine()
    assert [h.doc_id for h in engine.search("cat", 10)] == ["d3"]
    assert engine.search("zebra", 10) == []      # no word in the corpus: nothing retrieved
    assert engine.search("", 10) == []
    assert len(engine.search("the", 1)) == 1     # k caps the list


def test_ties_are_broken_by_doc_id_descending_in_byte_order() -> None:
    # identical documents with ids of mixed lengths: byte order puts "9" > "10" > "1" and "é" above all ASCII
    ids = ["1", "10", "9", "b", "B", "é", "a10"]
    index = EmbeddedIndex.build([{"id": i, "text": "same words here"} for i in ids], stemmer=None, stopwords=None)
    hits = index.engine().search("words", 10)
    assert len({h.score for h in hits}) == 1
    assert [h.doc_id for h in hits] == sorted(ids, key=lambda s: s.encode(), reverse=True)
    assert [h.doc_id for h in index.engine().search("words", 3)] == ["é", "b", "a10"]


def test_engine_protocol_hash_and_params() -> None:
    index = EmbeddedIndex.build(DOCS)
    engine = index.engine(k1=0.9, b=0.4)
    assert isinstance(engine, Engine)
    assert dict(engine.params) == {"k1": 0.9, "b": 0.4, "method": "lucene"}
    assert engine.config_hash() == index.engine(k1="0.9", b="0.40").config_hash()  # type: ignore[arg-type]
    assert engine.config_hash() != index.engine(k1=1.0, b=0.4).config_hash()
    assert "delta" in index.engine(method="bm25+").params
    other = EmbeddedIndex.build([*DOCS[:-1], {"docid": "d5", "text": "changed"}])
    assert other.engine(k1=0.9, b=0.4).config_hash() != engine.config_hash()
    many = engine.search_many(["quick", "dog", "zebra"], 2)
    assert many == [engine.search("quick", 2), engine.search("dog", 2), []]
    assert all(isinstance(h, Hit) for hits in many for h in hits)


def test_weights_built_once_per_setting() -> None:
    index = EmbeddedIndex.build(DOCS)
    a = index.engine(k1=0.9, b=0.4)
    b = index.engine(k1=0.9, b=0.4)
    assert a._weights is b._weights
    assert len(index._models) == 1
    index.engine(method="bm25l", delta=0.3)
    assert len(index._models) == 2
    index.forget()
    assert index._models == {}


@pytest.mark.parametrize(("params", "message"), [
    ({"k2": 1},
     "unknown parameter 'k2' of the embedded BM25 engine; it takes k1, b, method, delta. Did you mean 'k1'?"),
    ({"b": 1.5}, "b=1.5 is out of range; expected between 0 and 1."),
    ({"k1": -1}, "k1=-1 is out of range; expected a finite number >= 0."),
    ({"k1": "nan"}, "k1='nan' is out of range; expected a finite number >= 0."),
    ({"k1": "fast"}, "k1='fast' is not a number."),
    ({"method": "bm42"}, "method='bm42' is not a BM25 variant of the embedded engine; choose one of lucene, "
                         "robertson, atire, bm25l, bm25+."),
])
def test_bad_parameters(params: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError) as info:
        parse_params(params)
    assert str(info.value) == message


def test_defaults_are_lucenes() -> None:
    assert dict(BM25_DEFAULTS) == {"k1": 1.2, "b": 0.75, "method": "lucene", "delta": 0.5}
    with pytest.raises(OptionError, match="k=0"):
        EmbeddedIndex.build(DOCS).engine().rank(["dog"], 0)


def test_corpus_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"docid": "a", "text": "x"}\n\n{"docid": "a", "text": "y"}\n')
    with pytest.raises(DuplicateError, match=rf"^{path}:3: doc id 'a' appears twice \(first at {path}:1\)"):
        EmbeddedIndex.build(path)
    path.write_text('{"docid": "a", "text": "x"}\n{"text": "y"}\n')
    with pytest.raises(ParseError, match=rf"^{path}:2: the doc id field 'docid' is missing"):
        EmbeddedIndex.build(path)
    path.write_text('{"docid": "a", "text": "x"}\nnot json\n')
    with pytest.raises(ParseError, match=rf"^{path}:2: not valid JSON"):
        EmbeddedIndex.build(path)
    path.write_text('{"name": "a", "n": 3}\n')
    with pytest.raises(ParseError, match="no doc id field; expected one of docid, doc_id, docno, _id, id, found n, n"):
        EmbeddedIndex.build(path)
    path.write_text('{"docid": "a", "text": 3}\n')
    with pytest.raises(ParseError, match="field 'text' is int, expected a string"):
        EmbeddedIndex.build(path)
    path.write_text("\n")
    with pytest.raises(EmptyInputError, match="holds no document"):
        EmbeddedIndex.build(path)
    with pytest.raises(ParseError, match="item 1 is str"):
        EmbeddedIndex.build(["text"])  # type: ignore[list-item]
    with pytest.raises(OptionError, match="not a Snowball language"):
        EmbeddedIndex.build(DOCS, stemmer="klingon")
    # a field named to index that no document has (a typo) indexed less than asked without a word
    path.write_text('{"docid": "a", "title": "wing", "text": "flow"}\n{"docid": "b", "title": null, "text": "lift"}\n')
    with pytest.raises(OptionError, match=rf"^{path}: no document has a value in the field\(s\) 'txt' named to index; "
                                          r"the documents' fields are 'text', 'title'\. Check the names"):
        EmbeddedIndex.build(path, fields=["title", "txt"])
    assert EmbeddedIndex.build(path, fields=["title"]).doc_ids == ["a", "b"]  # null in one document: fine


def test_a_document_text_may_hold_line_separators_raw(tmp_path: Path) -> None:
    """JSON allows U+2028, U+2029, NEL and a form feed... raw inside a string (json.dumps with
    ensure_ascii=False writes them so; scraped text holds them). The corpus reader split lines
    with str.splitlines, which ends a line there too: the document was cut in two and refused
    as "not valid JSON". Lines end at LF, CRLF or CR only now; line numbers count those."""
    texts = ["wing\u2028flutter", "lift\u2029drag\x85shock", "nose\x0cboundary\x1clayer"]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"docid": f"d{i}", "text": t}, ensure_ascii=False) + "\r\n"
                            for i, t in enumerate(texts)), encoding="utf-8", newline="")
    assert "\u2028" in path.read_text(encoding="utf-8")  # written raw
    index = EmbeddedIndex.build(path)
    assert index.doc_ids == ["d0", "d1", "d2"]
    assert [h.doc_id for h in index.engine().search("flutter", k=3)] == ["d0"]
    assert [h.doc_id for h in index.engine().search("shock", k=3)] == ["d1"]
    path.write_text(path.read_text(encoding="utf-8") + "not json\n", encoding="utf-8")
    with pytest.raises(ParseError, match=rf"^{re.escape(str(path))}:4: not valid JSON"):
        EmbeddedIndex.build(path)


def test_default_fields_are_those_any_document_has() -> None:
    """The default text fields came from the first document only: a corpus whose first document
    has no title lost every title without a word (b's 'wing' was not indexed). Now the fields
    of TEXT_FIELDS that any document holds as text, in that order."""
    docs = [{"docid": "a", "text": "flow over plates"},
            {"docid": "b", "title": "wing", "text": "lift"},
            {"docid": "c", "title": None, "abstract": "wing flutter", "text": "noise"}]
    index = EmbeddedIndex.build(docs)
    assert index.fields == ("title", "text", "abstract")
    assert sorted(h.doc_id for h in index.engine().search("wing", k=5)) == ["b", "c"]
    only_other = EmbeddedIndex.build([{"docid": "a", "n": 3}, {"docid": "b", "note": "wing"}])
    assert only_other.fields == ("note",)  # no field of TEXT_FIELDS: every string field but the id


def test_gzip_corpus_and_integer_ids(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(json.dumps({"id": i, "body": t}).encode() + b"\n"
                                            for i, t in [(1, "alpha beta"), (2, "beta gamma")])))
    index = EmbeddedIndex.build(path)
    assert (index.id_field, index.fields, index.doc_ids) == ("id", ("body",), ["1", "2"])
    assert [h.doc_id for h in index.engine().search("gamma", 5)] == ["2"]


@pytest.fixture(scope="module")
def cranfield() -> tuple[EmbeddedIndex, dict[str, str]]:
    from serpeval.io.topics import read_topics

    need(CRANFIELD / "corpus.jsonl")
    return EmbeddedIndex.build(CRANFIELD / "corpus.jsonl"), read_topics(CRANFIELD / "topics.tsv")


def test_cranfield_bm25_is_in_the_published_range_and_deterministic(cranfield) -> None:
    import pyarrow as pa

    import serpeval
    from serpeval.core.data import Run

    index, topics = cranfield
    assert len(index) == 1400
    assert index.fields == ("title", "text")
    assert index.empty_documents == 2
    engine = index.engine()
    ranking = engine.rank(list(topics.values()), 1000)
    assert len(ranking.counts()) == 225
    assert ranking.counts().min() > 0
    run = Run(pa.array(np.repeat(np.array(list(topics)), ranking.counts())),
              pa.array([index.doc_ids[i] for i in ranking.doc_index]), ranking.scores, name="bm25")
    row = serpeval.evaluate(CRANFIELD / "qrels.trec", run, ["nDCG@10", "AP"]).to_dicts()[0]
    # Published BM25 on Cranfield: MAP ~0.27-0.31 (Terrier/Anserini-style indexes, stemming, stop words)
    assert row["queries"] == 225
    assert 0.25 < row["AP"] < 0.35
    assert 0.30 < row["nDCG@10"] < 0.45
    again = index.engine().rank(list(topics.values()), 1000)
    assert np.array_equal(again.doc_index, ranking.doc_index)
    assert np.array_equal(again.scores, ranking.scores)


def test_cranfield_scores_equal_bm25s_own_scorer(cranfield) -> None:
    import bm25s

    index, topics = cranfield
    queries = list(topics.values())[:40]
    for method in ("lucene", "robertson", "bm25+"):
        engine = index.engine(k1=0.9, b=0.4, method=method)
        ranking = engine.rank(queries, 50)
        model = bm25s.BM25(k1=0.9, b=0.4, method=method)
        model.index((index._token_ids, index._vocab), show_progress=False, create_empty_token=False)
        tokens = index._tokenizer.tokenize(queries, update_vocab=False, show_progress=False, return_as="ids")
        for i, ids in enumerate(tokens):
            full = model.get_scores_from_ids([t for t in ids if t != index._vocab[""]])
            a, b = ranking.offsets[i], ranking.offsets[i + 1]
            np.testing.assert_allclose(ranking.scores[a:b], full[ranking.doc_index[a:b]], rtol=1e-5)
            # nothing outside the list scores higher than its last hit, among matching documents
            assert b - a == 50
            outside = np.setdiff1d(np.flatnonzero(index._presence[:, ids].sum(axis=1).A1 > 0), ranking.doc_index[a:b])
            assert (full[outside] <= ranking.scores[b - 1] + 1e-5).all()


def test_weights_are_bm25s_bit_for_bit(cranfield) -> None:
    import bm25s

    index, _ = cranfield
    for method, k1, b in [("lucene", 1.2, 0.75), ("robertson", 0.9, 0.4), ("atire", 2.0, 1.0), ("bm25l", 0.5, 0.0),
                          ("bm25+", 1.5, 0.3)]:
        engine = index.engine(k1=k1, b=b, method=method)
        model = bm25s.BM25(k1=k1, b=b, method=method)
        model.index((index._token_ids, index._vocab), show_progress=False, create_empty_token=False)
        import scipy.sparse as sp

        theirs = sp.csc_matrix((model.scores["data"], model.scores["indices"], model.scores["indptr"]),
                               shape=engine._weights.shape)
        ours = engine._weights
        assert ours.dtype == theirs.dtype == np.float32
        assert (ours != theirs).nnz == 0, method
        if method in ("bm25l", "bm25+"):
            assert np.array_equal(engine._nonoccurrence, model.nonoccurrence_array)


def test_top_k_equals_a_stable_sort_with_ties() -> None:
    from serpeval.engines.embedded import _top_k

    rng = np.random.default_rng(5)
    for n, k in [(50, 1), (50, 7), (50, 49), (50, 50), (300, 100)]:
        scores = rng.integers(0, 6, size=(20, n)).astype(np.float64)   # heavy ties
        scores[rng.random((20, n)) < 0.3] = -np.inf
        expected = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        assert np.array_equal(_top_k(scores, k), expected), (n, k)


@pytest.mark.parametrize(("method", "k1", "b"), [("lucene", 1.2, 0.75), ("lucene", 1.2, 0.3), ("robertson", 0.9, 0.4),
                                                 ("atire", 2.0, 1.0), ("bm25l", 0.5, 0.0), ("bm25+", 1.5, 0.3)])
def test_search_of_one_query_equals_the_batch_path_bit_for_bit_on_cranfield(cranfield, method: str, k1: float,
                                                                           b: float) -> None:
    """``search`` (serve's per-request path, no sparse product) gives the hits and float scores
    of ``rank`` for every method, k from 1 to past the corpus, topics and word salads with
    repeated, unknown and stop words."""
    import random

    index, topics = cranfield
    queries = list(topics.values())
    words = " ".join(queries).split()
    rnd = random.Random(7)
    queries += [" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 25))) for _ in range(40)]
    queries += ["", "zzzz qqqq", "the of and", "flow flow flow flow"]
    compared = 0
    engine = index.engine(k1=k1, b=b, method=method)
    for k in (1, 10):
        for query, hits in zip(queries, engine.rank(queries, k).hits(), strict=True):
            assert engine.search(query, k) == hits, (method, k, query)
            compared += len(hits)
    # k past the corpus: every matching doc (~230k hits), compared with the ranking's arrays
    # (doc ids, float scores: what hits() pairs up) rather than as Hit objects built on both
    # sides (most of this test's time)
    ranking = engine.rank(queries, 2000)
    bounds, ids = ranking.offsets.tolist(), ranking.doc_ids
    doc_ids = [ids[i] for i in ranking.doc_index.tolist()]
    scores = ranking.scores.tolist()
    assert len(bounds) == len(queries) + 1  # no query left out of the comparison below
    assert bounds[-1] == len(doc_ids) == len(scores)
    for query, start, stop in zip(queries, bounds, bounds[1:], strict=False):
        found = engine.search(query, 2000)
        assert [h.doc_id for h in found] == doc_ids[start:stop], (method, query)
        assert [h.score for h in found] == scores[start:stop], (method, query)
        compared += len(found)
    assert compared > 200_000


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "dd", "e", "ff"]), max_size=8), min_size=1, max_size=30),
       st.lists(st.sampled_from(["a", "b", "c", "dd", "zz"]), max_size=6), st.integers(1, 40),
       st.sampled_from(BM25_METHODS))
def test_search_equals_the_batch_path_on_tie_heavy_corpora(texts: list[list[str]], query: list[str], k: int,
                                                           method: str) -> None:
    """Tiny vocabularies make many documents score the same: the tie order (doc id descending)
    must come out of ``search`` exactly as out of ``rank``."""
    docs = [{"docid": f"d{i * 7 % 31}-{i}", "text": " ".join(t)} for i, t in enumerate(texts)]
    index = EmbeddedIndex.build(docs, stemmer=None, stopwords=None)
    engine = index.engine(method=method)
    text = " ".join(query)
    assert engine.search(text, k) == engine.rank([text], k).hits()[0]


def test_k1_zero_is_refused_where_bm25s_s_formula_is_0_over_0() -> None:
    # bm25+ (any delta) and bm25l with delta=0 at k1=0: the term-frequency part of a term absent
    # from a document is (k1+1)*0 / (k1*norm + 0) = 0/0 in bm25s's formula. The engine used to
    # return NaN scores; the batch path then ranked documents holding no query term first, at
    # score -inf (retrieve wrote them to the run).
    docs = [{"id": "a", "text": "alpha beta"}, {"id": "b", "text": "alpha"}, {"id": "c", "text": "gamma"}]
    index = EmbeddedIndex.build(docs)
    for method, delta in (("bm25+", 0.5), ("bm25+", 0.0), ("bm25l", 0.0)):
        with pytest.raises(OptionError, match=rf"k1=0 with method={re.escape(method)}.*0/0.*use k1 > 0"):
            index.engine(method=method, k1=0, delta=delta)
    # k1 = 0 where the formula is defined: Lucene's tf part is 1 for a term present, so the score
    # is the idf, ln(1 + (3 - 2 + 0.5)/(2 + 0.5)) = ln(1.6) = 0.470004 for both documents with
    # "alpha", tied, so doc id descending: b, then a; c does not hold the term.
    hits = index.engine(k1=0).search_many(["alpha"], 10)[0]
    assert [h.doc_id for h in hits] == ["b", "a"]
    assert [h.score for h in hits] == pytest.approx([math.log(1.6)] * 2, rel=1e-6)
    # bm25l with k1 = 0 and delta > 0 is defined ((0 + delta)/(0 + delta) = 1 when absent)
    assert all(math.isfinite(h.score) for h in index.engine(method="bm25l", k1=0, delta=0.5).search("alpha", 3))


def test_an_empty_field_list_is_refused() -> None:
    # fields=[] (--fields ",") indexed no text at all: every document empty, every query
    # without a hit, and the only error came later ("retrieved no document")
    with pytest.raises(OptionError, match=r"names no field to index"):
        EmbeddedIndex.build([{"id": "d1", "text": "wing"}], fields=[])
