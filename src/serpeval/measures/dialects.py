"""The ecosystem's spellings of measure names, turned into serpeval's grammar.

The registry (:mod:`serpeval.measures._registry`) parses one grammar; this module is the one
place that knows how ir_measures and ranx write the same measures.

**ir_measures** (0.4.3) writes ``Name(param=value,...)@at`` like serpeval, with its own
parameter spellings, translated here:

* ``cutoff=10`` is ``@10``;
* ``dcg='log2'`` / ``dcg='exp-log2'`` is ``gain=linear`` / ``gain=exp``;
* ``gains={0:0,1:1,2:3,3:7}`` is the gain table ``gains=0:0;1:1;2:3;3:7`` (read by
  :func:`serpeval.measures.gains.parse_gain_table`, which takes both spellings);
* ``judged_only=True`` is serpeval's ``judged_only`` parameter (a per-measure ``-J``);
* ``NumRet(rel=k)`` is ``NumRelRet(rel=k)``, ``SetP(relative=True)`` is ``SetRelP`` and
  ``RBP(rel=k)`` is ``RBP(scale=binary,min_grade=k)``;
* ``IPrec@0.5`` sets the recall level (the spec's ``at_param``, handled by the registry),
  with ir_measures' rounding of levels to ranks (pytrec_eval's, trec_eval 9.0.8):
  ``IPrec(recall=0.5,rounding=v9)``; serpeval's ``IPrec(recall=0.5)`` rounds as trec_eval 10.

ir_measures measure objects (``ir_measures.nDCG@10``) are read through their ``NAME`` and
``params`` (ir_measures is never imported here): :func:`ir_measures_text` writes them in
this grammar, with ir_measures' defaults where they differ from serpeval's (``RBP``'s
persistence is 0.8 there, 0.9 here) and ir_measures' values where they mean something else
(its ``SetF(beta=b)`` is trec_eval's ``set_F.b``, serpeval's ``SetF(beta=sqrt(b))``). A
*string* ``SetF(beta=0.5)`` is serpeval's F-measure beta.

**ranx** (0.3) writes ``name@k`` or ``rbp.95``, with an optional relevance threshold
``-lN`` (:func:`ranx_text`): ``ndcg@10-l2``, ``ndcg_burges@10``, ``map@100-l2``,
``hit_rate@10``, ``hits@10``, ``f1@10``, ``r-precision``, ``mrr``, ``bpref``, ``dcg_burges``,
``rbp.95``. Without ``@k``, ranx's ``precision``, ``recall`` and ``f1`` are over the whole
retrieved list (SetP, SetR, SetF). ranx's threshold ``-lN`` keeps only grades >= N: for the
grade-weighted measures (dcg, ndcg and their burges forms) the grades 1..N-1 get gain 0,
for rbp it is RBP's ``min_grade``, for the others the ``rel`` parameter.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from serpeval.core.errors import InvalidParameterError

__all__ = ["ir_measures_text", "is_foreign_measure", "ranx_text", "translate_params"]

# --------------------------------------------------------------------------- ir_measures

_DCG = {"log2": "linear", "exp-log2": "exp"}

#: ir_measures' defaults that differ from serpeval's, added when an object does not set them.
#: ir_measures computes IPrec with pytrec_eval (trec_eval 9.0.8), which rounds recall levels
#: to ranks as ``IPrec(rounding=v9)`` does.
_IR_MEASURES_DEFAULTS: dict[str, dict[str, Any]] = {"RBP": {"p": 0.8}, "IPrec": {"rounding": "v9"}}

#: ir_measures parameters whose value means something else in serpeval: an object's
#: ``SetF(beta=b)`` reaches trec_eval's ``set_F.b``, whose parameter is beta squared.
_IR_MEASURES_VALUES: dict[tuple[str, str], Callable[[Any], Any]] = {("SetF", "beta"): math.sqrt}


def translate_params(name: str, params: dict[str, str], cutoff: str | None, text: str
                     ) -> tuple[str, dict[str, str], str | None]:
    """ir_measures' parameter spellings -> serpeval's (see the module docstring).

    Returns the measure name (``NumRet(rel=2)`` becomes ``NumRelRet``), the parameters and
    the cutoff text. Parameters serpeval spells the same way pass through unchanged.
    """
    params = dict(params)
    if "cutoff" in params:
        if cutoff is not None:
            raise InvalidParameterError(
                f"Invalid measure {text!r}: the cutoff is given twice (cutoff= and @); write one of them."
            )
        cutoff = params.pop("cutoff").strip("'\"")
    if "dcg" in params:
        value = params.pop("dcg").strip("'\"")
        if value not in _DCG:
            raise InvalidParameterError(
                f"Invalid measure {text!r}: ir_measures' dcg parameter is 'log2' (gain=linear) or "
                f"'exp-log2' (gain=exp); got {value!r}."
            )
        if "gain" in params:
            raise InvalidParameterError(f"Invalid measure {text!r}: give dcg= or gain=, not both.")
        params["gain"] = _DCG[value]
    if name == "IPrec" and cutoff is not None:  # IPrec@x is ir_measures' spelling: its numbers
        params.setdefault("rounding", _IR_MEASURES_DEFAULTS["IPrec"]["rounding"])
    if name == "RBP" and "rel" in params:  # ir_measures' RBP(rel=k): binary gains
        params["min_grade"] = params.pop("rel")
        params.setdefault("scale", "binary")
    if name == "NumRet" and "rel" in params:
        name = "NumRelRet"
    if name == "SetP" and "relative" in params:
        relative = params.pop("relative").strip("'\"").lower()
        if relative not in ("true", "false", "1", "0"):
            raise InvalidParameterError(
                f"Invalid measure {text!r}: relative must be True or False; got {relative!r}."
            )
        if relative in ("true", "1"):
            name = "SetRelP"
    return name, params, cutoff


def is_foreign_measure(obj: object) -> bool:
    """Whether ``obj`` is an ir_measures measure object (``ir_measures.nDCG@10``)."""
    return type(obj).__module__.startswith("ir_measures.") and hasattr(obj, "SUPPORTED_PARAMS") \
        and hasattr(obj, "NAME") and isinstance(getattr(obj, "params", None), dict)


def ir_measures_text(obj: Any) -> str:
    """An ir_measures measure object written in serpeval's grammar.

    ``nDCG(dcg='exp-log2', cutoff=10)`` becomes ``nDCG(dcg=exp-log2)@10`` (translated further
    by :func:`translate_params`); ``IPrec(recall=0.5)`` becomes ``IPrec@0.5``; ``RBP`` without
    ``p`` becomes ``RBP(p=0.8)``, ir_measures' default.
    """
    given = dict(_IR_MEASURES_DEFAULTS.get(obj.NAME, {}))
    given.update(obj.params)
    for key, value in given.items():
        convert = _IR_MEASURES_VALUES.get((obj.NAME, key))
        if convert is not None:
            given[key] = convert(value)
    at_param = getattr(obj, "AT_PARAM", "cutoff")
    at = given.pop(at_param, None)
    parts = [f"{key}={_literal(value)}" for key, value in given.items()]
    text = str(obj.NAME)
    if parts:
        text += "(" + ",".join(parts) + ")"
    if at is not None:
        text += f"@{_literal(at)}"
    return text


def _literal(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, float):
        return repr(value)
    return str(value)


# --------------------------------------------------------------------------- ranx

_RANX = re.compile(
    r"^(?P<name>[a-z][a-z0-9_-]*?)(?:@(?P<k>\d+)|\.(?P<p>\d+))?(?:-l(?P<rel>\d+))?$", re.ASCII
)  # ASCII: \d is 0-9 only, never other scripts' digits

# ranx name -> (serpeval name with a cutoff, without one, fixed parameters, how -lN applies)
_RANX_NAMES: dict[str, tuple[str | None, str | None, str, str]] = {
    "hits": ("Hits", "Hits", "", "rel"),
    "hit_rate": ("Success", "Success", "", "rel"),
    "precision": ("P", "SetP", "", "rel"),
    "recall": ("R", "SetR", "", "rel"),
    "f1": ("F", "SetF", "", "rel"),
    "r-precision": (None, "Rprec", "", "rel"),
    "mrr": ("RR", "RR", "", "rel"),
    "map": ("AP", "AP", "", "rel"),
    "bpref": (None, "Bpref", "", "rel"),
    "dcg": ("DCG", "DCG", "", "gains"),
    "dcg_burges": ("DCG", "DCG", "gain=exp", "gains"),
    "ndcg": ("nDCG", "nDCG", "", "gains"),
    "ndcg_burges": ("nDCG", "nDCG", "gain=exp", "gains"),
    "rbp": (None, "RBP", "scale=grade", "min_grade"),
}

#: The largest ranx threshold -lN spelled as a gain table (grades 1..N-1 with gain 0).
_MAX_GAIN_THRESHOLD = 100


def ranx_text(text: str) -> str | None:
    """A ranx metric name in serpeval's grammar, or None when ``text`` is not one.

    ``ndcg@10-l2`` -> ``nDCG(gains=1:0)@10``; ``ndcg_burges@10`` -> ``nDCG(gain=exp)@10``;
    ``rbp.95`` -> ``RBP(p=0.95,scale=grade)``; ``map@100-l2`` -> ``AP(rel=2)@100``;
    ``precision`` (no ``@k``) -> ``SetP``.
    """
    match = _RANX.match(text.strip())
    if match is None or match["name"] not in _RANX_NAMES:
        return None
    ranx = match["name"]
    with_k, without_k, fixed, threshold = _RANX_NAMES[ranx]
    params = [fixed] if fixed else []
    k = match["k"]
    if ranx == "rbp":
        digits = match["p"] or k
        if digits is None and match["rel"] is None:
            return None  # plain ``rbp`` is trec_eval's name (p = 0.9)
        if digits is None:
            raise InvalidParameterError(
                f"Invalid measure {text!r}: ranx's rbp needs its persistence after a dot, e.g. 'rbp.95' (p = 0.95)."
            )
        params.append(f"p=0.{digits}")
        k = None
    elif match["p"] is not None:
        return None
    name = with_k if k is not None else without_k
    if name is None:
        raise InvalidParameterError(f"Invalid measure {text!r}: ranx's {ranx} takes no cutoff; write {ranx!r}.")
    rel = int(match["rel"]) if match["rel"] is not None else 1
    if rel != 1 and threshold in ("rel", "min_grade"):
        params.append(f"{threshold}={rel}")
    elif rel > 1:
        if rel > _MAX_GAIN_THRESHOLD:
            raise InvalidParameterError(
                f"Invalid measure {text!r}: a relevance threshold above {_MAX_GAIN_THRESHOLD} for {ranx} is "
                "not supported; write the gain table, e.g. nDCG(gains=1:0;2:0)@10."
            )
        params.append("gains=" + ";".join(f"{g}:0" for g in range(1, rel)))
    out = name + (f"({','.join(params)})" if params else "")
    return out + (f"@{k}" if k is not None else "")
