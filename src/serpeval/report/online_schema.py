"""The shape of each online result's JSON, as the commands write it, checked before rendering.

``serpeval ab|interleaving-report|simulate -f json`` write these documents and ``serpeval
report --ab/--interleaving/...`` reads them back. A file edited by hand, or by another tool,
may have the right keys with the wrong types; :func:`schema_problem` finds the first field
that differs and names it by its path (``results[0].p_value``, ``results[0]["wins A"]``),
what was expected and what was found, so the report says so in one line instead of failing
in the middle of drawing a chart.

Every field the commands write has a type here. Fields a section cannot do without are
required; the others are optional (older files, bare analyses) but, when present, must have
their type. Keys not listed are ignored. Numbers are JSON numbers or ``null``: the writers
(:mod:`serpeval.core.strict_json`) write an undefined value as ``null`` and say why under
``null_reasons``; ``NaN`` and ``Infinity`` from older files are read too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from serpeval.core.strict_json import NULL_REASONS, quote

__all__ = ["SCHEMAS", "schema_problem"]


class _Mismatch(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)


def _found(value: Any) -> str:
    """A found value for a message: JSON text (shortened), or what kind of container it is."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    text = quote(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _key_path(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{quote(key)}]"


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar: ``what`` it is (for messages) and the test it passes."""

    what: str
    test: Callable[[Any], bool]

    def check(self, value: Any, path: str) -> None:
        if not self.test(value):
            raise _Mismatch(path, f"expected {self.what}, found {_found(value)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


NUMBER = Scalar("a number", lambda v: v is None or _is_number(v))  # null: undefined (strict JSON)
TEXT = Scalar("a string", lambda v: isinstance(v, str))
FLAG = Scalar("true or false", lambda v: isinstance(v, bool))
SCALAR = Scalar("a string, a number, true/false or null",
                lambda v: v is None or isinstance(v, (str, int, float)))


def nullable(spec: Scalar) -> Scalar:
    """``spec`` or ``null``."""
    return Scalar(f"{spec.what} or null", lambda v: v is None or spec.test(v))


@dataclass(frozen=True)
class ListOf:
    """A JSON list whose items all follow ``item``."""

    item: Any

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, list):
            raise _Mismatch(path, f"expected a list, found {_found(value)}")
        for i, item in enumerate(value):
            self.item.check(item, f"{path}[{i}]")


@dataclass(frozen=True)
class MapOf:
    """A JSON object with any keys, every value following ``value``."""

    value: Any

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            raise _Mismatch(path, f"expected an object, found {_found(value)}")
        for key, item in value.items():
            self.value.check(item, _key_path(path, str(key)))


@dataclass(frozen=True)
class Obj:
    """A JSON object: ``required`` and ``optional`` fields, keys matching ``patterns`` (regex,
    spec), ``rest`` for any other key (None: not checked) and ``rule``, a check across fields
    (returns a problem or None)."""

    required: Mapping[str, Any]
    optional: Mapping[str, Any] = field(default_factory=dict)
    patterns: tuple[tuple[str, Any], ...] = ()
    rest: Any = None
    rule: Callable[[Mapping[str, Any]], str | None] | None = None
    null: bool = False

    def check(self, value: Any, path: str) -> None:
        if value is None and self.null:
            return
        if not isinstance(value, Mapping):
            raise _Mismatch(path, f"expected an object, found {_found(value)}")
        for key, spec in self.required.items():
            if key not in value:
                what = spec.what if isinstance(spec, Scalar) else "a value"
                raise _Mismatch(_key_path(path, key), f"missing (expected {what})")
        for key, item in value.items():
            spec = self.required.get(key) or self.optional.get(key)
            if spec is None and key == NULL_REASONS:  # any object may say why a field is null
                spec = _REASONS
            if spec is None:
                spec = next((s for pattern, s in self.patterns if re.fullmatch(pattern, key)),
                            self.rest)
            if spec is not None:
                spec.check(item, _key_path(path, str(key)))
        problem = self.rule(value) if self.rule else None
        if problem:
            raise _Mismatch(path, problem)


NOTES = ListOf(TEXT)
#: ``{field: why it is null}``, which the writers add to any object (:mod:`serpeval.core.strict_json`)
_REASONS = MapOf(TEXT)
COUNTS = MapOf(NUMBER)          # exclusions, click totals: {reason: count}


def _same_lengths(*keys: str) -> Callable[[Mapping[str, Any]], str | None]:
    def rule(value: Mapping[str, Any]) -> str | None:
        lengths = {key: len(value[key]) for key in keys}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k} {n}" for k, n in lengths.items())
            return f"{', '.join(keys)} need one entry per variant; found {shown}"
        return None
    return rule


def _interval_pair(value: Mapping[str, Any]) -> str | None:
    """An interleaving row has its CI as ``CI <level> low`` and ``CI <level> high``."""
    low = next((k for k in value if re.fullmatch(r"CI .+ low", k)), None)
    if low is None:
        return 'missing its interval: no "CI <level> low" (e.g. "CI 95% low")'
    if f"{low[:-4]} high" not in value:
        return f'missing "{low[:-4]} high" to go with "{low}"'
    return None


def _decision_level(value: Mapping[str, Any]) -> str | None:
    if value.get("first_decision") is not None and "alpha" not in value:
        return "first_decision needs alpha, the level it was reached at"
    return None


_AB_ROW = Obj(
    required={"metric": TEXT, "control": TEXT, "treatment": TEXT,
              **{k: NUMBER for k in ("value_control", "value_treatment", "effect", "ci_lower",
                                     "ci_upper", "rel_effect", "rel_ci_lower", "rel_ci_upper",
                                     "p_value", "p_value_adjusted")},
              "verdict": TEXT, "test": TEXT},
    optional={"units_control": NUMBER, "units_treatment": NUMBER, "significant": FLAG,
              "variance_reduction": nullable(NUMBER)},
)

_SRM = Obj(
    required={"variants": ListOf(TEXT), "observed": ListOf(NUMBER), "expected": ListOf(NUMBER),
              "p_value": NUMBER, "threshold": NUMBER},
    optional={"statistic": NUMBER, "mismatch": FLAG},
    rule=_same_lengths("variants", "observed", "expected"),
)

AB = Obj(
    required={"results": ListOf(_AB_ROW),
              "variants": ListOf(Obj({"variant": TEXT, "units": NUMBER},
                                     {"impressions": nullable(NUMBER)})),
              "srm": _SRM},
    optional={"experiment": TEXT, "source": TEXT, "backend": TEXT, "unit": TEXT,
              "alpha": NUMBER, "correction": TEXT, "cuped": FLAG, "exclusions": COUNTS,
              "notes": NOTES, "rules": NOTES},
)

_LOOK = Obj(
    required={"look": NUMBER, "treatment": TEXT,
              **{k: NUMBER for k in ("units_control", "units_treatment", "effect", "ci_lower",
                                     "ci_upper", "p_value", "cs_lower", "cs_upper",
                                     "always_valid_p")}},
    optional={"end": TEXT, "value_control": NUMBER, "value_treatment": NUMBER},
)

AB_MONITOR = Obj(
    required={"rows": ListOf(_LOOK)},
    optional={"notes": NOTES, "experiment": TEXT, "metric": TEXT, "control": TEXT,
              "alpha": NUMBER, "first_decision": nullable(NUMBER)},
    rule=_decision_level,
)

AB_PLAN = Obj(
    required={"rows": ListOf(Obj(
        required={"metric": TEXT, **{k: NUMBER for k in ("baseline", "sd_per_unit", "mde",
                                                          "units_per_arm", "units_observed",
                                                          "mde_at_observed")}},
        optional={"relative": FLAG, "rel_mde_at_observed": nullable(NUMBER),
                  "variance_reduction": nullable(NUMBER)}))},
    optional={"notes": NOTES, "alpha": NUMBER, "power": NUMBER},
)

_OUTCOME = Obj(
    required={**{k: NUMBER for k in ("impressions", "wins A", "wins B", "ties", "delta (B-A)",
                                     "p (sign test)", "units", "prefer A", "prefer B",
                                     "preference (B-A)", "p (units)")},
              "unit": TEXT, "winner": TEXT},
    optional={"experiment": TEXT, "A": TEXT, "B": TEXT},
    patterns=((r"CI .+ (low|high)", NUMBER),),
    rule=_interval_pair,
)

_CHECK = Obj(required={"check": TEXT, "ok": FLAG},
             optional={"value": nullable(NUMBER), "p": nullable(NUMBER), "detail": TEXT})

_PERIOD = Obj(
    required={"period": NUMBER, "start": TEXT,
              **{k: NUMBER for k in ("impressions", "wins_a", "wins_b", "ties", "cum_impressions",
                                     "cum_units", "delta")}},
    optional={"end": TEXT, "units": NUMBER, "new_units": NUMBER, "cum_wins_a": NUMBER,
              "cum_wins_b": NUMBER, "cum_ties": NUMBER, "delta_period": nullable(NUMBER),
              "se": nullable(NUMBER), "ci_low": nullable(NUMBER), "ci_high": nullable(NUMBER)},
)

INTERLEAVING = Obj(
    required={"results": ListOf(_OUTCOME), "checks": ListOf(_CHECK)},
    optional={"experiment": TEXT, "source": TEXT, "backend": TEXT, "teams": ListOf(TEXT),
              "clicks": COUNTS, "exclusions": COUNTS, "notes": NOTES,
              "over_time": Obj(required={"rows": ListOf(_PERIOD)},
                               optional={"period": TEXT, "seconds": NUMBER, "unit": TEXT,
                                         "confidence": NUMBER, "method": TEXT,
                                         "without_timestamp": NUMBER},
                               null=True)},
)

_SIMULATED = Obj(
    required={"method": TEXT, "metric": TEXT, "effect (B-A)": NUMBER,
              **{k: nullable(NUMBER) for k in ("impressions needed", "needed CI low", "needed CI high")}},
    optional={"click model": TEXT, "A": nullable(NUMBER), "B": nullable(NUMBER),
              **{k: nullable(NUMBER) for k in ("relative (B-A)/A", "ratio to interleaving",
                                               "ratio CI low", "ratio CI high", "Monte Carlo")}},
    patterns=((r"agrees with .+", TEXT),),
    rest=SCALAR,
)

_METHOD = Obj(
    required={"method": TEXT, "metric": TEXT, "required": NUMBER, "required_low": NUMBER,
              "required_high": NUMBER, "agrees": nullable(FLAG)},
    optional={"value_a": nullable(NUMBER), "value_b": nullable(NUMBER), "effect": NUMBER, "relative": nullable(NUMBER),
              **{k: nullable(NUMBER) for k in ("ratio", "ratio_low", "ratio_high", "mc_required",
                                               "trigger_rate")},
              "design": TEXT},
)

_CURVE = Obj(required={"method": TEXT, "metric": TEXT, "source": TEXT, "impressions": NUMBER,
                       "power": NUMBER, "low": nullable(NUMBER), "high": nullable(NUMBER)})

SIMULATION = Obj(
    required={"rows": ListOf(_SIMULATED)},
    optional={"title": nullable(TEXT), "notes": NOTES, "methods": ListOf(_METHOD),
              "curves": ListOf(_CURVE), "power": NUMBER, "confidence": NUMBER},
)

_SEGMENT_ROW = Obj(
    required={"metric": TEXT, "treatment": TEXT, "control": TEXT, "segment": TEXT, "units": NUMBER,
              "value_control": NUMBER, "value_treatment": NUMBER, "effect": NUMBER, "ci_low": NUMBER,
              "ci_high": NUMBER, "p_value": NUMBER, "p_value_corrected": NUMBER, "significant": FLAG,
              "improved": FLAG},
)

SEGMENTS = Obj(
    required={"kind": TEXT, "by": TEXT, "rows": ListOf(_SEGMENT_ROW)},
    optional={"alpha": NUMBER, "correction": TEXT, "notes": NOTES},
)

#: The schema of each online kind (the keys of :data:`serpeval.report.online_inputs.KINDS`).
SCHEMAS: dict[str, Obj] = {"interleaving": INTERLEAVING, "ab": AB, "ab_monitor": AB_MONITOR,
                           "ab_plan": AB_PLAN, "simulation": SIMULATION, "segments": SEGMENTS}


def schema_problem(kind: str, data: Any) -> str | None:
    """The first field of ``data`` that does not follow the schema of ``kind``, as
    ``path: expected ..., found ...`` (None when it all does)."""
    try:
        SCHEMAS[kind].check(data, "")
    except _Mismatch as problem:
        return str(problem)
    return None
