"""Validation shared by the statistics: paired arrays, alternatives, chunk sizes.

A bad option (an unknown alternative) raises
:class:`~serpeval.core.errors.OptionError`; data a test cannot use (one query, shapes that differ,
NaN scores) raises :class:`~serpeval.core.errors.StatsError`. Messages say what was expected,
what was found and how to fix it. Nothing here uses ``assert``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from serpeval.core.errors import OptionError, StatsError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["ALTERNATIVES", "MAX_RESAMPLES", "SQUARE_SAFE", "Alternative", "check_alternative", "check_resamples",
           "chunk_rows", "confidence_label", "paired_differences", "row_scale", "scalar_or_array", "spread",
           "system_scores"]

Alternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES: tuple[Alternative, ...] = get_args(Alternative)


_CHUNK_BYTES = 32 * 2**20

#: The most permutations or bootstrap resamples a test accepts. A resampled p-value is a
#: multiple of 1/(m+1): 10 million resolves 1e-7, below any corrected threshold in use, and
#: already takes minutes (a paired bootstrap of 250 queries: about 22 s per million on 2
#: cores, with three float64 arrays of m values per comparison); 1e20 would never finish.
MAX_RESAMPLES = 10_000_000

#: Why, in the words of the refusal.
RESAMPLES_REASON = (f"a p-value from m resamples resolves 1/(m+1), and {MAX_RESAMPLES:,} already resolves "
                    "1e-7 and takes minutes; more cannot finish in reasonable time and memory")


def check_resamples(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int if it is an integer in ``[minimum, MAX_RESAMPLES]``.

    Raises:
        OptionError: not an integer, too small, or above :data:`MAX_RESAMPLES` (with the reason).
    """
    from serpeval.core.checks import check_count

    count = check_count(value, name, minimum=minimum)
    if count > MAX_RESAMPLES:
        raise OptionError(f"{name} must be at most {MAX_RESAMPLES:,} ({RESAMPLES_REASON}); got {value!r}.")
    return count


def chunk_rows(*row_widths: int) -> int:
    """Rows per chunk so that a float64 ``[rows, width]`` block stays ~32 MiB for every width.

    The resampling tests draw their permutations / resamples in chunks of this many rows,
    which bounds memory whatever the number of queries, comparisons or systems.
    """
    return max(1, _CHUNK_BYTES // (8 * max(*row_widths, 1)))


def confidence_label(confidence: float) -> str:
    """A confidence level as a percentage, exactly: ``95%``, ``97.5%``, ``99.9%``, never rounded
    to a whole percent (a 97.5% interval is not a 98% one); ``1 - alpha`` as it comes
    (``1 - 0.1`` is ``90%``). Every label of an interval's level says it this way.

    >>> confidence_label(0.95), confidence_label(1 - 0.025), confidence_label(1 - 0.1)
    ('95%', '97.5%', '90%')
    """
    return f"{100 * float(confidence):.6g}%"


def check_alternative(alternative: Alternative) -> Alternative:
    """``alternative`` if it is one of :data:`ALTERNATIVES`."""
    if alternative not in ALTERNATIVES:
        raise OptionError(f"alternative must be one of {', '.join(map(repr, ALTERNATIVES))}; "
                         f"got {alternative!r}.")
    return alternative


def _finite(array: NDArray[np.float64], name: str) -> None:
    bad = ~np.isfinite(array)
    if bad.any():
        raise StatsError(f"{name} holds {int(bad.sum())} NaN or infinite value(s); per-query "
                         "scores must be finite numbers (drop or fill those queries first).")


def paired_differences(x: ArrayLike, y: ArrayLike | None = None) -> NDArray[np.float64]:
    """Per-query differences ``x - y`` (or ``x`` itself when ``y`` is None), shape ``[..., n]``.

    The last axis holds the queries; leading axes (comparisons, measures) are kept, so one
    call tests many comparisons at once. At least two queries are needed.
    """
    a = np.asarray(x, dtype=np.float64)
    if y is not None:
        b = np.asarray(y, dtype=np.float64)
        if a.shape != b.shape:
            raise StatsError(f"paired scores must have the same shape (one value per query, same "
                             f"query order); got {a.shape} and {b.shape}.")
        _finite(a, "x")
        _finite(b, "y")
        with np.errstate(over="ignore"):   # an infinite difference is refused below
            d = a - b
    else:
        _finite(a, "the differences")
        d = a
    if d.ndim == 0:
        raise StatsError("paired scores must be arrays with one value per query; got a scalar.")
    with np.errstate(over="ignore", invalid="ignore"):
        overflow = ~np.isfinite(d) | ~np.isfinite(d.sum(axis=-1, keepdims=True))
    if overflow.any():
        raise StatsError(f"the per-query differences x - y (or their sum over the queries) overflow float64 "
                         f"(beyond {np.finfo(np.float64).max:.3g}) in {int(overflow.any(axis=-1).sum())} "
                         "comparison(s); divide the scores by a common factor first (every test here is "
                         "unchanged by it).")
    if d.shape[-1] < 2:
        raise StatsError(f"a paired test needs at least 2 queries; got {d.shape[-1]}. "
                         "Evaluate on more queries (a single query cannot show a real difference).")
    return d


#: Rows whose largest magnitude exceeds this, or is below its inverse, are divided by it
#: before anything is squared (a square of 1e155 overflows float64, one of 1e-165 underflows
#: to 0); other rows are used as they are, bit for bit.
SQUARE_SAFE = 1e150


def row_scale(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """``[..., 1]``: the largest ``|d|`` of each row where it exceeds :data:`SQUARE_SAFE` or is
    below ``1 / SQUARE_SAFE`` (but not 0), else 1.

    Dividing a row by it keeps its squares finite and non-zero; statistics that do not change
    with the scale (t, p-values, d_z) are then the same, and means and intervals are
    multiplied back.
    """
    top = np.abs(d).max(axis=-1, keepdims=True)
    return np.where((top > SQUARE_SAFE) | ((top > 0) & (top < 1.0 / SQUARE_SAFE)), top, 1.0)


def spread(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """Standard deviation (ddof=1) along the last axis, exactly 0 where all values are equal.

    ``np.std`` of equal values can be ~1e-17 from rounding; a constant difference must give
    an exactly zero spread so that t and d_z become 0 or +-inf, not noise. Rows beyond
    :data:`SQUARE_SAFE` (or below its inverse) are scaled first (:func:`row_scale`), so their
    squares neither overflow to an infinite spread (t = 0, p = 1 for any such difference) nor
    underflow to 0 (t = inf, p = 0).
    """
    scale = row_scale(d)
    sd = (d / scale).std(axis=-1, ddof=1) * scale[..., 0]
    return np.where(np.ptp(d, axis=-1) == 0, 0.0, sd)


def system_scores(scores: ArrayLike) -> NDArray[np.float64]:
    """Scores ``[..., n_systems, n_queries]`` with at least 2 systems and 2 queries."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim < 2:
        raise StatsError(f"scores must be a matrix [n_systems, n_queries]; got shape {s.shape}.")
    if s.shape[-2] < 2:
        raise StatsError(f"comparing systems needs at least 2 systems; got {s.shape[-2]}.")
    if s.shape[-1] < 2:
        raise StatsError(f"comparing systems needs at least 2 queries; got {s.shape[-1]}.")
    _finite(s, "scores")
    return s


def scalar_or_array(value: NDArray[Any]) -> Any:
    """A Python float for 0-d results, the array otherwise (results mirror the input shape)."""
    return float(value) if np.ndim(value) == 0 else value
