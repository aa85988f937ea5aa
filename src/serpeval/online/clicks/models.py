"""Click models: the grade-table users, cascade (CM), PBM, DCM, DBN and SDBN.

Every model maps an impression's shown items to the cells ``(c, sc, sn)`` of
:mod:`~serpeval.online.clicks.kernel` and inherits sampling, exact click
probabilities and likelihoods from :class:`ClickModel`.

**Items.** ``items`` is an integer array ``[n_impressions, k]``: the item code at each
shown slot, ``-1`` for an empty slot (a ranking shorter than ``k``: never clicked, and the
user passes through it). For the grade-based presets the item code *is* the relevance
grade; for models fitted on a click log (:mod:`~serpeval.online.clicks.fit`) it is a
(query, document) code from :class:`~serpeval.online.clicks.logs.ClickLog`.

**User heterogeneity.** ``shift`` (one finite value per impression, or a scalar; anything
else is an :class:`~serpeval.core.errors.InputError`) moves every
attractiveness in logit space, ``logit(a') = logit(a) + shift``: users who click more or
less than the average at the same relevance. 0 and 1 stay 0 and 1.

**Layout.** The public methods take and return impression-major arrays ``[n, k]``;
:meth:`ClickModel.cells` and :meth:`ClickModel.sample_slot_major` work on slot-major arrays
``[k, n]`` (see :mod:`~serpeval.online.clicks.kernel`), the fast path for simulators.

Notation follows Chuklin, Markov & de Rijke, *Click Models for Web Search* (2015):
alpha = attractiveness, sigma = satisfaction, gamma = continuation / examination.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import as_generator
from serpeval.core.errors import InputError, OptionError
from serpeval.online.clicks import kernel
from serpeval.online.common import probabilities

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import ArrayLike, NDArray

__all__ = ["DBN", "DCM", "PBM", "CascadeModel", "ClickModel", "GradeModel"]


def _shifted(alpha: NDArray[np.float64], shift: ArrayLike | None) -> NDArray[np.float64]:
    """Attractiveness moved by ``shift`` in logit space (rows = impressions)."""
    if shift is None:
        return alpha
    s = np.asarray(shift, dtype=np.float64)
    if not s.any():
        return alpha
    if s.ndim == 1:
        s = s[None, :]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        odds = alpha / (1.0 - alpha) * np.exp(s)
        out = odds / (1.0 + odds)
    out = np.where(alpha >= 1.0, 1.0, out)
    return np.where(alpha <= 0.0, 0.0, out)


def _shifted_gather(table: NDArray[np.float64], items: NDArray[np.int64],
                    shift: ArrayLike | None) -> NDArray[np.float64]:
    """``_shifted(_gather(table, items), shift)`` bit for bit, in fewer passes over the cells.

    The odds ``a / (1 - a)`` are computed once per item of the (small) table and gathered, then
    multiplied by ``exp(shift)`` and turned back into probabilities in place: four passes over
    the ``[slots, impressions]`` cells instead of about ten. The clamps of :func:`_shifted`
    (``a >= 1`` -> 1, ``a <= 0`` -> 0) are applied only where they can change a value: items
    with ``a = 1`` (odds ``inf``, ``inf / inf`` is NaN), and items with ``a = 0`` when some
    ``exp(shift)`` is not finite (``0 * inf``) or the zero is ``-0.0`` (the formula keeps the
    sign, the clamp gives ``+0.0``). Empty slots (-1) gather the appended ``0.0``.
    """
    if shift is None:
        return _gather(table, items)
    s = np.asarray(shift, dtype=np.float64)
    if not s.any():
        return _gather(table, items)
    if s.ndim == 1:
        s = s[None, :]
    padded = np.append(table, 0.0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ratio = padded / (1.0 - padded)
        factor = np.exp(s)
        odds = ratio[items]
        if np.broadcast_shapes(odds.shape, factor.shape) == odds.shape:
            np.multiply(odds, factor, out=odds)
        else:
            odds = odds * factor
        out = np.add(odds, 1.0)
        np.divide(odds, out, out=out)
    high = padded >= 1.0
    low = padded <= 0.0
    if low.any() and (np.signbit(padded[low]).any() or not np.isfinite(factor).all()):
        out = np.where(low[items], 0.0, out)
    if high.any():
        out = np.where(high[items], 1.0, out)
    return out


@dataclass(frozen=True, eq=False)
class ClickModel:
    """Base class: subclasses define :meth:`cells`; everything else derives from it."""

    name: str = field(default="click model", kw_only=True)
    #: The (query, document) keys of the log the model was fitted on (``query<US>doc``, one per
    #: item code; :attr:`ClickLog.item_keys`), or None for a model of grades or hand-made
    #: codes. With it, :func:`~serpeval.online.clicks.evaluate_model` re-encodes a held-out
    #: log in these codes itself.
    vocabulary: pa.Array | None = field(default=None, kw_only=True, repr=False)

    # -- what a subclass provides --------------------------------------------------------
    def cells(self, items: NDArray[np.int64], shift: ArrayLike | None = None) -> kernel.Cells:
        """Slot-major ``(c, sc, sn)`` for slot-major ``items[k, n]`` (see the kernel)."""
        raise NotImplementedError

    @property
    def n_items(self) -> int:
        """How many item codes the model has parameters for (valid codes: 0 .. n_items - 1)."""
        raise NotImplementedError

    # -- derived ----------------------------------------------------------------------------
    def _items(self, items: ArrayLike, slot_major: bool = False) -> NDArray[np.int64]:
        """Checked items as a contiguous slot-major ``int32[k, n]`` (int64 for huge models)."""
        arr = np.asarray(items)
        if arr.ndim == 1:
            arr = arr[:, None] if slot_major else arr[None, :]
        if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
            raise InputError(
                f"{self.name}: items must be an integer array [impressions, slots] (relevance "
                f"grades, or item codes; -1 = empty slot); got dtype {arr.dtype}, shape {arr.shape}."
            )
        if arr.size and (arr.max() >= self.n_items or arr.min() < -1):
            bad = arr.max() if arr.max() >= self.n_items else arr.min()
            raise InputError(
                f"{self.name}: item {int(bad)} is out of range; this model knows items "
                f"0..{self.n_items - 1} (for grade models: relevance grades 0..{self.n_items - 1}) "
                "and -1 for an empty slot. Map grades into range (e.g. clip) or pick a model "
                "with more levels."
            )
        # One pass: transpose to slot-major and narrow to int32 (half the memory traffic of
        # every gather that follows).
        narrow = np.int32 if self.n_items < 2**31 - 1 else np.int64
        return np.ascontiguousarray(arr if slot_major else arr.T, dtype=narrow)

    def _shift(self, shift: ArrayLike | None, items: NDArray[np.int64]) -> NDArray[np.float64] | None:
        """A checked ``shift`` for slot-major ``items[k, n]``: a finite scalar or one finite
        value per impression (``[n]``); anything else would broadcast against the wrong axis
        (two shifts for one impression gave two rows) or turn probabilities into NaN."""
        if shift is None:
            return None
        s = np.asarray(shift)
        n = items.shape[1]
        if s.dtype.kind not in "iuf" or s.ndim > 1 or (s.ndim == 1 and len(s) != n):
            raise InputError(
                f"{self.name}: shift must be a number or one number per impression ({n}); got "
                f"{'dtype ' + str(s.dtype) if s.dtype.kind not in 'iuf' else 'shape ' + str(s.shape)}.")
        s = s.astype(np.float64)
        if not np.isfinite(s).all():
            bad = s[~np.isfinite(s)].flat[0]
            raise InputError(f"{self.name}: shift must be finite (a logit shift of attractiveness); found {bad}.")
        return s

    def sample(self, items: ArrayLike, rng: int | np.random.Generator | None = None, *,
               shift: ArrayLike | None = None) -> NDArray[np.bool_]:
        """Simulated clicks ``bool[n, k]`` on impressions showing ``items[n, k]``."""
        arr = self._items(items)
        c, sc, sn = self.cells(arr, self._shift(shift, arr))
        return kernel.sample_clicks(c, sc, sn, as_generator(rng)).T

    def sample_slot_major(self, items: ArrayLike, rng: int | np.random.Generator | None = None, *,
                          shift: ArrayLike | None = None) -> NDArray[np.bool_]:
        """Like :meth:`sample` with slot-major ``items[k, n]`` and clicks ``bool[k, n]``."""
        arr = self._items(items, slot_major=True)
        c, sc, sn = self.cells(arr, self._shift(shift, arr))
        return kernel.sample_clicks(c, sc, sn, as_generator(rng))

    def click_probabilities(self, items: ArrayLike, *, shift: ArrayLike | None = None) -> NDArray[np.float64]:
        """Exact unconditional P(click) at every slot (``[n, k]``)."""
        arr = self._items(items)
        return kernel.click_probabilities(*self.cells(arr, self._shift(shift, arr))).T

    def examination_probabilities(self, items: ArrayLike, *,
                                  shift: ArrayLike | None = None) -> NDArray[np.float64]:
        """Exact unconditional P(the user examines the slot) (``[n, k]``)."""
        arr = self._items(items)
        return kernel.examination(*self.cells(arr, self._shift(shift, arr))).T

    def conditional_click_probabilities(self, items: ArrayLike, clicks: ArrayLike) -> NDArray[np.float64]:
        """P(C_r = 1 | the observed clicks above r), per slot (``[n, k]``)."""
        arr = self._items(items)
        return kernel.conditional_click_probabilities(*self.cells(arr), _clicks(clicks, arr)).T

    def log_likelihood(self, items: ArrayLike, clicks: ArrayLike) -> NDArray[np.float64]:
        """Natural-log probability of each impression's click vector (``[n]``)."""
        arr = self._items(items)
        return kernel.log_likelihood(*self.cells(arr), _clicks(clicks, arr))

    def click_count_distribution(self, items: ArrayLike, *,
                                 shift: ArrayLike | None = None) -> NDArray[np.float64]:
        """``P[n, k + 1]``: exact probability of 0, 1, ..., k clicks on each impression."""
        arr = self._items(items)
        dist = kernel.sum_distribution(*self.cells(arr, self._shift(shift, arr)), np.ones_like(arr))
        return dist[:, arr.shape[0]:]

    def describe(self) -> dict[str, Any]:
        """Parameters as a JSON-ready dict."""
        raise NotImplementedError


