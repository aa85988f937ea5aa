"""Online JSON inputs of the report follow the schema of what the commands write; every field
of the wrong type is one clear error naming the file and the field's path."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from serpeval.cli import main
from serpeval.core.errors import InputError, OptionError
from serpeval.report.online_inputs import KINDS, REQUIRED_KEYS, online_dicts, read_online_json
from serpeval.report.online_schema import SCHEMAS, schema_problem


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every value in a JSON document (containers too) with its path of keys and indices."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nodes(item, (*path, i))


def _other_type(value: Any) -> Any:
    """A value of another JSON type: numbers and flags become text, text a number, null an
    object, a list text, an object a number."""
    if isinstance(value, (bool, int, float)):
        return "abc"
    if isinstance(value, str):
        return 12345
    if value is None:
        return {"x": 1}
    return "abc" if isinstance(value, list) else 7


def _shown(path: tuple[Any, ...]) -> str:
    """The path as the error names it: ``results[0].p_value``, ``results[0]["wins A"]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def _with(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``data`` with the value at ``path`` replaced; ``data`` itself unchanged (the containers
    along the path are copied, the rest shared)."""
    if not path:
        return value
    changed = copy.copy(data)
    changed[path[0]] = _with(data[path[0]], path[1:], value)
    return changed


@pytest.fixture(scope="module")
def documents(online_files, simulation_result) -> dict[str, tuple[str, dict[str, Any]]]:
    """``{name: (kind, JSON)}``: what the commands wrote, and the JSON-ready data of the
    result objects (the simulator's methods and curves, a monitor's first decision)."""
    from serpeval.online.experiments.results import SequentialResults

    docs = {name: (name.removesuffix("_srm"), json.loads(path.read_text(encoding="utf-8")))
            for name, path in online_files.items()}
    looks = docs["ab_monitor"][1]["rows"]
    sequence = SequentialResults("exp", "ctr", "control", tuple(looks), 0.5, 100.0, ("a note",))
    converted = online_dicts({"simulation": simulation_result, "ab_monitor": sequence})
    docs["simulation_object"] = ("simulation", converted["simulation"][0])
    docs["ab_monitor_object"] = ("ab_monitor", converted["ab_monitor"][0])
    assert docs["ab_monitor_object"][1]["first_decision"] is not None  # alpha 0.5: decided
    return docs


def test_what_the_commands_write_follows_the_schema(documents) -> None:
    assert set(SCHEMAS) == set(KINDS)
    for kind in KINDS:
        assert REQUIRED_KEYS[kind] == tuple(SCHEMAS[kind].required)
    for name, (kind, data) in documents.items():
        assert schema_problem(kind, data) is None, name
    assert documents["interleaving"][1]["over_time"]["rows"]          # every part is there
    assert "variance_reduction" in documents["ab"][1]["results"][0]    # CUPED's optional field


def _kinds_of_node(data: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """The nodes of :func:`_nodes`, one per case: a field's path with its list indices left
    out, and the JSON type of its value. The rows of a list repeat the same fields, so a
    value is changed once per field and type (the first row where it has that type), not
    once per row: the cases of changing every value (4,925 changes, 23 s) in 338 (1 s)."""
    seen: set[tuple[Any, ...]] = set()
    for path, value in _nodes(data):
        case = (tuple("[]" if isinstance(p, int) else p for p in path), type(value).__name__)
        if path and case not in seen:
            seen.add(case)
            yield path, value


def test_every_field_of_another_type_is_named(documents, tmp_path: Path) -> None:
    """Change one value at a time to a value of another type, in every document: each change
    is refused with one line naming the file and the changed field (or one inside it)."""
    changes = 0
    for name, (kind, data) in documents.items():
        file = tmp_path / f"{name}.json"
        for path, value in _kinds_of_node(data):
            file.write_text(json.dumps(_with(data, path, _other_type(value))), encoding="utf-8")
            with pytest.raises(InputError) as refused:
                read_online_json(kind, file)
            message = str(refused.value)
            where = f"{file}: {_shown(path)}"
            assert message.startswith(where), (message, where)
            assert message[len(where)] in ":.[", (message, where)    # the field or one inside it
            assert "\n" not in message
            assert "expected" in message or "missing" in message
            assert f"The file should hold {KINDS[kind]}" in message
            changes += 1
    assert changes > 300          # every field and type of 6 command outputs and 2 converted objects


def test_messages_name_the_expected_and_the_found(online_files, tmp_path: Path) -> None:
    ab = json.loads(online_files["ab"].read_text(encoding="utf-8"))
    cases = [
        (("results", 0, "p_value"), "abc", 'results[0].p_value: expected a number, found "abc"'),
        (("results", 1, "verdict"), 3, "results[1].verdict: expected a string, found 3"),
        (("srm", "mismatch"), "no", 'srm.mismatch: expected true or false, found "no"'),
        (("variants",), {"a": 1}, "variants: expected a list, found an object"),
        (("results", 0, "variance_reduction"), [1, 2],
         "results[0].variance_reduction: expected a number or null, found a list of 2"),
        (("notes", 0), "x" * 80, None),                                   # text is fine
    ]
    for path, value, expected in cases:
        file = tmp_path / "ab.json"
        file.write_text(json.dumps(_with(ab, path, value)), encoding="utf-8")
        if expected is None:
            assert read_online_json("ab", file)["notes"][0] == "x" * 80
            continue
        with pytest.raises(InputError, match="^" + re.escape(f"{file}: {expected}")):
            read_online_json("ab", file)


def test_missing_fields_and_rules_across_fields(online_files, tmp_path: Path) -> None:
    il = json.loads(online_files["interleaving"].read_text(encoding="utf-8"))
    ab = json.loads(online_files["ab"].read_text(encoding="utf-8"))
    row = il["results"][0]
    low = next(k for k in row if k.startswith("CI ") and k.endswith(" low"))
    high = low[:-4] + " high"
    no_high = {k: v for k, v in row.items() if k != high}
    no_interval = {k: v for k, v in no_high.items() if k != low}
    no_wins = {k: v for k, v in row.items() if k != "wins A"}
    short = {**ab["srm"], "observed": ab["srm"]["observed"][:1]}
    cases = [
        ("interleaving", {**il, "results": [no_high]}, f'results[0]: missing "{high}"'),
        ("interleaving", {**il, "results": [no_interval]}, "results[0]: missing its interval"),
        ("interleaving", {**il, "results": [no_wins]},
         'results[0]["wins A"]: missing (expected a number)'),
        ("ab", {**ab, "srm": short}, "srm: variants, observed, expected need one entry per "
                                     "variant; found variants 2, observed 1, expected 2"),
        ("ab_monitor", {"rows": [], "first_decision": 3},
         "first_decision needs alpha, the level it was reached at"),
    ]
    for kind, data, expected in cases:
        file = tmp_path / f"{kind}.json"
        file.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(InputError) as refused:
            read_online_json(kind, file)
        assert str(refused.value).startswith(f"{file}: {expected}"), str(refused.value)


def test_data_given_in_python_is_checked_too(online_files) -> None:
    ab = json.loads(online_files["ab"].read_text(encoding="utf-8"))
    ab["results"][0]["effect"] = "0.1"  # null is allowed: strict JSON's undefined value
    with pytest.raises(OptionError, match=r"^online_results\['ab'\]: results\[0\]\.effect: "
                                          "expected a number, found \"0.1\"; expected the JSON of "
                                          "an A/B analysis"):
        online_dicts({"ab": ab})


@pytest.mark.parametrize("option", ["ab", "interleaving", "simulation"])
def test_report_command_refuses_in_one_line_and_writes_nothing(
        option, online_files, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(online_files[option].read_text(encoding="utf-8"))
    field = {"ab": ("results", 0, "ci_lower"), "interleaving": ("results", 0, "wins B"),
             "simulation": ("rows", 0, "A")}[option]
    bad = tmp_path / f"{option}.json"
    bad.write_text(json.dumps(_with(data, field, "12%")), encoding="utf-8")
    out = tmp_path / "report.html"
    capsys.readouterr()
    assert main(["report", f"--{option}", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert f"{bad}: {_shown(field)}: expected a number" in err     # (or null, for some)
    assert 'found "12%". The file should hold' in err
    assert not out.exists()
