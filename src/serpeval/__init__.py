"""serpeval: tells a search team, with numbers they can defend, whether a ranking change helped.

Offline evaluation identical to trec_eval (and fast), significance testing, online
evaluation (interleaving, click models, A/B tests) and reports.

``import serpeval`` is light: the submodules load on first use.

Examples:
    >>> import serpeval
    >>> res = serpeval.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["P@1", "AP"])
    >>> res.means("run")
    {'P@1': 1.0, 'AP': 1.0}
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "REGISTRY",
    "Measure",
    "Qrels",
    "Results",
    "Run",
    "__version__",
    "compare",
    "dcg",
    "evaluate",
    "gate",
    "ndcg",
    "parse_measure",
    "read_qrels",
    "read_run",
    "reciprocal_rank",
]

_LAZY = {
    "REGISTRY": "serpeval.measures",
    "Measure": "serpeval.measures",
    "parse_measure": "serpeval.measures",
    "Qrels": "serpeval.data",
    "Run": "serpeval.data",
    "Results": "serpeval.results",
    "evaluate": "serpeval.evaluate",
    "compare": "serpeval.comparison",
    "gate": "serpeval.ci_gate",
    "read_qrels": "serpeval.io",
    "read_run": "serpeval.io",
    "dcg": "serpeval.formulas",
    "ndcg": "serpeval.formulas",
    "reciprocal_rank": "serpeval.formulas",
}

if TYPE_CHECKING:
    from serpeval.ci_gate import gate
    from serpeval.comparison import compare
    from serpeval.data import Qrels, Run
    from serpeval.evaluate import evaluate
    from serpeval.formulas import dcg, ndcg, reciprocal_rank
    from serpeval.io import read_qrels, read_run
    from serpeval.measures import REGISTRY, Measure, parse_measure
    from serpeval.results import Results


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'serpeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Keeps ``serpeval.evaluate`` the function when the submodule of the same name loads.

    Importing ``serpeval.evaluate`` (the module) makes Python set the package attribute
    ``evaluate`` to that module; this refuses that one overwrite, so the public function
    stays reachable. The module is still importable (``from serpeval.evaluate import ...``
    reads it from ``sys.modules``).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == value.__name__:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
