"""Annotations of external ("BYOC") compilers: per-op predicates, pattern tables and each
compiler's ``partition_for_<compiler>`` (TVM's ``relay.op.contrib``)."""

from irlab.relay.op.contrib.register import (register_op_attr, register_pattern_table,
                                             get_pattern_table, is_supported)
from irlab.relay.op.contrib import ccompiler, dnnl
from irlab.relay.op.contrib.ccompiler import partition_for_ccompiler
from irlab.relay.op.contrib.dnnl import partition_for_dnnl

__all__ = ["register_op_attr", "register_pattern_table", "get_pattern_table", "is_supported",
           "ccompiler", "partition_for_ccompiler", "dnnl", "partition_for_dnnl"]
