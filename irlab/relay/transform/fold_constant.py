"""FoldConstant: evaluate sub-graphs whose inputs are all constants at compile time.

As TVM's fold_constant.cc:

- a call of an operator whose arguments are all constants (or tuples of constants) is run by
  the reference interpreter and replaced by its value (a ``Constant``, or a ``Tuple`` of them);
- ``TupleGetItem`` of a literal ``Tuple`` becomes the field, ``let`` bindings of constants are
  inlined, an ``if`` on a constant condition becomes the branch taken;
- never folded: calls with no arguments (``zeros((4, 5))`` would become a big literal), the
  generators (``TGenerator``: ``full``, ``*_like``) for the same reason, stateful ops
  (``TOpIsStateful``: ``nn.dropout``), calls of functions, and anything inside a
  ``Primitive=1`` function (already fused for codegen);
- ``on_device`` annotations do not get in the way: ``on_device(c)`` of a constant counts as a
  constant (its let binding is inlined, annotation and all; an op reading it folds), and a
  folded ``on_device(e)`` stays annotated;
- an op with ``FFoldFromShape(shape, attrs)`` (TVM's ``shape_of``/``ndarray_size``, when
  registered) folds from the static type of its argument, whatever the argument's value.
"""

from __future__ import annotations

import numpy as np

from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.ir.type import TensorType
from irlab.relay.expr import Constant, If, Let, Tuple, const
from irlab.relay.expr_functor import ExprMutator
from irlab.relay.function import is_primitive
from irlab.relay.op.annotation import strip_on_device
from irlab.relay.transform import function_pass
from irlab.relay.type_relation import is_complete, infer_call_type
from irlab.runtime.dtype import to_numpy_dtype
from irlab.runtime.ndarray import NDArray

