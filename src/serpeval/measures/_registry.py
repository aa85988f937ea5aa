"""The registry of measures and the one measure-name grammar.

Grammar: ``Name[(param=value,...)][@cutoff]`` - ``P@10``, ``AP``, ``nDCG(gain=exp)@10``,
``P(rel=2)@5``. Names match canonical names and aliases exactly first, then ignoring case
(``ndcg@10``, ``map``, ``mrr@10`` as recommender-systems code writes them). trec_eval names
(``ndcg_cut_10``, ``ndcg_cut.10``, ``P_5``, ``map``, ``recip_rank``) parse to the same
measures, and so do parameterised trec_eval names, in the ``-m name.params`` spelling and
in the ``name_params`` spelling trec_eval prints (``iprec_at_recall_0.10``, ``set_F.0.5``,
``rbp.p=0.5``, ``ndcg_1=3,2=9``): the spec's ``trec_params`` turns the text after the
name into grammar parameters. ir_measures' spellings (``nDCG(dcg='exp-log2',cutoff=10)``,
``nDCG(gains={0:0,1:1,2:3})@10``, ``AP(judged_only=True)``, ``IPrec@0.5``), ir_measures
measure objects and ranx's names (``ndcg@10-l2``, ``rbp.95``) parse too: the translation
lives in :mod:`serpeval.measures.dialects`. The canonical form printed everywhere is
``str(measure)``, and ``parse(str(m)) == m`` for every measure.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from typing import Any

from serpeval.core.errors import InvalidParameterError, UnknownMeasureError
from serpeval.measures.dialects import ir_measures_text, is_foreign_measure, ranx_text, translate_params
from serpeval.measures.spec import Measure, MeasureSpec

__all__ = ["Registry"]

_GRAMMAR = re.compile(
    r"^\s*(?P<name>[^\W\d][\w-]*)\s*"  # letters (alpha_nDCG, α_nDCG), digits, _ and - (ERR-IA)
    r"(?:\((?P<params>[^()]*)\))?\s*"
    r"(?:@\s*(?P<cutoff>[^\s@]+))?\s*$"
)
_TREC_CUT = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*?)[_.](?P<cutoff>[0-9]+)$")
_TREC_LIST = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*?)\.(?P<values>[0-9.]+(?:,[0-9.]+)+)$")
_TREC_PARAMS = re.compile(r"^[A-Za-z0-9_]+[._][A-Za-z0-9_.,=+-]+$")


class Registry:
    """An ordered collection of :class:`MeasureSpec` with name lookup and parsing.

    The order is the default output order. Names, aliases and trec_eval names must be
    unique (ignoring case for names and aliases).
    """

    def __init__(self, specs: Iterable[MeasureSpec]) -> None:
        self.specs: tuple[MeasureSpec, ...] = tuple(specs)
        self._exact: dict[str, MeasureSpec] = {}
        self._folded: dict[str, MeasureSpec] = {}
        self._trec: dict[str, MeasureSpec] = {}
        self._trec_cut: dict[str, MeasureSpec] = {}
        self._trec_param: dict[str, MeasureSpec] = {}
        for spec in self.specs:
            for name in (spec.name, *spec.aliases):
                for table, key in ((self._exact, name), (self._folded, name.lower())):
                    if key in table and table[key] is not spec:
                        raise ValueError(f"measure name {name!r} registered twice")
                    table[key] = spec
            for name in spec.trec:
                self._trec[name] = spec
            for name in spec.trec_cut:
                self._trec_cut[name] = spec
            if spec.trec_params is not None:
                for name in spec.trec:
                    self._trec_param[name] = spec

    def __iter__(self) -> Iterator[MeasureSpec]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.lookup(name) is not None

    def lookup(self, name: str) -> MeasureSpec | None:
        """The spec registered under ``name`` (canonical or alias, any case), or None."""
        return self._exact.get(name) or self._folded.get(name.lower())

    def __getitem__(self, name: str) -> MeasureSpec:
        spec = self.lookup(name)
        if spec is None:
            raise UnknownMeasureError(self._unknown_message(name, name))
        return spec

    def for_trec_name(self, name: str) -> MeasureSpec | None:
        """The spec whose trec_eval names include ``name`` (``map``, ``ndcg_cut``), or None.

        This is the one table from trec_eval names to measures: :mod:`serpeval.trec_eval`
        reads it too.
        """
        return self._trec.get(name) or self._trec_cut.get(name)

    def all_names(self) -> list[str]:
        """Every name that parses: canonical names, aliases and trec_eval names."""
        names: list[str] = []
        for spec in self.specs:
            names += [spec.name, *spec.aliases, *spec.trec, *spec.trec_cut]
        return names

    def parse(self, text: str | Measure) -> Measure:
        """Parse one measure name (any supported dialect) into a bound :class:`Measure`."""
        if isinstance(text, Measure):
            return text
        if is_foreign_measure(text):
            return self.parse(ir_measures_text(text))
        if not isinstance(text, str):
            raise InvalidParameterError(f"A measure name must be a string; got {text!r}.")
        ranx = ranx_text(text)
        if ranx is not None:
            return self.parse(ranx)
        trec = self._parse_trec(text.strip())
        if trec is not None:
            return trec
        match = _GRAMMAR.match(text)
        if match is None:
            raise InvalidParameterError(
                f"Invalid measure {text!r}: expected Name[(param=value,...)][@cutoff], "
                "e.g. 'nDCG@10' or 'P(rel=2)@5'."
            )
        spec = self.lookup(match["name"])
        if spec is None and match["name"] in self._trec_cut and match["name"] not in self._trec:
            # a trec_eval cutoff family written without its cutoff (ndcg_cut, ndcg_cut@10):
            # the suggestion "did you mean 'ndcg_cut'?" named the very spelling refused
            base, canonical = match["name"], self._trec_cut[match["name"]].name
            raise InvalidParameterError(
                f"Invalid measure {text!r}: trec_eval's {base} takes its cutoff in the name, "
                f"e.g. '{base}_10' or '{base}.10' ({canonical}@10)."
            )
        if spec is None:
            raise UnknownMeasureError(self._unknown_message(match["name"], text))
        params = _split_params(match["params"], text) if match["params"] is not None else {}
        name, params, at = translate_params(spec.name, params, match["cutoff"], text)
        if name != spec.name:
            spec = self[name]
        cutoff: Any = None
        if at is not None and spec.at_param is not None:
            if spec.at_param in params:
                raise InvalidParameterError(
                    f"Invalid measure {text!r}: {spec.at_param} is given twice ({spec.at_param}= and @)."
                )
            params[spec.at_param] = at
        elif at is not None:
            cutoff = _cutoff(at, text)
        return spec.bind(params, cutoff, text)

    def parse_many(self, texts: Iterable[str | Measure]) -> tuple[Measure, ...]:
        """Parse several names, dropping exact repeats but keeping the given order."""
        seen: dict[Measure, None] = {}
        if is_foreign_measure(texts):
            texts = [texts]  # type: ignore[list-item]
        for text in texts:
            for one in self._trec_list(text):
                seen.setdefault(self.parse(one), None)
        return tuple(seen)

    def _trec_list(self, text: str | Measure) -> list[str | Measure]:
        """trec_eval's value lists, one measure per value: ``P.5,10`` is ``P.5`` and ``P.10``,
        ``iprec_at_recall.0.25,0.5`` two recall levels. Anything else is one measure."""
        match = _TREC_LIST.match(text.strip()) if isinstance(text, str) else None
        if match is None or not (match["base"] in self._trec_cut or match["base"] == "iprec_at_recall"):
            return [text]
        return [f"{match['base']}.{value}" for value in match["values"].split(",")]

    def _parse_trec(self, text: str) -> Measure | None:
        """trec_eval spellings: ``map``, ``ndcg_cut_10``, ``ndcg_cut.10``, ``P_5``, ``P.5``."""
        spec = self._trec.get(text)
        if spec is not None:
            return spec.bind({}, None, text)
        match = _TREC_CUT.match(text)
        if match is not None:
            spec = self._trec_cut.get(match["base"])
            if spec is not None:
                return spec.bind({}, _cutoff(match["cutoff"], text), text)
        return self._parse_trec_params(text)

    def _parse_trec_params(self, text: str) -> Measure | None:
        """``iprec_at_recall_0.10``, ``set_F.0.5``, ``rbp.p=0.5``, ``ndcg_1=3,2=9``.

        The longest trec_eval name followed by ``.`` or ``_`` wins; the rest must start
        like a number or contain ``=``, so that ``ndcg_rel`` never reads as ``ndcg`` with
        parameter ``rel``.
        """
        match = _TREC_PARAMS.match(text)
        if match is None:
            return None
        for end in sorted((m.end() for m in re.finditer(r"[._]", text)), reverse=True):
            name, rest = text[: end - 1], text[end:]
            spec = self._trec_param.get(name)
            if spec is None or not rest or not (rest[0] in "0123456789.+-" or "=" in rest):
                continue
            assert spec.trec_params is not None
            try:
                params = spec.trec_params(rest)
            except ValueError as exc:
                raise InvalidParameterError(f"Invalid measure {text!r}: {exc}") from None
            return spec.bind(params, None, text)
        return None

    def _spelled(self, name: str) -> str:
        """A suggested name as it parses: a trec_eval cutoff family with a cutoff
        (``ndcg_cut_10``, not ``ndcg_cut``, which alone is refused)."""
        if name in self._trec_cut and name not in self._trec and self.lookup(name) is None:
            return f"{name}_10"
        return name

    def _unknown_message(self, name: str, text: str) -> str:
        # Canonical names first, so that suggestions use them when spellings fold together.
        candidates = [s.name for s in self.specs] + self.all_names()
        folded: dict[str, str] = {}
        for c in candidates:
            folded.setdefault(c.lower(), c)
        close = difflib.get_close_matches(name.lower(), list(folded), n=3, cutoff=0.6)
        hint = ""
        if close:
            hint = " Did you mean " + " or ".join(repr(self._spelled(folded[c])) for c in close) + "?"
        return f"Unknown measure {name!r} in {text!r}.{hint} (see `serpeval measures`)"


def _cutoff(digits: str, text: str) -> int:
    """The cutoff ``digits`` stand for: ASCII digits 0-9 only, so that ``1_0`` (Python's digit
    grouping), ``١٠`` (Arabic-Indic digits), ``+10`` and `` 10`` are refused rather than read as
    10. The range (1 to 2^63 - 1) is checked by :meth:`MeasureSpec.bind`; a number of more
    digits than any int64 is refused here, before Python's ``int()`` digit limit."""
    if not _DIGITS.fullmatch(digits):
        raise InvalidParameterError(
            f"Invalid measure {text!r}: the cutoff after '@' must be an integer from 1 to 2^63 - 1, "
            f"written with the digits 0-9; got {digits!r}."
        )
    if len(digits.lstrip("0")) > 19:
        raise InvalidParameterError(
            f"Invalid measure {text!r}: the cutoff must be an integer from 1 to 9223372036854775807 "
            f"(2^63 - 1); got a number of {len(digits.lstrip('0')):,} digits."
        )
    return int(digits.lstrip("0") or "0")  # leading zeros count against Python's int() digit limit


_DIGITS = re.compile(r"[0-9]+")


def _split_params(body: str, text: str) -> dict[str, str]:
    """``a=1, b={0:0,1:1}`` -> ``{"a": "1", "b": "{0:0,1:1}"}``: commas inside braces (an
    ir_measures gain table) do not split."""
    params: dict[str, str] = {}
    if not body.strip():
        return params
    for part in re.split(r",(?![^{}]*\})", body):
        if "=" not in part:
            raise InvalidParameterError(
                f"Invalid measure {text!r}: parameters are written name=value; got {part.strip()!r}."
            )
        key, value = part.split("=", 1)
        key = key.strip()
        if key in params:
            raise InvalidParameterError(f"Invalid measure {text!r}: parameter {key!r} given twice.")
        params[key] = value.strip()
    return params
