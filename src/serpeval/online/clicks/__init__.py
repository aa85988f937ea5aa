"""Click models: simulate users on result lists, fit user behaviour from click logs.

``click_model(name, levels)`` builds a preset whose items are relevance grades
``0 .. levels - 1`` (``-1`` = empty slot):

=================  ===========================================================================
``perfect``,        the grade-table users of the interleaving literature
``navigational``,   (:mod:`.tables`): click[g], and after a click stop[g]. ``stop_requires_click``
``informational``,  (default True) flips the stop coin only after a click; False flips it at
``almost_random``,  every examined result (HarrieO's / mpkato's simulators)
``random``
``cascade``         cascade model: navigational click table as attractiveness, stop at the first
                    click
``pbm``             position-based: navigational attractiveness x the examination probabilities
                    fitted on the Yandex WSCD 2012 sample (:data:`YANDEX_PBM_EXAMINATION`)
``dcm``             navigational attractiveness, continuation after a click at rank r fitted on
                    the Yandex sample (:data:`YANDEX_DCM_CONTINUATION`)
``dbn``             navigational attractiveness, navigational stop table as satisfaction,
                    gamma fitted on the Yandex sample (:data:`YANDEX_DBN_GAMMA`)
``sdbn``            the same with gamma = 1 (identical to ``navigational``)
=================  ===========================================================================

Models with per-(query, document) parameters are fitted from a :class:`ClickLog` with
:func:`fit_pbm`, :func:`fit_dbn` (``gamma=1`` for SDBN) and :func:`fit_dcm` (``prior=(a, b)`` or
``"pooled"``), and judged on held-out impressions with :func:`evaluate_model` (a fitted model
remembers its training log's (query, document) pairs and reads a held-out log in those codes).

Part of online (click models and their fitting; the simulator is in online.simulation). May
import online.common, stats and the layers below; never online.logs, online.interleaving,
online.experiments or online.simulation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.errors import OptionError
from serpeval.online.clicks.fit import (
    FitReport,
    evaluate_model,
    fit_dbn,
    fit_dcm,
    fit_pbm,
    rank_ctr_baseline,
)
from serpeval.online.clicks.logs import ClickLog
from serpeval.online.clicks.models import DBN, DCM, PBM, CascadeModel, ClickModel, GradeModel
from serpeval.online.clicks.tables import TABLES, GradeTable, grade_table
from serpeval.online.common import lookup, normalize_name

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "DBN",
    "DCM",
    "MODELS",
    "PBM",
    "TABLES",
    "YANDEX_DBN_GAMMA",
    "YANDEX_DCM_CONTINUATION",
    "YANDEX_PBM_EXAMINATION",
    "CascadeModel",
    "ClickLog",
    "ClickModel",
    "FitReport",
    "GradeModel",
    "GradeTable",
    "click_model",
    "evaluate_model",
    "fit_dbn",
    "fit_dcm",
    "fit_pbm",
    "grade_table",
    "rank_ctr_baseline",
]

#: PBM examination by rank, fitted by :func:`fit_pbm` on the Yandex WSCD 2012 training sample
#: (``shared/data/clicks-yandex-wscd2012-sample``; re-fitted and compared in the tests).
YANDEX_PBM_EXAMINATION = (0.834, 0.568, 0.470, 0.390, 0.294, 0.256, 0.238, 0.191, 0.201, 0.186)
#: DCM continuation after a click at ranks 1-9, fitted by :func:`fit_dcm` on the same sample
#: (rank 10 has no next result to continue to; it is never used on top-10 lists).
YANDEX_DCM_CONTINUATION = (0.712, 0.760, 0.850, 0.970, 0.998, 0.999, 0.998, 0.998, 0.998, 0.998)
#: DBN continuation gamma fitted by :func:`fit_dbn` on the same sample.
YANDEX_DBN_GAMMA = 0.828


def _table_model(name: str) -> Callable[[int, bool], ClickModel]:
    def build(levels: int, stop_requires_click: bool) -> ClickModel:
        table = grade_table(name, levels)
        suffix = " (interpolated table)" if table.interpolated else ""
        return GradeModel(click=table.click, stop=table.stop, stop_requires_click=stop_requires_click,
                          name=f"{name}{suffix}")
    return build


def _navigational(levels: int) -> GradeTable:
    return grade_table("navigational", levels)


def _cascade(levels: int, _: bool) -> ClickModel:
    return CascadeModel(attractiveness=np.array(_navigational(levels).click), name="cascade")


def _pbm(levels: int, _: bool) -> ClickModel:
    return PBM(attractiveness=np.array(_navigational(levels).click),
               examination=np.array(YANDEX_PBM_EXAMINATION), name="pbm")


def _dcm(levels: int, _: bool) -> ClickModel:
    return DCM(attractiveness=np.array(_navigational(levels).click),
               continuation=np.array(YANDEX_DCM_CONTINUATION), name="dcm")


def _dbn(gamma: float, name: str) -> Callable[[int, bool], ClickModel]:
    def build(levels: int, _: bool) -> ClickModel:
        table = _navigational(levels)
        return DBN(attractiveness=np.array(table.click), satisfaction=np.array(table.stop),
                   gamma=gamma, name=name)
    return build


#: Every preset name -> a builder ``(levels, stop_requires_click) -> ClickModel``.
MODELS: dict[str, Callable[[int, bool], ClickModel]] = {
    **{name: _table_model(name) for name in TABLES},
    "cascade": _cascade,
    "pbm": _pbm,
    "dcm": _dcm,
    "dbn": _dbn(YANDEX_DBN_GAMMA, "dbn"),
    "sdbn": _dbn(1.0, "sdbn"),
}


def click_model(name: str, levels: int = 3, *, stop_requires_click: bool | None = None) -> ClickModel:
    """The preset click model ``name`` for relevance grades ``0 .. levels - 1``.

    Args:
        name: a preset (see the module docstring); case, ``-`` and ``_`` do not matter.
        levels: number of relevance levels of the items (2, 3 and 5 have the standard
            tables; other counts interpolate the 5-level table).
        stop_requires_click: for the grade-table users only: flip the stop coin only after a
            click (True, the default) or at every examined result (False).

    Examples:
        >>> m = click_model("navigational", levels=3)
        >>> # P(E1) = 1; P(E2) = 1 - .95 * .9 = .145; P(E3) = .145 * (1 - .05 * .2) = .14355
        >>> m.click_probabilities([[2, 0, 1]]).round(5).tolist()  # x (.95, .05, .5)
        [[0.95, 0.00725, 0.07178]]
    """
    build = lookup("click model", name, MODELS)
    if stop_requires_click is not None and not isinstance(stop_requires_click, bool):
        raise OptionError(f"stop_requires_click must be True or False; got {stop_requires_click!r}.")
    if stop_requires_click is False and normalize_name(name) not in TABLES:
        raise OptionError(
            f"stop_requires_click applies to the grade-table users ({', '.join(TABLES)}); the "
            f"{name!r} model defines its own stopping rule."
        )
    return build(levels, True if stop_requires_click is None else stop_requires_click)
