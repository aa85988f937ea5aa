"""Deprecated: moved to the module named below (this path is removed in the next release)."""

from serpeval.core.lazy import alias_module

alias_module(__name__, "serpeval.online.simulation.simulator")
