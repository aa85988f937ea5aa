"""``serpeval simulate`` end to end."""

from __future__ import annotations

import json

import pytest

from serpeval.cli.app import main


def test_simulate_generated_pair_json(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    status = main(["simulate", "--generate", "0.05", "--queries", "40", "--mc-impressions", "200000",
                   "--replicates", "20", "--bootstrap", "100", "-c", "navigational,pbm", "-f", "json"])
    assert status == 0
    payload = json.loads(capsys.readouterr().out)
    rows = payload["rows"]
    assert [r["metric"] for r in rows[:4]] == ["interleaving", "CTR", "abandonment", "clicks@1"]
    assert {r["click model"] for r in rows} == {"navigational", "pbm"}
    # The generated B (the candidate) is 5% better in nDCG@10 than A; interleaving sees it.
    assert payload["title"].startswith("interleaving vs A/B tests: A = baseline vs B = candidate")
    assert rows[0]["agrees with nDCG@10"] == "yes"
    assert rows[0]["effect (B-A)"] > 0
    assert rows[0]["effect (B-A)"] == pytest.approx(rows[0]["B"] - rows[0]["A"])
    assert any("offline nDCG@10" in note for note in payload["notes"])
    # One bottom line per click model, first among the notes.
    assert [n.split(":")[0] for n in payload["notes"][:2]] == ["navigational users", "pbm users"]
    assert all("team draft needs" in n for n in payload["notes"][:2])
    # Numbers as numbers: counts are integers (or null for infinity, with the reason), CIs two fields.
    for row in rows:
        for key in ("impressions needed", "needed CI low", "needed CI high"):
            value = row[key]
            assert isinstance(value, int) or (value is None and "Infinity" in row["null_reasons"][key])
        assert row["needed CI low"] is None or row["needed CI low"] <= row["impressions needed"]
        ratio = row["ratio to interleaving"]
        assert ratio is None or isinstance(ratio, float)
        if row["agrees with nDCG@10"] != "yes" or row["method"] == "interleaving":
            assert ratio is None
    assert not any(isinstance(v, str) and any(ch.isdigit() for ch in v)
                   for row in rows for k, v in row.items() if k not in ("click model", "metric"))


def test_simulate_csv_writes_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io

    assert main(["simulate", "--generate", "0.05", "--queries", "30", "--mc-impressions", "0",
                 "--bootstrap", "50", "-f", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    for row in rows:
        for key in ("impressions needed", "needed CI low", "needed CI high"):
            assert row[key] == "inf" or row[key].isdigit(), row   # no "10,939", inf as inf
        for key in ("A", "B", "effect (B-A)"):
            float(row[key])
    assert float(rows[0]["effect (B-A)"]) > 0


def test_simulate_files_and_errors(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 e1 1\nq2 0 e2 0\n")
    run_a = tmp_path / "a.run"
    run_a.write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d3 3 1 a\nq2 Q0 e1 1 2 a\nq2 Q0 e2 2 1 a\n")
    run_b = tmp_path / "b.run"
    run_b.write_text("q1 Q0 d3 1 3 b\nq1 Q0 d1 2 2 b\nq2 Q0 e2 1 2 b\nq2 Q0 e1 2 1 b\n")
    out = tmp_path / "res.md"
    assert main(["simulate", str(qrels), "--run-a", str(run_a), "--run-b", str(run_b), "-k", "3",
                 "--mc-impressions", "0", "-f", "markdown", "-o", str(out)]) == 0
    text = out.read_text()
    assert "| team draft |" in text
    assert "A = a vs B = b" in text
    # An A/A run: the same run twice. The title names B once, never "(B) (B)".
    out_aa = tmp_path / "aa.md"
    assert main(["simulate", str(qrels), "--run-a", str(run_a), "--run-b", str(run_a), "-k", "3",
                 "--mc-impressions", "0", "-f", "markdown", "-o", str(out_aa)]) == 0
    text = out_aa.read_text()
    assert "**interleaving vs A/B tests: A = a vs B = a (B)**" in text
    assert "(B) (B)" not in text
    assert "team draft sees no difference between A and B" in text
    assert main(["simulate", str(qrels), "--run-a", str(run_a)]) == 2
    assert "needs QRELS, --run-a and --run-b" in capsys.readouterr().err
    assert main(["simulate", "--generate", "0.01", "-c", "navigatoinal", "--mc-impressions", "0"]) == 2
    assert "Did you mean 'navigational'" in capsys.readouterr().err


def test_readme_bottom_line_example(capsys: pytest.CaptureFixture[str]) -> None:
    """The bottom line the README quotes for ``serpeval simulate --generate 0.05``."""
    assert main(["simulate", "--generate", "0.05", "--mc-impressions", "0", "-f", "json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert notes[0] == ("navigational users: team draft needs 940 impressions; the best A/B metric that "
                        "points the right way (clicks@1) needs 10,779 (11.5x as many, 95% CI [5.52, 47.4]); "
                        "CTR points the wrong way.")


def test_generate_logs_effect_with_interleaving_names_the_cli_options(
        capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    # Before: the message told a command-line user to set noise_b < noise_a, options the
    # command does not have.
    assert main(["generate-logs", str(tmp_path / "il"), "--users", "5", "--interleaving", "--effect", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "--effect 0.5 applies to A/B logs" in err
    assert "noise_b" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "il").exists()


def test_every_click_model_is_checked_before_any_is_simulated(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: -c navigational,navigatoinal simulated the navigational users (the Monte Carlo
    # check included), then failed on the typo and printed nothing of it; and the flag's
    # error named the API's stop_requires_click, not --stop-at-every-result.
    import serpeval.online.simulation.simulator as simulator

    calls: list[object] = []
    real = simulator.simulate
    monkeypatch.setattr(simulator, "simulate", lambda *a, **k: calls.append(k) or real(*a, **k))
    assert main(["simulate", "--generate", "0.05", "--queries", "20", "-c", "navigational,navigatoinal"]) == 2
    assert "Did you mean 'navigational'" in capsys.readouterr().err
    assert main(["simulate", "--generate", "0.05", "--queries", "20", "-c", "navigational,dbn",
                 "--stop-at-every-result"]) == 2
    err = capsys.readouterr().err
    assert "--stop-at-every-result applies to the grade-table users" in err
    assert "'dbn'" in err
    assert calls == []
