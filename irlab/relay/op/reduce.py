"""Reductions. Being written: see issue 2."""
