"""Analyses of TIR: the variables a statement uses, and the well-formedness verifier."""

from irlab.tir.analysis.vars_used import vars_used
from irlab.tir.analysis.well_formed import WellFormedError, verify_well_formed

__all__ = ["vars_used", "verify_well_formed", "WellFormedError"]
