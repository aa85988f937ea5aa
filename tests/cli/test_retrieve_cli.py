"""serpeval retrieve on the command line: the quick start's command, its sidecar, its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import DATA, need

from serpeval.cli.app import main

CRANFIELD = DATA / "cranfield"


def test_quick_start_retrieve_then_evaluate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    need(CRANFIELD / "corpus.jsonl")
    run = tmp_path / "bm25.run"
    assert main(["retrieve", "--corpus", str(CRANFIELD / "corpus.jsonl"), "--topics", str(CRANFIELD / "topics.tsv"),
                 "-o", str(run), "--param", "k1=0.9", "--param", "b=0.4", "-k", "100"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith(f"{run}: ")
    assert "225 of 225 queries, engine bm25 (k1=0.9, b=0.4, method=lucene), config " in out.out
    assert out.err == ""        # every Cranfield query matches at least 100 documents
    sidecar = json.loads((tmp_path / "bm25.run.json").read_text())
    assert sidecar["params"] == {"k1": 0.9, "b": 0.4, "method": "lucene"}
    assert run.read_text().splitlines()[0].endswith(sidecar["tag"])
    assert main(["evaluate", str(CRANFIELD / "qrels.trec"), str(run), "-m", "nDCG@10", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["results"][0]["queries"] == 225
    assert 0.30 < payload["results"][0]["nDCG@10"] < 0.45


def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "wing"}\n')
    topics = tmp_path / "t.tsv"
    topics.write_text("1\twing\n")
    base = ["retrieve", "--topics", str(topics), "-o", str(tmp_path / "r.run")]
    assert main([*base, "--corpus", str(docs), "--param", "k3=1"]) == 2
    assert capsys.readouterr().err == ("serpeval retrieve: error: unknown parameter 'k3' of the embedded BM25 "
                                       "engine; it takes k1, b, method, delta. Did you mean 'k1'?\n")
    assert main(base) == 2
    assert "give --corpus DOCS.jsonl (the embedded BM25 engine) or --engine CONFIG" in capsys.readouterr().err
    config = tmp_path / "e.toml"
    config.write_text('url = "http://127.0.0.1:9"\n[request]\npath = "/{{index}}/_search"\n'
                      '[response]\nhits = "hits.hits"\nid = "_id"\nscore = "_score"\n')
    assert main([*base, "--engine", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "the request template uses {{index}} but no value is given" in err
    config.write_text(config.read_text() + "[http]\nretries = 0\n")
    assert main([*base, "--engine", str(config), "--param", "index=x", "--skip-failed"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("serpeval retrieve: error: engine 'generic' retrieved no document for any of the 1 "
                          "topic(s) (0 empty, 0 with no hit, 1 failed); first failure: engine 'generic' "
                          "(http://127.0.0.1:9), query 'wing': cannot connect")
    assert not (tmp_path / "r.run").exists()


def test_import_judgments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "case_basic.csv"
    source.write_text("query,doc_id,rating\nstar wars,11,3\nstar wars,12,\nnemo,12,2\n")
    assert main(["import-judgments", str(source), "-o", str(tmp_path / "case")]) == 0
    out = capsys.readouterr()
    assert out.out.startswith(f"{source}: quepid, 2 judgments of 2 queries -> ")
    assert out.err == "note: 1 row(s) skipped: unrated documents (empty rating)\n"
    assert (tmp_path / "case.qrels").read_text() == "1 0 11 3\n2 0 12 2\n"
    assert (tmp_path / "case.topics.tsv").read_text() == "1\tstar wars\n2\tnemo\n"
    source.write_text("query,doc_id,rating\nq,1,\n")
    assert main(["import-judgments", str(source), "-o", str(tmp_path / "case")]) == 2
    assert "no judgment found in the quepid file" in capsys.readouterr().err
