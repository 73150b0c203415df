"""TVMScript's ``R`` namespace (``from irlab.script import relax as R``): a thin public face.

Relax sits above ``script`` in irlab's layers, so the namespace itself (``R.function``,
``R.Tensor``, ``R.call_tir``, the ops...) lives in ``irlab.relax.script``; this module forwards
attribute lookups to it through the global function registry (whose provider entry, set in
``irlab/__init__.py``, imports Relax on first use, keeping ``import irlab`` fast).
"""

from irlab.runtime.registry import get_global_func


def _namespace():
    return get_global_func("script.relax.namespace")()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_namespace(), name)


def __dir__():
    return sorted(set(dir(_namespace())) | set(globals()))
