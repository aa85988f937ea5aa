"""Multileaving through serve: three rankers served in-process, clicks posted as UBI events;
the pairwise analysis of what the store holds equals the same analysis computed from a log
written independently from the HTTP answers (teams as served, clicks as sent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.serve.conftest import app_for, click_event, counter_ids, run_async, with_client

from serpeval.core.errors import InputError
from serpeval.online.events.logs import EventLogs, read_event_logs
from serpeval.online.interleaving.analysis import preference_matrix
from serpeval.serve.backends import Backend
from serpeval.serve.config import BackendConfig, ServeConfig
from serpeval.serve.multileave import analyze_multileaved_events

NAMES = ("A", "B", "C")


@pytest.fixture(scope="module")
def multileaved(tmp_path_factory: Any, small_corpus: Path) -> dict[str, Any]:
    """150 team-draft multileaved impressions of three BM25 settings, clicks skewed towards the
    top (so the rankers differ), some clicks given by object id only, one orphan."""
    from serpeval.engines.embedded import EmbeddedIndex

    folder = tmp_path_factory.mktemp("multileave")
    index = EmbeddedIndex.build(small_corpus)
    engines = [index.engine(), index.engine(k1=0.2, b=0.0), index.engine(k1=2.0, b=1.0)]
    config = ServeConfig(tuple(BackendConfig(n) for n in NAMES), store=str(folder / "events.duckdb"),
                         experiment="three-way", deadline_ms=5000)
    app = app_for(config, [Backend(n, e, False) for n, e in zip(NAMES, engines, strict=True)],
                  query_ids=counter_ids())
    queries = ["wing flow", "boundary layer", "supersonic heat", "pressure distribution", "shock waves",
               "flutter", "slip stream", "laminar transition", "heat transfer", "jet noise"]
    rng = np.random.default_rng(31)

    async def body(client: Any) -> list[dict[str, Any]]:
        served, events = [], []
        for _ in range(150):
            answer = (await client.get("/search", params={"q": queries[int(rng.integers(len(queries)))],
                                                          "user": f"u{int(rng.integers(30))}"})).json()
            n = len(answer["hits"])
            # position p (1-based) clicked with probability 0.5 / p
            clicked = [p for p in range(1, n + 1) if rng.random() < 0.5 / p]
            for p in clicked:
                doc = answer["hits"][p - 1]["id"]
                event = click_event(answer["query_id"], p, doc)
                if rng.random() < 0.3:  # placed by its object id alone
                    del event["event_attributes"]["position"]
                events.append(event)
            served.append({"teams": [h["team"] for h in answer["hits"]], "clicks": clicked,
                           "interleaved": answer["interleaved"]})
        events.append(click_event("never-served", 1, "x"))
        for start in range(0, len(events), 100):
            assert (await client.post("/events", json=events[start:start + 100])).status_code == 200
        return served

    served = run_async(with_client(app, body))
    return {"store": config.store, "served": served}


def test_store_gives_the_same_preferences_as_the_served_log(multileaved: dict[str, Any]) -> None:
    served = multileaved["served"]
    assert all(s["interleaved"] for s in served)
    assert {t for s in served for t in s["teams"]} <= {*NAMES, "shared"}
    # the reference, from the HTTP answers alone: clicks per team, shared documents credit nobody
    credits = np.array([[sum(s["teams"][p - 1] == name for p in s["clicks"]) for name in NAMES] for s in served],
                       dtype=np.float64)
    expected = preference_matrix(credits, NAMES, method="team_draft")
    result = analyze_multileaved_events(multileaved["store"])
    assert result.logs.rankers == NAMES
    assert result.logs.methods == ("team_draft",)
    assert result.logs.counts["impressions used"] == len(served)
    assert result.logs.counts["clicks used"] == sum(len(s["clicks"]) for s in served)
    assert result.logs.counts["orphan clicks (unknown query_id)"] == 1
    # impressions are stored in query_id order = serving order (counter ids)
    np.testing.assert_array_equal(result.credits, credits)
    np.testing.assert_array_equal(result.analysis.wins, expected.wins)
    np.testing.assert_allclose(result.analysis.p_values, expected.p_values)
    assert result.to_dicts() == expected.to_dicts()
    assert len(result.to_dicts()) == 3  # A-B, A-C, B-C
    # a hand check of one pair: wins of A over B = impressions where A's team got more clicks
    assert result.analysis.wins[0, 1] == int((credits[:, 0] > credits[:, 1]).sum())
    assert credits.sum() > 0
    assert result.analysis.wins[0, 1] + result.analysis.wins[1, 0] > 0


def test_cli_reports_the_pairs(multileaved: dict[str, Any], capsys: Any) -> None:
    from serpeval.cli import main

    assert main(["interleaving-report", multileaved["store"], "-f", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rankers"] == list(NAMES)
    assert out["impressions"] == len(multileaved["served"])
    expected = analyze_multileaved_events(multileaved["store"]).to_dicts()
    assert [{k: pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for k, v in row.items()}
            for row in expected] == out["pairs"]
    assert any("analysed 150 impressions" in n for n in out["notes"])
    # the direction of each row is said: ranker against vs, delta > 0 when ranker is preferred
    for row in out["pairs"]:
        assert (row["delta"] > 0) == (row["wins"] > row["losses"])
    assert "delta is positive when ranker is preferred" in " ".join(out["notes"])
    assert main(["interleaving-report", multileaved["store"]]) == 0
    text = capsys.readouterr().out
    assert "multileaving (team_draft) of A, B, C" in text
    assert "each row is ranker against vs" in text
    assert main(["interleaving-report", multileaved["store"], "--over-time"]) == 2
    assert "--by and --over-time apply to two rankers" in capsys.readouterr().err


def test_refusals(multileaved: dict[str, Any]) -> None:
    logs = read_event_logs(multileaved["store"])
    probabilistic = EventLogs(logs.impressions, logs.clicks, logs.source, logs.counts, logs.rankers,
                              ("probabilistic",))
    with pytest.raises(InputError, match="needs team draft impressions; found probabilistic"):
        analyze_multileaved_events(probabilistic)
    empty = EventLogs(logs.impressions.slice(0, 0), logs.clicks.slice(0, 0), logs.source, logs.counts)
    with pytest.raises(InputError, match="no interleaved impressions"):
        analyze_multileaved_events(empty)


def test_a_result_clicked_twice_credits_its_team_once() -> None:
    """Two click events on one result of one impression (the user came back and clicked it
    again) credited its team twice, where credit() at serving time counts a position once.
    Impression i1: teams A B C, clicks on 1, 1, 2 -> A 1, B 1 (was A 2); i2: clicks on 3, 3 ->
    C 1 (was 2); i3: no click."""
    import pyarrow as pa

    from serpeval.online.events.logs import team_credits
    from serpeval.online.interleaving import credit, interleave

    impressions = pa.table({"impression_id": ["i1", "i2", "i3"], "teams": [list(NAMES)] * 3})
    clicks = pa.table({"impression_id": ["i1", "i2", "i1", "i2", "i1"], "position": [1, 3, 1, 3, 2]})
    logs = EventLogs(impressions, clicks, "hand", {}, NAMES, ("team_draft",))
    np.testing.assert_array_equal(team_credits(logs), [[1, 1, 0], [0, 0, 1], [0, 0, 0]])
    # the serving side on the same page: one credit per clicked position
    shown = interleave([["a"], ["b"], ["c"]], "team_draft", k=3, rng=0)
    page = type(shown).from_dict({**shown.to_dict(), "teams": [0, 1, 2]})
    assert credit(page, [0, 0, 1]).credits == (1, 1, 0)
