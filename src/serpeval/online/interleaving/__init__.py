"""Interleaving and multileaving at serving time.

``interleave(rankings, method=..., k=..., rng=...)`` returns an :class:`Interleaving`: the
composite list to show and, per slot, what credit needs (the contributing team, each
document's rank in every ranking, the drawing probabilities). ``credit(result,
clicked_positions)`` turns the clicks (0-based positions) into an :class:`Outcome`.

=================  ========  ==================================================================
method             rankers   notes
=================  ========  ==================================================================
``team_draft``     2 or more team draft interleaving; multileaving for 3+ (``ignore_shared``)
``balanced``       2         Joachims' balanced interleaving (**biased**; a baseline)
``probabilistic``  2 or more softmax drafting (``tau``), marginalised credit
``optimized``      2         LP over prefix-constrained lists (``credit_function``)
=================  ========  ==================================================================

**Bias under random clicks.** A method is unbiased when users who click regardless of the
documents give a mean outcome of zero. Team draft, probabilistic (its outcome is the
marginalised expected outcome, not that value's sign) and optimized (its outcome is the
credit difference, not its sign; exactly unbiased wherever the LP has an unbiased solution,
``params["bias"] == 0``) are; every method and credit function is checked by the
random-clicker test (:func:`~serpeval.online.interleaving.analysis.aa_check`) in CI. Team
draft's holds only while every ranking can supply its picks: when one runs out before ``k``
the others fill the list and random clicks favour them (:mod:`.team_draft`).
**Balanced interleaving is biased** (:data:`BIASED`): with A = (x, y, z), B = (y, z, x) a
user clicking one result at random makes B win 2/3 of the time;
:func:`~serpeval.online.interleaving.analysis.analyze_outcomes` refuses its outcomes unless
called with ``allow_biased=True``.

Aliases: ``tdi``, ``tdm``, ``multileave``, ``team_draft_multileave``; ``pi``, ``pm``; ``oi``.
For simulations and benchmarks, :mod:`.batch` interleaves many impressions at once.

**Propensities** (for counterfactual evaluation, :mod:`serpeval.online.counterfactual`):
``propensities(rankings, shown, tau=3.0)`` gives the exact probability of a probabilistic
interleaving's shown list, of each prefix and of each document at its position;
``ab_propensities(arm_rankings, shares, shown)`` the same for an A/B split. The log fields
are in docs/explanation/counterfactual-logs.md.

Examples:
    >>> from serpeval.online.interleaving import interleave, credit
    >>> shown = interleave([["a", "b", "c"], ["b", "d", "a"]], k=3, rng=7)
    >>> len(shown.docs), set(shown.docs) <= {"a", "b", "c", "d"}
    (3, True)
    >>> credit(shown, [0]).outcome in (-1, 0, 1)   # team draft: +1 A, -1 B, 0 tie
    True

Part of online (serving time). May import online.common, stats and the layers below; never
online.clicks, online.logs, online.experiments or online.simulation.
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from serpeval.core.checks import as_generator
from serpeval.core.errors import OptionError
from serpeval.online.common import lookup
from serpeval.online.interleaving import balanced, optimized, probabilistic, team_draft
from serpeval.online.interleaving._result import (
    NEUTRAL,
    Interleaving,
    Outcome,
    check_k,
    check_rankings,
)
from serpeval.online.interleaving.probabilistic import Propensities, ab_propensities, propensities

__all__ = ["BIASED", "METHODS", "NEUTRAL", "Interleaving", "Outcome", "Propensities", "ab_propensities",
           "canonical_method", "credit", "interleave", "propensities"]

#: Canonical method name -> implementing module (``interleave`` and ``credit`` functions).
METHODS: dict[str, ModuleType] = {
    team_draft.NAME: team_draft,
    balanced.NAME: balanced,
    probabilistic.NAME: probabilistic,
    optimized.NAME: optimized,
}

#: Methods whose mean outcome is not zero under random clicks (refused by the analysis unless
#: the caller opts in).
BIASED: frozenset[str] = frozenset(name for name, module in METHODS.items() if module.BIASED)

_ALIASES: dict[str, ModuleType] = {
    **METHODS,
    "tdi": team_draft, "tdm": team_draft, "multileave": team_draft,
    "team_draft_multileave": team_draft, "team_draft_multileaving": team_draft,
    "pi": probabilistic, "pm": probabilistic, "probabilistic_multileave": probabilistic,
    "oi": optimized,
}


def canonical_method(method: str) -> str:
    """The canonical name of an interleaving method or alias (unknown: "did you mean")."""
    module = _ALIASES.get(method) or lookup("interleaving method", method, _ALIASES)
    return str(module.NAME)


def interleave(rankings: Any, method: str = "team_draft", k: int | None = 10,
               rng: int | np.random.Generator | None = None, **options: Any) -> Interleaving:
    """Interleave (or multileave) ``rankings`` into one list of ``k`` documents.

    Args:
        rankings: two or more rankings, each a list of document ids (str or int), best first;
            they may differ in length and need not overlap.
        method: see the module docstring; unknown names get "did you mean". Typed ``str``,
            not a ``Literal``: aliases (``team-draft``, ``tdi``, any case) are accepted.
        k: how many documents to show (None: the union of all rankings). Larger than the
            number of distinct documents is an error.
        rng: a seed or a ``numpy.random.Generator``: the same seed gives the same list.
        options: method options: ``ignore_shared`` (team draft), ``tau`` (probabilistic),
            ``credit_function`` (optimized).
    """
    module = _method_module(method)
    checked = check_rankings(rankings, module.MAX_RANKERS, module.NAME)
    size = check_k(k, checked)
    return _draw(module, checked, size, as_generator(rng), options)


def _method_module(method: str) -> ModuleType:
    """The module of an interleaving method or alias (unknown: "did you mean")."""
    return _ALIASES.get(method) or lookup("interleaving method", method, _ALIASES)


def _draw(module: ModuleType, rankings: list[list[Any]], k: int, generator: np.random.Generator,
          options: dict[str, Any]) -> Interleaving:
    """``module.interleave`` of checked rankings and k; an option it does not take: :class:`OptionError`."""
    try:
        return module.interleave(rankings, k, generator, **options)
    except TypeError as exc:
        if "unexpected keyword" not in str(exc):
            raise
        raise OptionError(f"{module.NAME} interleaving does not take option(s) "
                          f"{', '.join(sorted(options))}.") from exc


def credit(result: Interleaving, clicked_positions: Any) -> Outcome:
    """Credit the clicks (0-based positions in ``result.docs``) with the method that made ``result``."""
    if not isinstance(result, Interleaving):
        raise OptionError(f"credit needs the Interleaving that was shown; got {type(result).__name__}.")
    module = _ALIASES.get(result.method) or lookup("interleaving method", result.method, _ALIASES)
    return replace(module.credit(result, clicked_positions), method=module.NAME)
