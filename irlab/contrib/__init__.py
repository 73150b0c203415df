"""Executors built on the runtime (TVM's ``tvm.contrib``): ``graph_executor``."""
