"""The experiment designs of ``serpeval serve``: interleaving with replayable coins, and an A/B
split that is sticky across restarts and processes.

**Seeds.** The coins of an impression come from ``numpy.random.default_rng(seed)`` with
``seed = derive_seed(experiment, query_id)``: the first 8 bytes of
``SHA-256(experiment + "\\x00" + query_id)`` as a big-endian integer, shifted right by 11 bits
(53 bits: exact in JSON everywhere, also in JavaScript). Given the logged input rankings,
method, k and options, :func:`serpeval.online.interleaving.interleave` redraws the same list
and teams (:func:`replay_impression`).

**A/B assignment.** ``u = int(SHA-256(salt + "\\x00" + user)[:8]) / 2**64`` is uniform on
[0, 1); the arm is the first whose cumulative weight exceeds ``u``. It depends only on the
salt and the user id, never on the process or the time, so a user keeps their arm across
restarts and across the processes of a deployment. Changing the salt reshuffles everyone
(a new experiment).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from serpeval.core.errors import OptionError

__all__ = ["Impression", "assign_variant", "derive_seed", "interleave_impression", "replay_impression"]

SHARED = "shared"


def derive_seed(experiment: str, query_id: str) -> int:
    """The 53-bit seed of an impression's coins (see the module docstring)."""
    digest = hashlib.sha256(f"{experiment}\x00{query_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 11


def assign_variant(salt: str, user: str, arms: Sequence[str], weights: Sequence[float] | None = None) -> str:
    """The A/B arm of ``user`` (see the module docstring); weights default to equal."""
    if not arms:
        raise OptionError("an A/B split needs at least one arm.")
    w = [1.0] * len(arms) if weights is None else [float(x) for x in weights]
    if len(w) != len(arms) or any(x < 0 for x in w) or sum(w) <= 0:
        raise OptionError(f"weights {list(w)} do not fit arms {list(arms)}: one non-negative weight per arm, "
                          "not all zero.")
    u = int.from_bytes(hashlib.sha256(f"{salt}\x00{user}".encode()).digest()[:8], "big") / 2.0**64
    total = sum(w)
    cumulative = 0.0
    for arm, weight in zip(arms, w, strict=True):
        cumulative += weight / total
        if u < cumulative:
            return arm
    return arms[-1]  # u within rounding of 1.0


@dataclass(frozen=True)
class Impression:
    """What one interleaved impression showed and what replaying it needs."""

    docs: tuple[str, ...]
    teams: tuple[str, ...]
    attributes: dict[str, Any]


def interleave_impression(rankings: Sequence[Sequence[str]], rankers: Sequence[str], *, method: str, k: int,
                          seed: int, options: dict[str, Any] | None = None) -> Impression:
    """Interleave ``rankings`` (one per ranker label) with coins from ``seed``.

    ``k`` is capped at the number of distinct documents. The returned ``attributes`` are the
    ``interleaving`` object of the experiment convention (:mod:`serpeval.online.events.schema`).
    """
    from serpeval.online.interleaving import canonical_method, interleave

    options = dict(options or {})
    ranked = [[str(d) for d in r] for r in rankings]
    distinct = len(set().union(*ranked))
    size = min(k, distinct)
    result = interleave(ranked, method=method, k=size, rng=seed, **options)
    teams = tuple(SHARED if t < 0 else rankers[t] for t in result.teams)
    attrs: dict[str, Any] = {"method": canonical_method(method), "seed": seed, "k": size,
                             "rankers": list(rankers), "teams": list(teams), "rankings": ranked,
                             "params": dict(result.params)}
    if result.probabilities is not None:
        attrs["probabilities"] = [list(p) for p in result.probabilities]
    return Impression(tuple(str(d) for d in result.docs), teams, attrs)


def replay_impression(hit_ids: Sequence[str], interleaving: dict[str, Any]) -> str | None:
    """Redraw a logged impression; None when it matches, else one line saying what differs."""
    try:
        params = {k: v for k, v in (interleaving.get("params") or {}).items()
                  if k in ("ignore_shared", "tau", "credit_function")}
        again = interleave_impression(interleaving["rankings"], interleaving["rankers"],
                                      method=interleaving["method"], k=int(interleaving["k"]),
                                      seed=int(interleaving["seed"]), options=params)
    except (KeyError, TypeError, ValueError) as exc:
        return f"cannot replay ({type(exc).__name__}: {exc})"
    if list(again.docs) != [str(h) for h in hit_ids]:
        return f"shown {list(hit_ids)[:5]}..., replay gives {list(again.docs)[:5]}..."
    if list(again.teams) != list(interleaving["teams"]):
        return f"teams {list(interleaving['teams'])[:5]}..., replay gives {list(again.teams)[:5]}..."
    return None
