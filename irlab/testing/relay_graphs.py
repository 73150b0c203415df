"""Hypothesis strategy for random Relay graphs of the operators ``relay.build`` compiles.

``relay_graphs()`` draws a ``RelayGraph``: a ``@main`` over 1..3 float32 parameters (small
shapes) built from elementwise and broadcast ops, unary math, ``relu``/``clip``, reductions
(sum/mean/max/min over an axis), ``conv2d``/``max_pool2d``/``avg_pool2d`` (NCHW), ``dense``,
``softmax``, ``reshape``/``transpose``/``concatenate``; weights are constants (some named like
the parameters) or parameters. Shapes are tracked so every graph type-checks. The graph's
*family* is the loosest tolerance among its ops (see ``irlab.testing.differential``).

``graph_inputs(graph, seed, special=True)`` makes the inputs: N(0, 1) floats with, when
``special``, a few NaN, +inf and -inf elements so that NaN positions are compared too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from irlab.ir.module import IRModule
from irlab.ir.type import TensorType
from irlab.relay import expr as _expr
from irlab.relay.function import Function

ELEMENTWISE = ("add", "subtract", "multiply", "maximum", "minimum")
UNARY = ("negative", "abs", "floor", "ceil", "round", "relu", "clip")
MATH = ("exp", "tanh", "sigmoid", "sqrt_abs", "log_abs", "divide")
# ops whose compiled NaN handling another part of issue 20 changes (item 4)
NAN_MINMAX = {"maximum", "minimum", "relu", "clip", "max", "min", "max_pool2d"}
_FAMILY_ORDER = ("elementwise", "math", "accumulate")


@dataclass
class RelayGraph:
    """A random graph: ``mod`` (``@main``), its ``family``, and the ops used."""

    mod: IRModule
    family: str
    ops: frozenset

    @property
    def nan_minmax(self) -> bool:
        """Does the graph use an op whose compiled NaN handling is item 4 of issue 20?"""
        return bool(self.ops & NAN_MINMAX)


def _relay():
    from irlab import relay  # the package (its op namespaces)

    return relay


class _GraphGen:
    def __init__(self, draw):
        self.draw = draw
        self.params = []
        self.tensors = []   # (expr, shape)
        self.ops = set()
        self.family = "elementwise"

    def use(self, op, family="elementwise"):
        self.ops.add(op)
        if _FAMILY_ORDER.index(family) > _FAMILY_ORDER.index(self.family):
            self.family = family

    def param(self, shape):
        name = self.draw(st.sampled_from(("x", "p0", "p1", "data", "w")))
        name = f"{name}{len(self.params)}" if any(
            p.name_hint == name for p in self.params) else name
        var = _expr.Var(name, TensorType(shape, "float32"))
        self.params.append(var)
        self.tensors.append((var, shape))
        return var

    def weight(self, shape):
        """A constant (TVM's params after bind) or a new parameter."""
        if self.draw(st.booleans()):
            return self.param(shape)
        seed = self.draw(st.integers(0, 2 ** 16))
        data = np.random.default_rng(seed).standard_normal(shape).astype("float32")
        return _expr.const(data)

    def pick(self, pred=lambda shape: True):
        pool = [t for t in self.tensors if pred(t[1])]
        if not pool:
            return None
        return pool[self.draw(st.integers(0, len(pool) - 1))]

    def step(self):
        kind = self.draw(st.sampled_from(("binary", "binary", "unary", "math", "reduce",
                                          "conv2d", "pool", "dense", "softmax", "reshape",
                                          "transpose", "concat")))
        made = getattr(self, "_" + kind)()
        if made is not None:
            self.tensors.append(made)

    # -- ops -------------------------------------------------------------------------------
    def _binary(self):
        relay = _relay()
        lhs, shape = self.pick()
        other = self.pick(lambda s: _broadcastable(shape, s))
        if self.draw(st.booleans()) or other is None:
            cshape = shape[len(shape) - self.draw(st.integers(0, len(shape))):]
            rhs, rshape = self.weight(tuple(cshape)), tuple(cshape)
        else:
            rhs, rshape = other
        op = self.draw(st.sampled_from(ELEMENTWISE))
        self.use(op)
        if self.draw(st.booleans()):
            lhs, rhs = rhs, lhs
        return getattr(relay, op)(lhs, rhs), _broadcast_shape(shape, rshape)

    def _unary(self):
        relay = _relay()
        value, shape = self.pick()
        op = self.draw(st.sampled_from(UNARY))
        self.use(op)
        if op == "relu":
            return relay.nn.relu(value), shape
        if op == "clip":
            lo = self.draw(st.sampled_from((-1.0, -0.5, 0.0)))
            return relay.clip(value, lo, lo + self.draw(st.sampled_from((0.5, 1.0, 2.0)))), shape
        return getattr(relay, op)(value), shape

    def _math(self):
        relay = _relay()
        value, shape = self.pick()
        op = self.draw(st.sampled_from(MATH))
        self.use(op, "math")
        if op == "sqrt_abs":
            return relay.sqrt(relay.abs(value)), shape
        if op == "log_abs":
            return relay.log(relay.add(relay.abs(value), relay.const(1.0))), shape
        if op == "divide":
            other, oshape = self.pick(lambda s: _broadcastable(shape, s))
            denominator = relay.add(relay.abs(other), relay.const(0.5))
            return relay.divide(value, denominator), _broadcast_shape(shape, oshape)
        return getattr(relay, op)(value), shape

    def _reduce(self):
        relay = _relay()
        picked = self.pick(lambda s: len(s) >= 1)
        if picked is None:
            return None
        value, shape = picked
        op = self.draw(st.sampled_from(("sum", "mean", "max", "min")))
        axis = self.draw(st.integers(0, len(shape) - 1))
        keepdims = self.draw(st.booleans())
        self.use(op, "accumulate")
        out = tuple(1 if i == axis else d for i, d in enumerate(shape)) if keepdims else \
            tuple(d for i, d in enumerate(shape) if i != axis)
        return getattr(relay, op)(value, axis=axis, keepdims=keepdims), out

    def _conv2d(self):
        relay = _relay()
        picked = self.pick(lambda s: len(s) == 4 and min(s[2:]) >= 2)
        if picked is None:
            return None
        value, (n, c, h, w) = picked
        k = self.draw(st.integers(1, min(3, h, w)))
        oc = self.draw(st.integers(1, 4))
        pad = self.draw(st.integers(0, k // 2 + 0))
        stride = self.draw(st.integers(1, 2))
        groups = c if self.draw(st.integers(0, 3)) == 0 else 1
        if groups > 1:
            oc = c
        kernel = self.weight((oc, c // groups, k, k))
        self.use("conv2d", "accumulate")
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        out = relay.nn.conv2d(value, kernel, strides=(stride, stride), padding=(pad, pad),
                              groups=groups, channels=oc, kernel_size=(k, k))
        return out, (n, oc, oh, ow)

    def _pool(self):
        relay = _relay()
        picked = self.pick(lambda s: len(s) == 4 and min(s[2:]) >= 2)
        if picked is None:
            return None
        value, (n, c, h, w) = picked
        op = self.draw(st.sampled_from(("max_pool2d", "avg_pool2d")))
        self.use(op, "accumulate")
        size = self.draw(st.integers(1, 2))
        stride = self.draw(st.integers(1, 2))
        oh, ow = (h - size) // stride + 1, (w - size) // stride + 1
        return getattr(relay.nn, op)(value, pool_size=(size, size), strides=(stride, stride)), (
            n, c, oh, ow)

    def _dense(self):
        relay = _relay()
        picked = self.pick(lambda s: len(s) == 2)
        if picked is None:
            return None
        value, (m, k) = picked
        units = self.draw(st.integers(1, 6))
        self.use("dense", "accumulate")
        return relay.nn.dense(value, self.weight((units, k)), units=units), (m, units)

    def _softmax(self):
        relay = _relay()
        picked = self.pick(lambda s: len(s) >= 1)
        if picked is None:
            return None
        value, shape = picked
        self.use("softmax", "math")
        return relay.nn.softmax(value, axis=self.draw(st.integers(-1, len(shape) - 1))), shape

    def _reshape(self):
        relay = _relay()
        value, shape = self.pick()
        size = int(np.prod(shape, dtype=np.int64))
        first = self.draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
        new = (first, size // first) if self.draw(st.booleans()) else (size,)
        self.use("reshape")
        return relay.reshape(value, new), new

    def _transpose(self):
        relay = _relay()
        picked = self.pick(lambda s: len(s) >= 2)
        if picked is None:
            return None
        value, shape = picked
        axes = tuple(self.draw(st.permutations(range(len(shape)))))
        self.use("transpose")
        return relay.transpose(value, axes), tuple(shape[a] for a in axes)

    def _concat(self):
        relay = _relay()
        picked = self.pick(lambda s: len(s) >= 1)
        if picked is None:
            return None
        value, shape = picked
        axis = self.draw(st.integers(0, len(shape) - 1))
        same = [t for t in self.tensors
                if len(t[1]) == len(shape)
                and all(a == b for i, (a, b) in enumerate(zip(t[1], shape)) if i != axis)]
        other, oshape = same[self.draw(st.integers(0, len(same) - 1))]
        self.use("concatenate")
        out = tuple(d + oshape[axis] if i == axis else d for i, d in enumerate(shape))
        return relay.concatenate([value, other], axis=axis), out


def _broadcastable(a, b):
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def _broadcast_shape(a, b):
    ndim = max(len(a), len(b))
    a = (1,) * (ndim - len(a)) + tuple(a)
    b = (1,) * (ndim - len(b)) + tuple(b)
    return tuple(max(x, y) if min(x, y) == 1 else x for x, y in zip(a, b))


_SHAPES = st.one_of(
    st.tuples(st.integers(1, 2), st.integers(1, 4), st.integers(2, 6), st.integers(2, 6)),
    st.tuples(st.integers(1, 4), st.integers(1, 8)),
    st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple))


@st.composite
def relay_graphs(draw, max_steps=6):
    """A random ``RelayGraph`` (see the module docstring)."""
    gen = _GraphGen(draw)
    for _ in range(draw(st.integers(1, 3))):
        gen.param(draw(_SHAPES))
    for _ in range(draw(st.integers(1, max_steps))):
        gen.step()
    out = gen.tensors[-1][0]
    if len(gen.tensors) > 2 and draw(st.integers(0, 3)) == 0:
        out = _expr.Tuple([out, gen.tensors[-2][0]])
    mod = IRModule.from_expr(Function(gen.params, out))
    return RelayGraph(mod, gen.family, frozenset(gen.ops))


def graph_inputs(graph, seed, special=True) -> dict:
    """Inputs of ``@main`` by name: N(0, 1) float32, and when ``special`` about one element
    in eight NaN, +inf or -inf."""
    rng = np.random.default_rng(seed)
    out = {}
    for p in graph.mod["main"].params:
        shape = tuple(int(d) for d in p.type_annotation.shape)
        value = rng.standard_normal(shape).astype("float32")
        if special:
            mask = rng.random(shape) < 0.125
            value[mask] = rng.choice(np.array([np.nan, np.inf, -np.inf], "float32"),
                                     int(mask.sum()))
        out[p.name_hint] = value
    return out
