"""Relax operators (``tvm.relax.op``): one module per op family, each op registered once with
its struct-info rule and legalization (``irlab.relax.op.registry``)."""

from irlab.relax.op.base import (call_tir, call_dps_packed, call_pure_packed, call_packed,
                                 shape_of)
