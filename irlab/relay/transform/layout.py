"""Layout passes and their per-op hooks: ConvertLayout, AlterOpLayout and Legalize.

- ``Legalize()`` calls each op's ``FTVMLegalize`` hook, which may replace the call by another
  (TVM's legalize.cc).
- ``AlterOpLayout()`` and ``ConvertLayout(desired_layouts)`` share one rewriter (TVM's
  transform_layout.h): each call may get new layouts (from the op's ``FTVMAlterOpLayout`` hook,
  or its ``FTVMConvertOpLayout`` hook and the user's desired layouts); the new layout then
  flows to the consumers, which adapt when they are layout-agnostic (elementwise, broadcast,
  pooling, concatenate, normalization: the op's ``FInferCorrectLayout`` rule, from
  ``relay/op/layout_rules.py``), and ``layout_transform``
  is inserted where a consumer cannot adapt and at the function's outputs.

A value is tracked as ``(expr, old_layout, new_layout)``: ``expr`` computes in ``new_layout``
what the original program computed in ``old_layout``. Layouts are strings (``"NCHW"``,
``"NCHW16c"``); ``None`` is an unknown layout and ``""`` the layout of a scalar.

Hooks are op attributes under TVM's keys, registered with ``register_legalize``,
``register_alter_op_layout`` and ``register_convert_op_layout``. Alter and legalize hooks can
be registered per target (``target=None`` is the generic CPU hook).
"""

from __future__ import annotations

import re

from irlab.errors import IrlabError
from irlab.ir.op import Op
from irlab.ir.type import TensorType, TupleType
from irlab.relay.expr import Call, Constant, Tuple, TupleGetItem, TupleWrapper
from irlab.relay.expr_functor import ExprMutator
from irlab.relay.op import transform as _transform
from irlab.relay.op.layout_rules import expand_primal, layout_axes, ndim_primal
from irlab.relay.op.op import (TargetHooks, register_alter_op_layout,  # noqa: F401
                               register_convert_op_layout, register_legalize)
from irlab.relay.transform import function_pass
from irlab.relay.transform.canonicalize import typed_function

def infer_correct_layouts(op, attrs, new_in, old_in, types):
    """Run ``op``'s rule; ``None`` when the op has none or some layout stays unknown."""
    rule = op.get_attr("FInferCorrectLayout")
    if rule is None:
        return None
    inputs, outputs, new_attrs = rule(attrs, new_in, old_in, types)
    if any(layout is None for layout in list(inputs) + list(outputs)):
        return None
    return list(inputs), list(outputs), new_attrs


def _as_call(expr, what):
    if isinstance(expr, TupleWrapper):
        expr = expr.astuple()
    if not isinstance(expr, Call):
        raise IrlabError(f"{what} must return a call (the replacement of the original "
                         f"operator), got {type(expr).__name__}")
    return expr


# ---------------------------------------------------------------------------------------------
# Legalize
class _Legalizer(ExprMutator):
    def __init__(self, attr_key):
        super().__init__()
        self.attr_key = attr_key

    def visit_call(self, call):
        new = super().visit_call(call)
        if not isinstance(call.op, Op):
            return new
        hook = call.op.get_attr(self.attr_key)
        if hook is None:
            return new
        types = [arg.checked_type for arg in call.args] + [call.checked_type]
        result = hook(new.attrs, list(new.args), types)
        if result is None:
            return new
        return _as_call(result, f"the {self.attr_key} hook of {call.op.name}")


def Legalize(legalize_map_attr_name="FTVMLegalize"):
    """Let each op's legalize hook rewrite its calls (e.g. into ops the target supports).

    With ``register_legalize("nn.conv2d", lambda attrs, inputs, types:
    relay.nn.conv2d(inputs[0], inputs[1] * 2f, **attrs))``, before::

        nn.conv2d(%x, %w, padding=[1, 1, 1, 1])

    After::

        %0 = multiply(%w, 2f);
        nn.conv2d(%x, %0, padding=[1, 1, 1, 1])
    """

    def transform(func, mod, ctx):
        return _Legalizer(legalize_map_attr_name).visit(typed_function(func, mod))

    return function_pass(transform, opt_level=1, name="Legalize", required=["InferType"])


