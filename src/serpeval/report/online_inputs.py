"""Online results as report inputs: which kinds there are, and how each becomes JSON-ready data.

A result object is converted by its own ``to_json_dict()`` (or, for the kinds without one,
from its ``to_dicts()``, ``notes`` and the like: :func:`online_dicts`); a file by
:func:`read_online_json`, which reads what ``serpeval ab|interleaving-report|simulate -f
json`` wrote. Both check a JSON document against the schema of its kind
(:mod:`serpeval.report.online_schema`) and name the first field of the wrong type. Light to
import (no HTML machinery): the command line reads :data:`KINDS`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from serpeval.core.errors import InputError, OptionError
from serpeval.report.online_schema import SCHEMAS, schema_problem

__all__ = ["DEMO_STATE_KEYS", "KINDS", "REQUIRED_KEYS", "online_dicts", "read_online_json"]

#: Online result kinds: what each is, and which command writes its JSON.
KINDS: dict[str, str] = {
    "interleaving": "an interleaving analysis (serpeval interleaving-report -f json)",
    "ab": "an A/B analysis (serpeval ab -f json)",
    "ab_monitor": "an A/B test look by look (serpeval ab --monitor -f json)",
    "ab_plan": "an A/B sample-size plan (serpeval ab --plan -f json)",
    "simulation": "the sensitivity simulator (serpeval simulate -f json)",
    "segments": "per-segment effects (the segments of serpeval ab|interleaving-report --by -f json)",
}

#: Keys a JSON document of each kind must have (the required fields of its schema).
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {kind: tuple(SCHEMAS[kind].required) for kind in KINDS}

#: ``serpeval demo`` state keys whose results have an online section: ``{state key: kind}``
#: (the simulator; the A/B test, its daily looks and the interleaving log analysed from logs).
DEMO_STATE_KEYS: dict[str, str] = {"online": "simulation", "ab": "ab", "ab_monitor": "ab_monitor",
                                   "interleaving_log": "interleaving"}


# ----------------------------------------------------------------------------- inputs


def _sequential_dict(result: Any) -> dict[str, Any]:
    """:class:`~serpeval.online.experiments.results.SequentialResults` as JSON-ready data."""
    rows = [{**r, "end": str(r["end"])} if "end" in r else dict(r) for r in result.to_dicts()]
    decision = result.first_decision()
    return {"experiment": result.experiment, "metric": result.metric, "control": result.control,
            "alpha": result.alpha, "rows": rows, "notes": list(result.notes),
            "first_decision": None if decision is None else decision["look"]}


def _plan_dict(result: Any) -> dict[str, Any]:
    """:class:`~serpeval.online.experiments.results.PowerPlan` as JSON-ready data."""
    return {"rows": result.to_dicts(), "notes": list(result.notes), "alpha": result.alpha,
            "power": result.power}


def _simulation_dict(result: Any) -> dict[str, Any]:
    """:class:`~serpeval.online.simulation.simulator.SimulationResult` as JSON-ready data, with curves."""
    names = result.world.names
    return {"title": f"A = {names[0]} vs B = {names[1]}, {result.click_model} users",
            "rows": result.to_dicts(), "notes": [result.bottom_line(), *result.notes()],
            "methods": [dataclasses.asdict(m) for m in result.methods],
            "curves": result.power_curves(), "power": result.settings["power"],
            "confidence": result.settings["confidence"]}


def _interleaving_dict(result: Any) -> dict[str, Any]:
    """An interleaving log report (``to_json_dict()``), or a bare
    :class:`~serpeval.online.interleaving.analysis.InterleavingAnalysis` (its outcome row, no checks)."""
    if hasattr(result, "to_json_dict"):
        return result.to_json_dict()
    return {"results": result.to_dicts(), "checks": [], "notes": []}


_CONVERTERS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "interleaving": _interleaving_dict, "ab_monitor": _sequential_dict, "ab_plan": _plan_dict,
    "simulation": _simulation_dict,
}


def _number(value: Any, spec: str) -> str:
    return "undefined" if not isinstance(value, (int, float)) else format(value, spec)


def _triggered_lines(kind: str, rows: Any) -> list[str]:
    """One sentence per row of a triggered analysis: the scaled triggered estimate beside the
    estimate on every impression (the section itself shows the latter)."""
    lines = []
    for r in rows if isinstance(rows, list) else []:
        if not isinstance(r, Mapping):
            continue
        if kind == "ab":
            what, rate, mine, everyone = (f"{r.get('metric')}, {r.get('treatment')}", r.get("scale"),
                                          "triggered_", "")
            low, high, effect, p = "ci_lower", "ci_upper", "effect", "p_value"
        else:
            what, rate, mine, everyone = "delta (B-A)", r.get("trigger rate"), "triggered ", ""
            low, high, effect, p = "ci_low", "ci_high", "delta", "p"
        lines.append(
            f"triggered analysis, {what}: the effect among triggered impressions x the trigger rate "
            f"{_number(rate, '.2%')} = {_number(r.get(mine + effect), '+.4g')} "
            f"[{_number(r.get(mine + low), '+.4g')}, {_number(r.get(mine + high), '+.4g')}], "
            f"p = {_number(r.get(mine + p), '.3g')}; on every impression (the numbers of this "
            f"section): {_number(r.get(everyone + effect), '+.4g')}")
    return lines


def untriggered_view(kind: str, data: Any) -> Any:
    """``data``, or for the JSON of ``ab --triggered`` / ``interleaving-report --triggered``
    the analysis of every impression it holds, with the triggered estimates (scaled) and
    the triggered notes added to its notes; for ``segments``, the per-segment analysis that
    ``ab|interleaving-report --by -f json`` nests under ``segments``; any other document as it is."""
    if kind == "segments" and isinstance(data, Mapping) and "rows" not in data \
            and isinstance(data.get("segments"), Mapping):
        return data["segments"]
    if not (kind in ("ab", "interleaving") and isinstance(data, Mapping)
            and isinstance(data.get("untriggered"), Mapping) and "triggered" in data):
        return data
    notes: list[Any] = data["notes"] if isinstance(data.get("notes"), list) else []
    return {**data["untriggered"], "notes": [*_triggered_lines(kind, data.get("results")), *notes]}


def _convert(kind: str, item: Any) -> Mapping[str, Any]:
    """One result (or its dict) as the JSON-ready data of ``kind``; the wrong kind is an error."""
    if isinstance(item, Mapping):
        data = untriggered_view(kind, item)
    else:
        convert = _CONVERTERS.get(kind, lambda result: result.to_json_dict())
        try:
            data = convert(item)
        except AttributeError:
            data = {}
    missing = [k for k in REQUIRED_KEYS[kind] if k not in data]
    if missing:
        raise OptionError(f"online_results[{kind!r}] needs {KINDS[kind]}; got a "
                          f"{type(item).__name__} without {', '.join(missing)}.")
    if isinstance(item, Mapping):  # given as data: check it (converted objects are right)
        problem = schema_problem(kind, data)
        if problem:
            raise OptionError(f"online_results[{kind!r}]: {problem}; expected the JSON of "
                              f"{KINDS[kind]}.")
    return data


def online_dicts(online: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """``{kind: [json dict, ...]}`` from result objects or their JSON dicts (one or a list)."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for kind, value in online.items():
        if kind not in KINDS:
            raise OptionError(f"unknown online result kind {kind!r}; choose from "
                              f"{', '.join(KINDS)}.")
        items = value if isinstance(value, (list, tuple)) else [value]
        out[kind] = [_convert(kind, item) for item in items]
    return out


def read_online_json(kind: str, path: str | Path) -> dict[str, Any]:
    """A JSON file written by ``serpeval ... -f json`` for an online section of ``kind``."""
    if kind not in KINDS:
        raise OptionError(f"unknown online result kind {kind!r}; choose from {', '.join(KINDS)}.")
    from serpeval.io.inputs import read_input

    raw, label = read_input(path, what="file")  # a pipe or gzip too; errors name the path
    source = Path(label)
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{source}: not a JSON file ({exc}); expected {KINDS[kind]}.") from None
    data = untriggered_view(kind, data)
    missing = [k for k in REQUIRED_KEYS[kind] if not isinstance(data, dict) or k not in data]
    if missing:
        raise InputError(f"{source}: no {', '.join(missing)} in it; expected {KINDS[kind]}.")
    problem = schema_problem(kind, data)
    if problem:
        raise InputError(f"{source}: {problem}. The file should hold {KINDS[kind]}; write it "
                         "again with that command.")
    return data
