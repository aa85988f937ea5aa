"""``Results.from_json_dict`` keeps the options that changed the numbers.

An evaluation written with ``--depth``, ``--judged-only`` or ``--compat 9.0.8`` (float32
scores) read back as one made without them: its rules (and their signature in ``inputs``)
no longer said how the values were computed, so ``gate --baseline-json`` and every report of
the reloaded result stated the wrong rules.
"""

from __future__ import annotations

import json

import pytest

from serpeval import evaluate
from serpeval.evaluation.results import Results

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}}
RUN = {"q1": {"a": 1.0, "u": 0.9, "c": 0.5}, "q2": {"x": 1.0, "y": 0.5}}


@pytest.mark.parametrize("options", [
    {"depth": 2}, {"judged_only": True}, {"float32_scores": True},
    {"depth": 1, "judged_only": True, "missing": "zero", "ties": "pessimistic"},
])
def test_round_trip_keeps_the_options(options: dict) -> None:
    res = evaluate(QRELS, RUN, ["P@2", "AP"], **options)
    back = Results.from_json_dict(json.loads(json.dumps(res.to_json_dict(per_query=True))))
    assert back.settings.rules() == res.settings.rules()
    assert back.inputs() == res.inputs()
    for key, value in options.items():
        assert getattr(back.settings, key) == value


def test_a_json_without_settings_reads_as_before() -> None:
    data = json.loads(json.dumps(evaluate(QRELS, RUN, ["P@2"]).to_json_dict(per_query=True)))
    del data["settings"]
    back = Results.from_json_dict(data)
    assert (back.settings.depth, back.settings.judged_only, back.settings.float32_scores) == (None, False, False)
