"""Counterfactual (off-policy) evaluation of rankers from randomised interleaving and A/B logs (issue 32)."""
