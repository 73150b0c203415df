"""The TIR reference interpreter: exact execution of a PrimFunc on numpy arrays.

The function is first compiled into Python closures (one per node, variables in numbered
slots), then run; that keeps a 64x64x64 matmul in block form under a couple of seconds.
Semantics, as TVM's C codegen would give them:
- integers are Python ints wrapped to the dtype's width after every operation (int32 wraps);
  compiled code agrees for int8/int16/unsigned, whose arithmetic wraps; int32/int64 overflow
  is undefined there (LLVM ``nsw`` and the simplifier's integer reasoning, as in TVM);
  ``Div``/``Mod`` truncate, ``FloorDiv``/``FloorMod`` floor; division by zero is an error;
- floats are numpy scalars of the dtype (float32 stays float32); Cast float -> int truncates;
- vectors (Ramp, Broadcast, vector loads/stores) are numpy arrays;
- every buffer access is bounds-checked per dimension (a TIRError naming buffer and index);
- a Block runs its ``init`` when every CommReduce iter var is at its domain's minimum;
  ``alloc_buffers`` and ``Allocate`` get fresh zeroed storage each time they are entered.
"""

from __future__ import annotations

import numpy as np

from irlab.errors import TIRError
from irlab.runtime.dtype import parse_dtype, to_numpy_dtype
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.functor import method_table
from irlab.tir.intrinsics import INTRINSICS


def run(func: PrimFunc, *args):
    """Run ``func`` on numpy arrays (buffer params, updated in place) and scalars."""
    return TIRInterpreter(func)(*args)


def _int_wrapper(dtype):
    t = parse_dtype(dtype)
    if t.code == "bool":
        return bool
    bits = t.bits
    mask = (1 << bits) - 1
    if t.code == "uint":
        return lambda v: v & mask
    half = 1 << (bits - 1)
    return lambda v: ((v + half) & mask) - half


def _truncdiv(a, b):
    if b == 0:
        raise TIRError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _truncmod(a, b):
    return a - _truncdiv(a, b) * b


def _floordiv(a, b):
    if b == 0:
        raise TIRError("integer division by zero")
    return a // b


def _floormod(a, b):
    if b == 0:
        raise TIRError("integer modulo by zero")
    return a % b


def _vec_int(op):
    def apply(a, b):
        a, b = np.asarray(a), np.asarray(b)
        if np.any(b == 0):
            raise TIRError("integer division by zero")
        return op(a, b).astype(a.dtype)

    return apply


def _v_truncdiv(a, b):
    a, b = np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64)  # abs(INT16_MIN)
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (b >= 0), q, -q)


_SCALAR_INT = {E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b,
               E.Mul: lambda a, b: a * b, E.Div: _truncdiv, E.Mod: _truncmod,
               E.FloorDiv: _floordiv, E.FloorMod: _floormod}
_VECTOR_INT = {E.Div: _vec_int(_v_truncdiv),
               E.Mod: _vec_int(lambda a, b: a - _v_truncdiv(a, b) * b),
               E.FloorDiv: _vec_int(np.floor_divide), E.FloorMod: _vec_int(np.mod)}
_FLOAT = {E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
          E.Div: lambda a, b: a / b, E.Mod: np.fmod,
          E.FloorDiv: lambda a, b: np.floor(a / b),
          E.FloorMod: lambda a, b: a - np.floor(a / b) * b}
# scalar min/max, by (node, is_float): a float NaN in either operand propagates, as in
# np.minimum / np.maximum (Python's min/max would return whichever operand came first)
_PICK = {(E.Min, False): min, (E.Max, False): max,
         (E.Min, True): lambda a, b: a if a <= b or a != a else b,
         (E.Max, True): lambda a, b: a if a >= b or a != a else b}
_COMPARE = {E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b, E.LT: lambda a, b: a < b,
            E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b}


