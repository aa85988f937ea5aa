"""The paired-test building blocks that ``compare``, ``gate`` and the segment breakdowns share:
the test by name, the queries every run was evaluated on, wins/ties/losses, and the scale the
tests work on (log values for geometric means).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.comparison.results import GMEAN_FLOOR, SystemCoverage
from serpeval.core.checks import RngLike
from serpeval.core.errors import InputError, OptionError, StatsError
from serpeval.core.ties import check_ties
from serpeval.ranking import MISSING_POLICIES
from serpeval.stats.registry import PAIRED_TESTS, Test, canonical

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.evaluation.results import Results
    from serpeval.measures import Measure
    from serpeval.stats import PairedTest
    from serpeval.stats.bootstrap import BootstrapInterval
    from serpeval.stats.validation import Alternative

__all__ = [
    "TIE_TOLERANCE",
    "align_queries",
    "canonical_test",
    "check_evaluation_fields",
    "p_value_method",
    "paired_test",
    "test_scale",
    "wins_ties_losses",
]

#: Differences smaller than this are ties (values from the same kernel on equal rankings
#: are bit-identical; this only absorbs rounding in sums).
TIE_TOLERANCE = 1e-12


def canonical_test(test: str) -> Test:
    """The canonical test name (ranx's ``student`` and ``fisher`` are accepted too, in any case):
    the names and aliases of :data:`serpeval.stats.registry.PAIRED_TESTS`."""
    return canonical(PAIRED_TESTS, test, "test")  # type: ignore[return-value]


def paired_test(test: str, x: NDArray[np.float64], y: NDArray[np.float64] | None = None, *,
                alternative: Alternative = "two-sided", confidence: float = 0.95,
                n_resamples: int = 10_000, ci: BootstrapInterval = "bca", rng: RngLike = None) -> PairedTest:
    """Run the paired test named ``test`` (see :data:`~serpeval.stats.registry.PAIRED_TESTS`;
    aliases in any case are accepted, so it is typed ``str``) on ``x - y`` (or ``x``).

    ``n_resamples`` and ``rng`` go to the tests that resample, ``ci`` to those that take it
    (the entry's ``resamples`` and ``options``)."""
    spec = PAIRED_TESTS[canonical_test(test)]
    options: dict[str, Any] = {"alternative": alternative, "confidence": confidence}
    if spec.resamples is not None:
        options.update({spec.resamples: n_resamples, "rng": rng})
    if "ci" in spec.options:
        options["ci"] = ci
    result: PairedTest = spec.function(x, y, **options)
    return result


def p_value_method(method: str) -> str:
    """A test's ``method`` with the bootstrap's interval clause (``", BCa interval"``) removed:
    what the p-value note says. The interval shown beside it may be another one (``ci="t"``,
    the per-group t intervals), and has a note of its own."""
    for clause in (", BCa interval", ", percentile interval"):
        if method.endswith(clause):
            return method[:-len(clause)]
    return method


def align_queries(results: Results, *, strict: bool = False
                  ) -> tuple[NDArray[Any], NDArray[np.float64], tuple[SystemCoverage, ...]]:
    """The queries every run was evaluated on, the values there, and what was left out.

    Returns:
        ``(query_ids, values[n_runs, n_measures, n_common], coverage)``.

    Raises:
        InputError: ``strict`` and the runs were evaluated on different queries.
        StatsError: fewer than 2 common queries.
    """
    common = results.runs[0].query_ids
    for run in results.runs[1:]:
        common = np.intersect1d(common, run.query_ids)
    coverage = []
    values = []
    for run in results.runs:
        keep = np.isin(run.query_ids, common)
        coverage.append(SystemCoverage(run.name, len(run.query_ids), int(keep.sum()),
                                       tuple(run.query_ids[~keep].tolist())))
        order = np.argsort(run.query_ids[keep], kind="stable")
        values.append(run.values[keep][order].T)
    if strict and any(c.dropped for c in coverage):
        counts = ", ".join(f"{c.system}: {c.evaluated}" for c in coverage)
        raise InputError(f"the runs were evaluated on different queries ({counts}; "
                         f"{len(common)} in common). Compare on the common queries "
                         "(strict=False, without --strict) or evaluate with missing='zero' "
                         "(--missing zero) so that every judged query counts.")
    if len(common) < 2:
        counts = ", ".join(f"{c.system}: {c.evaluated}" for c in coverage)
        raise StatsError(f"a comparison needs at least 2 queries evaluated in every run; "
                         f"{len(common)} in common ({counts}). Check that the runs and the "
                         "qrels use the same query ids.")
    return np.sort(common), np.stack(values), tuple(coverage)


def wins_ties_losses(delta: NDArray[np.float64], higher_is_better: bool = True
                     ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Counts over the last axis of queries where the system is better, equal, worse."""
    better = delta > TIE_TOLERANCE if higher_is_better else delta < -TIE_TOLERANCE
    worse = delta < -TIE_TOLERANCE if higher_is_better else delta > TIE_TOLERANCE
    wins, losses = better.sum(axis=-1), worse.sum(axis=-1)
    return wins, delta.shape[-1] - wins - losses, losses



def test_scale(measures: tuple[Measure, ...], values: NDArray[np.float64]) -> NDArray[np.float64]:
    """The per-query values the tests compare: the values, or ``log(max(x, 1e-5))`` for
    measures aggregated by a geometric mean (GMAP's difference is a difference of mean logs).
    """
    out = values.copy()
    for j, m in enumerate(measures):
        if m.spec.aggregate == "gmean":
            out[:, j] = np.log(np.maximum(values[:, j], GMEAN_FLOOR))
    return out


def check_evaluation_fields(options: Any) -> None:
    """Check the evaluation fields that :class:`CompareOptions` and :class:`GateOptions` share
    (``missing``, ``depth``, ``judged_only``, ``ties``), storing them canonical.

    Raises:
        OptionError: an unknown missing-query policy or tie policy, a depth that is not a
            positive integer.
    """
    from serpeval.core.options import set_field

    if options.missing not in MISSING_POLICIES:
        raise OptionError(f"missing must be one of {', '.join(MISSING_POLICIES)}; got {options.missing!r}.")
    depth = options.depth
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0):
        raise OptionError(f"depth must be a positive number of docs; got {depth}.")
    set_field(options, "judged_only", bool(options.judged_only))
    set_field(options, "ties", check_ties(options.ties))
