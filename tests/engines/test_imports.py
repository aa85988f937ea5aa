"""Other tools' judgment files: the documented example shapes of _rank_eval, SRW, Quepid and RRE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import serpeval
from serpeval.core.errors import DuplicateError, EmptyInputError, OptionError, ParseError
from serpeval.engines.imports import read_external

# The _rank_eval request body of Elasticsearch's reference (search-rank-eval), two requests, one by template.
RANK_EVAL = {
    "requests": [
        {"id": "amsterdam_query", "request": {"query": {"match": {"text": "amsterdam"}}},
         "ratings": [{"_index": "my-index-000001", "_id": "doc1", "rating": 0},
                     {"_index": "my-index-000001", "_id": "doc2", "rating": 1},
                     {"_index": "my-index-000001", "_id": "doc3", "rating": 1}]},
        {"id": "berlin_query", "template_id": "match_one_field_query", "params": {"query_string": "berlin"},
         "ratings": [{"_index": "my-index-000001", "_id": "doc1", "rating": 1}]},
    ],
    "templates": [{"id": "match_one_field_query",
                   "template": {"inline": {"query": {"match": {"title": {"query": "{{query_string}}"}}}}}}],
    "metric": {"precision": {"k": 20, "relevant_rating_threshold": 1, "ignore_unlabeled": False}},
}

# SRW's IMPORT_JUDGMENT example (docs.opensearch.org search-relevance/judgments) and a query set.
SRW = {"name": "Imported Judgments", "description": "Judgments generated outside SRW", "type": "IMPORT_JUDGMENT",
       "judgmentRatings": [
           {"query": "red dress", "ratings": [{"docId": "B077ZJXCTS", "rating": "3.000"},
                                              {"docId": "B071S6LTJJ", "rating": "2.000"},
                                              {"docId": "B07QRCGL3G", "rating": "0.000"}]},
           {"query": "blue jeans", "ratings": [{"docId": "B07L9V4Y98", "rating": "0.000"},
                                               {"docId": "B01N0DSRJC", "rating": "1.000"}]}]}

# RRE's ratings_example.json (rated-ranking-evaluator, the Solr archetype)
RRE = {"index": "core1", "corpora_file": "electric_basses.json", "id_field": "id", "topics": [
    {"description": "Fender basses", "query_groups": [
        {"name": "Brand search", "queries": [
            {"template": "only_q.json", "placeholders": {"$query": "fender"}},
            {"template": "filter_by_language.json", "placeholders": {"$query": "Fender", "$lang": "eng"}}],
         "relevant_documents": {"1": {"gain": 3}, "2": {"gain": 3}}},
        {"name": "Jazz bass search", "queries": [
            {"template": "only_q.json", "placeholders": {"$query": "jazz"}},
            {"template": "only_q.json", "placeholders": {"$query": "Jazz"}}],
         "relevant_documents": {"1": {"gain": 3}}}]}]}


def write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_rank_eval(tmp_path: Path) -> None:
    imported = read_external(write(tmp_path, "rank_eval.json", RANK_EVAL))
    assert imported.format == "rank_eval"
    assert imported.topics == {"amsterdam_query": "amsterdam", "berlin_query": "berlin"}
    assert imported.qrels.to_dict() == {"amsterdam_query": {"doc1": 0, "doc2": 1, "doc3": 1},
                                        "berlin_query": {"doc1": 1}}
    assert imported.hints["index"] == "my-index-000001"
    assert imported.hints["metric"]["precision"]["k"] == 20
    # the judgments evaluate: a run ranking doc2 first for amsterdam
    run = {"amsterdam_query": {"doc2": 2.0, "doc1": 1.0}, "berlin_query": {"doc1": 1.0}}
    assert serpeval.evaluate(imported.qrels, run, ["P@1"]).means("run") == {"P@1": 1.0}


def test_srw_with_and_without_query_set(tmp_path: Path) -> None:
    judgments = write(tmp_path, "judgments.json", SRW)
    imported = read_external(judgments)
    assert imported.format == "srw"
    assert imported.topics == {"1": "red dress", "2": "blue jeans"}
    assert imported.qrels.to_dict()["1"] == {"B077ZJXCTS": 3, "B071S6LTJJ": 2, "B07QRCGL3G": 0}
    assert imported.qrels.grades == "int"                        # "3.000" is a whole grade
    # the NDJSON query set upload form; a judged query outside it is skipped and counted
    query_set = write(tmp_path, "queries.ndjson", '{"queryText": "blue jeans"}\n{"queryText": "green hat"}\n')
    with_set = read_external(judgments, query_set=query_set)
    assert with_set.topics == {"1": "blue jeans", "2": "green hat"}
    assert with_set.qrels.to_dict() == {"1": {"B07L9V4Y98": 0, "B01N0DSRJC": 1}}
    assert with_set.skipped == {"judged queries not in the query set": 1}
    assert with_set.notes() == ["1 row(s) skipped: judged queries not in the query set"]
    as_json = write(tmp_path, "queries.json", {"name": "s", "sampling": "manual",
                                               "querySetQueries": [{"queryText": "red dress"}]})
    assert read_external(judgments, query_set=as_json).topics == {"1": "red dress"}
    llm = json.loads(json.dumps(SRW))
    llm["judgmentRatings"][0]["ratings"][0]["rating"] = "0.75"  # LLM judgments are fractions
    fractional = read_external(write(tmp_path, "llm.json", llm))
    assert fractional.qrels.grades == "float"
    assert fractional.qrels.to_dict()["1"]["B077ZJXCTS"] == 0.75


def test_quepid_basic_and_detailed(tmp_path: Path) -> None:
    basic = write(tmp_path, "case_basic.csv", 'query,doc_id,rating\r\nstar wars,11,3\r\nstar wars,1891,2\r\n'
                                              '"star wars, the empire",1891,3\r\n')
    imported = read_external(basic)
    assert imported.format == "quepid"
    assert imported.topics == {"1": "star wars", "2": "star wars, the empire"}
    assert imported.qrels.to_dict() == {"1": {"11": 3, "1891": 2}, "2": {"1891": 3}}
    detailed = write(tmp_path, "case_detailed.csv",
                     "Team Name,Case Name,Case ID,Query Text,Doc ID,Title,Rating,overview\r\n"
                     "Team,Movies,7,star wars,11,Star Wars,3,a long time ago\r\n"
                     "Team,Movies,7,star wars,12,Finding Nemo,,fish\r\n"
                     "Team,Movies,7,star wars,11,Star Wars,3,again\r\n")
    imported = read_external(detailed)
    assert imported.qrels.to_dict() == {"1": {"11": 3}}
    assert imported.skipped == {"unrated documents (empty rating)": 1}
    assert imported.duplicates == 1
    assert imported.hints == {"case": "Movies"}
    clash = write(tmp_path, "clash.csv", "query,doc_id,rating\nq,1,3\nq,1,2\n")
    with pytest.raises(DuplicateError, match=r"clash.csv:3: query 1 judges document 1 2, but .*clash.csv:2 gave 3"):
        read_external(clash)
    with pytest.raises(ParseError, match=r"bad.csv:2: rating 'high' is not a number"):
        read_external(write(tmp_path, "bad.csv", "query,doc_id,rating\nq,1,high\n"))


def test_quepid_server_basic_export_with_docid_and_unrated_queries(tmp_path: Path) -> None:
    """Quepid's server-side basic export (show.basic.csv.erb) heads its columns query,docid,rating
    and writes a query with no rated document as a row of one cell: read, that row skipped and
    counted (both were refused: 'doc_id' was the only header taken, the row 'had 1 columns')."""
    export = write(tmp_path, "case_basic.csv", "query,docid,rating\nstar wars,11,3\nnothing rated yet\n"
                                               "star trek,12,1\n")
    imported = read_external(export)
    assert imported.format == "quepid"
    assert imported.topics == {"1": "star wars", "2": "star trek"}
    assert imported.qrels.to_dict() == {"1": {"11": 3}, "2": {"12": 1}}
    assert imported.skipped == {"queries with no rated document": 1}


def test_a_judgments_file_that_is_not_utf8_is_refused_with_its_line(tmp_path: Path) -> None:
    """caf\xe9 and caf\xeb (Latin-1) both became 'caf\ufffd': two queries made one, or a false
    'conflicting grade' error."""
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"query,doc_id,rating\ncaf\xe9,d1,3\ncaf\xeb,d2,1\n")
    with pytest.raises(ParseError, match=r"latin1.csv:2: not UTF-8 text \(byte 0xe9\); save the file as UTF-8"):
        read_external(path)


def test_rre(tmp_path: Path) -> None:
    imported = read_external(write(tmp_path, "ratings.json", RRE))
    assert imported.format == "rre"
    assert imported.topics == {"1": "fender", "2": "Fender", "3": "jazz", "4": "Jazz"}
    assert imported.groups == {"1": "Brand search", "2": "Brand search", "3": "Jazz bass search",
                               "4": "Jazz bass search"}
    assert imported.qrels.to_dict() == {"1": {"1": 3, "2": 3}, "2": {"1": 3, "2": 3}, "3": {"1": 3}, "4": {"1": 3}}
    assert imported.hints["index"] == "core1"
    assert imported.hints["templates"] == ["only_q.json", "filter_by_language.json"]
    old = {"query_groups": [{"name": "g", "queries": [{"placeholders": {"$query": "bass"}}],
                             "relevant_documents": {"2": ["a", "b"], "1": ["c"]}}]}
    assert read_external(write(tmp_path, "old.json", old)).qrels.to_dict() == {"1": {"a": 2, "b": 2, "c": 1}}


def test_write_and_use_with_retrieve(tmp_path: Path) -> None:
    imported = read_external(write(tmp_path, "ratings.json", RRE))
    written = imported.write(tmp_path / "rre")
    assert [p.name for p in written] == ["rre.qrels", "rre.topics.tsv", "rre.groups.tsv", "rre.hints.json"]
    assert (tmp_path / "rre.topics.tsv").read_text().splitlines()[0] == "1\tfender"
    assert serpeval.read_qrels(tmp_path / "rre.qrels").to_dict() == imported.qrels.to_dict()
    docs = [{"id": "1", "text": "fender jazz bass"}, {"id": "2", "text": "fender precision"},
            {"id": "3", "text": "gibson"}]
    result = serpeval.retrieve(tmp_path / "rre.topics.tsv", corpus=docs, k=3)
    assert serpeval.evaluate(tmp_path / "rre.qrels", result.run, ["P@1"]).means("bm25")["P@1"] == 1.0


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"not a recognised judgments file .*found keys a"):
        read_external(write(tmp_path, "x.json", {"a": 1}))
    with pytest.raises(OptionError, match="first line 'qid docid'"):
        read_external(write(tmp_path, "x.txt", "qid docid\n"))
    with pytest.raises(ParseError, match=r"requests\[0\]: expected the request id at 'id', found nothing"):
        read_external(write(tmp_path, "r.json", {"requests": [{"ratings": []}]}))
    with pytest.raises(ParseError, match="query id 'a b' is empty or holds whitespace"):
        read_external(write(tmp_path, "r.json", {"requests": [{"id": "a b", "request": {}, "ratings": []}]}))
    with pytest.raises(EmptyInputError, match="no judgment found in the rank_eval file"):
        read_external(write(tmp_path, "r.json", {"requests": [{"id": "a", "request": {}, "ratings": []}]}))
    with pytest.raises(OptionError, match="a query set goes with SRW judgments"):
        read_external(write(tmp_path, "ratings.json", RRE), query_set=tmp_path / "ratings.json")
    with pytest.raises(ParseError, match=r"relevant_documents: document '1' has 'x'"):
        read_external(write(tmp_path, "o.json", {"query_groups": [{"queries": [{"placeholders": {"$query": "b"}}],
                                                                   "relevant_documents": {"1": "x"}}]}))


def test_more_shapes_and_errors(tmp_path: Path) -> None:
    body = {"requests": [
        {"id": "a",
         "request": {"query": {"bool": {"must": [{"multi_match": {"query": "wing lift", "fields": ["t"]}}]}}},
         "ratings": [{"_index": "i1", "_id": 7, "rating": 2}]},
        {"id": "b", "request": {"query": {"match": {"title": {"query": "heat", "operator": "and"}}}},
         "ratings": [{"_index": "i2", "_id": "x", "rating": 1}]},
        {"id": "c", "request": {"query": {"term": {"tag": "z"}}}, "ratings": [{"_id": "y", "rating": 1}]},
        {"id": "d", "template_id": "t", "params": {"size": 3, "words": "drag"}, "ratings": [{"_id": "y", "rating": 0}]},
    ]}
    imported = read_external(write(tmp_path, "r.json", body), format="rank_eval")
    assert imported.topics == {"a": "wing lift", "b": "heat", "c": "", "d": "drag"}
    assert imported.qrels.to_dict()["a"] == {"7": 2}
    assert "index" not in imported.hints                      # two indexes: no single hint
    assert imported.skipped == {"requests whose query text could not be found (no match/query_string query)": 1}
    with pytest.raises(ParseError, match=r"requests\[0\]: expected a 'request' or 'template_id' with 'params'"):
        read_external(write(tmp_path, "r.json", {"requests": [{"id": "a", "ratings": []}]}))
    with pytest.raises(ParseError, match=r"ratings\[0\]: expected an object with _id and rating"):
        read_external(write(tmp_path, "r.json", {"requests": [{"id": "a", "request": {}, "ratings": [3]}]}))
    with pytest.raises(ParseError, match="rating True is not a number"):
        read_external(write(tmp_path, "r.json", {"requests": [{"id": "a", "request": {},
                                                                "ratings": [{"_id": "d", "rating": True}]}]}))
    with pytest.raises(ParseError, match="rating 'inf' is not finite"):
        read_external(write(tmp_path, "q.csv", "query,doc_id,rating\nq,1,inf\n"))
    with pytest.raises(ParseError, match="doc id 'a b' is empty, not a string or holds whitespace"):
        read_external(write(tmp_path, "q.csv", "query,doc_id,rating\nq,a b,1\n"))
    with pytest.raises(ParseError, match=r"q.csv:1: expected Quepid's columns"):
        read_external(write(tmp_path, "q.csv", "query,doc_id,score\nq,1,1\n"), format="quepid")
    with pytest.raises(ParseError, match=r"q.csv:2: 2 columns, expected at least 3"):
        read_external(write(tmp_path, "q.csv", "query,doc_id,rating\nq,1\n"))
    with pytest.raises(EmptyInputError, match="the Quepid export is empty"):
        read_external(write(tmp_path, "q.csv", ""), format="quepid")
    with pytest.raises(ParseError, match="not valid JSON"):
        read_external(write(tmp_path, "b.json", "{oops"))
    with pytest.raises(ParseError, match="not valid JSON"):
        read_external(write(tmp_path, "b.json", "{oops"), format="rre")
    with pytest.raises(ParseError, match="expected an object with topics or query_groups"):
        read_external(write(tmp_path, "b.json", "[1]"), format="rre")
    with pytest.raises(ParseError, match="expected 'topics' \\(a list\\) or 'query_groups'"):
        read_external(write(tmp_path, "b.json", {"index": "x"}), format="rre")
    with pytest.raises(ParseError, match=r"queries\[0\]: no \$query placeholder"):
        read_external(write(tmp_path, "b.json", {"query_groups": [{"queries": [{"placeholders": {"$n": 3}}],
                                                                   "relevant_documents": {"1": 1}}]}))
    with pytest.raises(OptionError, match="format 'x' is unknown"):
        read_external(write(tmp_path, "b.json", "{}"), format="x")


def test_srw_query_set_errors(tmp_path: Path) -> None:
    judgments = write(tmp_path, "j.json", SRW)
    with pytest.raises(ParseError, match=r"set.ndjson:2: not valid JSON"):
        read_external(judgments, query_set=write(tmp_path, "set.ndjson", '{"queryText": "a"}\n{oops\n'))
    with pytest.raises(EmptyInputError, match="no query in the query set"):
        read_external(judgments, query_set=write(tmp_path, "set.json", {"querySetQueries": []}))
    single = read_external(judgments, query_set=write(tmp_path, "one.json", {"queryText": "red dress"}))
    assert single.topics == {"1": "red dress"}
    with pytest.raises(ParseError, match=r"ratings\[0\]: expected an object with docId and rating"):
        read_external(write(tmp_path, "j2.json", {"judgmentRatings": [{"query": "q", "ratings": ["x"]}]}))


def test_rre_reads_rating_when_there_is_no_gain_and_rre_s_default_grade_otherwise(tmp_path: Path) -> None:
    # RRE grades a judged document by its "gain", else its "rating" (Func.gainOrRatingNode),
    # else its default missing grade 2 (MetricClassConfigurationManager.defaultMissingGrade).
    # serpeval read {"rating": 3} and {} both as gain 1.
    ratings = {"query_groups": [{"name": "g", "queries": [{"placeholders": {"$query": "bass"}}],
                                 "relevant_documents": {"a": {"rating": 3}, "b": {}, "c": {"gain": 1, "rating": 3}}}]}
    imported = read_external(write(tmp_path, "ratings.json", ratings))
    assert imported.qrels.to_dict() == {"1": {"a": 3, "b": 2, "c": 1}}
    assert imported.assumed == {"judged documents with neither gain nor rating given RRE's default grade 2": 1}
    assert "1 judged documents with neither gain nor rating given RRE's default grade 2" in imported.notes()