class TIRInterpreter:
    """Compiles ``func`` once; calling it runs the function on the given arguments."""

    def __init__(self, func: PrimFunc):
        if not isinstance(func, PrimFunc):
            raise TIRError(f"the TIR interpreter runs PrimFuncs, got {type(func).__name__}")
        self.func = func
        self._slots: dict = {}
        self._body = self._stmt(func.body)

    # -- entry -------------------------------------------------------------------------
    def __call__(self, *args):
        func = self.func
        if len(args) != len(func.params):
            raise TIRError(f"the function takes {len(func.params)} arguments, got {len(args)}")
        env = [None] * len(self._slots)
        write_back = []
        for param, arg in zip(func.params, args):
            buffer = func.buffer_map.get(param)
            if buffer is None:
                self._bind(env, param, self._scalar(arg, param.dtype, param.name_hint))
                continue
            array = self._check_array(buffer, arg, env)
            flat = array.reshape(-1)
            if not np.shares_memory(flat, array):
                write_back.append((array, flat))
            self._bind(env, buffer.data, flat)
        with np.errstate(all="ignore"):
            self._body(env)
        for array, flat in write_back:
            array[...] = flat.reshape(array.shape)

    def _bind(self, env, var, value):
        slot = self._slots.get(var)
        if slot is not None:
            env[slot] = value

    def _scalar(self, value, dtype, name):
        try:
            return _to_value(value, dtype)
        except (TypeError, ValueError) as err:
            raise TIRError(f"argument {name}: cannot use {value!r} as {dtype}") from err

    def _check_array(self, buffer, arg, env):
        if hasattr(arg, "numpy") and not isinstance(arg, np.ndarray):
            arg = arg.numpy()
        if not isinstance(arg, np.ndarray):
            raise TIRError(f"buffer {buffer.name}: expected a numpy array, "
                           f"got {type(arg).__name__}")
        want = to_numpy_dtype(buffer.dtype)
        if arg.dtype != want:
            raise TIRError(f"buffer {buffer.name}: expected dtype {buffer.dtype}, got {arg.dtype}")
        if arg.ndim != len(buffer.shape):
            raise TIRError(f"buffer {buffer.name}: expected {len(buffer.shape)} dimensions, "
                           f"got shape {arg.shape}")
        for axis, (dim, size) in enumerate(zip(buffer.shape, arg.shape)):
            if isinstance(dim, E.Var) and dim in self._slots and env[self._slots[dim]] is None:
                env[self._slots[dim]] = int(size)
                continue
            expected = self._expr(dim)(env)
            if expected != size:
                raise TIRError(f"buffer {buffer.name}: expected shape "
                               f"{tuple(str(d) for d in buffer.shape)}, got {arg.shape} "
                               f"(axis {axis})")
        return arg

    def _slot(self, var):
        slot = self._slots.get(var)
        if slot is None:
            slot = self._slots[var] = len(self._slots)
        return slot

    # -- expressions ---------------------------------------------------------------------
    def _expr(self, e):
        method = method_table(type(self))[type(e)]
        if method is None:
            raise TIRError(f"the TIR interpreter cannot evaluate {type(e).__name__}", e)
        return method(self, e)

    def visit_var(self, e):
        slot = self._slot(e)
        name = e.name_hint

        def load(env):
            value = env[slot]
            if value is None:
                raise TIRError(f"variable {name} is used before it is bound", e)
            return value

        return load

    visit_size_var = visit_var

    def visit_int_imm(self, e):
        value = bool(e.value) if e.dtype == "bool" else e.value
        return lambda env: value

    def visit_float_imm(self, e):
        value = _to_value(e.value, e.dtype)
        return lambda env: value

    def visit_string_imm(self, e):
        value = e.value
        return lambda env: value

    def visit_cast(self, e):
        inner = self._expr(e.value)
        convert = _caster(e.value.dtype, e.dtype)
        return lambda env: convert(inner(env))

    def _binary(self, e):
        fa, fb = self._expr(e.a), self._expr(e.b)
        t = parse_dtype(e.dtype)
        kind = type(e)
        if kind in _COMPARE:
            op = _COMPARE[kind]
            return lambda env: op(fa(env), fb(env))
        if kind in (E.Min, E.Max):
            if t.lanes > 1:
                op = np.minimum if kind is E.Min else np.maximum
                return lambda env: op(fa(env), fb(env))
            pick = _PICK[kind, t.is_float]
            return lambda env: pick(fa(env), fb(env))
        if t.is_float:
            op = _FLOAT[kind]
            dtype = to_numpy_dtype(str(t.element_of()))
            if t.lanes > 1:
                return lambda env: op(fa(env), fb(env)).astype(dtype)
            return lambda env: dtype.type(op(fa(env), fb(env)))
        if t.lanes > 1:
            op = _VECTOR_INT.get(kind, _FLOAT[kind])
            return lambda env: op(fa(env), fb(env))
        op = _SCALAR_INT[kind]
        wrap = _int_wrapper(e.dtype)
        if kind is E.Add and t.code == "int" and t.bits == 32:  # the hot path of index math
            return lambda env: ((fa(env) + fb(env) + 2147483648) & 4294967295) - 2147483648
        return lambda env: wrap(op(fa(env), fb(env)))

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = _binary
    visit_floor_div = visit_floor_mod = visit_min = visit_max = _binary
    visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _binary

    def visit_and(self, e):
        fa, fb = self._expr(e.a), self._expr(e.b)
        if parse_dtype(e.dtype).lanes > 1:
            return lambda env: np.logical_and(fa(env), fb(env))
        return lambda env: bool(fa(env)) and bool(fb(env))

    def visit_or(self, e):
        fa, fb = self._expr(e.a), self._expr(e.b)
        if parse_dtype(e.dtype).lanes > 1:
            return lambda env: np.logical_or(fa(env), fb(env))
        return lambda env: bool(fa(env)) or bool(fb(env))

    def visit_not(self, e):
        fa = self._expr(e.a)
        if parse_dtype(e.dtype).lanes > 1:
            return lambda env: np.logical_not(fa(env))
        return lambda env: not fa(env)

    def visit_select(self, e):
        fc, ft, ff = (self._expr(x) for x in (e.condition, e.true_value, e.false_value))
        if parse_dtype(e.dtype).lanes > 1:
            return lambda env: np.where(fc(env), ft(env), ff(env))

        def select(env):
            c, t, f = fc(env), ft(env), ff(env)  # both sides are evaluated, as TVM's Select
            return t if c else f

        return select

    def visit_ramp(self, e):
        fb, fs = self._expr(e.base), self._expr(e.stride)
        lanes = np.arange(e.lanes)
        dtype = to_numpy_dtype(str(parse_dtype(e.dtype).element_of()))
        return lambda env: (fb(env) + fs(env) * lanes).astype(dtype)

    def visit_broadcast(self, e):
        fv, lanes = self._expr(e.value), e.lanes
        dtype = to_numpy_dtype(str(parse_dtype(e.dtype).element_of()))
        return lambda env: np.full(lanes, fv(env), dtype=dtype)

    def visit_shuffle(self, e):
        vectors = [self._expr(v) for v in e.vectors]
        indices = [self._expr(i) for i in e.indices]

        def shuffle(env):
            flat = np.concatenate([np.atleast_1d(v(env)) for v in vectors])
            return flat[[int(i(env)) for i in indices]]

        return shuffle

    def visit_let(self, e):
        slot, fv, fb = self._slot(e.var), self._expr(e.value), self._expr(e.body)

        def let(env):
            env[slot] = fv(env)
            return fb(env)

        return let

    def visit_buffer_load(self, e):
        locate = self._locator(e.buffer, e.indices)
        t = parse_dtype(e.dtype)
        if t.lanes == 1 and t.code in ("int", "uint"):
            return lambda env: int(_load(locate(env)))  # integer math runs on Python ints
        if t.lanes == 1 and t.code == "bool":
            return lambda env: bool(_load(locate(env)))
        return lambda env: _load(locate(env))

    def visit_call(self, e):
        """By the intrinsic's numpy reference (``irlab.tir.intrinsics``); ``if_then_else``
        and ``assume`` are control, evaluated here."""
        name, args = e.op, [self._expr(a) for a in e.args]
        if name == "tir.if_then_else":
            fc, ft, ff = args
            if parse_dtype(e.args[0].dtype).lanes > 1:  # as the codegens and TVM
                raise TIRError("if_then_else needs a scalar condition (use Select for a "
                               "lane-wise choice)", e)
            return lambda env: ft(env) if fc(env) else ff(env)
        if name == "tir.assume":
            return lambda env: None
        record = INTRINSICS.get(name)
        if record is None or record.numpy is None:
            raise TIRError(f"the TIR interpreter cannot run the intrinsic {name}", e)
        fn, result = record.numpy, _result_caster(e.dtype)
        args = [_as_numpy_argument(f, a.dtype) for f, a in zip(args, e.args)]
        return lambda env: result(fn(*[a(env) for a in args]))

    # -- buffer access -------------------------------------------------------------------
    def _locator(self, buffer, indices):
        """A closure giving (flat storage, flat index) for ``buffer[indices]``, bounds-checked."""
        data_slot = self._slot(buffer.data)
        idx = [self._expr(i) for i in indices]
        name = buffer.name
        shape_consts = [getattr(s, "value", None) for s in buffer.shape]
        static = (all(isinstance(s, E.IntImm) for s in buffer.shape) and not buffer.strides
                  and isinstance(buffer.elem_offset, E.IntImm))
        vector = any(parse_dtype(i.dtype).lanes > 1 for i in indices)
        if static and not vector:
            strides = _row_major(shape_consts)
            offset = buffer.elem_offset.value
            dims = list(zip(idx, shape_consts, strides))
            if len(dims) == 2 and offset == 0:
                (f0, n0, s0), (f1, n1, _) = dims

                def locate2(env):
                    i, j = f0(env), f1(env)
                    if not (0 <= i < n0 and 0 <= j < n1):
                        _out_of_bounds(name, (i, j), shape_consts)
                    return env[data_slot], i * s0 + j

                return locate2

            def locate(env):
                flat = offset
                values = [f(env) for f in idx]
                for v, n, s in zip(values, shape_consts, strides):
                    if not 0 <= v < n:
                        _out_of_bounds(name, values, shape_consts)
                    flat += v * s
                return env[data_slot], flat

            return locate
        shape = [self._expr(s) for s in buffer.shape]
        given_strides = [self._expr(s) for s in buffer.strides]
        offset_fn = self._expr(buffer.elem_offset)

        def locate_general(env):
            values = [f(env) for f in idx]
            dims = [int(f(env)) for f in shape]
            strides = [int(f(env)) for f in given_strides] or _row_major(dims)
            flat = offset_fn(env)
            for v, n, s in zip(values, dims, strides):
                if np.any(np.asarray(v) < 0) or np.any(np.asarray(v) >= n):
                    _out_of_bounds(name, values, dims)
                flat = flat + np.asarray(v, dtype=np.int64) * s if vector else flat + v * s
            storage = env[data_slot]
            if storage is None:
                raise TIRError(f"buffer {name} is used before its storage is allocated")
            if np.any(np.asarray(flat) < 0) or np.any(np.asarray(flat) >= storage.size):
                _out_of_bounds(name, values, dims)
            return storage, flat

        return locate_general

    # -- statements ----------------------------------------------------------------------
    def _stmt(self, s):
        method = method_table(type(self))[type(s)]
        if method is None:
            raise TIRError(f"the TIR interpreter cannot run {type(s).__name__}", s)
        return method(self, s)

    def visit_buffer_store(self, s):
        locate, fv = self._locator(s.buffer, s.indices), self._expr(s.value)

        def store(env):
            value = fv(env)
            storage, flat = locate(env)
            storage[flat] = value

        return store

    def visit_for(self, s):
        slot, fmin, fext, body = (self._slot(s.loop_var), self._expr(s.min),
                                  self._expr(s.extent), self._stmt(s.body))

        def loop(env):
            lo = fmin(env)
            for v in range(lo, lo + fext(env)):
                env[slot] = v
                body(env)

        return loop

    def visit_while(self, s):
        cond, body = self._expr(s.condition), self._stmt(s.body)

        def loop(env):
            while cond(env):
                body(env)

        return loop

    def visit_if_then_else(self, s):
        cond, then = self._expr(s.condition), self._stmt(s.then_case)
        other = self._stmt(s.else_case) if s.else_case is not None else None

        def branch(env):
            if cond(env):
                then(env)
            elif other is not None:
                other(env)

        return branch

    def visit_seq_stmt(self, s):
        parts = [self._stmt(x) for x in s.seq]

        def seq(env):
            for part in parts:
                part(env)

        return seq

    def visit_let_stmt(self, s):
        slot, fv, body = self._slot(s.var), self._expr(s.value), self._stmt(s.body)

        def let(env):
            env[slot] = fv(env)
            body(env)

        return let

    def visit_allocate(self, s):
        slot, extents = self._slot(s.buffer_var), [self._expr(x) for x in s.extents]
        dtype, body = to_numpy_dtype(str(parse_dtype(s.dtype).element_of())), self._stmt(s.body)
        lanes = parse_dtype(s.dtype).lanes

        def allocate(env):
            size = lanes
            for f in extents:
                size *= int(f(env))
            env[slot] = np.zeros(size, dtype=dtype)
            body(env)

        return allocate

    def visit_allocate_const(self, s):
        slot, body = self._slot(s.buffer_var), self._stmt(s.body)
        values = np.asarray(s.data, dtype=to_numpy_dtype(s.dtype))

        def allocate_const(env):
            env[slot] = values.copy()  # a store into it must not change the next entry's
            body(env)

        return allocate_const

    def visit_decl_buffer(self, s):
        slot, size, body = self._slot(s.buffer.data), self._size(s.buffer), self._stmt(s.body)
        dtype = to_numpy_dtype(s.buffer.dtype)

        def declare(env):
            if env[slot] is None:  # no Allocate above: the declaration owns its storage
                env[slot] = np.zeros(size(env), dtype=dtype)
            body(env)

        return declare

    def _size(self, buffer):
        shape = [self._expr(x) for x in buffer.shape]
        offset = self._expr(buffer.elem_offset)

        def size(env):
            n = 1
            for f in shape:
                n *= int(f(env))
            return n + int(offset(env))

        return size

    def visit_attr_stmt(self, s):
        return self._stmt(s.body)

    def visit_assert_stmt(self, s):
        cond, body = self._expr(s.condition), self._stmt(s.body)
        message = self._expr(s.message)

        def check(env):
            if not cond(env):
                raise TIRError(f"assertion failed: {message(env)}", s)
            body(env)

        return check

    def visit_evaluate(self, s):
        value = self._expr(s.value)
        return lambda env: (value(env), None)[1]

    def visit_block(self, s):
        return self.visit_block_realize(S.BlockRealize([], True, s) if not s.iter_vars else None, s)

    def visit_block_realize(self, s, bare_block=None):
        if s is None:
            raise TIRError(f"block {bare_block.name_hint} has iter vars but no BlockRealize")
        block = s.block
        slots = [self._slot(iv.var) for iv in block.iter_vars]
        values = [self._expr(v) for v in s.iter_values]
        pred = self._expr(s.predicate)
        always = isinstance(s.predicate, E.IntImm) and s.predicate.value
        reduce_checks = [(self._slot(iv.var), self._expr(iv.dom.min))
                         for iv in block.iter_vars if iv.iter_type == S.IterVar.CommReduce]
        init = self._stmt(block.init) if block.init is not None else None
        allocs = [(self._slot(b.data), self._size(b), to_numpy_dtype(b.dtype))
                  for b in block.alloc_buffers]
        matches = [self._matcher(m) for m in block.match_buffers]
        body = self._stmt(block.body)
        pairs = list(zip(slots, values))

        def realize(env):
            for slot, value in pairs:
                env[slot] = value(env)
            if not always and not pred(env):
                return
            for slot, size, dtype in allocs:
                env[slot] = np.zeros(size(env), dtype=dtype)
            for match in matches:
                match(env)
            if init is not None and all(env[slot] == lo(env) for slot, lo in reduce_checks):
                init(env)
            body(env)

        return realize

    def _matcher(self, match):
        """Bind a match_buffer to the storage of its source region (offset/stride vars too)."""
        target, source = match.buffer, match.source
        src_slot, dst_slot = self._slot(source.buffer.data), self._slot(target.data)
        mins = [self._expr(r.min) for r in source.region]
        src_shape = [self._expr(x) for x in source.buffer.shape]
        src_strides = [self._expr(x) for x in source.buffer.strides]
        src_offset = self._expr(source.buffer.elem_offset)
        binds = []
        if isinstance(target.elem_offset, E.Var):
            binds.append(("offset", self._slot(target.elem_offset)))
        strides_vars = [self._slot(x) if isinstance(x, E.Var) else None for x in target.strides]
        extents = [self._expr(r.extent) for r in source.region]
        shape_vars = [self._slot(x) if isinstance(x, E.Var) else None for x in target.shape]

        def bind(env):
            strides = [int(f(env)) for f in src_strides] or _row_major(
                [int(f(env)) for f in src_shape])
            offset = int(src_offset(env)) + sum(int(f(env)) * st for f, st in zip(mins, strides))
            env[dst_slot] = env[src_slot]
            for _, slot in binds:
                env[slot] = offset
            trailing = strides[len(strides) - len(strides_vars):] if strides_vars else []
            for slot, st in zip(strides_vars, trailing):
                if slot is not None:
                    env[slot] = st
            for slot, f in zip(shape_vars, extents[len(extents) - len(shape_vars):]):
                if slot is not None:
                    env[slot] = int(f(env))

        return bind


