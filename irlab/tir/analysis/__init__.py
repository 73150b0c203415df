"""Analyses of TIR: the variables a statement uses, the buffers a function may write, and
the well-formedness verifier."""

from irlab.tir.analysis import node_counts  # noqa: F401 - registers the PrimFunc counter
from irlab.tir.analysis.vars_used import vars_used
from irlab.tir.analysis.written_buffers import written_buffer_data
from irlab.tir.analysis.well_formed import WellFormedError, verify_well_formed

__all__ = ["vars_used", "written_buffer_data", "verify_well_formed", "WellFormedError"]
