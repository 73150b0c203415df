"""``NumpyCodeGen``: a complete user code generator, TIR to Python/numpy source that
``tvm.build`` turns into callable functions -- the example of ``CodeGenBase``::

    lib = tvm.build(func, target="llvm", codegen=NumpyCodeGen())
    print(lib.get_source())              # def main(A, B): ...
    lib(a_nd, b_nd)                      # runs the generated Python on the NDArrays' memory

Lowered TIR is flat: loops over 1-D buffers, so a buffer is a flat numpy view of its argument
and an access is ``A_flat[i * 8 + k]``. Vector expressions (``Ramp``, ``Broadcast``) become
index arrays and ``np.full``; integer ``/`` and ``%`` keep C's truncation (what ``LowerIntrin``
leaves). An intrinsic call is its record's numpy reference (``irlab.tir.intrinsics``):
``np.exp(x)`` when that is a numpy ufunc, else ``_intrin["sigmoid"](x)``, the record's own
function. It is slow -- one Python statement per scalar -- and meant to be read.
"""

from __future__ import annotations

import linecache
import math

import numpy as np

from irlab.codegen.build_module import CodeGenBase
from irlab.errors import ArgumentError, CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.runtime.source_module import SourceModule
from irlab.tir import expr as E
from irlab.tir.intrinsics import INTRINSICS

PRELUDE = '''import math
import numpy as np


def _tdiv(a, b):  # C's integer division: rounds toward zero
    return a // b + (((a % b) != 0) & ((a < 0) != (b < 0)))


def _tmod(a, b):
    return a - b * _tdiv(a, b)


def _cast(x, dtype):
    return x.astype(dtype) if isinstance(x, np.ndarray) else np.dtype(dtype).type(x)


'''

_INFIX = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.FloorDiv: "//", E.FloorMod: "%", E.EQ: "==",
          E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}


def _elem(dtype) -> str:
    return str(parse_dtype(str(dtype)).element_of())


def _lanes(dtype) -> int:
    return parse_dtype(str(dtype)).lanes


