"""The counterfactual section: candidates ranked by estimated effect, with their intervals and
support diagnostics, every estimator's answer (or its refusal), and one plain sentence on which
candidates deserve a live test. Renders a :class:`~serpeval.online.counterfactual.
CounterfactualResult`'s rows; computes nothing."""

from __future__ import annotations

from typing import Any

from serpeval.report.formatting import level
from serpeval.report.table import render

__all__ = ["counterfactual_json", "counterfactual_text"]

_RANK_COLUMNS = ("candidate", "verdict", "estimator", "effect", "effect_low", "effect_high", "ess", "support", "reason")
_ALL_COLUMNS = ("candidate", "estimator", "value", "ci_low", "ci_high", "effect", "effect_low", "effect_high",
                "ess", "support", "largest_weight_share", "matched", "refused", "warning")


def _notes(result: Any, rank_by: str) -> list[str]:
    what = ("expected clicks on the top" if result.metric == "clicks" else "share of searches with a click in the top")
    return [
        f"log: {result.source} ({result.design}{', ' + result.experiment if result.experiment else ''}); "
        f"{result.impressions:,} impression{'' if result.impressions == 1 else 's'} from {result.units:,} "
        f"user{'' if result.units == 1 else 's'}; logged value {result.logged_value:.4f}",
        f"value: the candidate's {what} {result.k}; effect: value minus ranker {result.against}'s by the same "
        f"estimator ({level(result.confidence)} cluster-robust intervals over users); interleaved: the expected "
        f"probabilistic-interleaving outcome of the candidate against {result.against}, in [-1, 1]",
        "refused: the support diagnostics found the log unable to answer (effective sample size, share of the "
        "candidate's top-k places the logging design could fill, largest weight, users); no number is given",
        *([f"left out of the log: {'; '.join(f'{n:,} {why}' for why, n in result.skipped.items() if n)}"]
          if any(result.skipped.values()) else []),
        result.recommendation(rank_by),
    ]


def counterfactual_text(result: Any, fmt: str = "table", *, digits: int = 4, width: int | None = None,
                        all_estimators: bool = True, rank_by: str = "interleaved") -> str:
    """The ranking table, then (``all_estimators``) every estimate, then the notes; ``csv`` and
    ``tsv`` give one table without notes: every estimate, or the ranking (``all_estimators=False``)."""
    ranking = [{c: row.get(c) for c in _RANK_COLUMNS} for row in result.ranking(rank_by)]
    notes = _notes(result, rank_by)
    if fmt in ("csv", "tsv"):  # one table: every estimate, or the ranking alone when that is asked
        if not all_estimators:
            return render(ranking, fmt, digits=digits)
        return render([{c: r.get(c) for c in _ALL_COLUMNS} for r in result.to_dicts()], fmt, digits=digits)
    title = f"Candidates ranked by estimated effect against {result.against} ({result.metric}@{result.k})"
    parts = [render(ranking, fmt, digits=digits, width=width, title=title, notes=() if all_estimators else notes)]
    if all_estimators:
        rows = [{c: r.get(c) for c in _ALL_COLUMNS} for r in result.to_dicts()]
        parts.append(render(rows, fmt, digits=digits, width=width, title="Every estimator", notes=notes))
    return "\n".join(parts)


def counterfactual_json(result: Any, rank_by: str = "interleaved") -> dict[str, Any]:
    """A JSON-ready document: the settings, the ranking, every estimate and the sentence."""
    return {"source": result.source, "design": result.design, "experiment": result.experiment,
            "metric": result.metric, "k": result.k, "against": result.against, "impressions": result.impressions,
            "units": result.units, "logged_value": result.logged_value, "confidence": result.confidence,
            "skipped": dict(result.skipped), "rank_by": rank_by, "ranking": result.ranking(rank_by),
            "estimates": result.to_dicts(), "recommendation": result.recommendation(rank_by)}