def _clicks(clicks: ArrayLike, items: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Checked impression-major clicks as slot-major booleans matching slot-major ``items``."""
    arr = np.asarray(clicks)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.shape[::-1] != items.shape:
        raise InputError(f"clicks have shape {arr.shape} but items have shape {items.shape[::-1]}; "
                         "pass one click flag per shown slot.")
    arr = np.ascontiguousarray(arr.T).astype(bool, copy=False)
    if np.any(arr & (items < 0)):
        raise InputError("a click on an empty slot (item -1): clicks must be on shown results.")
    return arr


def _by_rank(values: NDArray[np.float64], k: int, what: str, name: str = "click model") -> NDArray[np.float64]:
    """The first ``k`` per-rank values as a column ``[k, 1]`` (slot-major broadcasting)."""
    if k > len(values):
        raise InputError(
            f"{name}: impressions have {k} slots but its {what} is given for {len(values)} ranks. Show "
            f"at most {len(values)} results (k <= {len(values)}), give the model a value per rank, or use a "
            "model without per-rank parameters (e.g. navigational, cascade, dbn).")
    return values[:k, None]


def _gather(table: NDArray[np.float64], items: NDArray[np.int64]) -> NDArray[np.float64]:
    """``table[item]`` with 0.0 for empty slots (-1)."""
    padded = np.append(table, 0.0)  # index -1 -> the appended 0
    return padded[items]


@dataclass(frozen=True, eq=False)
class GradeModel(ClickModel):
    """The grade-table user (Lerot's ``CascadeUserModel``): click[g], stop[g] per grade.

    ``stop_requires_click=True`` (the default, Lerot's and the papers' semantics): the stop
    coin is flipped only after a click. ``False`` (HarrieO's and mpkato's simulators): a stop
    coin with ``stop[g]`` is flipped at every examined result, clicked or not.
    """

    click: tuple[float, ...] = (0.5, 0.5)
    stop: tuple[float, ...] = (0.0, 0.0)
    stop_requires_click: bool = True

    def __post_init__(self) -> None:
        click = tuple(probabilities(self.click, f"{self.name}: click probabilities").tolist())
        stop = tuple(probabilities(self.stop, f"{self.name}: stop probabilities").tolist())
        if len(click) != len(stop) or not click:
            raise OptionError(f"{self.name}: click and stop tables need one entry per grade and "
                              f"the same length; got {len(click)} and {len(stop)}.")
        object.__setattr__(self, "click", click)
        object.__setattr__(self, "stop", stop)

    @property
    def n_items(self) -> int:
        return len(self.click)

    def cells(self, items: NDArray[np.int64], shift: ArrayLike | None = None) -> kernel.Cells:
        c = _shifted_gather(np.asarray(self.click), items, shift)
        s = _gather(np.asarray(self.stop), items)
        return c, s, (s if not self.stop_requires_click else np.zeros_like(s))

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "click": list(self.click), "stop": list(self.stop),
                "stop_requires_click": self.stop_requires_click}


@dataclass(frozen=True, eq=False)
class CascadeModel(ClickModel):
    """Cascade model (Craswell et al. 2008): click the first attractive result, then stop.

    ``c = alpha[item]``, ``sc = 1``, ``sn = 0``: at most one click per impression.
    """

    attractiveness: NDArray[np.float64] = field(default_factory=lambda: np.array([0.5]))

    def __post_init__(self) -> None:
        object.__setattr__(self, "attractiveness",
                           probabilities(self.attractiveness, f"{self.name}: attractiveness"))

    @property
    def n_items(self) -> int:
        return len(self.attractiveness)

    def cells(self, items: NDArray[np.int64], shift: ArrayLike | None = None) -> kernel.Cells:
        c = _shifted_gather(self.attractiveness, items, shift)
        return c, np.ones_like(c), np.zeros_like(c)

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "attractiveness": _short(self.attractiveness)}


@dataclass(frozen=True, eq=False)
class PBM(ClickModel):
    """Position-based model: P(C_r = 1) = examination[r] * attractiveness[item], independently.

    No stopping (``sc = sn = 0``); clicks at different ranks are independent.
    """

    attractiveness: NDArray[np.float64] = field(default_factory=lambda: np.array([0.5]))
    examination: NDArray[np.float64] = field(default_factory=lambda: np.ones(10))

    def __post_init__(self) -> None:
        object.__setattr__(self, "attractiveness",
                           probabilities(self.attractiveness, f"{self.name}: attractiveness"))
        object.__setattr__(self, "examination",
                           probabilities(self.examination, f"{self.name}: examination"))

    @property
    def n_items(self) -> int:
        return len(self.attractiveness)

    def cells(self, items: NDArray[np.int64], shift: ArrayLike | None = None) -> kernel.Cells:
        alpha = _shifted_gather(self.attractiveness, items, shift)
        c = alpha * _by_rank(self.examination, items.shape[0], "examination", self.name)
        zeros = np.zeros_like(c)
        return c, zeros, zeros

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "attractiveness": _short(self.attractiveness),
                "examination": self.examination.round(6).tolist()}


@dataclass(frozen=True, eq=False)
class DCM(ClickModel):
    """Dependent click model (Guo et al. 2009): cascade with several clicks.

    After a click at rank r the user continues with ``continuation[r]`` (lambda_r); without
    a click she always continues: ``sc = 1 - lambda_r``, ``sn = 0``.
    """

    attractiveness: NDArray[np.float64] = field(default_factory=lambda: np.array([0.5]))
    continuation: NDArray[np.float64] = field(default_factory=lambda: np.full(10, 0.5))

    def __post_init__(self) -> None:
        object.__setattr__(self, "attractiveness",
                           probabilities(self.attractiveness, f"{self.name}: attractiveness"))
        object.__setattr__(self, "continuation",
                           probabilities(self.continuation, f"{self.name}: continuation"))

    @property
    def n_items(self) -> int:
        return len(self.attractiveness)

    def cells(self, items: NDArray[np.int64], shift: ArrayLike | None = None) -> kernel.Cells:
        c = _shifted_gather(self.attractiveness, items, shift)
        lam = _by_rank(self.continuation, items.shape[0], "continuation", self.name)
        sc = np.broadcast_to(1.0 - lam, c.shape).copy()
        return c, sc, np.zeros_like(c)

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "attractiveness": _short(self.attractiveness),
                "continuation": self.continuation.round(6).tolist()}


@dataclass(frozen=True, eq=False)
class DBN(ClickModel):
    """Dynamic Bayesian network (Chapelle & Zhang 2009); SDBN is ``gamma = 1``.

    Examined result: click with alpha; after a click, satisfied with sigma and stop;
    unsatisfied (or no click): continue with gamma. So ``sc = 1 - (1 - sigma) gamma`` and
    ``sn = 1 - gamma``.
    """

    attractiveness: NDArray[np.float64] = field(default_factory=lambda: np.array([0.5]))
    satisfaction: NDArray[np.float64] = field(default_factory=lambda: np.array([0.5]))
    gamma: float = 1.0

    def __post_init__(self) -> None:
        alpha = probabilities(self.attractiveness, f"{self.name}: attractiveness")
        sigma = probabilities(self.satisfaction, f"{self.name}: satisfaction")
        if alpha.shape != sigma.shape:
            raise OptionError(f"{self.name}: attractiveness and satisfaction need one value per "
                              f"item; got {alpha.shape} and {sigma.shape}.")
        object.__setattr__(self, "attractiveness", alpha)
        object.__setattr__(self, "satisfaction", sigma)
        object.__setattr__(self, "gamma", float(probabilities(self.gamma, f"{self.name}: gamma")))

    @property
    def n_items(self) -> int:
        return len(self.attractiveness)

    def cells(self, items: NDArray[np.int64], shift: ArrayLike | None = None) -> kernel.Cells:
        c = _shifted_gather(self.attractiveness, items, shift)
        # sc per item of the table (empty slots: sigma 0.0), then gathered: one pass over the
        # cells instead of three, the same values
        sigma = np.append(self.satisfaction, 0.0)
        sc = (1.0 - (1.0 - sigma) * self.gamma)[items]
        # sn is one number: broadcast (read-only, strides 0), not written to every cell; the
        # kernel reads it as that number (the same arithmetic, the same bits)
        sn = np.broadcast_to(np.float64(1.0 - self.gamma), c.shape)
        return c, sc, sn

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "attractiveness": _short(self.attractiveness),
                "satisfaction": _short(self.satisfaction), "gamma": round(self.gamma, 6)}


def _short(values: NDArray[np.float64]) -> list[float] | dict[str, float]:
    """Per-item parameters for :meth:`describe`: the values, or a summary when there are many."""
    if len(values) <= 10:
        return values.round(6).tolist()
    return {"items": len(values), "mean": round(float(values.mean()), 6),
            "min": round(float(values.min()), 6), "max": round(float(values.max()), 6)}