class NumpyCodeGen(CodeGenBase):
    """Emits one Python function per PrimFunc; ``create_module`` runs the source and wraps
    each function so it takes ``NDArray``s (checked against the buffers' shapes and dtypes)."""

    source_format = "py"
    reserved_names = frozenset({"np", "math", "_tdiv", "_tmod", "_cast", "_intrin"})

    def __init__(self):
        super().__init__()
        self.signatures: dict = {}  # symbol -> [(param, shape or None, dtype)]

    # -- functions --------------------------------------------------------------------------
    def visit_prim_func(self, func):
        symbol = self.symbol_of(func)
        names, prologue, signature = [], [], []
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is None:  # a scalar argument
                names.append(self.name_of(param))
                signature.append((names[-1], None, str(param.dtype)))
                continue
            names.append(self.name_of(param, buffer.name))
            prologue.append(f"{self.name_of(buffer.data, buffer.name + '_flat')} = "
                            f"{names[-1]}.reshape(-1)")
            prologue += [f"{self.name_of(d)} = {names[-1]}.shape[{axis}]"  # symbolic sizes
                         for axis, d in enumerate(buffer.shape)
                         if isinstance(d, E.Var) and d not in self._names]
            shape = tuple(int(d.value) if isinstance(d, E.IntImm) else None
                          for d in buffer.shape)
            signature.append((names[-1], shape, str(buffer.dtype)))
        self.signatures[symbol] = signature
        with self.indented(f"def {symbol}({', '.join(names)}):", empty="pass"):
            for line in prologue:
                self.emit(line)
            self.visit_stmt(func.body)
        self.emit()

    # -- statements -------------------------------------------------------------------------
    def visit_buffer_store(self, s):
        self.emit(f"{self._access(s.buffer, s.indices)} = {self.visit_expr(s.value)}")

    def visit_for(self, s):
        start, extent = self.visit_expr(s.min), self.visit_expr(s.extent)
        bounds = extent if start == "0" else f"{start}, {start} + {extent}"
        with self.indented(f"for {self.name_of(s.loop_var)} in range({bounds}):",
                           empty="pass"):
            self.visit_stmt(s.body)  # parallel/vectorized/unrolled loops run in order

    def visit_while(self, s):
        with self.indented(f"while {self.visit_expr(s.condition)}:", empty="pass"):
            self.visit_stmt(s.body)

    def visit_if_then_else(self, s):
        with self.indented(f"if {self.visit_expr(s.condition)}:", empty="pass"):
            self.visit_stmt(s.then_case)
        if s.else_case is not None:
            with self.indented("else:", empty="pass"):
                self.visit_stmt(s.else_case)

    def visit_let_stmt(self, s):
        self.emit(f"{self.name_of(s.var)} = {self.visit_expr(s.value)}")
        self.visit_stmt(s.body)

    def visit_allocate(self, s):
        size = " * ".join(self.visit_expr(e) for e in s.extents) or "1"
        self.emit(f"{self.name_of(s.buffer_var)} = np.zeros({size}, dtype='{_elem(s.dtype)}')")
        self.visit_stmt(s.body)

    def visit_assert_stmt(self, s):
        message = s.message.value if isinstance(s.message, E.StringImm) else str(s.message)
        with self.indented(f"if not ({self.visit_expr(s.condition)}):"):
            self.emit(f"raise RuntimeError({message!r})")
        self.visit_stmt(s.body)

    def visit_evaluate(self, s):
        if not isinstance(s.value, (E.IntImm, E.FloatImm)):
            self.emit(self.visit_expr(s.value))

    def visit_block_realize(self, s):
        raise CodegenError(f"{type(self).__name__} needs lowered TIR; found a block")

    # -- expressions ----------------------------------------------------------------------
    def _access(self, buffer, indices) -> str:
        if len(indices) != 1:
            raise CodegenError(f"{type(self).__name__}: buffer {buffer.name} is accessed with "
                               f"{len(indices)} indices; lowered TIR has one")
        index = self.visit_expr(indices[0])
        offset = buffer.elem_offset
        if not (isinstance(offset, E.IntImm) and offset.value == 0):
            index = f"{self.visit_expr(offset)} + {index}"
        return f"{self.name_of(buffer.data)}[{index}]"

    def visit_buffer_load(self, e):
        return self._access(e.buffer, e.indices)

    def visit_var(self, e):
        return self.name_of(e)

    visit_size_var = visit_var

    def visit_int_imm(self, e):
        if _elem(e.dtype) == "bool":
            return "True" if e.value else "False"
        return str(int(e.value))

    def visit_float_imm(self, e):
        value = float(e.value)
        text = repr(value) if math.isfinite(value) else f"'{value}'"
        return f"np.{_elem(e.dtype)}({text})"

    def visit_string_imm(self, e):
        return repr(e.value)

    def visit_cast(self, e):
        return f"_cast({self.visit_expr(e.value)}, '{_elem(e.dtype)}')"

    def _infix(self, e):
        return f"({self.visit_expr(e.a)} {_INFIX[type(e)]} {self.visit_expr(e.b)})"

    visit_add = visit_sub = visit_mul = visit_floor_div = visit_floor_mod = _infix
    visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _infix

    def visit_div(self, e):
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return f"({a} / {b})" if parse_dtype(str(e.dtype)).is_float else f"_tdiv({a}, {b})"

    def visit_mod(self, e):
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return f"np.fmod({a}, {b})" if parse_dtype(str(e.dtype)).is_float else f"_tmod({a}, {b})"

    def visit_min(self, e):
        return f"np.minimum({self.visit_expr(e.a)}, {self.visit_expr(e.b)})"

    def visit_max(self, e):
        return f"np.maximum({self.visit_expr(e.a)}, {self.visit_expr(e.b)})"

    def visit_and(self, e):
        return f"np.logical_and({self.visit_expr(e.a)}, {self.visit_expr(e.b)})"

    def visit_or(self, e):
        return f"np.logical_or({self.visit_expr(e.a)}, {self.visit_expr(e.b)})"

    def visit_not(self, e):
        return f"np.logical_not({self.visit_expr(e.a)})"

    def _choose(self, dtype, cond, then, other) -> str:
        c, t, f = self.visit_expr(cond), self.visit_expr(then), self.visit_expr(other)
        if _lanes(dtype) == 1 and _lanes(cond.dtype) == 1:
            return f"({t} if {c} else {f})"  # lazy, as TIR's if_then_else guards loads
        return f"np.where({c}, {t}, {f})"

    def visit_select(self, e):
        return self._choose(e.dtype, e.condition, e.true_value, e.false_value)

    def visit_ramp(self, e):
        return (f"({self.visit_expr(e.base)} + {self.visit_expr(e.stride)} * "
                f"np.arange({_lanes(e.dtype)}))")

    def visit_broadcast(self, e):
        return f"np.full({_lanes(e.dtype)}, {self.visit_expr(e.value)}, dtype='{_elem(e.dtype)}')"

    def visit_let(self, e):
        value, body = self.visit_expr(e.value), self.visit_expr(e.body)
        return f"({self.name_of(e.var)} := {value}, {body})[1]"

    def visit_call(self, e):
        name = e.op.removeprefix("tir.")
        args = e.args
        if name == "if_then_else":
            return self._choose(e.dtype, *args)
        if name in ("likely", "assume"):
            return self.visit_expr(args[0])
        record = INTRINSICS.get(e.op)
        if record is None or record.numpy is None:
            raise CodegenError(f"{type(self).__name__} has no numpy form for the intrinsic "
                               f"{e.op}")
        texts = ", ".join(self.visit_expr(a) for a in args)
        function = _numpy_text(record)
        text = f"{function}({texts})"
        if record.dtype_rule is not None or function.startswith("_intrin"):
            return f"_cast({text}, '{_elem(e.dtype)}')"  # the call's dtype, as the interpreter
        return text

    # -- the module -------------------------------------------------------------------------
    def create_module(self, results, target):
        """Run the generated source; each function becomes a callable of the module."""
        texts = [text for _, text in results if isinstance(text, str)]
        source = PRELUDE + "\n".join(texts)
        filename = f"<{type(self).__name__} {id(self):x}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace: dict = {"_intrin": {r.short_name: r.numpy for r in INTRINSICS.values()
                                       if r.numpy is not None}}
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 -- our own output
        functions = {symbol: _checked_call(namespace[symbol], symbol, self.signatures[symbol])
                     for symbol, _ in results}
        return SourceModule(source, self.source_format, functions, target,
                            type(self).__name__)