def _row_major(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return strides[::-1]


def _load(location):
    storage, flat = location
    return storage[flat]


def _out_of_bounds(name, values, shape):
    index = ", ".join(str(v.tolist() if isinstance(v, np.ndarray) else v) for v in values)
    raise TIRError(f"out-of-bounds access {name}[{index}] (shape {tuple(shape)})")


def _to_value(value, dtype):
    t = parse_dtype(dtype)
    if t.code == "bool":
        return bool(value)
    if t.code in ("int", "uint"):
        return _int_wrapper(dtype)(int(value))
    if t.is_float:
        return float(value) if t.bits == 64 else to_numpy_dtype(dtype).type(value)
    return value


def _caster(src, dst):
    s, d = parse_dtype(src), parse_dtype(dst)
    if d.lanes > 1:
        dtype = to_numpy_dtype(str(d.element_of()))
        if s.is_float and not d.is_float and d.code != "bool":
            return lambda v: np.trunc(v).astype(np.int64).astype(dtype)
        return lambda v: np.asarray(v).astype(dtype)
    if d.code == "bool":
        return bool
    if d.code in ("int", "uint"):
        wrap = _int_wrapper(dst)
        if s.is_float:
            return lambda v: wrap(int(v))  # int() truncates toward zero, as C
        return lambda v: wrap(int(v))
    if d.is_float:
        if d.bits == 64:
            return float
        return to_numpy_dtype(dst).type
    raise TIRError(f"cannot cast {src} to {dst}")


def _as_numpy_argument(evaluate, dtype):
    """``evaluate`` giving a scalar integer as a numpy scalar of its dtype (the interpreter
    computes on Python ints), so that a numpy reference sees the argument's width."""
    t = parse_dtype(dtype)
    if t.lanes != 1 or t.code not in ("int", "uint"):
        return evaluate
    scalar = to_numpy_dtype(dtype).type
    return lambda env: scalar(evaluate(env))


def _result_caster(dtype):
    """What an intrinsic's numpy result becomes: a value of ``dtype`` as the interpreter holds
    it (integers wrap to the width, as the machine's)."""
    t = parse_dtype(dtype)
    if t.code in ("handle", "void"):
        return lambda value: value
    np_dtype = to_numpy_dtype(str(t.element_of()))
    if t.lanes == 1 and t.code in ("int", "uint"):
        wrap = _int_wrapper(dtype)
        return lambda value: wrap(int(value))
    return lambda value: _cast_result(value, t, np_dtype)


def _cast_result(value, dtype, np_dtype):
    if dtype.lanes > 1:
        return np.asarray(value).astype(np_dtype)
    if dtype.code == "bool":
        return bool(value)
    if dtype.code in ("int", "uint"):
        return int(value)
    return np_dtype.type(value) if dtype.bits != 64 else float(value)
