"""``LabelOps``: label functions with their structural hash and the layouts of their ops, for
profilers (TVM's ``src/relay/transforms/label_ops.cc``).

Every function met (the pass's own function included) gets ``hash``, the structural hash as
16 hex digits, and every attribute of its calls whose name contains ``layout``. Before::

    %0 = fn (%p0, %p1, Primitive=1) { nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]) };

after::

    %0 = fn (%p0, %p1, Primitive=1, hash="3f0c...", data_layout="NCHW",
             kernel_layout="OIHW", out_layout="") { ... };

As in TVM, the collected layouts live in one table that is reset when a function is entered
and not restored when it is left: an outer function also receives the layouts collected for
the last function nested in it. When two calls disagree, the later one wins.
"""

from __future__ import annotations

from irlab.ir.node import Node
from irlab.ir.structural import structural_hash
from irlab.relay.expr_functor import ExprMutator

_HASH_MASK = (1 << 64) - 1


def _layout_items(attrs):
    """(name, value) of the string/object attrs whose name contains "layout"."""
    for key in attrs.keys():
        if "layout" not in key:
            continue
        value = attrs[key]
        # TVM collects only string and object fields (numbers and bools are skipped).
        if isinstance(value, (str, tuple, Node)) and not isinstance(value, bool):
            yield key, value


class _LabelOpsMutator(ExprMutator):
    def __init__(self):
        super().__init__()
        self.body_attrs: dict = {}

    def visit_function(self, fn):
        self.body_attrs = {}
        updated = super().visit_function(fn)
        digest = structural_hash(updated) & _HASH_MASK
        labelled = updated.with_attr("hash", f"{digest:016x}")
        for key, value in self.body_attrs.items():
            labelled = labelled.with_attr(key, value)
        return labelled

    def visit_call(self, call):
        updated = super().visit_call(call)
        if call.attrs is not None:
            for key, value in _layout_items(call.attrs):
                self.body_attrs[key] = value
        return updated


def label_expr(expr):
    """``expr`` with every function labelled (what ``LabelOps`` does to each function)."""
    return _LabelOpsMutator().visit(expr)


def LabelOps():
    """Add ``hash`` and ``*layout*`` attrs to functions (function pass, opt level 1)."""
    from irlab.relay.transform import function_pass

    def transform(func, mod, ctx):
        return label_expr(func)

    return function_pass(transform, opt_level=1, name="LabelOps", required=[])


__all__ = ["LabelOps", "label_expr"]
