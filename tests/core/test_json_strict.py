"""Every JSON text serpeval writes is strict JSON: no bare NaN / Infinity token, ever.

A non-finite number becomes null and the object holding it says why under "null_reasons".
Each command's JSON writer is checked by injecting NaN and infinities into the payload it
renders (so a command that bypassed the shared writer would fail here), and the A/B analysis
of a log without clicks (a relative effect over a zero control) is checked end to end.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from serpeval.cli import main
from serpeval.core.strict_json import dumps, json_ready

SRC = Path(__file__).resolve().parents[2] / "src" / "serpeval"


def strict(text: str) -> Any:
    """``json.loads`` that fails on the NaN / Infinity / -Infinity tokens Python accepts."""

    def refuse(token: str) -> None:
        raise AssertionError(f"non-JSON token {token} in the output")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_values_become_null_with_a_reason() -> None:
    payload = {
        "p": float("nan"),
        "up": np.float64(np.inf),
        "down": -math.inf,
        "fine": np.float32(0.5),
        "count": np.int64(3),
        "series": np.array([1.0, np.nan, 2.0]),
        "rows": [{"x": float("nan"), "null_reasons": {"x": "x is undefined: no clicks"}}, {"x": 1.0}],
        "when": Path("a/b"),  # anything else json cannot write: its text
    }
    data = strict(dumps(payload))  # fails on a bare NaN / Infinity token
    assert data["p"] is None
    assert data["up"] is None
    assert data["down"] is None
    assert data["fine"] == 0.5
    assert data["count"] == 3
    assert data["series"] == [1.0, None, 2.0]
    assert data["null_reasons"] == {
        "p": "NaN: undefined for this input",
        "up": "+Infinity: not a finite number",
        "down": "-Infinity: not a finite number",
        "series": "1 of 3 values are not finite numbers (NaN or infinite), written as null",
    }
    # the producer's own reason wins; a finite row gets no reasons key
    assert data["rows"] == [{"x": None, "null_reasons": {"x": "x is undefined: no clicks"}}, {"x": 1.0}]
    assert data["when"] == str(Path("a/b"))
    # a payload without non-finite values is unchanged (no empty reasons added)
    assert json_ready({"a": 1.5, "b": [1, 2]}) == {"a": 1.5, "b": [1, 2]}


def test_no_module_writes_json_around_the_shared_writer() -> None:
    """The one place that calls json.dumps is serpeval.core.strict_json (the serving-time Interleaving's
    compact to_json holds only team labels and probabilities; JSON lines values that are not
    text are kept as their JSON text in io/tables)."""
    allowed = {SRC / "core" / "strict_json.py", SRC / "online" / "interleaving" / "_result.py",
               SRC / "io" / "tables.py"}
    offenders = [str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
                 if path not in allowed and re.search(r"(?<!\w)json\.dumps\(", path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_render_json_rows() -> None:
    from serpeval.report.table import render

    data = strict(render([{"metric": "ctr", "effect": float("nan")}], "json", notes=["n"]))
    assert data["rows"] == [{"metric": "ctr", "effect": None,
                             "null_reasons": {"effect": "NaN: undefined for this input"}}]


def _inject(monkeypatch: pytest.MonkeyPatch, cls: Any, method: str, path: tuple[Any, ...]) -> None:
    """Wrap ``cls.method`` so that the payload it returns carries NaN at ``path`` and an
    infinity next to it."""
    original = getattr(cls, method)

    def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        payload = original(self, *args, **kwargs)
        target = payload
        for key in path:
            target = target[key]
        target["injected_nan"] = float("nan")
        target["injected_inf"] = np.float64(-np.inf)
        return payload

    monkeypatch.setattr(cls, method, patched)


def _check_injected(node: dict[str, Any]) -> None:
    assert node["injected_nan"] is None
    assert node["injected_inf"] is None
    assert node["null_reasons"]["injected_nan"] == "NaN: undefined for this input"
    assert node["null_reasons"]["injected_inf"] == "-Infinity: not a finite number"


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    from serpeval.cli.demo.collection import make_collection
    from serpeval.io import write_trec_qrels, write_trec_run

    folder = tmp_path_factory.mktemp("json")
    collection = make_collection(n_queries=30)
    write_trec_qrels(collection.qrels, folder / "qrels.txt")
    write_trec_run(collection.runs["baseline"], folder / "a.run")
    write_trec_run(collection.runs["candidate"], folder / "b.run")
    return folder / "qrels.txt", folder / "a.run", folder / "b.run"


def test_evaluate_compare_gate_write_strict_json(trec_files, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from serpeval.comparison.gate import GateResult
    from serpeval.comparison.results import Comparison
    from serpeval.evaluation.results import Results

    qrels, a, b = trec_files
    _inject(monkeypatch, Results, "to_json_dict", ("results", 0))
    assert main(["evaluate", str(qrels), str(a), "-m", "AP", "-f", "json", "-q"]) == 0
    _check_injected(strict(capsys.readouterr().out)["results"][0])

    _inject(monkeypatch, Comparison, "to_json_dict", ())
    assert main(["compare", str(qrels), str(a), str(b), "-m", "AP", "-f", "json"]) == 0
    _check_injected(strict(capsys.readouterr().out))

    _inject(monkeypatch, GateResult, "to_dict", ("checks", 0))
    status = main(["gate", str(qrels), "--baseline", str(a), "--candidate", str(b), "-m", "AP",
                   "--json", "-"])
    assert status in (0, 1)
    _check_injected(strict(capsys.readouterr().out)["checks"][0])


@pytest.fixture(scope="module")
def log_folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """An A/B log, the same log with every click removed, and an interleaving log."""
    pytest.importorskip("ibis", reason="the A/B analysis needs the ab extra")
    pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB")
    import pyarrow as pa
    import pyarrow.parquet as pq

    from serpeval.online.simulation.generate import LogGenerator

    root = tmp_path_factory.mktemp("logs")
    ab = LogGenerator(600).generate(rng=3).impressions
    (root / "ab").mkdir()
    pq.write_table(ab, root / "ab" / "impressions.parquet")
    empty_int = pa.array([[]] * len(ab), pa.list_(pa.int32()))
    empty_float = pa.array([[]] * len(ab), pa.list_(pa.float64()))
    no_clicks = ab
    for name, empty in (("clicks", empty_int), ("click_seconds", empty_float),
                        ("dwell_seconds", empty_float)):
        no_clicks = no_clicks.set_column(no_clicks.schema.get_field_index(name), name, empty)
    (root / "no-clicks").mkdir()
    pq.write_table(no_clicks, root / "no-clicks" / "impressions.parquet")
    il = LogGenerator(300, interleaving=True).generate(rng=4).impressions
    (root / "il").mkdir()
    pq.write_table(il, root / "il" / "impressions.parquet")
    return root / "ab", root / "no-clicks", root / "il"


def test_ab_and_interleaving_report_write_strict_json(log_folders, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from serpeval.online.experiments.interleaving_analysis import InterleavingLogReport
    from serpeval.online.experiments.results import ABResults

    ab, _, il = log_folders
    _inject(monkeypatch, ABResults, "to_json_dict", ("results", 0))
    assert main(["ab", str(ab), "-m", "ctr", "-f", "json"]) == 0
    _check_injected(strict(capsys.readouterr().out)["results"][0])
    _inject(monkeypatch, InterleavingLogReport, "to_json_dict", ())
    assert main(["interleaving-report", str(il), "--resamples", "100", "-f", "json"]) == 0
    _check_injected(strict(capsys.readouterr().out))


def test_ab_relative_effect_over_a_zero_control_is_null_with_its_reason(
        log_folders, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No clicks in either arm: CTR 0 / 0, so the relative effect (treatment / control - 1)
    and its log-scale interval are undefined; the absolute effect is 0, and with no variance
    in either arm there is no test: p-values and interval null, each with its reason."""
    _, no_clicks, _ = log_folders
    out = tmp_path / "ab.json"
    assert main(["ab", str(no_clicks), "-m", "ctr", "-f", "json", "-o", str(out)]) == 0
    row = strict(out.read_text(encoding="utf-8"))["results"][0]
    assert (row["value_control"], row["value_treatment"], row["effect"]) == (0.0, 0.0, 0.0)
    assert row["p_value"] is None
    assert row["rel_effect"] is None
    assert row["rel_ci_lower"] is None
    assert row["rel_ci_upper"] is None
    assert row["null_reasons"]["rel_effect"] == "the control value is 0: an effect relative to it is undefined"
    assert "no variance" in row["null_reasons"]["p_value"]
    assert row["verdict"].startswith("no test")
    # the Python API's JSON-ready dict is strict too: json.dumps(..., allow_nan=False) accepts it
    from serpeval.online.experiments import analyze_ab

    api = analyze_ab(no_clicks, metrics=["ctr"]).to_json_dict()
    assert strict(json.dumps(api, allow_nan=False))["results"][0] == row
    # the table says so instead of printing "+nan%"
    assert main(["ab", str(no_clicks), "-m", "ctr"]) == 0
    table = capsys.readouterr().out
    assert "undefined [undefined, undefined]" in table
    assert "nan" not in table.lower()
    # and the HTML report reads the file back (a null relative effect draws no point)
    assert main(["report", "--ab", str(out), "-o", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").stat().st_size > 0


@pytest.mark.parametrize("payload", [
    {"b": [1, 2.5], "a": "é", "n": None},
    {"a": np.int64(3), "c": np.array([1, 2]), "f": np.float32(0.5)},
    {"p": float("nan"), "xs": [1.0, float("inf")], "deep": {"q": -float("inf")}},
    [{"id": "d1", "score": np.float64(2.0)}, {"id": "d2", "score": float("nan")}],
])
def test_compact_is_the_strict_text_on_one_line(payload: object) -> None:
    """compact() writes what dumps() writes, without spaces: the fast path (nothing to replace)
    and the replacing path give the same document."""
    from serpeval.core.strict_json import compact, dumps

    text = compact(payload, sort_keys=True)
    assert text == json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False, sort_keys=True)

    def no_bare_token(token: str) -> None:
        raise AssertionError(f"bare {token} in {text}")

    assert json.loads(text, parse_constant=no_bare_token) == json.loads(dumps(payload, indent=None, sort_keys=True))
