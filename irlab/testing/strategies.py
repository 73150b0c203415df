"""Hypothesis strategies for random, well-typed Relay programs.

``relay_functions()`` draws a ``relay.Function`` built from elementwise and broadcast float32
operators. Shapes are tracked while the graph grows, so every program type-checks. The graphs
exercise what printers, parsers and passes find hard: shared sub-expressions, tuples and
``TupleGetItem``, ``let`` (annotated or not), ``if`` on a bool scalar, nested functions (some
``Primitive=1``, some called twice, some capturing outer values), scalar constants with
awkward float values and tensor constants. Parameter names repeat and some start with a digit
or ``_`` (the printer renames those ``%x1``, ``%v0``...).

``relay_modules()`` wraps such a function as ``@main`` of an ``IRModule``.

Values are not chosen for numerical safety (``divide`` may meet zeros, ``exp`` may overflow):
tests that evaluate the programs should compare with NaN/inf-aware tolerances.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from irlab.ir.module import IRModule
from irlab.ir.type import TensorType
from irlab.relay import expr as _expr
from irlab.relay.function import Function
from irlab.relay.op import tensor as _ops

UNARY_OPS = ("exp", "negative", "sigmoid", "tanh", "abs", "floor", "ceil", "copy", "round")
BINARY_OPS = ("add", "subtract", "multiply", "divide", "maximum", "minimum")
PARAM_NAMES = ("x", "x", "p0", "data", "0", "_y", "w")
ACTIONS = ("unary", "binary", "binary", "scalar", "tensor_const", "tuple", "getitem", "let",
           "if", "function")


def shapes(max_rank=3, max_dim=4):
    """Static tensor shapes: tuples of 0..max_rank dims in 1..max_dim."""
    return st.lists(st.integers(1, max_dim), max_size=max_rank).map(tuple)


def broadcastable(a: tuple, b: tuple) -> bool:
    """True when numpy broadcasting accepts shapes ``a`` and ``b``."""
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    ndim = max(len(a), len(b))
    a = (1,) * (ndim - len(a)) + tuple(a)
    b = (1,) * (ndim - len(b)) + tuple(b)
    return tuple(max(x, y) if min(x, y) == 1 else x for x, y in zip(a, b))


_FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32)


class _Builder:
    """Grows a graph: ``tensors`` is the pool of (expr, shape) values in scope."""

    def __init__(self, draw, params, allow_nesting=True):
        self.draw = draw
        self.params = params
        self.tensors = [(p, p.type_annotation.shape) for p in params]
        self.tuples: list = []
        self.lets: list = []
        self.functions: list = []  # (fn, arg shape, result shape), to call again
        self.allow_nesting = allow_nesting

    def pick(self, pool=None):
        pool = self.tensors if pool is None else pool
        return pool[self.draw(st.integers(0, len(pool) - 1))]

    def constant(self, shape):
        seed = self.draw(st.integers(0, 2 ** 16))
        data = np.random.default_rng(seed).standard_normal(shape).astype("float32")
        return _expr.const(data)

    def scalar(self):
        return _expr.const(float(np.float32(self.draw(_FLOATS))), "float32")

    def unary(self, value):
        name = self.draw(st.sampled_from(UNARY_OPS))
        return getattr(_ops, name)(value)

    def binary(self, lhs, rhs):
        name = self.draw(st.sampled_from(BINARY_OPS))
        if self.draw(st.booleans()):
            lhs, rhs = rhs, lhs
        return getattr(_ops, name)(lhs, rhs)

    def step(self, action):
        draw = self.draw
        if action == "unary":
            value, shape = self.pick()
            self.tensors.append((self.unary(value), shape))
        elif action == "binary":
            lhs, shape = self.pick()
            partners = [t for t in self.tensors if broadcastable(shape, t[1])]
            rhs, other = self.pick(partners)
            self.tensors.append((self.binary(lhs, rhs), broadcast_shape(shape, other)))
        elif action == "scalar":
            value, shape = self.pick()
            self.tensors.append((self.binary(value, self.scalar()), shape))
        elif action == "tensor_const":
            value, shape = self.pick()
            keep = draw(st.integers(0, len(shape)))
            cshape = tuple(d if draw(st.booleans()) else 1 for d in shape[len(shape) - keep:])
            if not cshape:  # keep it a tensor: scalars print inline, tensors go to metadata
                cshape = shape[-1:] or (draw(st.integers(1, 3)),)
            self.tensors.append((self.binary(value, self.constant(cshape)),
                                 broadcast_shape(shape, cshape)))
        elif action == "tuple":
            count = draw(st.integers(1, 3))
            fields = [self.pick() for _ in range(count)]
            tup = _expr.Tuple([f[0] for f in fields])
            self.tuples.append((tup, [f[1] for f in fields]))
            index = draw(st.integers(0, count - 1))
            self.tensors.append((_expr.TupleGetItem(tup, index), fields[index][1]))
        elif action == "getitem" and self.tuples:
            tup, field_shapes = self.pick(self.tuples)
            index = draw(st.integers(0, len(field_shapes) - 1))
            self.tensors.append((_expr.TupleGetItem(tup, index), field_shapes[index]))
        elif action == "let":
            value, shape = self.pick()
            annotated = draw(st.booleans())
            var = _expr.Var(draw(st.sampled_from(("l", "x", "1"))),
                            TensorType(shape, "float32") if annotated else None)
            self.lets.append((var, value))
            self.tensors.append((var, shape))
        elif action == "if" and self.allow_nesting:
            self.tensors.append(self.make_if())
        elif action == "function" and self.allow_nesting:
            self.tensors.append(self.make_call())

    def condition(self):
        scalars = [t for t in self.tensors if t[1] == ()]
        if scalars and self.draw(st.booleans()):
            value, _ = self.pick(scalars)
            return _ops.greater(value, self.scalar())
        cond = next((p for p in self.params if p.type_annotation.dtype == "bool"), None)
        if cond is None:
            cond = _expr.Var("cond", TensorType((), "bool"))
            self.params.append(cond)
        return cond

    def make_if(self):
        value, shape = self.pick()
        then = self.unary(value)
        same = [t for t in self.tensors if t[1] == shape]
        other = self.pick(same)[0] if self.draw(st.booleans()) else self.unary(value)
        return _expr.If(self.condition(), then, other), shape

    def make_call(self):
        if self.functions and self.draw(st.booleans()):
            fn, shape, result = self.pick(self.functions)
            args = [t for t in self.tensors if t[1] == shape]
            if args:
                return _expr.Call(fn, [self.pick(args)[0]]), result
        arg, shape = self.pick()
        param = _expr.Var(self.draw(st.sampled_from(("p0", "p0", "x"))),
                          TensorType(shape, "float32"))
        inner = _Builder(self.draw, [param], allow_nesting=False)
        if self.draw(st.booleans()):  # capture an outer value (a closure)
            inner.tensors.append(self.pick())
        for _ in range(self.draw(st.integers(1, 3))):
            inner.step(self.draw(st.sampled_from(("unary", "binary", "scalar"))))
        body, body_shape = inner.tensors[-1]
        attrs = {"Primitive": 1} if self.draw(st.booleans()) else None
        fn = Function([param], body, attrs=attrs)
        self.functions.append((fn, shape, body_shape))
        return _expr.Call(fn, [arg]), body_shape


@st.composite
def relay_functions(draw, max_steps=10, nesting=True):
    """A random well-typed ``Function`` of float32 params (plus maybe a bool ``%cond``)."""
    count = draw(st.integers(1, 3))
    params = [_expr.Var(draw(st.sampled_from(PARAM_NAMES)),
                        TensorType(draw(shapes()), "float32")) for _ in range(count)]
    builder = _Builder(draw, params, allow_nesting=nesting)
    for _ in range(draw(st.integers(1, max_steps))):
        builder.step(draw(st.sampled_from(ACTIONS)))
    out = builder.tensors[-1][0]
    if draw(st.integers(0, 3)) == 0:
        out = _expr.Tuple([out, builder.pick()[0]])
    for var, value in reversed(builder.lets):
        out = _expr.Let(var, value, out)
    return Function(builder.params, out)


@st.composite
def relay_modules(draw, max_steps=10, nesting=True):
    """An ``IRModule`` whose ``@main`` is drawn by ``relay_functions``."""
    return IRModule.from_expr(draw(relay_functions(max_steps=max_steps, nesting=nesting)))


__all__ = ["relay_functions", "relay_modules", "shapes", "broadcastable", "broadcast_shape",
           "UNARY_OPS", "BINARY_OPS"]