# ---------------------------------------------------------------------------------------------
# the layout rewriter shared by AlterOpLayout and ConvertLayout
class _Alternated:
    """``value`` computes in ``new_layout`` what the program computed in ``old_layout``."""

    __slots__ = ("value", "old_layout", "new_layout")

    def __init__(self, value, old_layout=None, new_layout=None):
        self.value, self.old_layout, self.new_layout = value, old_layout, new_layout


class _PendingTuple:
    """A tuple whose fields are still in their new layouts (TVM keeps tuples unrealized)."""

    __slots__ = ("node", "fields")

    def __init__(self, node, fields):
        self.node, self.fields = node, fields


def _rebuild_tuple(tup, fields):
    """``tup`` with new fields, or ``tup`` itself when they are the same objects."""
    if all(a is b for a, b in zip(fields, tup.fields)):
        return tup
    return Tuple(fields, tup.span)


def _is_scalar(expr):
    if isinstance(expr, Constant):
        return expr.data.ndim == 0
    return expr.has_checked_type() and isinstance(expr.checked_type, TensorType) \
        and len(expr.checked_type.shape) == 0


class _LayoutRewriter(ExprMutator):
    """TVM's ForwardRewrite + LayoutRewriter. ``visit`` returns plain expressions (in the
    original layouts); ``self.pending`` keeps, per original node, the value still in its new
    layout, which layout-aware consumers use instead."""

    def __init__(self, call_with_new_layouts):
        super().__init__()
        self.call_with_new_layouts = call_with_new_layouts
        self.pending = {}
        self.transforms = {}  # (expr, src, dst) -> transformed expr, so transforms are shared
        self.realized = {}  # pending value -> plain expr

    # -- layout transforms --------------------------------------------------------------------
    def transform(self, expr, src, dst):
        """``expr`` (in layout ``src``) converted to layout ``dst``."""
        if src == dst:
            return expr
        key = (expr, src, dst)
        if key not in self.transforms:
            self.transforms[key] = self._make_transform(expr, src, dst)
        return self.transforms[key]

    def _make_transform(self, expr, src, dst):
        if src is None or dst is None:
            raise IrlabError(f"cannot insert a layout transform between undefined layouts "
                             f"({src!r} -> {dst!r})")
        if ndim_primal(src) < ndim_primal(dst):
            # A scalar broadcasts in any layout; a lower-rank operand is expanded first.
            if _is_scalar(expr):
                return expr
            expr = _transform.expand_dims(expr, 0, ndim_primal(dst) - ndim_primal(src))
            src = expand_primal(src, dst)
            if src == dst:
                return expr
        if dst[:len(src)] == src and re.fullmatch(r"(1[a-z])+", dst[len(src):]):
            # only unit sub-axes appended (NCHW -> NCHW1c): the same elements, a reshape
            return _transform.expand_dims(expr, len(layout_axes(src)),
                                          len(layout_axes(dst)) - len(layout_axes(src)))
        return _transform.layout_transform(expr, src, dst)

    def realize(self, value):
        if not isinstance(value, (_Alternated, _PendingTuple)):
            return value
        if value not in self.realized:
            if isinstance(value, _Alternated):
                plain = self.transform(value.value, value.new_layout, value.old_layout)
            else:
                fields = [self.realize(f) for f in value.fields]
                plain = _rebuild_tuple(value.node, fields)
            self.realized[value] = plain
        return self.realized[value]

    def value_of(self, expr):
        plain = self.visit(expr)
        return self.pending.get(expr, plain)

    # -- dataflow -----------------------------------------------------------------------------
    def visit_tuple(self, tup):
        plain = super().visit_tuple(tup)
        fields = [self.value_of(f) for f in tup.fields]
        if any(isinstance(f, _Alternated) for f in fields):
            self.pending[tup] = _PendingTuple(plain, fields)
        return plain

    def visit_tuple_getitem(self, item):
        value = self.value_of(item.tuple_value)
        if isinstance(value, _PendingTuple):
            field = value.fields[item.index]
            if isinstance(field, _Alternated):
                self.pending[item] = field
            return self.realize(field)
        if isinstance(value, Tuple):  # a literal tuple: take the field directly
            return value.fields[item.index]
        if value is item.tuple_value:
            return item
        return TupleGetItem(value, item.index, item.span)

    def visit_call(self, call):
        values = [self.value_of(arg) for arg in call.args]
        result = self.rewrite(call, values) if isinstance(call.op, Op) else None
        if result is None:
            op = self.visit(call.op)
            args = [self.realize(v) for v in values]
            if op is call.op and all(a is b for a, b in zip(args, call.args)):
                return call
            return Call(op, args, call.attrs, call.type_args, call.span)
        if isinstance(result, Call):
            return result
        self.pending[call] = result
        return self.realize(result)

    # -- one call -----------------------------------------------------------------------------
    def rewrite(self, call, values):
        inputs = []  # one _Alternated per tensor input, tuple fields flattened

        def take(value):
            if not isinstance(value, _Alternated):
                value = _Alternated(value)
            inputs.append(value)
            return value.value

        args = []
        for value in values:
            if isinstance(value, (_PendingTuple, Tuple)):
                node = value.node if isinstance(value, _PendingTuple) else value
                fields = value.fields
                args.append(_rebuild_tuple(node, [take(f) for f in fields]))
            else:
                args.append(take(value))

        op = call.op
        if op.get_attr("FInferCorrectLayout") is None:
            if op.get_attr("FTVMAlterOpLayout") is not None:
                # The alter hook may still rewrite the op (both passes, as TVM); without a
                # layout rule its inputs are given in the old layouts.
                plain = [self.realize(v) for v in values]
                return self.call_with_new_layouts(call, call.attrs, plain)
            return None

        old_prd = [i.old_layout for i in inputs]
        new_prd = [i.new_layout for i in inputs]
        types = [arg.checked_type for arg in call.args]
        inferred = infer_correct_layouts(op, call.attrs, None, old_prd, types)
        if inferred is None:
            return None
        old_cur, old_out, attrs = inferred
        new_prd_inferred = [n if n is not None else c for n, c in zip(new_prd, old_cur)]
        old_prd_inferred = [o if o is not None else c for o, c in zip(old_prd, old_cur)]

        new_call = self.call_with_new_layouts(call, attrs, args)
        if not isinstance(new_call.op, Op):
            return None
        inferred = infer_correct_layouts(new_call.op, new_call.attrs, new_prd_inferred,
                                         old_prd_inferred, types)
        if inferred is None:
            return None
        new_cur, new_out, new_attrs = inferred
        if len(new_out) != len(old_out) or len(new_cur) != len(new_prd):
            raise IrlabError(f"the new {new_call.op.name} call must keep the number of inputs "
                             f"and outputs of {op.name}")

        position = iter(range(len(inputs)))

        def convert(arg):
            i = next(position)
            if old_cur[i] == old_prd[i]:  # the two transforms fuse into one
                return self.transform(arg, new_prd[i], new_cur[i])
            if old_prd[i] is not None:
                arg = self.transform(arg, new_prd[i], old_prd[i])
            return self.transform(arg, old_cur[i], new_cur[i])

        new_args = []
        for arg in new_call.args:
            if isinstance(arg, Tuple):
                new_args.append(_rebuild_tuple(arg, [convert(f) for f in arg.fields]))
            else:
                new_args.append(convert(arg))
        if isinstance(call.checked_type, TupleType):
            out = Call(new_call.op, new_args, new_attrs, span=call.span)
            fields = [_Alternated(TupleGetItem(out, i), old_out[i], new_out[i])
                      for i in range(len(new_out))]
            return _PendingTuple(Tuple([f.value for f in fields]), fields)
        out = Call(new_call.op, new_args, new_attrs, span=call.span)
        return _Alternated(out, old_out[0], new_out[0])