def is_constant(expr) -> bool:
    """A literal ``Constant``, or a ``Tuple`` of such (TVM's ``IsComplexConstant``)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Tuple):
            stack.extend(node.fields)
        elif not isinstance(node, Constant):
            return False
    return True


def _value_to_expr(value, wrapped=None):
    wrapped = set() if wrapped is None else wrapped  # ids of the arrays wrapped so far
    if isinstance(value, tuple):
        return Tuple([_value_to_expr(v, wrapped) for v in value])
    array = np.asarray(value)
    flags = array.flags
    if flags.writeable and flags.owndata and flags.c_contiguous and id(array) not in wrapped:
        wrapped.add(id(array))  # one array in two fields of a tuple: the second is a copy
        # A fresh result: the interpreter hands op references read-only views of constants,
        # so a writeable array that owns its data shares no memory with them (nor with the
        # user's params): wrap it, no copy (ResNet-18: 20 folded weights of ~2 MB each).
        return Constant(NDArray(array))
    return Constant(array)  # a view of a constant (or strided): copied into a new array


def evaluate_constant(expr, mod=None):
    """The value of a closed expression (no free variables) as a Constant or Tuple of them."""
    from irlab.relay.interpreter import Interpreter
    from irlab.relay.ty_infer import infer_expr

    mod = IRModule() if mod is None else mod
    typed = infer_expr(expr, mod)
    return _value_to_expr(Interpreter(mod).eval(typed))


def _constant_type(constant):
    if constant.has_checked_type():
        return constant.checked_type
    return TensorType(constant.data.shape, constant.data.dtype)


def _fold_op_of_constants(op, args, attrs):
    """The value of ``op(*args)`` (all ``Constant``s) as a typed Constant, without building and
    type-checking a function around the call: its output type comes from the op's type
    relation on the constants' types, its value from the op's reference. None when the call
    is not that simple (a tuple argument or result, a relation or reference that fails): the
    caller then takes the general path, which reports errors with the program around them."""
    if not all(type(a) is Constant for a in args) or op.type_rel is None:
        return None
    if op.num_inputs >= 0 and len(args) != op.num_inputs:
        return None
    if op.attrs_type is not None and attrs is not None and not isinstance(attrs, op.attrs_type):
        return None
    try:
        out_type = infer_call_type(op, [_constant_type(a) for a in args], attrs)
    except Exception:  # noqa: BLE001 - the general path raises it with context
        return None
    if type(out_type) is not TensorType or not is_complete(out_type):
        return None
    inputs = []
    for arg in args:  # read-only views, as the interpreter's: a reference cannot write them
        view = np.asarray(arg.data).view()
        view.flags.writeable = False
        inputs.append(view)
    try:
        value = np.asarray(op.reference(inputs, attrs, out_type))
    except Exception:  # noqa: BLE001 - the general path raises it with context
        return None
    if value.shape != out_type.shape:
        return None  # a reference at odds with its relation: the interpreter says so
    value = value.astype(to_numpy_dtype(out_type.dtype), copy=False)  # as the interpreter
    folded = _value_to_expr(value)
    folded._set_checked_type(out_type)
    return folded


def _static_shape(expr):
    ty = expr.checked_type if expr.has_checked_type() else None
    if isinstance(expr, Constant):
        return expr.data.shape
    return ty.shape if isinstance(ty, TensorType) else None


class _ConstantFolder(ExprMutator):
    def __init__(self, mod, fold_qnn=False):
        super().__init__()
        self.mod = mod
        self.fold_qnn = fold_qnn
        self.inside_primitive = False

    # -- scopes -------------------------------------------------------------------------------
    def visit_function(self, fn):
        if not is_primitive(fn):
            return super().visit_function(fn)
        # A fused primitive function is what codegen will see: leave its body alone.
        saved, self.inside_primitive = self.inside_primitive, True
        try:
            return super().visit_function(fn)
        finally:
            self.inside_primitive = saved

    def visit_let(self, let):
        # Walk the chain iteratively: constants are inlined (the var maps to the constant in
        # the memo), other bindings are rebuilt bottom-up.
        chain = []
        body = let
        while isinstance(body, Let):
            value = self.visit(body.value)
            if isinstance(strip_on_device(value), Constant):
                self.memo_map[body.var] = value
                chain.append((body, None, value))
            else:
                chain.append((body, self.visit(body.var), value))
            body = body.body
        result = self.visit(body)
        for node, var, value in reversed(chain):
            if var is None:
                continue  # binding of a constant: dropped
            if var is node.var and value is node.value and result is node.body:
                result = node
            else:
                result = Let(var, value, result, node.span)
        return result

    def visit_if(self, ite):
        new = super().visit_if(ite)
        if isinstance(new, If) and isinstance(new.cond, Constant):
            taken = bool(np.asarray(new.cond.data.numpy()).reshape(-1)[0])
            return new.true_branch if taken else new.false_branch
        return new

    # -- dataflow -----------------------------------------------------------------------------
    def visit_tuple_getitem(self, item):
        new = super().visit_tuple_getitem(item)
        if isinstance(new.tuple_value, Tuple):
            return new.tuple_value.fields[new.index]
        return new

    def visit_call(self, call):
        if self.inside_primitive:
            return call
        new = super().visit_call(call)
        if not new.args or not isinstance(new.op, Op):
            return new  # zero-argument generators and function calls stay
        op = new.op
        # Cheap generators: folding them only trades a tiny op for a large literal.
        if op.get_attr("TOpIsStateful", False) or op.get_attr("TGenerator", False):
            return new
        if op.get_attr("TQnnOp", False) and not self.fold_qnn:
            return new  # QNN ops fold only when asked (the backend may want them whole)
        if op.get_attr("FFoldFromShape") is not None:
            return self._fold_shape_function(call, new)
        if op.get_attr("TNonComputational", False) or op.reference is None:
            return new  # annotations, and ops the interpreter cannot run
        if not all(is_constant(strip_on_device(a)) for a in new.args):
            return new
        args = [strip_on_device(a) for a in new.args]
        folded = _fold_op_of_constants(op, args, new.attrs)
        if folded is not None:
            return folded
        return evaluate_constant(new.with_fields(args=tuple(args)), self.mod)

    def _fold_shape_function(self, call, new):
        # The original call still carries types; only the argument's static shape matters.
        shape = _static_shape(call.args[0])
        if shape is None:
            return new
        # the value from the argument's static shape, then cast to attrs.dtype
        value = np.asarray(call.op.get_attr("FFoldFromShape")(shape, call.attrs))
        return const(value.astype(call.attrs.dtype), dtype=call.attrs.dtype)


def FoldConstant(fold_qnn=False):
    """Evaluate every all-constant sub-graph and replace it by its value.

    Before::

        fn (%x: Tensor[(3), float32]) {
          %0 = add(meta[relay.Constant][0], meta[relay.Constant][0]);   /* c + c */
          %1 = multiply(%0, 2f);
          add(%x, %1)
        }

    After::

        fn (%x: Tensor[(3), float32]) {
          add(%x, meta[relay.Constant][1])                               /* (c + c) * 2 */
        }

    ``fold_qnn=True`` also folds QNN ops (``relay.qnn.op.*``) whose inputs are constants.
    """

    def transform(func, mod, ctx):
        return _ConstantFolder(mod, fold_qnn).visit(func)

    return function_pass(transform, opt_level=2, name="FoldConstant")


__all__ = ["FoldConstant", "is_constant", "evaluate_constant"]
