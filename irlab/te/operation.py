"""TE constructors: ``placeholder``, ``compute``, ``reduce_axis``, ``var``, ``thread_axis``
(TVM's python/tvm/te/operation.py and src/te/operation/compute_op.cc checks)."""

from __future__ import annotations

import inspect

from irlab.errors import TIRError
from irlab.runtime.dtype import normalize_dtype
from irlab.ir.node import Node
from irlab.tir.buffer import Range
from irlab.tir.expr import PrimExpr, SizeVar, Var, convert
from irlab.tir.stmt import IterVar
from irlab.te.reduction import Reduce
from irlab.te.tensor import ComputeOp, PlaceholderOp, Tensor


def _shape(shape):
    if isinstance(shape, (PrimExpr, int)):
        shape = (shape,)
    # Python 3 division gives floats for what were meant to be ints.
    return tuple(convert(int(s) if isinstance(s, float) else s) for s in shape)


def placeholder(shape, dtype=None, name="placeholder") -> Tensor:
    """An input tensor; ``dtype`` None means float32."""
    op = PlaceholderOp(name, "", {}, _shape(shape), normalize_dtype(dtype or "float32"))
    return op.output(0)


def _arg_names(fcompute, out_ndim, varargs_names):
    spec = inspect.getfullargspec(fcompute)
    if spec.varkw is not None:
        raise TIRError("variable keyword arguments are not supported in fcompute")
    if spec.defaults is not None:
        raise TIRError("default arguments are not supported in fcompute")
    if spec.kwonlyargs:
        raise TIRError("keyword arguments are not supported in fcompute")
    if not spec.args and spec.varargs is None:
        return [f"i{i}" for i in range(out_ndim)], out_ndim
    if spec.varargs is not None:
        # The varargs take the dimensions left after the named arguments.
        remaining = out_ndim - len(spec.args)
        if varargs_names is not None:
            if len(varargs_names) != remaining:
                raise TIRError(f"number of varargs ({remaining}) does not match the number "
                               f"of varargs_names ({len(varargs_names)})")
            return list(spec.args) + list(varargs_names), out_ndim
        return list(spec.args) + [f"i{i}" for i in range(remaining)], out_ndim
    # Fewer arguments than dimensions: only the leading dimensions are computed.
    return list(spec.args), len(spec.args)


def compute(shape, fcompute, name="compute", tag="", attrs=None, varargs_names=None):
    """The tensor(s) ``fcompute(*indices)`` over ``shape``; a list/tuple result gives one output
    per element (returned as a tuple)."""
    shape = _shape(shape)
    arg_names, out_ndim = _arg_names(fcompute, len(shape), varargs_names)
    if out_ndim != len(arg_names) or out_ndim > len(shape):
        raise TIRError(f"number of args to fcompute does not match dimension, "
                       f"args={len(arg_names)}, dimension={len(shape)}")
    dim_var = [IterVar(Range(0, s), n, IterVar.DataPar) for n, s in zip(arg_names, shape)]
    body = fcompute(*[v.var for v in dim_var])
    if not isinstance(body, (list, tuple)):
        body = [body]
    op = make_compute_op(name, tag, attrs, dim_var, [convert(b) for b in body])
    outputs = tuple(op.output(i) for i in range(op.num_outputs))
    return outputs[0] if len(outputs) == 1 else outputs


def make_compute_op(name, tag, attrs, axis, body) -> ComputeOp:
    """A ComputeOp after TVM's checks: reductions only at the top level and all alike."""
    reduce_axis = ()
    if body and isinstance(body[0], Reduce):
        first = body[0]
        for k, b in enumerate(body):
            if not isinstance(b, Reduce) or b.combiner is not first.combiner \
                    or b.source != first.source or b.axis != first.axis:
                raise TIRError(f"compute {name}: output {k} must be a Reduce like output 0 "
                               "(same combiner, source and axis)")
        reduce_axis = first.axis
    for k, b in enumerate(body):
        _check_no_nested_reduce(b, top=True, name=name)
    return ComputeOp(name, tag, dict(attrs or {}), tuple(axis), tuple(reduce_axis), tuple(body))


def _check_no_nested_reduce(expr, top, name):
    """Raise if a Reduce appears below the top of ``expr``. Iterative, and each shared
    sub-expression is looked at once: a compute body may be a deep expression DAG."""
    stack = list(expr.source) if top and isinstance(expr, Reduce) else [expr]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Reduce):
            raise TIRError(f"compute {name}: reductions are only allowed at the top level of "
                           "compute; create another tensor for further composition")
        if isinstance(node, Node) and not isinstance(node, Tensor):
            for f in node._fields:
                value = getattr(node, f)
                for v in value if isinstance(value, tuple) else (value,):
                    if isinstance(v, PrimExpr):
                        stack.append(v)


def reduce_axis(dom, name="rv", thread_tag="", span=None) -> IterVar:
    """A reduction axis over ``dom``: ``(begin, end)`` or a Range."""
    if not isinstance(dom, Range):
        dom = Range(*dom) if isinstance(dom, (tuple, list)) else Range(dom)
    return IterVar(dom, name, IterVar.CommReduce, thread_tag, span)


def var(name="tindex", dtype="int32", span=None) -> Var:
    """A scalar variable."""
    return Var(name, dtype, span=span)


def size_var(name="size", dtype="int32", span=None) -> SizeVar:
    """A non-negative scalar variable (a symbolic shape)."""
    return SizeVar(name, dtype, span=span)


def thread_axis(dom=None, tag="", name="", span=None) -> IterVar:
    """A GPU thread axis (``te.thread_axis("threadIdx.x")``)."""
    if isinstance(dom, str):
        tag, dom = dom, None
    if not tag:
        raise TIRError("thread_axis needs a tag such as 'threadIdx.x'")
    if dom is not None and not isinstance(dom, Range):
        dom = Range(*dom) if isinstance(dom, (tuple, list)) else Range(dom)
    return IterVar(dom, Var(name or tag), IterVar.ThreadIndex, tag, span)