def _tensor_infos(call):
    """The argument types (tuple arguments flattened), as TVM's ``tinfos``."""
    infos = []
    for arg in call.args:
        ty = arg.checked_type
        infos.extend(ty.fields if isinstance(ty, TupleType) else [ty])
    return infos


# ---------------------------------------------------------------------------------------------
# AlterOpLayout
def _alter_call(call, attrs, args):
    hook = call.op.get_attr("FTVMAlterOpLayout")
    if hook is not None:
        result = hook(attrs, list(args), _tensor_infos(call), call.checked_type)
        if result is not None:
            return _as_call(result, f"the alter-layout hook of {call.op.name}")
    if attrs is call.attrs and len(args) == len(call.args) and all(
            a is b for a, b in zip(args, call.args)):
        return call  # the hook kept it: the same call (its span included)
    return Call(call.op, args, attrs, call.type_args, call.span)


def AlterOpLayout():
    """Let each op's (target's) alter-layout hook choose new layouts, inserting
    ``layout_transform`` where a consumer cannot follow.

    With a conv2d hook returning ``nn.conv2d(..., data_layout="NHWC", kernel_layout="HWIO")``,
    before::

        %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
        nn.relu(%0)

    After::

        %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
        %1 = layout_transform(%w, src_layout="OIHW", dst_layout="HWIO");
        %2 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO");
        %3 = nn.relu(%2);
        layout_transform(%3, src_layout="NHWC", dst_layout="NCHW")
    """

    def transform(func, mod, ctx):
        return _LayoutRewriter(_alter_call).visit(typed_function(func, mod))

    return function_pass(transform, opt_level=3, name="AlterOpLayout", required=["InferType"])


