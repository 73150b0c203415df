"""Annotations of external ("BYOC") compilers: per-op predicates, pattern tables and each
compiler's ``partition_for_<compiler>`` (TVM's ``relay.op.contrib``)."""

from irlab.relay.op.contrib.register import (register_op_attr, register_pattern_table,
                                             get_pattern_table, is_supported)
from irlab.relay.op.contrib import ccompiler
from irlab.relay.op.contrib.ccompiler import partition_for_ccompiler

__all__ = ["register_op_attr", "register_pattern_table", "get_pattern_table", "is_supported",
           "ccompiler", "partition_for_ccompiler"]
