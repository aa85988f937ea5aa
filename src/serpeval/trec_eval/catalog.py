"""trec_eval's measures, in its fixed output order, mapped onto serpeval's registry.

:func:`expand` turns the ``-m`` arguments into the output :class:`Column` list: nicknames
(``official``, ``set``, ``all_trec``) select names; each selected name is printed in the
order of trec_eval's ``te_trec_measures[]`` (``measures.c``), never in command-line order;
a name's parameters come from the first ``-m name.params`` that names it (later ones are
ignored, as trec_eval ignores them); parameters are read as trec_eval reads them:

* cutoff lists (``P.5,10``): C ``atol``, sorted, positive, no duplicates -> ``P_5``, ``P_10``;
* level lists (``iprec_at_recall.0.1,0.2``): C ``atof``, sorted, no duplicates ->
  ``iprec_at_recall_0.10`` (``%3.2f``);
* number lists (``utility.2,-1,0,0``, ``set_F.0.5``, ``11pt_avg..25,.5``, ``relstring.20``):
  C ``atof``, printed ``utility_2,-1,0,0`` (the text as given);
* ``name=value`` pairs (``ndcg.1=3,2=9``, ``rbp.p=0.5``): integer names are gains of that
  grade, ``p`` is rbp's persistence; printed ``ndcg_1=3,2=9``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from serpeval.core.errors import MeasureError
from serpeval.measures import REGISTRY, Measure
from serpeval.measures.cparse import LONG_MAX, atof, atol
from serpeval.measures.gains import format_gain_table, trec_gain_pairs
from serpeval.trec_eval.options import EXIT_INPUT, EXIT_MEASURE, EXIT_USAGE, TrecEvalError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = ["MEASURES", "NICKNAMES", "TREC_TO_SPEC", "Column", "Context", "expand", "measure_names", "select"]

Summary = Literal["mean", "sum", "gmean", "num_rel", "num_q", "runid", "none"]


@dataclass(frozen=True)
class Context:
    """What the measures depend on besides their parameters."""

    rel_level: int
    compat: str
    collection_size: int

    @property
    def rounding(self) -> str:
        """The recall-level rounding of iprec_at_recall and 11pt_avg in this version."""
        return "v9" if self.compat == "9.0.8" else "round"


@dataclass(frozen=True)
class Column:
    """One output name (``P_10``) and how its values are computed and printed.

    Attributes:
        name: the printed measure name.
        measure: the serpeval measure computing it (None for runid, num_q, relstring).
        kind: ``float`` (``%6.4f``), ``long`` (``%ld``) or ``str`` (relstring, runid).
        per_topic: printed in the ``-q`` rows.
        summary: how the ``all`` row is made (``none``: not printed).
        cleared_when_missing: trec_eval 10.0 with ``-c`` zeroes this value for a topic
            missing from the run (num_ret, utility, unj, rbp_resid, relstring).
        length: relstring's number of docs.
    """

    name: str
    measure: Measure | None
    kind: Literal["float", "long", "str"] = "float"
    per_topic: bool = True
    summary: Summary = "mean"
    cleared_when_missing: bool = False
    length: int = 10


Builder = Callable[[str, "str | None", Context, "str | None"], list[Column]]


# ----------------------------------------------------------------------------- parameters


def _init_error(name: str, reason: str) -> TrecEvalError:
    return TrecEvalError(f"trec_eval: {reason}\ntrec_eval: Cannot initialize measure '{name}'",
                         EXIT_INPUT)


def long_cutoffs(name: str, text: str) -> list[int]:
    """``5,10`` -> sorted positive unique cutoffs (C ``atol``), as ``get_long_cutoffs``."""
    values = sorted(atol(part) for part in text.split(","))
    if values[0] <= 0:
        raise _init_error(name, f"cutoffs of {name} must be positive; got {text!r}")
    if values[-1] >= LONG_MAX:  # atol saturates: the number overflowed a 64-bit long
        raise _init_error(name, f"cutoffs of {name} must be below {LONG_MAX}; got {text!r}")
    if len(set(values)) != len(values):
        raise _init_error(name, f"duplicate cutoffs in {name}.{text}")
    return values


def double_cutoffs(name: str, text: str) -> list[float]:
    """``.1,.2`` -> sorted unique levels (C ``atof``), as ``get_double_cutoffs``."""
    values = sorted(atof(part) for part in text.split(","))
    if len(set(values)) != len(values):
        raise _init_error(name, f"duplicate cutoffs in {name}.{text}")
    return values


def double_params(text: str) -> list[float]:
    """``2,-1,0,0`` -> numbers in the given order (C ``atof``), as ``get_double_params``."""
    return [atof(part) for part in text.split(",")]


def check_pairs(name: str, text: str) -> None:
    """Refuse what ``get_param_pairs`` refuses: every item ``name=value``, no empty items."""
    last = ","
    for ch in text:
        if ch == ",":
            if last == ",":
                last = "?"
                break
            last = ","
        elif ch == "=":
            if last == "=":
                last = ","
                break
            last = "="
    if last != "=":
        raise _init_error(name, f"malformed pair parameters in '{text}'")


def _trec_params(spec_name: str | None, text: str | None, failure: str, status: int
                 ) -> dict[str, object]:
    """The parameters of ``name.text``, read by the measure's own trec_eval parser
    (``MeasureSpec.trec_params``); {} without text. A refused text ends with ``status``."""
    if text is None:
        return {}
    parse = REGISTRY[str(spec_name)].trec_params
    assert parse is not None  # the builders using this are given specs that have one
    try:
        return dict(parse(text))
    except ValueError as exc:
        raise TrecEvalError(f"trec_eval: {exc}{failure}", status) from None


def _label(name: str, text: str | None) -> str:
    """The printed name of a measure with number-list or pair parameters: ``name_text``."""
    return f"{name}_{text}" if text is not None else name


def _bind(name: str, spec_name: str | None, ctx: Context, params: dict[str, object] | None = None,
          cutoff: int | None = None) -> Measure:
    """The registry measure ``spec_name`` with ``params``, the cutoff and ``-l``; a parameter
    out of the measure's range (which trec_eval would take) exits 2 as trec_eval's own bad
    parameters do ("Cannot initialize measure"), the status its help gives measure parameters."""
    spec = REGISTRY[str(spec_name)]
    given = dict(params or {})
    if spec.param("rel") is not None:
        given["rel"] = ctx.rel_level
    try:
        return spec.bind(given, cutoff, spec.name)
    except MeasureError as exc:
        raise _init_error(name, str(exc)) from None


# ----------------------------------------------------------------------------- builders


def _single(*, kind: Literal["float", "long"] = "float", summary: Summary = "mean",
            per_topic: bool = True, cleared: bool = False) -> Builder:
    def build(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
        return [Column(name, _bind(name, spec, ctx), kind=kind, per_topic=per_topic,
                       summary=summary, cleared_when_missing=cleared)]
    return build


def _cutoffs(defaults: Sequence[int], *, cleared: bool = False) -> Builder:
    def build(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
        cutoffs = long_cutoffs(name, text) if text is not None else list(defaults)
        return [Column(f"{name}_{k}", _bind(name, spec, ctx, cutoff=k), cleared_when_missing=cleared)
                for k in cutoffs]
    return build


def _levels(param: str, defaults: Sequence[float], rounding: bool) -> Builder:
    def build(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
        levels = double_cutoffs(name, text) if text is not None else list(defaults)
        extra = {"rounding": ctx.rounding} if rounding else {}
        return [Column(f"{name}_{x:3.2f}", _bind(name, spec, ctx, {param: x, **extra})) for x in levels]
    return build


def _gain_pairs(*, persistence: bool = False, gains: bool = True,
                cleared: bool = False) -> Builder:
    def build(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
        params: dict[str, object] = {}
        if text is not None:
            check_pairs(name, text)
            table, named = trec_gain_pairs(text, extra=("p",) if persistence else (),
                                           strict_levels=ctx.compat != "9.0.8")
            if gains and table:
                params["gains"] = format_gain_table(table)
            if "p" in named:
                params["p"] = named["p"]
        return [Column(_label(name, text), _bind(name, spec, ctx, params),
                       cleared_when_missing=cleared)]
    return build


def _utility(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
    """``utility.a,b,c,d`` (default 1,-1,0,0); a wrong count exits 4, as in trec_eval."""
    params = _trec_params(spec, text, f"\ntrec_eval: Can't calculate measure '{name}'",
                          EXIT_MEASURE)
    params["collection"] = ctx.collection_size
    return [Column(_label(name, text), _bind(name, spec, ctx, params), cleared_when_missing=True)]


def _eleven_point(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
    """``11pt_avg..25,.5`` (default: the 11 levels 0, 0.1, ..., 1)."""
    params = _trec_params(spec, text, f"\ntrec_eval: Cannot initialize measure '{name}'", EXIT_INPUT)
    params["rounding"] = ctx.rounding
    return [Column(_label(name, text), _bind(name, spec, ctx, params))]


@dataclass(frozen=True)
class _WeightedSetF(Measure):
    """``set_F.x`` computed with trec_eval's own x: (x + 1) P R / (x P + R) of set_P and
    set_recall, 0 when nothing relevant is retrieved (``m_set_F.c``).

    SetF takes beta = sqrt(x) and squares it back, which is x only within an ulp (0.5
    becomes 0.5000000000000001): enough to print 0.0937 where trec_eval prints 0.0938
    (a mean of exactly 0.09375). Here x is used as given, in trec_eval's order of operations.
    """

    weight: float = 1.0

    def compute(self, rankings: Rankings) -> NDArray[np.float64]:
        rel = self["rel"]
        p = REGISTRY["SetP"].bind({"rel": rel}, None, "SetP").compute(rankings)
        r = REGISTRY["SetR"].bind({"rel": rel}, None, "SetR").compute(rankings)
        x = self.weight
        out = np.zeros_like(p)
        np.divide((x + 1.0) * p * r, x * p + r, out=out, where=p > 0)
        return out


def _set_f(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
    """``set_F.x`` with x = beta squared (default 1); a negative x exits 2."""
    params = _trec_params(spec, text, f"\ntrec_eval: Cannot initialize measure '{name}'", EXIT_INPUT)
    bound = _bind(name, spec, ctx, params)
    weight = atof(text) if text is not None else 1.0  # validated by the bind above
    measure = _WeightedSetF(bound.spec, bound.params, bound.cutoff, weight)
    return [Column(_label(name, text), measure)]


def _relstring(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
    length = 10
    if text is not None:
        first = double_params(text)[0]
        # C's (long) cast of the double: a value outside long's range (inf, 1e300) or NaN
        # is LONG_MIN on x86-64, so an empty relstring, as is anything below 1.
        length = int(first) if math.isfinite(first) and -(2.0**63) <= first < 2.0**63 else 0
    return [Column(_label(name, text), None, kind="str", summary="none", cleared_when_missing=True,
                   length=max(length, 0))]


def _special(summary: Summary, kind: Literal["long", "str"]) -> Builder:
    def build(name: str, spec: str | None, ctx: Context, text: str | None) -> list[Column]:
        return [Column(name, None, kind=kind, per_topic=False, summary=summary)]
    return build


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
_ALL = frozenset({"10.0", "9.0.8"})
_NEW = frozenset({"10.0"})

#: trec_eval's measures in output order (``te_trec_measures[]`` of ``measures.c``).
MEASURES: tuple[tuple[str, frozenset[str], Builder], ...] = (
    ("runid", _ALL, _special("runid", "str")),
    ("num_q", _ALL, _special("num_q", "long")),
    ("num_ret", _ALL, _single(kind="long", summary="sum", cleared=True)),
    ("num_rel", _ALL, _single(kind="long", summary="num_rel")),
    ("num_rel_ret", _ALL, _single(kind="long", summary="sum")),
    ("map", _ALL, _single()),
    ("gm_map", _ALL, _single(summary="gmean", per_topic=False)),
    ("Rprec", _ALL, _single()),
    ("bpref", _ALL, _single()),
    ("recip_rank", _ALL, _single()),
    ("iprec_at_recall", _ALL, _levels("recall", _ELEVEN, rounding=True)),
    ("P", _ALL, _cutoffs(_CUTS)),
    ("relstring", _ALL, _relstring),
    ("recall", _ALL, _cutoffs(_CUTS)),
    ("infAP", _ALL, _single()),
    ("gm_bpref", _ALL, _single(summary="gmean", per_topic=False)),
    ("Rprec_mult", _ALL, _levels("mult", _RPREC_MULTS, rounding=False)),
    ("utility", _ALL, _utility),
    ("11pt_avg", _ALL, _eleven_point),
    ("binG", _ALL, _single()),
    ("G", _ALL, _gain_pairs()),
    ("dcg", _NEW, _gain_pairs()),
    ("ideal_dcg", _NEW, _gain_pairs()),
    ("ndcg", _ALL, _gain_pairs()),
    ("ndcg_rel", _ALL, _gain_pairs()),
    ("Rndcg", _ALL, _gain_pairs()),
    ("ndcg_cut", _ALL, _cutoffs(_CUTS)),
    ("map_cut", _ALL, _cutoffs(_CUTS)),
    ("relative_P", _ALL, _cutoffs(_CUTS)),
    ("success", _ALL, _cutoffs((1, 5, 10))),
    ("set_P", _ALL, _single()),
    ("set_relative_P", _ALL, _single()),
    ("set_recall", _ALL, _single()),
    ("set_map", _ALL, _single()),
    ("set_F", _ALL, _set_f),
    ("num_nonrel_judged_ret", _ALL, _single(kind="long", summary="sum")),
    ("yaap", _ALL, _single()),
    ("rbp", _NEW, _gain_pairs(persistence=True)),
    ("rbp_resid", _NEW, _gain_pairs(persistence=True, gains=False, cleared=True)),
    ("unj", _NEW, _cutoffs((5, 10, 20), cleared=True)),
)

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
             "bpref", "recip_rank", "iprec_at_recall", "P")
_SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
        "set_relative_P", "set_map", "set_F")
_ALL_TREC = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
             "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp",
             "rbp_resid", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P",
             "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
             "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret")
NICKNAMES = {"official": _OFFICIAL, "set": _SET, "all_trec": _ALL_TREC}

#: Names trec_eval knows that need preference or judgment-group relevance files (-R).
UNSUPPORTED = frozenset({
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
    "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
    "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "all_prefs", "prefs",
    "qrels_jg",
})


def _spec_name(name: str) -> str | None:
    spec = REGISTRY.for_trec_name(name)
    return spec.name if spec is not None else None


#: trec_eval name -> the serpeval measure computing it (None: runid, num_q, relstring),
#: derived from the measure specs.
TREC_TO_SPEC: dict[str, str | None] = {name: _spec_name(name) for name, _, _ in MEASURES}


def measure_names(compat: str) -> list[str]:
    """The measure names of a trec_eval version, in output order."""
    return [name for name, versions, _ in MEASURES if compat in versions]


def expand(arguments: Sequence[str], ctx: Context) -> list[Column]:
    """The output columns for the ``-m`` arguments (``official`` when there are none).

    Raises:
        TrecEvalError: an unknown measure (status 1), bad parameters (status 2, as
            trec_eval's "Cannot initialize measure").
    """
    selected, params = select(arguments, ctx.compat)
    columns: list[Column] = []
    for name, versions, build in MEASURES:
        if name in selected and ctx.compat in versions:
            columns.extend(build(name, TREC_TO_SPEC[name], ctx, params.get(name)))
    return columns


def first_computed(arguments: Sequence[str], compat: str) -> str:
    """The measure trec_eval computes first for a topic, in its fixed order (runid and num_q
    read no ranking): the one its "Can't calculate measure" names after duplicate docs."""
    selected, _ = select(arguments, compat)
    return next((name for name, versions, _ in MEASURES
                 if name in selected and compat in versions and name not in ("runid", "num_q")), "num_ret")


def select(arguments: Sequence[str], compat: str) -> tuple[set[str], dict[str, str]]:
    """The measure names the ``-m`` arguments select and the parameter text of each, as
    trec_eval marks them while it reads its options, before it opens a file: an unknown
    name ends it with status 1 whatever the files hold. (Parameters are checked later, by
    :func:`expand`, as trec_eval initialises measures after reading the files.)

    Raises:
        TrecEvalError: an unknown or unsupported measure (status 1).
    """
    known = set(measure_names(compat))
    selected: set[str] = set()
    params: dict[str, str] = {}
    for argument in arguments or ["official"]:
        name, dot, text = argument.partition(".")
        if dot and not text:
            raise TrecEvalError(f"trec_eval: improper measure in parameter '{name}'\n"
                                f"trec_eval: illegal measure '{argument}'", EXIT_USAGE)
        if name in UNSUPPORTED:
            raise TrecEvalError(
                f"trec_eval: measure '{name}' needs preference or judgment-group relevance "
                "files (-R prefs/qrels_jg), which serpeval trec_eval does not support", EXIT_USAGE)
        if dot:
            params.setdefault(name, text)
        if name in NICKNAMES:
            selected.update(n for n in NICKNAMES[name] if n in known)
        elif name in known:
            selected.add(name)
        else:
            hint = ""
            if name in TREC_TO_SPEC:  # a measure of the other version: only 10.0 adds some
                hint = f" ('{name}' is new in trec_eval 10.0; use --compat 10.0)"
            raise TrecEvalError(f"trec_eval: illegal measure '{argument}'{hint}", EXIT_USAGE)
    return selected, params
