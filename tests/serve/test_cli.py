"""``serpeval serve`` and ``serpeval replay`` on the command line (in-process: uvicorn's run is
replaced by a recorder that drives the app the command built)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.serve.conftest import run_async, with_client

from serpeval.cli import main


@pytest.fixture
def started(monkeypatch: Any) -> list[dict[str, Any]]:
    """Record uvicorn.run's arguments instead of serving forever; drive the app once."""
    import uvicorn

    calls: list[dict[str, Any]] = []

    def record(app: Any, **kwargs: Any) -> None:
        async def body(client: Any) -> Any:
            return (await client.get("/search", params={"q": "wing flow", "user": "u"})).json()

        calls.append({"app": app, "answer": run_async(with_client(app, body)), **kwargs})

    monkeypatch.setattr(uvicorn, "run", record)
    return calls


def test_quick_start(started: list[dict[str, Any]], small_corpus: Path, tmp_path: Path, monkeypatch: Any,
                     capsys: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--corpus", str(small_corpus), "--candidate", "k1=1.2,b=0.3"]) == 0
    (call,) = started
    assert (call["host"], call["port"]) == ("127.0.0.1", 8080)
    assert call["answer"]["experiment"] == "quickstart"
    assert len(call["answer"]["hits"]) == 10
    assert (tmp_path / "events.duckdb").exists()
    assert "experiment 'quickstart' (team_draft: A vs B) on http://127.0.0.1:8080; events to events.duckdb" \
        in capsys.readouterr().err


def test_config_file_with_overrides(started: list[dict[str, Any]], small_corpus: Path, tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(f'[experiment]\nname = "cfg"\ndesign = "ab"\n[[backends]]\nname = "A"\n'
                      f'corpus = "{small_corpus}"\n[[backends]]\nname = "B"\nparams = {{b = 0.2}}\n')
    assert main(["serve", str(config), "--port", "9123", "--store", str(tmp_path / "x.duckdb")]) == 0
    (call,) = started
    assert call["port"] == 9123
    assert call["answer"]["experiment"] == "cfg"
    assert call["answer"]["variant"] in ("A", "B")
    assert (tmp_path / "x.duckdb").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["serve"], "serve needs a CONFIG file, or --corpus DOCS.jsonl and --candidate"),
    (["serve", "x.toml", "--corpus", "d.jsonl"], "give a CONFIG or the quick start's --corpus/--candidate"),
    (["serve", "missing.toml"], "missing.toml: no such config file."),
])
def test_serve_usage_errors(argv: list[str], message: str, capsys: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) != 0
    assert message in capsys.readouterr().err


def test_replay_reports_a_tampered_row(tmp_path: Path, small_corpus: Path, capsys: Any) -> None:
    import duckdb
    from tests.serve.conftest import app_for, counter_ids

    from serpeval.serve.backends import build_backends
    from serpeval.serve.config import quick_config

    config = quick_config(str(small_corpus), "k1=1.2,b=0.3", str(tmp_path / "e.duckdb"), design="interleaving")

    async def body(client: Any) -> None:
        for q in ("wing flow", "boundary layer", "heat"):
            await client.get("/search", params={"q": q})

    run_async(with_client(app_for(config, build_backends(config), query_ids=counter_ids()), body))
    con = duckdb.connect(config.store)
    attributes = json.loads(con.execute("SELECT query_attributes FROM ubi_queries WHERE query_id = 'q000001'")
                            .fetchone()[0])
    attributes["interleaving"]["seed"] += 1  # a different seed: other coins
    con.execute("UPDATE ubi_queries SET query_attributes = ? WHERE query_id = 'q000001'", [json.dumps(attributes)])
    con.close()
    out = tmp_path / "replay.json"
    assert main(["replay", config.store, "-f", "json", "-o", str(out)]) == 1
    data = json.loads(out.read_text())
    assert (data["checked"], data["equal"]) == (3, 2)
    assert [row["query_id"] for row in data["differing"]] == ["q000001"]


def test_ab_reads_the_store(tmp_path: Path, small_corpus: Path, capsys: Any) -> None:
    from tests.serve.conftest import app_for, click_event

    from serpeval.online.events.logs import read_event_logs
    from serpeval.online.experiments.analysis import analyze_ab
    from serpeval.serve.backends import build_backends
    from serpeval.serve.config import quick_config

    config = quick_config(str(small_corpus), "k1=0.2,b=0", str(tmp_path / "ab.duckdb"), design="ab")

    async def body(client: Any) -> None:
        events = []
        for i in range(120):
            answer = (await client.get("/search", params={"q": "wing flow", "user": f"u{i % 40}"})).json()
            if i % 3 == 0:
                events.append(click_event(answer["query_id"], 1, answer["hits"][0]["id"]))
        await client.post("/events", json=events)

    run_async(with_client(app_for(config, build_backends(config)), body))
    out = tmp_path / "ab.json"
    assert main(["ab", config.store, "-f", "json", "-o", str(out)]) == 0
    assert "read 120 impressions and 40 events (40 clicks)" in capsys.readouterr().err
    read = read_event_logs(config.store, design="ab")
    expected = analyze_ab(read.impressions, None, clicks=read.clicks).to_dicts()
    got = json.loads(out.read_text())
    ctr = next(r for r in got["results"] if r["metric"] == "ctr")
    assert ctr["effect"] == pytest.approx(next(r for r in expected if r["metric"] == "ctr")["effect"])