# ---------------------------------------------------------------------------------------------
# ConvertLayout
def ConvertLayout(desired_layouts):
    """Convert ops to the layouts the user asks for, e.g.
    ``{"nn.conv2d": ["NHWC", "default"]}`` (data layout, kernel layout or "default").

    Before::

        %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);          /* NCHW, OIHW */
        nn.relu(%0)

    After::

        %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
        %1 = layout_transform(%w, src_layout="OIHW", dst_layout="HWIO");
        %2 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO");
        %3 = nn.relu(%2);
        layout_transform(%3, src_layout="NHWC", dst_layout="NCHW")
    """
    if not isinstance(desired_layouts, dict):
        raise IrlabError(f"ConvertLayout takes a dict op name -> list of layouts, got "
                         f"{type(desired_layouts).__name__}")
    desired = {}
    for name, layouts in desired_layouts.items():
        if isinstance(layouts, str) or not layouts:
            raise IrlabError(f"desired layouts of {name} must be a non-empty list of layout "
                             f"strings, got {layouts!r}")
        desired[name] = [str(layout) for layout in layouts]

    def convert_call(call, attrs, args):
        op = call.op
        hook = op.get_attr("FTVMConvertOpLayout")
        if hook is not None and op.name in desired:
            result = hook(attrs, list(args), _tensor_infos(call), desired[op.name])
            if result is not None:
                return _as_call(result, f"the convert-layout hook of {op.name}")
        return Call(op, args, attrs)

    def transform(func, mod, ctx):
        return _LayoutRewriter(convert_call).visit(typed_function(func, mod))

    return function_pass(transform, opt_level=3, name="ConvertLayout",
                         required=["InferType", "CanonicalizeOps"])


__all__ = ["ConvertLayout", "AlterOpLayout", "Legalize", "register_legalize",
           "register_alter_op_layout", "register_convert_op_layout", "infer_correct_layouts",
           "TargetHooks"]