def _numpy_text(record) -> str:
    """How the generated source names the record's numpy reference."""
    if isinstance(record.numpy, np.ufunc) and getattr(np, record.numpy.__name__, None) is \
            record.numpy:
        return f"np.{record.numpy.__name__}"
    return f"_intrin[{record.short_name!r}]"


def _checked_call(py_func, symbol, signature):
    """``py_func`` taking NDArrays: arity, shapes and dtypes checked, memory shared."""
    def call(*args):
        if len(args) != len(signature):
            raise ArgumentError(f"{symbol} takes {len(signature)} arguments "
                                f"({', '.join(n for n, _, _ in signature)}), got {len(args)}")
        values = []
        for arg, (name, shape, dtype) in zip(args, signature):
            if shape is None:
                values.append(arg)
                continue
            array = np.asarray(arg)  # an NDArray's own memory, not a copy
            if (len(array.shape) != len(shape) or str(array.dtype) != dtype
                    or any(s is not None and s != a for s, a in zip(shape, array.shape))):
                raise ArgumentError(f"{symbol}: argument {name} must be {dtype} of shape "
                                    f"{shape}, got {array.dtype} of shape {array.shape}")
            if not array.flags.c_contiguous:
                raise ArgumentError(f"{symbol}: argument {name} must be contiguous")
            values.append(array)
        py_func(*values)

    call.__name__ = symbol
    return call


__all__ = ["NumpyCodeGen"]
