"""Hypothesis strategy for random, well-typed, flat TIR PrimFuncs with defined behaviour.

``tir_programs()`` draws a ``TIRProgram``: a PrimFunc of one to three loop nests, each writing
its own output buffer from up to three input buffers of mixed dtypes (int8/16/32/64, uint8,
float32/64). A nest is elementwise (``for i, j: out[i, j] = e``), guarded (an ``IfThenElse``
statement around two stores), a reduction (``red[i] = init; for k: red[i] = red[i] op e``) or
an explicit vector store (``out[i, Ramp(jo * L, 1, L)] = e`` with Ramp/Broadcast operands).
Loops carry annotations: ``parallel`` on the outer loop, ``vectorize``/``unroll`` on inner
loops. Expressions mix ``+ - *``, min/max, floordiv/floormod/truncdiv/truncmod, shifts and
bitwise ops, casts, ``Select``, ``if_then_else`` (also guarding an access one element back),
comparisons combined with and/or/not, and float intrinsics (exp, log, sqrt, tanh, sigmoid,
floor, ceil, round, trunc, nearbyint, fabs).

The programs have defined behaviour by construction, so that every target must agree:
- integer overflow, irlab's guarantee (TVM's): int8/int16/uint8 arithmetic wraps (LLVM
  ``add`` without ``nsw``; C computes in ``int`` and truncates back), casts between integers
  wrap; int32/int64 ``+ - *`` must not overflow (LLVM ``nsw``, C signed overflow, and the
  simplifier reasons with mathematical integers there). So int32/int64 values carry a
  magnitude bound (inputs within ``2**INT_INPUT_BITS``) and an operation that could exceed
  the range is replaced by one that cannot; narrow integers wrap freely;
- shift amounts are masked below the bit width (int32/int64: below 4, within the bound);
  integer divisors are ``(y & 7) + 2`` times a sign, or nonzero constants other than -1 (no
  division by zero, no ``INT_MIN / -1``);
- floats stay finite: inputs are quarter-integers in [-8, 8], ``exp`` takes a clamped
  argument, ``log``/``sqrt`` take ``|x| + 1`` and ``|x|``, division is by ``|y| + 1``, and a
  product is only made while the magnitude bound stays far from overflow;
- a float is cast to an integer only after clamping it into the integer's range.

Each float value carries a *determinism* state. ``exact``: every target computes the same
bits because the value is exactly representable (tracked as integer and fraction bits against
the mantissa). ``det``: rounded, but every step is correctly rounded IEEE arithmetic (``+ - /
sqrt``, casts), the same everywhere. ``nondet``: libm/numpy transcendental functions differ in
the last ulp, and ``a * b + c`` with an inexact product may be contracted to an FMA by LLVM
(``contract``) or by gcc (``-ffp-contract=fast``). Discrete operations (comparisons, floor,
round, casts to integers, floordiv) are only applied to exact or det values, so a last-ulp
difference never becomes a different integer; outputs that may hold nondet values are compared
with a tolerance (see ``irlab.testing.differential``), all others exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir import stmt as S
from irlab.tir.buffer import decl_buffer
from irlab.tir.function import PrimFunc

INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
FLOAT_DTYPES = ("float32", "float64")
DTYPES = INT_DTYPES + FLOAT_DTYPES
MANTISSA = {"float32": 24, "float64": 53}
MAX_MAGNITUDE = 1e15  # products are refused beyond this bound: float32 stays far from inf
INPUT_BOUND = 8.0     # float inputs are quarter-integers in [-8, 8]
INT_INPUT_BITS = {"int32": 20, "int64": 40}  # |input| < 2**bits: no-overflow dtypes
NEST_KINDS = ("elementwise", "elementwise", "guarded", "reduction", "vector")
FLOAT_UNARY = ("neg", "abs", "floor", "ceil", "round", "trunc", "nearbyint", "exp", "log",
               "sqrt", "tanh", "sigmoid")
FLOAT_BINARY = ("add", "sub", "mul", "div", "min", "max")
INT_BINARY = ("add", "sub", "mul", "floordiv", "floormod", "truncdiv", "truncmod", "min",
              "max", "shl", "shr", "and", "or", "xor")


@dataclass
class Value:
    """A generated expression with what is known of it.

    ``state``: "exact" (``int_bits`` + ``frac_bits`` fit the mantissa), "det", "nondet"
    or "nondet32" (a float32 nondet value took part: float32 tolerance even in float64)
    (floats; integers are always exact). ``bound``: an upper bound of ``|value|`` (floats).
    """

    expr: object
    state: str = "exact"
    int_bits: int = 0
    frac_bits: int = 0
    bound: float = 0.0

    @property
    def discrete_ok(self) -> bool:
        """May a comparison, rounding or int cast see this value (same on every target)?"""
        return not self.state.startswith("nondet")


@dataclass
class TIRProgram:
    """A random PrimFunc plus what running it needs: which params are inputs, and for each
    output the determinism state of its values (nondet ones are compared with a tolerance)."""

    func: PrimFunc
    inputs: list = field(default_factory=list)      # Buffers read by the program
    outputs: list = field(default_factory=list)     # Buffers written by the program
    states: dict = field(default_factory=dict)    # output name -> its Value state
    families: tuple = ()                            # tags: "vector", "reduction", ...

    @property
    def params(self):
        return [self.func.buffer_map[p] for p in self.func.params]


def _join(*states):
    for loosest in ("nondet32", "nondet"):
        if loosest in states:
            return loosest
    return "det" if "det" in states else "exact"


def _int_limit(dtype):
    """The magnitude an int32/int64 value must stay within (None: the dtype wraps)."""
    t = parse_dtype(dtype)
    return float(2 ** (t.bits - 1) - 1) if t.code == "int" and t.bits >= 32 else None


def _int_full(dtype):
    return float(2 ** parse_dtype(dtype).bits)


def _nondet(dtype):
    return "nondet32" if dtype == "float32" else "nondet"


def _fits(dtype, int_bits, frac_bits):
    return int_bits + frac_bits <= MANTISSA[dtype]


def vector_dtype(dtype, lanes):
    return dtype if lanes == 1 else f"{dtype}x{lanes}"


def _const(value, dtype, lanes):
    c = O.const(value, dtype)
    return c if lanes == 1 else E.Broadcast(c, lanes)


class _ExprGen:
    """Draws expressions over the loop variables and the input buffers of one nest.

    ``_axis_index(extent)`` makes in-bounds indices; ``lanes > 1`` makes vector expressions whose
    lane ``l`` is the scalar program at ``j = jo * lanes + l`` (loads use Ramps on ``j``).
    """

    def __init__(self, draw, inputs, axes, lanes=1, vector_axis=None):
        self.draw = draw
        self.inputs = inputs      # [Buffer]
        self.axes = axes          # {axis name: (index expr, extent)}
        self.lanes = lanes
        self.vector_axis = vector_axis   # axis name whose index is a Ramp in vector mode

    # -- leaves --------------------------------------------------------------------------
    def _axis_index(self, extent):
        """An in-bounds index expression for a buffer dimension of ``extent``."""
        draw = self.draw
        same = [n for n, (_, e) in self.axes.items() if e == extent]
        if self.lanes > 1:
            if self.vector_axis in same and draw(st.integers(0, 3)):
                return self.axes[self.vector_axis][0]
            scalar = [n for n in same if n != self.vector_axis]
            if scalar and draw(st.booleans()):
                return self.axes[draw(st.sampled_from(scalar))][0]
            return O.const(draw(st.integers(0, extent - 1)), "int32")
        kind = draw(st.sampled_from(("same", "same", "reverse", "mod", "const")))
        if kind in ("same", "reverse") and same:
            var = self.axes[draw(st.sampled_from(same))][0]
            return var if kind == "same" else O.const(extent - 1, "int32") - var
        if kind == "mod" and self.axes:
            var, _ = self.axes[draw(st.sampled_from(sorted(self.axes)))]
            scale = draw(st.integers(1, 3))
            return O.floormod(var * scale + draw(st.integers(0, 5)), extent)
        return O.const(draw(st.integers(0, extent - 1)), "int32")

    def _load(self, buffer):
        indices = [self._axis_index(int(d.value)) for d in buffer.shape]
        ramps = [k for k, x in enumerate(indices) if parse_dtype(x.dtype).lanes > 1]
        for k in ramps[1:]:  # one vector index per access: the others become constants
            indices[k] = O.const(self.draw(st.integers(0, int(buffer.shape[k].value) - 1)),
                                 "int32")
        load = E.BufferLoad(buffer, indices)
        if self.lanes > 1 and parse_dtype(load.dtype).lanes == 1:
            load = E.Broadcast(load, self.lanes)
        return load

    def _input_value(self, buffer):
        dtype = buffer.dtype
        expr = self._load(buffer)
        if dtype in FLOAT_DTYPES:
            return Value(expr, "exact", 4, 2, INPUT_BOUND)
        bits = parse_dtype(dtype).bits
        bound = float(2 ** INT_INPUT_BITS[dtype]) if dtype in INT_INPUT_BITS else _int_full(dtype)
        return Value(expr, "exact", bits, 0, bound)

    def leaf(self, dtype):
        draw = self.draw
        same = [b for b in self.inputs if b.dtype == dtype]
        kind = draw(st.sampled_from(("load", "load", "load", "other", "const", "index")))
        if kind == "load" and same:
            return self._input_value(draw(st.sampled_from(same)))
        if kind == "other" and self.inputs:
            return self.cast(self._input_value(draw(st.sampled_from(self.inputs))), dtype)
        if kind == "index" and self.axes:
            var, extent = self.axes[draw(st.sampled_from(sorted(self.axes)))]
            if self.lanes > 1 and parse_dtype(var.dtype).lanes == 1:
                var = E.Broadcast(var, self.lanes)
            return self.cast(Value(var, "exact", 8, 0, float(extent)), dtype)
        return self.constant(dtype)

    def constant(self, dtype):
        draw = self.draw
        if dtype in FLOAT_DTYPES:
            value = draw(st.integers(-16, 16)) / 4
            return Value(_const(value, dtype, self.lanes), "exact", 3, 2, abs(value))
        t = parse_dtype(dtype)
        lo, hi = (0, 2 ** t.bits - 1) if t.code == "uint" else (
            -2 ** (t.bits - 1), 2 ** (t.bits - 1) - 1)
        if _int_limit(dtype) is not None:
            lo, hi = -2 ** 12, 2 ** 12
        value = draw(st.one_of(st.integers(-3, 5).filter(lambda v: lo <= v <= hi),
                               st.sampled_from((lo, hi)), st.integers(lo, hi)))
        return Value(_const(value, dtype, self.lanes), "exact", t.bits, 0, float(abs(value)))

    # -- casts -----------------------------------------------------------------------------
    def cast(self, value, dtype):
        """``value`` as ``dtype``; a float going to an integer is clamped into range first."""
        src = parse_dtype(value.expr.dtype).element_of()
        to = vector_dtype(dtype, self.lanes)
        if str(src) == dtype:
            return value
        if dtype in FLOAT_DTYPES:
            if not src.is_float:
                exact = _fits(dtype, src.bits, 0)
                return Value(O.cast(value.expr, to), "exact" if exact else "det", src.bits, 0,
                             float(2 ** src.bits))
            exact = value.state == "exact" and _fits(dtype, value.int_bits, value.frac_bits)
            state = "exact" if exact else (value.state if not value.discrete_ok else "det")
            return Value(O.cast(value.expr, to), state, value.int_bits, value.frac_bits,
                         value.bound)
        t = parse_dtype(dtype)
        if src.is_float:
            if not value.discrete_ok:
                return self.constant(dtype)
            if t.code == "uint":
                lo, hi = 0.0, float(2 ** (t.bits - 1))
            else:
                lo, hi = -float(2 ** (t.bits - 2)), float(2 ** (t.bits - 2))
            fdt = str(src)
            clamped = O.min(O.max(value.expr, _const(lo, fdt, self.lanes)),
                            _const(hi, fdt, self.lanes))
            return Value(O.cast(clamped, to), "exact", t.bits, 0, hi)
        limit = _int_limit(dtype)
        if limit is None:
            bound = min(value.bound, _int_full(dtype))
        else:
            bound = value.bound if value.bound <= limit else limit + 1
        return Value(O.cast(value.expr, to), "exact", t.bits, 0, bound)

    # -- expressions -----------------------------------------------------------------------
    def expr(self, dtype, depth):
        if depth <= 0 or self.draw(st.integers(0, 4)) == 0:
            return self.leaf(dtype)
        if dtype in FLOAT_DTYPES:
            return self.float_expr(dtype, depth)
        return self.int_expr(dtype, depth)

    def condition(self, depth):
        """A bool (vector) expression whose value is the same on every target."""
        draw = self.draw
        kind = draw(st.sampled_from(("cmp", "cmp", "axis", "and", "or", "not")))
        if kind in ("and", "or") and depth > 0:
            a, b = self.condition(depth - 1), self.condition(depth - 1)
            return O.logical_and(a, b) if kind == "and" else O.logical_or(a, b)
        if kind == "not" and depth > 0:
            return O.logical_not(self.condition(depth - 1))
        if kind == "axis" and self.axes:
            var, extent = self.axes[draw(st.sampled_from(sorted(self.axes)))]
            if self.lanes > 1 and parse_dtype(var.dtype).lanes == 1:
                var = E.Broadcast(var, self.lanes)
            return var < _const(draw(st.integers(0, extent)), "int32", self.lanes)
        dtype = draw(st.sampled_from(DTYPES))
        a, b = self.expr(dtype, depth - 1), self.expr(dtype, depth - 1)
        if not (a.discrete_ok and b.discrete_ok):
            b = a if a.discrete_ok else self.leaf(dtype)
            a = self.leaf(dtype)
        cmp = draw(st.sampled_from(("<", "<=", ">", ">=", "==", "!=")))
        return {"<": E.LT, "<=": E.LE, ">": E.GT, ">=": E.GE, "==": E.EQ,
                "!=": E.NE}[cmp](a.expr, b.expr)

    def _choice(self, dtype, depth):
        """Select / if_then_else between two values, or a guarded load one element back."""
        draw = self.draw
        kind = draw(st.sampled_from(("select", "if_then_else", "guarded_load")))
        if kind == "guarded_load":
            guarded = self._guarded_load(dtype)
            if guarded is not None:
                return guarded
        cond = self.condition(1)
        a, b = self.expr(dtype, depth - 1), self.expr(dtype, depth - 1)
        # if_then_else takes a scalar condition (TVM); lane-wise choices are Selects
        make = E.Select if kind == "select" or self.lanes > 1 else O.if_then_else
        return Value(make(cond, a.expr, b.expr), _join(a.state, b.state),
                     max(a.int_bits, b.int_bits), max(a.frac_bits, b.frac_bits),
                     max(a.bound, b.bound))

    def _guarded_load(self, dtype):
        """``if_then_else(j >= 1, A[.., j - 1], 0)``: the access is only valid when guarded."""
        draw = self.draw
        if self.lanes > 1 or not self.axes:
            return None
        candidates = [(b, d, n) for b in self.inputs for d, ext in enumerate(b.shape)
                      for n, (_, e) in self.axes.items() if e == int(ext.value) and e > 1]
        if not candidates:
            return None
        buffer, dim, name = draw(st.sampled_from(candidates))
        var = self.axes[name][0]
        indices = [self._axis_index(int(d.value)) for d in buffer.shape]
        indices[dim] = var - 1
        load = self.cast(self._load_as_value(buffer, indices), dtype)
        zero = self.constant(dtype)
        expr = O.if_then_else(var >= 1, load.expr, zero.expr)
        return Value(expr, load.state, max(load.int_bits, zero.int_bits),
                     max(load.frac_bits, zero.frac_bits), max(load.bound, zero.bound))

    def _load_as_value(self, buffer, indices):
        value = self._input_value(buffer)
        value.expr = E.BufferLoad(buffer, indices)
        return value

    def int_expr(self, dtype, depth):
        draw = self.draw
        kind = draw(st.sampled_from(INT_BINARY + ("not", "neg", "abs", "choice", "cast",
                                                  "cast", "float")))
        if kind == "choice":
            return self._choice(dtype, depth)
        if kind == "cast":
            return self.cast(self.expr(draw(st.sampled_from(INT_DTYPES)), depth - 1), dtype)
        if kind == "float":
            return self.cast(self.expr(draw(st.sampled_from(FLOAT_DTYPES)), depth - 1), dtype)
        a = self.expr(dtype, depth - 1)
        limit = _int_limit(dtype)
        if kind in ("not", "neg", "abs"):
            if limit is not None and a.bound + 1 > limit:
                return a
            expr = {"not": O.bitwise_not, "abs": O.abs,
                    "neg": lambda x: _const(0, dtype, self.lanes) - x}[kind](a.expr)
            return Value(expr, "exact", bound=min(a.bound + 1, limit or _int_full(dtype)))
        b = self.expr(dtype, depth - 1)
        kind, bound = self._int_bound(kind, a.bound, b.bound, dtype)
        return Value(self._int_binary(kind, a.expr, b.expr, dtype), "exact", bound=bound)

    @staticmethod
    def _int_bound(kind, x, y, dtype):
        """The operation to make (``kind`` or one that cannot overflow) and its bound."""
        limit = _int_limit(dtype)
        full = _int_full(dtype)
        bounds = {"add": x + y, "sub": x + y, "mul": x * y, "shl": x * 8,
                  "floordiv": x, "truncdiv": x, "floormod": min(x, 17.0),
                  "truncmod": min(x, 17.0), "min": max(x, y), "max": max(x, y),
                  "shr": x, "and": 2.0 * max(x, y), "or": 2.0 * max(x, y), "xor": 2.0 * max(x, y)}
        if limit is None:
            return kind, min(bounds[kind], full)
        for candidate in (kind, "add"):
            if bounds[candidate] <= limit:
                return candidate, bounds[candidate]
        return "max", max(x, y)  # never overflows

    def _divisor(self, b, dtype):
        """A divisor that is never 0 nor -1: ``(b & 7) + 2``, maybe negated, or a constant."""
        draw = self.draw
        if draw(st.booleans()):
            value = draw(st.sampled_from((1, 2, 3, 4, 5, 7, 8, 16, -2, -3, -4, -8)))
            if parse_dtype(dtype).code == "uint":
                value = abs(value)
            return _const(value, dtype, self.lanes)
        d = O.bitwise_and(b, _const(7, dtype, self.lanes)) + _const(2, dtype, self.lanes)
        if parse_dtype(dtype).code == "int" and draw(st.booleans()):
            d = _const(0, dtype, self.lanes) - d
        return d

    def _int_binary(self, kind, a, b, dtype):
        bits = parse_dtype(dtype).bits
        if kind in ("add", "sub", "mul"):
            return {"add": a + b, "sub": a - b, "mul": a * b}[kind]
        if kind in ("floordiv", "floormod", "truncdiv", "truncmod"):
            return getattr(O, kind)(a, self._divisor(b, dtype))
        if kind in ("min", "max"):
            return getattr(O, kind)(a, b)
        if kind in ("shl", "shr"):
            mask = 3 if _int_limit(dtype) is not None else bits - 1
            amount = O.bitwise_and(b, _const(mask, dtype, self.lanes))
            return (O.left_shift if kind == "shl" else O.right_shift)(a, amount)
        return {"and": O.bitwise_and, "or": O.bitwise_or, "xor": O.bitwise_xor}[kind](a, b)

    def float_expr(self, dtype, depth):
        draw = self.draw
        kind = draw(st.sampled_from(FLOAT_BINARY + FLOAT_UNARY + ("choice", "cast", "cast")))
        if kind == "choice":
            return self._choice(dtype, depth)
        if kind == "cast":
            return self.cast(self.expr(draw(st.sampled_from(DTYPES)), depth - 1), dtype)
        a = self.expr(dtype, depth - 1)
        if kind in FLOAT_UNARY:
            return self._float_unary(kind, a, dtype)
        b = self.expr(dtype, depth - 1)
        return self._float_binary(kind, a, b, dtype)

    def _float_unary(self, kind, a, dtype):
        x = a.expr
        if kind == "neg":
            return Value(_const(0.0, dtype, self.lanes) - x, a.state, a.int_bits, a.frac_bits,
                         a.bound)
        if kind == "abs":
            return Value(O.fabs(x), a.state, a.int_bits, a.frac_bits, a.bound)
        if kind in ("floor", "ceil", "round", "trunc", "nearbyint"):
            if not a.discrete_ok:
                return a
            return Value(getattr(O, kind)(x), a.state, a.int_bits + 1, 0, a.bound + 1)
        if kind == "exp":
            clamped = O.min(O.max(x, _const(-10.0, dtype, self.lanes)),
                            _const(10.0, dtype, self.lanes))
            return Value(O.exp(clamped), _nondet(dtype), bound=float(np.exp(10.0)))
        if kind == "log":
            return Value(O.log(O.fabs(x) + _const(1.0, dtype, self.lanes)), _nondet(dtype),
                         bound=float(np.log(a.bound + 1)) + 1)
        if kind == "sqrt":
            return Value(O.sqrt(O.fabs(x)), _join(a.state, "det"), bound=a.bound ** 0.5 + 1)
        if kind == "tanh":
            return Value(O.tanh(x), _nondet(dtype), bound=1.0)
        return Value(O.sigmoid(x), _nondet(dtype), bound=1.0)

    def _float_binary(self, kind, a, b, dtype):
        x, y = a.expr, b.expr
        ib, fb = max(a.int_bits, b.int_bits), max(a.frac_bits, b.frac_bits)
        if kind in ("add", "sub"):
            state = _join(a.state, b.state)
            if state == "exact" and not _fits(dtype, ib + 1, fb):
                state = "det"
            return Value(x + y if kind == "add" else x - y, state, ib + 1, fb,
                         a.bound + b.bound)
        if kind == "mul":
            if a.bound * b.bound > MAX_MAGNITUDE:
                return Value(x + y, _join(a.state, b.state, "det"), ib + 1, fb,
                             a.bound + b.bound)
            ib, fb = a.int_bits + b.int_bits, a.frac_bits + b.frac_bits
            exact = a.state == b.state == "exact" and _fits(dtype, ib, fb)
            state = "exact" if exact else _join(a.state, b.state, _nondet(dtype))
            return Value(x * y, state, ib, fb, a.bound * b.bound)
        if kind == "div":
            denominator = O.fabs(y) + _const(1.0, dtype, self.lanes)
            return Value(x / denominator, _join(a.state, b.state, "det"), bound=a.bound)
        make = O.min if kind == "min" else O.max
        return Value(make(x, y), _join(a.state, b.state), ib, fb, max(a.bound, b.bound))


# -- statements -------------------------------------------------------------------------------
def _loop(var, extent, kind, body):
    return S.For(var, O.const(0, "int32"), O.const(extent, "int32"), kind, body)


def _outer_kind(draw):
    return draw(st.sampled_from((S.ForKind.SERIAL, S.ForKind.SERIAL, S.ForKind.PARALLEL,
                                 S.ForKind.UNROLLED)))


def _inner_kind(draw):
    return draw(st.sampled_from((S.ForKind.SERIAL, S.ForKind.SERIAL, S.ForKind.VECTORIZED,
                                 S.ForKind.UNROLLED)))


class _ProgramGen:
    def __init__(self, draw, max_depth):
        self.draw = draw
        self.max_depth = max_depth
        self.m = draw(st.integers(1, 4))
        self.n = draw(st.sampled_from((1, 2, 3, 4, 5, 8, 16)))
        self.inputs = []
        for k in range(draw(st.integers(1, 3))):
            dtype = draw(st.sampled_from(DTYPES))
            shape = draw(st.sampled_from(((self.m, self.n), (self.n,), (self.m,),
                                          (self.n, self.m))))
            self.inputs.append(decl_buffer(shape, dtype, name="ABC"[k]))
        self.outputs, self.states, self.families = [], {}, set()

    def output(self, shape, dtype):
        name = f"out{len(self.outputs)}"
        buffer = decl_buffer(shape, dtype, name=name)
        self.outputs.append(buffer)
        return buffer

    def nest(self):
        kind = self.draw(st.sampled_from(NEST_KINDS))
        if kind == "vector" and self.n % 4 and self.n % 2:
            kind = "elementwise"
        self.families.add(kind)
        return getattr(self, "_" + kind)()

    def _axes(self):
        i, j = E.Var("i", "int32"), E.Var("j", "int32")
        return i, j, {"i": (i, self.m), "j": (j, self.n)}

    def _elementwise(self):
        draw = self.draw
        i, j, axes = self._axes()
        dtype = draw(st.sampled_from(DTYPES))
        out = self.output((self.m, self.n), dtype)
        value = _ExprGen(draw, self.inputs, axes).expr(dtype, self.max_depth)
        self.states[out.name] = value.state
        inner = _inner_kind(draw)
        if inner == S.ForKind.VECTORIZED:
            self.families.add("vectorize")
        body = S.BufferStore(out, value.expr, [i, j])
        return _loop(i, self.m, _outer_kind(draw), _loop(j, self.n, inner, body))

    def _guarded(self):
        draw = self.draw
        i, j, axes = self._axes()
        dtype = draw(st.sampled_from(DTYPES))
        out = self.output((self.m, self.n), dtype)
        gen = _ExprGen(draw, self.inputs, axes)
        cond = gen.condition(2)
        a, b = gen.expr(dtype, self.max_depth), gen.expr(dtype, self.max_depth)
        self.states[out.name] = _join(a.state, b.state)
        body = S.IfThenElse(cond, S.BufferStore(out, a.expr, [i, j]),
                            S.BufferStore(out, b.expr, [i, j]))
        return _loop(i, self.m, _outer_kind(draw), _loop(j, self.n, _inner_kind(draw), body))

    def _reduction(self):
        draw = self.draw
        i, k, axes = self._axes()
        dtype = draw(st.sampled_from(DTYPES))
        out = self.output((self.m,), dtype)
        value = _ExprGen(draw, self.inputs, axes).expr(dtype, self.max_depth)
        op = draw(st.sampled_from(("add", "max", "min")))
        limit = _int_limit(dtype)
        if op == "add" and limit is not None and (value.bound + 2 ** 12) * self.n > limit:
            op = "max"  # an int32/int64 sum must not overflow
        acc = E.BufferLoad(out, [i])
        if op == "add":
            update = acc + value.expr
        else:
            update = (O.max if op == "max" else O.min)(acc, value.expr)
        init = _ExprGen(draw, self.inputs, {"i": (i, self.m)}).constant(dtype)
        state = value.state
        if dtype in FLOAT_DTYPES and op == "add" and state == "exact":
            state = "det"
        self.states[out.name] = state
        body = S.stmt_seq(S.BufferStore(out, init.expr, [i]),
                          _loop(k, self.n, S.ForKind.SERIAL,
                                S.BufferStore(out, update, [i])))
        return _loop(i, self.m, _outer_kind(draw), body)

    def _vector(self):
        draw = self.draw
        lanes = draw(st.sampled_from([v for v in (2, 4, 8, 16) if self.n % v == 0]))
        i, jo = E.Var("i", "int32"), E.Var("jo", "int32")
        ramp = E.Ramp(jo * lanes, O.const(1, "int32"), lanes)
        axes = {"i": (i, self.m), "j": (ramp, self.n)}
        dtype = draw(st.sampled_from(DTYPES))
        out = self.output((self.m, self.n), dtype)
        value = _ExprGen(draw, self.inputs, axes, lanes, "j").expr(dtype, self.max_depth)
        self.states[out.name] = value.state
        body = S.BufferStore(out, value.expr, [i, ramp])
        inner = draw(st.sampled_from((S.ForKind.SERIAL, S.ForKind.UNROLLED)))
        return _loop(i, self.m, _outer_kind(draw), _loop(jo, self.n // lanes, inner, body))


@st.composite
def tir_programs(draw, max_nests=3, max_depth=3):
    """A random ``TIRProgram`` (see the module docstring)."""
    gen = _ProgramGen(draw, max_depth)
    nests = [gen.nest() for _ in range(draw(st.integers(1, max_nests)))]
    buffers = gen.inputs + gen.outputs
    params = [E.Var(b.name + "_handle", "handle") for b in buffers]
    func = PrimFunc(params, S.stmt_seq(*nests), buffer_map=dict(zip(params, buffers)))
    func = func.with_attr({"global_symbol": "fuzz", "tir.noalias": True})
    return TIRProgram(func, list(gen.inputs), list(gen.outputs), dict(gen.states),
                      tuple(sorted(gen.families)))


@dataclass
class _Range:
    min: int
    max: int


def random_arguments(program: TIRProgram, seed: int) -> list:
    """Numpy arguments in parameter order: inputs random (floats: quarter-integers in
    [-8, 8]; integers: half small values, half anywhere in the dtype's range), outputs
    filled with a marker value so unwritten elements show."""
    rng = np.random.default_rng(seed)
    inputs = {b.name for b in program.inputs}
    out = []
    for buffer in program.params:
        shape = tuple(int(d.value) for d in buffer.shape)
        dtype = np.dtype(buffer.dtype)
        if buffer.name not in inputs:
            out.append(np.full(shape, 7, dtype))
        elif dtype.kind == "f":
            out.append((rng.integers(-32, 33, shape) / 4).astype(dtype))
        else:
            info = np.iinfo(dtype)
            if buffer.dtype in INT_INPUT_BITS:
                info = _Range(-(2 ** INT_INPUT_BITS[buffer.dtype]) + 1,
                              2 ** INT_INPUT_BITS[buffer.dtype] - 1)
            wide = rng.integers(int(info.min), int(info.max), shape, endpoint=True,
                                dtype=np.int64 if dtype != np.uint64 else np.uint64)
            small = rng.integers(0 if info.min == 0 else -4, 9, shape)
            out.append(np.where(rng.random(shape) < 0.5, small, wide).astype(dtype))
    return out
