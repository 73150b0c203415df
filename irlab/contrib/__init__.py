"""Executors built on the runtime (TVM's ``tvm.contrib``): ``graph_executor`` and
``debugger.debug_executor`` (per-node times).

``irlab.contrib.graph_executor`` loads on first use, so ``import irlab`` stays light."""

import importlib

_LAZY = ("graph_executor", "debugger")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f"irlab.contrib.{name}")
    raise AttributeError(f"module 'irlab.contrib' has no attribute {name!r}")
