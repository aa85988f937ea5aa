"""``serpeval.online.logs``: the public name of the A/B and interleaving-log analysis.

Everything lives in :mod:`serpeval.online.logs` (log schema, sources, A/B and
interleaving-log analysis, log generation); this module serves the same names, loaded on
first use, so ``from serpeval.online.logs import analyze_ab`` keeps working.
"""

from serpeval.online.logs import __all__ as _public
from serpeval.online.logs import __dir__ as __dir__
from serpeval.online.logs import __getattr__ as __getattr__

__all__ = list(_public)
