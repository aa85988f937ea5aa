"""What a measure is: a declarative :class:`MeasureSpec` plus a pure kernel.

A spec carries the canonical name, aliases, trec_eval names, typed parameters with
defaults and bounds, whether a cutoff is allowed, how per-query values are aggregated,
the value bounds, the properties the registry-wide tests check, and a citation. A
:class:`Measure` is a spec with its parameter values bound; its string form is canonical
(``nDCG(gain=exp)@10``) and parses back to an equal measure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from serpeval.core.errors import InvalidParameterError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = ["MAX_CUTOFF", "MAX_WEIGHT", "Measure", "MeasureSpec", "Param", "aggregate", "ascii_number", "format_value"]

Kernel = Callable[..., "NDArray[np.float64]"]


MAX_CUTOFF = 2**63 - 1
"""The largest cutoff ``@k``: ranks are int64."""

EXPECTED: list[Callable[..., NDArray[np.float64]]] = []
"""``[expected_values]``: a measure's expectation over every order of each tie group
(``ties="expected"``), put here by :mod:`serpeval.measures` from
:mod:`serpeval.measures.expected` (which imports this module, so this one cannot import it)."""

MAX_WEIGHT = 1e100
"""The largest magnitude of a gain, a utility coefficient or an F-measure beta: far beyond
any real scale, and small enough that a sum over 2^63 documents stays finite in float64."""

GMEAN_FLOOR = 1e-5
"""Geometric means average ``log(max(x, GMEAN_FLOOR))`` (trec_eval's ``MIN_GEO_MEAN``)."""

MAX_CUTOFF = 2**63 - 1
"""The largest cutoff: the kernels count ranks in 64-bit integers (``@k`` beyond is refused)."""


def ascii_number(text: str) -> bool:
    """Whether ``text`` may be handed to Python's ``int()``/``float()`` as a number of the
    grammar: ASCII only and no ``_``. (Python reads ``"١٠"``, Arabic-Indic digits, and
    ``"1_0"``, digit grouping, as 10; the grammar's numbers are written with 0-9.)"""
    return text.isascii() and "_" not in text


def format_value(value: Any) -> str:
    """Canonical text of a parameter value (``0.5``, ``2``, ``exp``, ``True``)."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


@dataclass(frozen=True)
class Param:
    """A typed measure parameter.

    Attributes:
        name: as written in the grammar (``rel`` in ``P(rel=2)@5``).
        type: ``int``, ``float``, ``str`` or ``bool`` (written ``True``/``False``, as
            ir_measures' ``judged_only=True``; ``1``/``0`` and lower case are accepted).
        default: the value when not given (never printed in canonical names).
        description: one line for ``serpeval measures``.
        choices: allowed values for ``str`` parameters.
        minimum: smallest allowed value (inclusive) for numbers.
        maximum: largest allowed value (inclusive) for numbers.
        normalize: for structured ``str`` values (a gain table, a list of levels): checks
            the text and returns its canonical spelling; raises ``ValueError`` with the
            reason when the text is invalid.
    """

    name: str
    type: type
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    normalize: Callable[[str], str] | None = None

    def describe(self) -> str:
        """``an int >= 0``, ``one of linear, exp`` and so on, for error messages."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        kind = {int: "an int", float: "a number", str: "a string", bool: "True or False"}[self.type]
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} in [{format_value(self.minimum)}, {format_value(self.maximum)}]"
        if self.minimum is not None:
            return f"{kind} >= {format_value(self.minimum)}"
        if self.maximum is not None:
            return f"{kind} <= {format_value(self.maximum)}"
        return kind

    def coerce(self, raw: Any, measure: str, text: str) -> Any:
        """Convert ``raw`` (text from the grammar, or a Python value) and check it."""
        def fail() -> InvalidParameterError:
            return InvalidParameterError(
                f"Invalid measure {text!r}: the {self.name!r} parameter of {measure} must be "
                f"{self.describe()}. Got {raw!r} instead."
            )

        value: Any = raw
        if isinstance(raw, str):
            raw_text = raw.strip().strip("'\"")
            if self.type in (int, float) and not ascii_number(raw_text):
                raise fail()  # Python's int()/float() read "١٠" and "1_0" as 10: numbers are ASCII
            if self.type is bool:
                flags = {"true": True, "1": True, "false": False, "0": False}
                if raw_text.lower() not in flags:
                    raise fail()
                value = flags[raw_text.lower()]
            elif self.type is int:
                try:
                    value = int(raw_text)
                except ValueError:
                    raise fail() from None
            elif self.type is float:
                try:
                    value = float(raw_text)
                except ValueError:
                    raise fail() from None
            else:
                value = raw_text
        elif self.type is float and isinstance(raw, (int, np.integer)) and not isinstance(raw, bool):
            value = float(raw)
        if self.type is bool and not isinstance(value, (bool, np.bool_)):
            raise fail()
        if self.type is int and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            raise fail()
        if self.type is float and (isinstance(value, bool) or not isinstance(value, (float, np.floating))):
            raise fail()
        if self.type is float and not np.isfinite(value):
            raise fail()
        if self.type is str and not isinstance(value, str):
            raise fail()
        if self.choices and value not in self.choices:
            raise fail()
        if self.minimum is not None and value < self.minimum:
            raise fail()
        if self.maximum is not None and value > self.maximum:
            raise fail()
        if self.normalize is not None and value != self.default:
            try:
                value = self.normalize(value)
            except ValueError as exc:
                raise InvalidParameterError(
                    f"Invalid measure {text!r}: the {self.name!r} parameter of {measure}: {exc}"
                ) from None
        return self.type(value)


#: Property tags checked by the registry-wide tests (``tests/measures/test_measure_properties.py``).
PROPERTIES = frozenset({
    "bounded",          # values lie in ``bounds``
    "ideal_is_one",     # the ideal ranking scores 1 when the query has a relevant doc
    "no_relevant_is_zero",  # 0 for a query with no relevant judgment
    "cutoff_monotone",  # non-decreasing in the cutoff
    "swap_improves",    # moving a more relevant doc up never lowers the value
})


@dataclass(frozen=True)
class MeasureSpec:
    """The declaration of a measure family (one per file in ``serpeval/measures``).

    Attributes:
        name: canonical name, as printed (``nDCG``).
        summary: one-line definition for ``serpeval measures``.
        kernel: ``kernel(rankings, cutoff=..., **params) -> float64[n_queries]``.
        params: typed parameters.
        cutoff: whether ``@k`` is ``"none"``, ``"optional"`` or ``"required"``.
        aliases: other names that parse to this measure (``MAP``, ``NDCG``).
        trec: trec_eval names for this measure without a cutoff (``map``).
        trec_cut: trec_eval names that take a cutoff suffix (``map_cut`` as in
            ``map_cut_100`` or ``map_cut.100``).
        aggregate: how per-query values are combined: ``mean``, ``sum`` (counts) or
            ``gmean`` (geometric mean of ``max(x, 1e-5)``).
        bounds: the range of per-query values, or ``None`` when unbounded.
        higher_is_better: the direction of improvement.
        properties: property tags from :data:`PROPERTIES` that hold for this measure.
        reference: citation and/or trec_eval source file.
        trec_params: turns the parameter text of a trec_eval name (``0.10`` in
            ``iprec_at_recall_0.10``, ``1=3,2=9`` in ``ndcg.1=3,2=9``) into grammar
            parameters; ``None`` when the trec_eval names take no parameters. Raises
            ``ValueError`` when the text does not fit.
        subtopics: the kernel reads subtopic judgments (the diversity measures of
            :mod:`serpeval.measures.diversity`), so the evaluation needs subtopic qrels.
        at_param: the parameter that ``@x`` sets instead of a cutoff (ir_measures'
            ``AT_PARAM``: ``IPrec@0.5`` is ``IPrec(recall=0.5)``); ``None`` for a cutoff.
        notes: how ir_measures and ranx define the measure where they differ from
            serpeval's definition (shown by ``serpeval measures NAME``).
        family: the group the measure belongs to in the metrics matrix (``Discounted
            gain``, ``Cascade``); the documentation site's matrix is generated from this
            field and the five below, so a new measure appears in it.
        user_model: the reader the measure assumes (``scans the top k, every rank alike``).
        grades: ``"binary"`` (a relevance threshold ``rel``), ``"graded"`` (gains per
            grade), or ``"none"`` (counts that read no grade); empty when not yet described.
        use_when: one line on the job the measure is for.
        unjudged: how a retrieved document missing from the qrels counts.
        ir_measures: ir_measures' names for the measure (``SetP(relative=True)``), empty
            when ir_measures has none.
    """

    name: str
    summary: str
    kernel: Kernel
    params: tuple[Param, ...] = ()
    cutoff: Literal["none", "optional", "required"] = "none"
    aliases: tuple[str, ...] = ()
    trec: tuple[str, ...] = ()
    trec_cut: tuple[str, ...] = ()
    aggregate: Literal["mean", "sum", "gmean"] = "mean"
    bounds: tuple[float, float] | None = (0.0, 1.0)
    higher_is_better: bool = True
    properties: frozenset[str] = field(default_factory=frozenset)
    reference: str = ""
    trec_params: Callable[[str], dict[str, Any]] | None = None
    subtopics: bool = False
    at_param: str | None = None
    notes: str = ""
    family: str = ""
    user_model: str = ""
    grades: Literal["", "binary", "graded", "none"] = ""
    use_when: str = ""
    unjudged: str = ""
    ir_measures: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = set(self.properties) - PROPERTIES
        if unknown:
            raise ValueError(f"{self.name}: unknown property tags {sorted(unknown)}")

    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, or None."""
        for p in self.params:
            if p.name == name:
                return p
        return None

    def __call__(self, cutoff: int | None = None, **params: Any) -> Measure:
        """Bind parameters from Python: ``nDCG_SPEC(10, gain="exp")``."""
        return self.bind(params, cutoff, text=self.name)

    def bind(self, given: dict[str, Any], cutoff: int | None, text: str) -> Measure:
        """Check and bind parameter values; ``text`` is quoted in error messages."""
        for key in given:
            if self.param(key) is None:
                allowed = ", ".join(p.name for p in self.params) or "none"
                raise InvalidParameterError(
                    f"Invalid measure {text!r}: {self.name} has no parameter {key!r} "
                    f"(parameters: {allowed})."
                )
        values = tuple(
            (p.name, p.coerce(given[p.name], self.name, text) if p.name in given else p.default)
            for p in self.params
        )
        if cutoff is not None:
            if self.cutoff == "none":
                raise InvalidParameterError(
                    f"Invalid measure {text!r}: {self.name} takes no cutoff; write {self.name!r}."
                )
            if isinstance(cutoff, bool) or not isinstance(cutoff, (int, np.integer)) \
                    or not 1 <= cutoff <= MAX_CUTOFF:
                raise InvalidParameterError(
                    f"Invalid measure {text!r}: the cutoff must be an integer from 1 to {MAX_CUTOFF} "
                    f"(2^63 - 1); got {cutoff!r}."
                )
            if cutoff > MAX_CUTOFF:
                raise InvalidParameterError(
                    f"Invalid measure {text!r}: the cutoff {cutoff} is too large (at most "
                    f"{MAX_CUTOFF}, a 64-bit integer)."
                )
            cutoff = int(cutoff)
        elif self.cutoff == "required":
            raise InvalidParameterError(
                f"Invalid measure {text!r}: {self.name} needs a cutoff, e.g. '{self.name}@10'."
            )
        return Measure(self, values, cutoff)


@dataclass(frozen=True)
class Measure:
    """A measure with its parameters bound. ``str(m)`` is the canonical name."""

    spec: MeasureSpec
    params: tuple[tuple[str, Any], ...]
    cutoff: int | None = None

    def __getitem__(self, name: str) -> Any:
        for key, value in self.params:
            if key == name:
                return value
        raise KeyError(name)

    @property
    def name(self) -> str:
        """The canonical string form, e.g. ``P(rel=2)@5``."""
        changed = [
            f"{key}={format_value(value)}"
            for (key, value), p in zip(self.params, self.spec.params, strict=True)
            if value != p.default
        ]
        text = self.spec.name
        if changed:
            text += "(" + ",".join(changed) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Measure({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and self.name == other.name

    def __hash__(self) -> int:
        return hash(self.name)

    def compute(self, rankings: Rankings) -> NDArray[np.float64]:
        """Per-query values, ``float64[rankings.n_queries]``.

        A ``judged_only=True`` parameter (ir_measures' spelling of trec_eval's ``-J``, for
        one measure) computes the kernel on :meth:`Rankings.only_judged`.
        """
        params = dict(self.params)
        if params.pop("judged_only", False):
            rankings = rankings.only_judged()
        if rankings.ties == "expected":  # the mean over every order of each tie group
            return EXPECTED[0](self, rankings, params)
        values = self.spec.kernel(rankings, cutoff=self.cutoff, **params)
        return np.asarray(values, dtype=np.float64)

    def aggregate(self, values: NDArray[np.float64]) -> float:
        """Combine per-query values as the spec says (mean, sum or geometric mean)."""
        return aggregate(values, self.spec.aggregate)


def aggregate(values: NDArray[np.float64], how: str) -> float:
    """Mean, sum or geometric mean of ``max(x, 1e-5)``, summed in query order as trec_eval does.

    The sequential sum (not NumPy's pairwise one) keeps the last bits equal to trec_eval's,
    so that values printed with 4 decimals round the same way. NaN when there are no values.
    """
    n = len(values)
    if n == 0:
        return float("nan")
    if how == "gmean":
        return float(np.exp(np.cumsum(np.log(np.maximum(values, GMEAN_FLOOR)))[-1] / n))
    total = float(np.cumsum(values)[-1])
    return total if how == "sum" else total / n
