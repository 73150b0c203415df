"""LLVM codegen: lowered TIR -> LLVM IR built with ``llvmlite.ir``.

One visitor method per TIR node, as TVM's ``CodeGenLLVM``. For each PrimFunc ``f``:

* ``f_compute`` (internal) takes the typed parameters -- buffer data pointers marked
  ``noalias`` (when the PrimFunc says ``tir.noalias``) and ``align 64`` -- and holds the body;
* ``f`` (exported) is the entry of ``irlab.runtime.abi``: it unpacks the ``int64_t *args``
  slots and calls ``f_compute``; O3 inlines one into the other, keeping the alias facts as
  scoped metadata.

Vectors (``Ramp``, ``Broadcast``, vector ``BufferLoad``/``BufferStore``) become LLVM vector
types and operations. A ``parallel`` loop is outlined into ``f_parallel_k`` (its free
variables travel in an ``int64`` closure) and handed to the runtime's thread pool through the
``__irlab_parallel_for`` hook. Float ``a * b + c`` may contract to FMA; with
``-fast-math`` every fast-math flag is set.
"""

from __future__ import annotations

import llvmlite.ir as ir

from irlab.errors import CodegenError
from irlab.ir.dtype import parse_dtype
from irlab.runtime import abi
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.analysis import vars_used

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F64 = ir.DoubleType()
PTR = ir.PointerType()
ALIGN = 64
STACK_LIMIT = 256 * 1024  # bytes: larger (or dynamic) allocations go to the heap

# TIR intrinsic -> LLVM intrinsic (these accept vectors and every float width)
_LLVM_UNARY = {"tir.exp": "exp", "tir.exp2": "exp2", "tir.exp10": "exp10", "tir.log": "log",
               "tir.log2": "log2", "tir.log10": "log10", "tir.sqrt": "sqrt", "tir.fabs": "fabs",
               "tir.floor": "floor", "tir.ceil": "ceil", "tir.round": "round",
               "tir.nearbyint": "roundeven", "tir.trunc": "trunc", "tir.sin": "sin",
               "tir.cos": "cos"}
_LLVM_BINARY = {"tir.pow": "pow", "tir.copysign": "copysign"}
# TIR intrinsic -> C math library function (called per lane; f suffix for float32)
_LIBM = {"tir.tanh": "tanh", "tir.erf": "erf", "tir.log1p": "log1p", "tir.tan": "tan",
         "tir.asin": "asin", "tir.acos": "acos", "tir.atan": "atan", "tir.sinh": "sinh",
         "tir.cosh": "cosh", "tir.atan2": "atan2", "tir.hypot": "hypot", "tir.fmod": "fmod",
         "tir.nextafter": "nextafter"}


def llvm_type(dtype) -> ir.Type:
    t = parse_dtype(dtype)
    if t.code == "handle":
        return PTR
    if t.code == "void":
        return ir.VoidType()
    if t.code == "bool":
        base = I1
    elif t.code in ("int", "uint"):
        base = ir.IntType(t.bits)
    elif t.code == "float":
        base = {16: ir.HalfType(), 32: ir.FloatType(), 64: F64}[t.bits]
    else:
        raise CodegenError(f"LLVM codegen has no type for {dtype}")
    return base if t.lanes == 1 else ir.VectorType(base, t.lanes)


def memory_type(dtype) -> ir.Type:
    """How an element sits in memory: bools take a byte (as numpy's)."""
    t = parse_dtype(dtype)
    if t.code == "bool":
        return I8 if t.lanes == 1 else ir.VectorType(I8, t.lanes)
    return llvm_type(dtype)


def _type_suffix(ty) -> str:
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{_type_suffix(ty.element)}"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    return {ir.HalfType: "f16", ir.FloatType: "f32", ir.DoubleType: "f64"}[type(ty)]


class CodegenLLVM:
    """Collects PrimFuncs into one LLVM module."""

    def __init__(self, target, module_name="irlab_module"):
        self.target = target
        self.module = ir.Module(name=module_name)
        self.module.triple = target.triple
        self.infos: list[abi.FunctionInfo] = []
        self._globals: dict = {}
        self._strings: dict = {}

    # -- module-level helpers ---------------------------------------------------------------
    def hook(self, symbol) -> ir.GlobalVariable:
        var = self._globals.get(symbol)
        if var is None:
            var = ir.GlobalVariable(self.module, PTR, symbol)
            var.initializer = ir.Constant(PTR, None)
            var.linkage = ""  # external, so the runtime can find and set it
            self._globals[symbol] = var
        return var

    def string(self, text: str) -> ir.GlobalVariable:
        var = self._strings.get(text)
        if var is None:
            data = bytearray(text.encode() + b"\0")
            ty = ir.ArrayType(I8, len(data))
            var = ir.GlobalVariable(self.module, ty, f".str.{len(self._strings)}")
            var.initializer = ir.Constant(ty, data)
            var.global_constant = True
            var.linkage = "private"
            self._strings[text] = var
        return var

    def function(self, name, ret, args) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, args), name)

    def intrinsic(self, name, ty, nargs=1) -> ir.Function:
        return self.function(f"llvm.{name}.{_type_suffix(ty)}", ty, [ty] * nargs)

    def add_metadata(self):
        text = abi.metadata_json(self.infos, str(self.target))
        data = bytearray(text.encode() + b"\0")
        ty = ir.ArrayType(I8, len(data))
        var = ir.GlobalVariable(self.module, ty, abi.METADATA_SYMBOL)
        var.initializer = ir.Constant(ty, data)
        var.global_constant = True

    # -- functions -----------------------------------------------------------------------
    def add_function(self, func, name: str) -> abi.FunctionInfo:
        """Generate the entry ``name`` for a lowered PrimFunc."""
        if name in self.module.globals:
            raise CodegenError(f"two functions are named {name!r} in one module")
        info = abi.function_info(func, name)
        noalias = bool((func.attrs or {}).get("tir.noalias", False)) if func.attrs else False
        bound = abi.bound_vars(func)
        params = list(func.params)
        # the compute function takes buffer data pointers, scalars and bound vars
        typed: list = []
        aligned = set()
        buffers = {}
        for p, pinfo in zip(params, info.params):
            buffer = func.buffer_map.get(p)
            if buffer is not None:
                typed.append(buffer.data)
                buffers[buffer.data] = buffer
                if pinfo.strides is None:
                    aligned.add(buffer.data)
            else:
                typed.append(p)
        typed += bound
        compute = _FunctionBuilder(self, f"{name}_compute", typed, noalias, aligned, info,
                                   buffers)
        compute.emit_body(func.body)
        # the entry: unpack the slots, call the compute function
        entry = self.function(name, I32, [PTR])
        entry.args[0].name = "args"
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        values = []
        for slot, var in enumerate(typed):
            word = b.load(b.gep(entry.args[0], [ir.Constant(I64, slot)], source_etype=I64),
                          name=f"{var.name_hint}.slot", typ=I64)
            values.append(_from_word(b, word, var.dtype))
        b.ret(b.call(compute.fn, values))
        self.infos.append(info)
        return info


def _from_word(b, word, dtype):
    """An int64 slot -> a value of ``dtype`` (pointers, ints, double bits)."""
    t = parse_dtype(dtype)
    ty = llvm_type(dtype)
    if t.code == "handle":
        return b.inttoptr(word, PTR)
    if t.is_float:
        return _fptrunc(b, b.bitcast(word, F64), ty) if t.bits < 64 else b.bitcast(word, F64)
    if t.code == "bool":
        return b.icmp_unsigned("!=", word, ir.Constant(I64, 0))
    return b.trunc(word, ty) if ty.width < 64 else word


def _fptrunc(b, value, to):
    """``fptrunc``, but double -> half goes through float: there is no instruction for it and
    its libcall (``__truncdfhf2``) is not in the JIT's process. Rounding to float is done to
    odd (truncate, then set the last bit if inexact) so the second rounding is exact."""
    elem = to.element if isinstance(to, ir.VectorType) else to
    src = value.type.element if isinstance(value.type, ir.VectorType) else value.type
    if not (isinstance(elem, ir.HalfType) and isinstance(src, ir.DoubleType)):
        return b.fptrunc(value, to)
    lanes = value.type.count if isinstance(value.type, ir.VectorType) else None
    f32, i32 = (ir.FloatType(), I32) if lanes is None else (
        ir.VectorType(ir.FloatType(), lanes), ir.VectorType(I32, lanes))
    t = b.fptrunc(value, f32)
    back = b.fpext(t, value.type)
    inexact = b.fcmp_ordered("!=", back, value)
    away = b.fcmp_ordered(">", b.select(b.fcmp_ordered("<", back, _splat_const(
        value.type, 0.0)), b.fneg(back), back), b.select(b.fcmp_ordered(
            "<", value, _splat_const(value.type, 0.0)), b.fneg(value), value))
    bits = b.sub(b.bitcast(t, i32), b.zext(away, i32))
    bits = b.or_(bits, b.zext(inexact, i32))
    t = b.select(inexact, b.bitcast(bits, f32), t)
    return b.fptrunc(t, to)


def _to_word(b, value, dtype):
    t = parse_dtype(dtype)
    if t.code == "handle":
        return b.ptrtoint(value, I64)
    if t.is_float:
        return b.bitcast(b.fpext(value, F64) if t.bits < 64 else value, I64)
    if t.code in ("bool", "uint"):
        return b.zext(value, I64) if value.type.width < 64 else value
    return b.sext(value, I64) if value.type.width < 64 else value


class _FunctionBuilder:
    """Builds one internal function from a TIR statement."""

    def __init__(self, cg: CodegenLLVM, name, params, noalias, aligned, info, buffers,
                 extra_types=()):
        self.cg = cg
        self.info = info
        self.noalias = noalias
        self.aligned = set(aligned)
        self.buffers = dict(buffers)  # data var -> a Buffer over it (for call_packed arrays)
        types = list(extra_types) + [llvm_type(p.dtype) for p in params]
        self.fn = cg.function(name, I32, types)
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        self.vars: dict = {}
        args = self.fn.args[len(extra_types):]
        for arg, var in zip(args, params):
            arg.name = var.name_hint
            self.vars[var] = arg
            if var.dtype == "handle":
                if noalias:
                    arg.attributes.add("noalias")
                if var in self.aligned:
                    arg.attributes.align = ALIGN
        self.alloca_block = self.fn.append_basic_block("entry")
        self.b = ir.IRBuilder(self.fn.append_basic_block("body"))
        self.heap: list = []
        self.par_count = 0
        fm = ("fast",) if cg.target.fast_math else ("contract",)
        self.fastmath = fm

    @property
    def extra_args(self):
        return self.fn.args

    def emit_body(self, stmt):
        self.stmt(stmt)
        self.finish()

    def finish(self):
        if not self.b.block.is_terminated:
            self.b.ret(ir.Constant(I32, 0))
        ir.IRBuilder(self.alloca_block).branch(self.fn.blocks[1])

    # -- dispatch ------------------------------------------------------------------------
    def stmt(self, s):
        method = getattr(self, "s_" + type(s).__name__, None)
        if method is None:
            raise CodegenError(f"LLVM codegen cannot translate {type(s).__name__} "
                               f"(lower the function first: irlab.lower)", s)
        method(s)

    def expr(self, e) -> ir.Value:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise CodegenError(f"LLVM codegen cannot translate {type(e).__name__}: {e}", e)
        return method(e)

    # -- expressions ---------------------------------------------------------------------
    def e_Var(self, e):
        value = self.vars.get(e)
        if value is None:
            raise CodegenError(f"variable {e.name_hint} is used outside its scope", e)
        return value

    e_SizeVar = e_Var

    def e_IntImm(self, e):
        return ir.Constant(llvm_type(e.dtype), int(e.value))

    def e_FloatImm(self, e):
        return ir.Constant(llvm_type(e.dtype), float(e.value))

    def e_StringImm(self, e):
        return self.cg.string(e.value)

    def e_Cast(self, e):
        return self.cast(self.expr(e.value), e.value.dtype, e.dtype)

    def cast(self, value, src, dst):
        s, d = parse_dtype(src), parse_dtype(dst)
        b = self.b
        to = llvm_type(dst)
        if s == d:
            return value
        if d.code == "bool":
            if s.is_float:
                return b.fcmp_unordered("!=", value, ir.Constant(value.type, None))
            return b.icmp_unsigned("!=", value, ir.Constant(value.type, None))
        if s.is_float and d.is_float:
            return b.fpext(value, to) if d.bits > s.bits else (
                _fptrunc(b, value, to) if d.bits < s.bits else value)
        if s.is_float:
            return b.fptosi(value, to) if d.code == "int" else b.fptoui(value, to)
        if d.is_float:
            return b.sitofp(value, to) if s.code == "int" else b.uitofp(value, to)
        if d.bits > s.bits:
            return b.sext(value, to) if s.code == "int" else b.zext(value, to)
        if d.bits < s.bits:
            return b.trunc(value, to)
        return value  # int <-> uint of one width

    def _binary(self, e, int_op, uint_op, float_op):
        a, c = self.expr(e.a), self.expr(e.b)
        t = parse_dtype(e.a.dtype)
        if t.is_float:
            return getattr(self.b, float_op)(a, c, flags=self.fastmath)
        if t.code == "int" and int_op in ("add", "sub", "mul"):
            return getattr(self.b, int_op)(a, c, flags=("nsw",))
        return getattr(self.b, uint_op if t.code in ("uint", "bool") else int_op)(a, c)

    def e_Add(self, e):
        return self._binary(e, "add", "add", "fadd")

    def e_Sub(self, e):
        return self._binary(e, "sub", "sub", "fsub")

    def e_Mul(self, e):
        return self._binary(e, "mul", "mul", "fmul")

    def _int_divisor(self, e, c):
        """Integer division by zero would kill the process: check first. So would INT_MIN / -1:
        returns (divisor, minus_one) where a signed divisor -1 is replaced by 1; the caller
        negates the quotient (wrapping) where ``minus_one`` holds (None: cannot happen)."""
        const = e.b.value if isinstance(e.b, E.Broadcast) else e.b
        if isinstance(const, E.IntImm) and const.value not in (0, -1):
            return c, None
        zero = ir.Constant(c.type, None)
        self.fail_if(self._any_lane(self.b.icmp_signed("==", c, zero)),
                     f"integer division by zero in {e}")
        if parse_dtype(e.dtype).code != "int":
            return c, None
        minus_one = self.b.icmp_signed("==", c, _splat_const(c.type, -1))
        return self.b.select(minus_one, _splat_const(c.type, 1), c), minus_one

    def _negate_where(self, minus_one, a, q):
        """``q``, or ``0 - a`` (wrapping) on the lanes where the divisor was -1."""
        if minus_one is None:
            return q
        return self.b.select(minus_one, self.b.sub(ir.Constant(a.type, None), a), q)

    def _any_lane(self, cond):
        if not isinstance(cond.type, ir.VectorType):
            return cond
        f = self.cg.function(f"llvm.vector.reduce.or.v{cond.type.count}i1", I1, [cond.type])
        return self.b.call(f, [cond])

    def e_Div(self, e):
        if parse_dtype(e.dtype).is_float:
            return self._binary(e, "fdiv", "fdiv", "fdiv")
        a, c = self.expr(e.a), self.expr(e.b)
        c, minus_one = self._int_divisor(e, c)
        if parse_dtype(e.dtype).code == "uint":
            return self.b.udiv(a, c)
        return self._negate_where(minus_one, a, self.b.sdiv(a, c))

    def e_Mod(self, e):
        if parse_dtype(e.dtype).is_float:
            return self._binary(e, "frem", "frem", "frem")
        a, c = self.expr(e.a), self.expr(e.b)
        c, _ = self._int_divisor(e, c)  # x % -1 == x % 1 == 0
        return self.b.urem(a, c) if parse_dtype(e.dtype).code == "uint" else self.b.srem(a, c)

    def e_FloorDiv(self, e):
        t = parse_dtype(e.dtype)
        a, c = self.expr(e.a), self.expr(e.b)
        b = self.b
        if t.is_float:
            return b.call(self.cg.intrinsic("floor", a.type), [b.fdiv(a, c)])
        c, minus_one = self._int_divisor(e, c)
        if t.code == "uint":
            return b.udiv(a, c)
        q, r = b.sdiv(a, c), b.srem(a, c)
        zero = ir.Constant(a.type, None)
        adjust = b.and_(b.icmp_signed("!=", r, zero),
                        b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", c, zero)))
        return self._negate_where(minus_one, a, b.select(adjust, b.sub(
            q, ir.Constant(a.type, 1) if not isinstance(a.type, ir.VectorType)
            else _splat_const(a.type, 1)), q))

    def e_FloorMod(self, e):
        t = parse_dtype(e.dtype)
        a, c = self.expr(e.a), self.expr(e.b)
        b = self.b
        if t.is_float:
            q = b.call(self.cg.intrinsic("floor", a.type), [b.fdiv(a, c)])
            return b.fsub(a, b.fmul(q, c))
        c, _ = self._int_divisor(e, c)
        if t.code == "uint":
            return b.urem(a, c)
        r = b.srem(a, c)
        zero = ir.Constant(a.type, None)
        adjust = b.and_(b.icmp_signed("!=", r, zero),
                        b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", c, zero)))
        return b.select(adjust, b.add(r, c), r)

    def _minmax(self, e, op):
        a, c = self.expr(e.a), self.expr(e.b)
        t = parse_dtype(e.dtype)
        if t.is_float:
            cond = self.b.fcmp_ordered(op, a, c)
        elif t.code == "int":
            cond = self.b.icmp_signed(op, a, c)
        else:
            cond = self.b.icmp_unsigned(op, a, c)
        return self.b.select(cond, a, c)

    def e_Min(self, e):
        return self._minmax(e, "<")

    def e_Max(self, e):
        return self._minmax(e, ">")

    def _compare(self, e, op):
        a, c = self.expr(e.a), self.expr(e.b)
        t = parse_dtype(e.a.dtype)
        if t.is_float:
            if op == "!=":
                return self.b.fcmp_unordered(op, a, c)
            return self.b.fcmp_ordered(op, a, c)
        if t.code == "int":
            return self.b.icmp_signed(op, a, c)
        return self.b.icmp_unsigned(op, a, c)

    def e_EQ(self, e):
        return self._compare(e, "==")

    def e_NE(self, e):
        return self._compare(e, "!=")

    def e_LT(self, e):
        return self._compare(e, "<")

    def e_LE(self, e):
        return self._compare(e, "<=")

    def e_GT(self, e):
        return self._compare(e, ">")

    def e_GE(self, e):
        return self._compare(e, ">=")

    def e_And(self, e):
        return self.b.and_(self.expr(e.a), self.expr(e.b))

    def e_Or(self, e):
        return self.b.or_(self.expr(e.a), self.expr(e.b))

    def e_Not(self, e):
        return self.b.not_(self.expr(e.a))

    def e_Select(self, e):
        cond = self.expr(e.condition)
        return self.b.select(cond, self.expr(e.true_value), self.expr(e.false_value))

    def e_Ramp(self, e):
        base, stride = self.expr(e.base), self.expr(e.stride)
        lanes = e.lanes
        vec = self.splat(base, lanes)
        steps = ir.Constant(ir.VectorType(base.type, lanes),
                            [ir.Constant(base.type, i) for i in range(lanes)])
        if isinstance(e.stride, E.IntImm) and e.stride.value == 1:
            return self.b.add(vec, steps)
        return self.b.add(vec, self.b.mul(self.splat(stride, lanes), steps))

    def e_Broadcast(self, e):
        return self.splat(self.expr(e.value), e.lanes)

    def splat(self, value, lanes):
        if isinstance(value, ir.Constant) and not isinstance(value.type, ir.VectorType):
            return ir.Constant(ir.VectorType(value.type, lanes), [value] * lanes)
        ty = ir.VectorType(value.type, lanes)
        one = self.b.insert_element(ir.Constant(ty, ir.Undefined), value, ir.Constant(I32, 0))
        mask = ir.Constant(ir.VectorType(I32, lanes), [0] * lanes)
        return self.b.shuffle_vector(one, ir.Constant(ty, ir.Undefined), mask)

    def e_Shuffle(self, e):
        vectors = [self.expr(v) for v in e.vectors]
        lanes = []  # every source lane as a scalar
        for v in vectors:
            if isinstance(v.type, ir.VectorType):
                lanes += [self.b.extract_element(v, ir.Constant(I32, i))
                          for i in range(v.type.count)]
            else:
                lanes.append(v)
        picks = [lanes[int(i.value)] for i in e.indices]
        if len(picks) == 1:
            return picks[0]
        out = ir.Constant(ir.VectorType(picks[0].type, len(picks)), ir.Undefined)
        for i, value in enumerate(picks):
            out = self.b.insert_element(out, value, ir.Constant(I32, i))
        return out

    def e_Let(self, e):
        self.vars[e.var] = self.expr(e.value)
        try:
            return self.expr(e.body)
        finally:
            del self.vars[e.var]

    # -- memory --------------------------------------------------------------------------
    def _address(self, buffer, index):
        """(base pointer, flat element index value) of ``buffer[index]``."""
        if len(buffer.shape) != 1 and not isinstance(index, list):
            raise CodegenError(f"buffer {buffer.name} is not flattened")
        base = self.e_Var(buffer.data)
        offset = buffer.elem_offset
        if not (isinstance(offset, E.IntImm) and offset.value == 0):
            index = index + offset if parse_dtype(index.dtype).lanes == 1 else index + E.Broadcast(
                offset, parse_dtype(index.dtype).lanes)
        return base, index

    def _flat_index(self, buffer, indices):
        if len(indices) == 1:
            return indices[0]
        # an unflattened access (only scalar indices): row-major with the buffer's strides
        strides = list(buffer.strides)
        if not strides:
            strides, acc = [], E.IntImm(indices[0].dtype, 1)
            for dim in reversed(buffer.shape):
                strides.insert(0, acc)
                acc = acc * dim
        flat = indices[0] * strides[0]
        for i, s in zip(indices[1:], strides[1:]):
            flat = flat + i * s
        return flat

    def _gep(self, base, index_value, elem_ty):
        idx = index_value
        if idx.type.width < 64:
            idx = self.b.sext(idx, I64)
        return self.b.gep(base, [idx], inbounds=True, source_etype=elem_ty)

    def _contiguous(self, index):
        return isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm) and \
            index.stride.value == 1

    def e_BufferLoad(self, e):
        index = self._flat_index(e.buffer, list(e.indices))
        base, index = self._address(e.buffer, index)
        elem = memory_type(e.buffer.dtype)
        t = parse_dtype(e.dtype)
        elem_bytes = max(1, parse_dtype(e.buffer.dtype).bits // 8)
        if self._contiguous(index) and parse_dtype(e.buffer.dtype).lanes == 1:
            ptr = self._gep(base, self.expr(index.base), elem)
            vty = ir.VectorType(elem, index.lanes)
            value = self.b.load(ptr, typ=vty, align=elem_bytes)
        elif isinstance(index, E.Broadcast):
            ptr = self._gep(base, self.expr(index.value), elem)
            value = self.splat(self.b.load(ptr, typ=elem, align=elem_bytes), index.lanes)
        elif parse_dtype(index.dtype).lanes > 1:
            idx = self.expr(index)
            lanes = idx.type.count
            value = ir.Constant(ir.VectorType(elem, lanes), ir.Undefined)
            for i in range(lanes):
                one = self.b.extract_element(idx, ir.Constant(I32, i))
                scalar = self.b.load(self._gep(base, one, elem), typ=elem, align=elem_bytes)
                value = self.b.insert_element(value, scalar, ir.Constant(I32, i))
        else:
            ptr = self._gep(base, self.expr(index), elem)
            value = self.b.load(ptr, typ=memory_type(e.dtype), align=elem_bytes)
        if t.code == "bool":
            value = self.b.icmp_unsigned("!=", value, ir.Constant(value.type, None))
        return value

    def s_BufferStore(self, s):
        index = self._flat_index(s.buffer, list(s.indices))
        base, index = self._address(s.buffer, index)
        value = self.expr(s.value)
        t = parse_dtype(s.value.dtype)
        if t.code == "bool":
            value = self.b.zext(value, memory_type(s.value.dtype))
        elem = memory_type(s.buffer.dtype)
        elem_bytes = max(1, parse_dtype(s.buffer.dtype).bits // 8)
        if self._contiguous(index) and parse_dtype(s.buffer.dtype).lanes == 1:
            self.b.store(value, self._gep(base, self.expr(index.base), elem), align=elem_bytes)
        elif parse_dtype(index.dtype).lanes > 1:
            idx = self.expr(index)
            for i in range(idx.type.count):
                lane = ir.Constant(I32, i)
                one = self.b.extract_element(idx, lane)
                scalar = value if not isinstance(value.type, ir.VectorType) else \
                    self.b.extract_element(value, lane)
                self.b.store(scalar, self._gep(base, one, elem), align=elem_bytes)
        else:
            self.b.store(value, self._gep(base, self.expr(index), elem), align=elem_bytes)

    # -- calls ---------------------------------------------------------------------------
    def e_Call(self, e):
        name = e.op if isinstance(e.op, str) else getattr(e.op, "name", str(e.op))
        if not name.startswith("tir."):
            name = "tir." + name
        b = self.b
        if name == "tir.if_then_else":
            return self._if_then_else(e)
        if name == "tir.likely":
            return self.expr(e.args[0])
        if name == "tir.tvm_call_packed" or name == "tir.call_packed":
            return self._call_packed(e)
        if name in ("tir.call_extern", "tir.call_pure_extern"):
            return self._call_extern(e)
        if name == "tir.assume":
            return ir.Constant(I32, 0)
        args = [self.expr(a) for a in e.args]
        ty = llvm_type(e.dtype)
        if name in _LLVM_UNARY:
            return self._float_intrinsic(_LLVM_UNARY[name], args, ty)
        if name in _LLVM_BINARY:
            return self._float_intrinsic(_LLVM_BINARY[name], args, ty)
        if name == "tir.fma":
            return b.call(self.cg.intrinsic("fma", ty, 3), args)
        if name == "tir.rsqrt":
            sqrt = b.call(self.cg.intrinsic("sqrt", ty), args)
            return b.fdiv(_splat_const(ty, 1.0), sqrt, flags=self.fastmath)
        if name == "tir.sigmoid":
            neg = b.fneg(args[0])
            ex = self._float_intrinsic("exp", [neg], ty)
            one = _splat_const(ty, 1.0)
            return b.fdiv(one, b.fadd(one, ex, flags=self.fastmath), flags=self.fastmath)
        if name in _LIBM:
            return self._libm(_LIBM[name], args, ty)
        if name == "tir.isnan":
            return b.fcmp_unordered("uno", args[0], args[0])
        if name in ("tir.isinf", "tir.isfinite"):
            a = args[0]
            absolute = b.call(self.cg.intrinsic("fabs", a.type), [a])
            inf = _splat_const(a.type, float("inf"))
            if name == "tir.isinf":
                return b.fcmp_ordered("==", absolute, inf)
            return b.fcmp_ordered("<", absolute, inf)
        if name == "tir.bitwise_and":
            return b.and_(*args)
        if name == "tir.bitwise_or":
            return b.or_(*args)
        if name == "tir.bitwise_xor":
            return b.xor(*args)
        if name == "tir.bitwise_not":
            return b.not_(args[0])
        if name == "tir.shift_left":
            return b.shl(*args)
        if name == "tir.shift_right":
            signed = parse_dtype(e.dtype).code == "int"
            return b.ashr(*args) if signed else b.lshr(*args)
        if name == "tir.popcount":
            return b.call(self.cg.function(f"llvm.ctpop.{_type_suffix(ty)}", ty, [ty]), args)
        if name == "tir.reinterpret":
            return b.bitcast(args[0], ty)
        raise CodegenError(f"LLVM codegen does not know the intrinsic {name}", e)

    def _float_intrinsic(self, name, args, ty):
        elem = ty.element if isinstance(ty, ir.VectorType) else ty
        if isinstance(elem, ir.HalfType) and name not in ("fabs", "floor", "ceil", "trunc",
                                                          "roundeven", "sqrt", "copysign"):
            # compute in float32: f16 libm calls are not available everywhere
            wide = ir.VectorType(ir.FloatType(), ty.count) if isinstance(
                ty, ir.VectorType) else ir.FloatType()
            args = [self.b.fpext(a, wide) for a in args]
            out = self.b.call(self.cg.intrinsic(name, wide, len(args)), args)
            return self.b.fptrunc(out, ty)
        return self.b.call(self.cg.intrinsic(name, ty, len(args)), args)

    def _libm(self, name, args, ty):
        elem = ty.element if isinstance(ty, ir.VectorType) else ty
        compute = F64 if isinstance(elem, ir.DoubleType) else ir.FloatType()
        fname = name if compute is F64 else name + "f"
        fn = self.cg.function(fname, compute, [compute] * len(args))

        def scalar(values):
            values = [v if v.type == compute else self.b.fpext(v, compute) for v in values]
            out = self.b.call(fn, values)
            return out if elem == compute else self.b.fptrunc(out, elem)

        if not isinstance(ty, ir.VectorType):
            return scalar(args)
        out = ir.Constant(ty, ir.Undefined)
        for i in range(ty.count):
            lane = ir.Constant(I32, i)
            out = self.b.insert_element(
                out, scalar([self.b.extract_element(a, lane) for a in args]), lane)
        return out

    def _if_then_else(self, e):
        if parse_dtype(e.args[0].dtype).lanes != 1:
            raise CodegenError("if_then_else needs a scalar condition (use Select for a "
                               "lane-wise choice)", e)
        cond = self.expr(e.args[0])
        then_block = self.fn.append_basic_block("ite.then")
        else_block = self.fn.append_basic_block("ite.else")
        done = self.fn.append_basic_block("ite.end")
        self.b.cbranch(cond, then_block, else_block)
        self.b.position_at_end(then_block)
        t = self.expr(e.args[1])
        t_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(else_block)
        f = self.expr(e.args[2])
        f_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(done)
        phi = self.b.phi(t.type)
        phi.add_incoming(t, t_end)
        phi.add_incoming(f, f_end)
        return phi

    def _call_extern(self, e):
        fname = e.args[0].value if isinstance(e.args[0], E.StringImm) else str(e.args[0])
        args = [self.expr(a) for a in e.args[1:]]
        ret = llvm_type(e.dtype)
        fn = self.cg.function(fname, ret, [a.type for a in args])
        out = self.b.call(fn, args)
        return out if not isinstance(ret, ir.VoidType) else ir.Constant(I32, 0)

    def _call_packed(self, e):
        if not e.args or not isinstance(e.args[0], E.StringImm):
            raise CodegenError("T.call_packed needs the function name (a string) first", e)
        b = self.b
        args = e.args[1:]
        n = len(args)
        values = self.alloca(ir.ArrayType(I64, max(n, 1)), 8)
        codes = self.alloca(ir.ArrayType(I32, max(n, 1)), 4)
        for i, arg in enumerate(args):
            code, word = self._packed_value(arg)
            b.store(word, b.gep(values, [ir.Constant(I32, 0), ir.Constant(I32, i)],
                                source_etype=values.allocated_type))
            b.store(ir.Constant(I32, code), b.gep(codes, [ir.Constant(I32, 0),
                                                          ir.Constant(I32, i)],
                                                  source_etype=codes.allocated_type))
        hook = b.load(self.cg.hook(abi.PACKED_HOOK), typ=PTR)
        fty = ir.FunctionType(I32, [PTR, PTR, PTR, I32])
        name = self.cg.string(e.args[0].value)
        is_null = b.icmp_unsigned("==", b.ptrtoint(hook, I64), ir.Constant(I64, 0))
        self.fail_if(is_null, "no runtime is attached to call packed functions", abi.ERR_CALLBACK)
        status = b.call(_IndirectCallee(hook, fty), [name, values, codes, ir.Constant(I32, n)])
        self.fail_if(b.icmp_signed("!=", status, ir.Constant(I32, 0)), None, abi.ERR_CALLBACK)
        return ir.Constant(I32, 0)

    def _packed_value(self, arg):
        b = self.b
        t = parse_dtype(arg.dtype)
        if isinstance(arg, E.StringImm):
            return abi.CODE_STR, b.ptrtoint(self.cg.string(arg.value), I64)
        if t.code == "handle":
            buffer = self.buffers.get(arg) if isinstance(arg, E.Var) else None
            ptr = self.expr(arg)
            if buffer is None:
                return abi.CODE_HANDLE, b.ptrtoint(ptr, I64)
            ndim = len(buffer.shape)
            desc = self.alloca(ir.ArrayType(I64, 5 + ndim), 8)
            bits = 8 if buffer.dtype == "bool" else parse_dtype(buffer.dtype).bits
            words = [b.ptrtoint(ptr, I64), ir.Constant(I64, ndim),
                     ir.Constant(I64, abi.dl_code(buffer.dtype)), ir.Constant(I64, bits),
                     ir.Constant(I64, parse_dtype(buffer.dtype).lanes)]
            for dim in buffer.shape:
                words.append(_to_word(b, self.expr(dim), dim.dtype))
            for i, w in enumerate(words):
                b.store(w, b.gep(desc, [ir.Constant(I32, 0), ir.Constant(I32, i)],
                                 source_etype=desc.allocated_type))
            return abi.CODE_ARRAY, b.ptrtoint(desc, I64)
        value = self.expr(arg)
        if t.is_float:
            return abi.CODE_FLOAT, _to_word(b, value, arg.dtype)
        return (abi.CODE_UINT if t.code == "uint" else abi.CODE_INT), _to_word(b, value,
                                                                                arg.dtype)

    # -- control and errors --------------------------------------------------------------
    def fail_if(self, cond, message, code=None):
        """Return an error status from the function when ``cond`` holds."""
        if code is None:
            self.info.asserts.append(message)
            code = len(self.info.asserts)
        fail = self.fn.append_basic_block("fail")
        ok = self.fn.append_basic_block("ok")
        self.b.cbranch(cond, fail, ok)
        self.b.position_at_end(fail)
        self.b.ret(ir.Constant(I32, code))
        self.b.position_at_end(ok)

    def alloca(self, ty, align):
        b = ir.IRBuilder(self.alloca_block)
        slot = b.alloca(ty)
        slot.align = align
        slot.type = PTR  # llvmlite types allocas as typed pointers; LLVM's are opaque
        return slot

    # -- statements ----------------------------------------------------------------------
    def s_SeqStmt(self, s):
        for child in s.seq:
            self.stmt(child)

    def s_Evaluate(self, s):
        if isinstance(s.value, (E.IntImm, E.FloatImm)):
            return
        self.expr(s.value)

    def s_LetStmt(self, s):
        self.vars[s.var] = self.expr(s.value)
        self.stmt(s.body)

    def s_AttrStmt(self, s):
        self.stmt(s.body)

    def s_DeclBuffer(self, s):
        self.buffers.setdefault(s.buffer.data, s.buffer)
        self.stmt(s.body)

    def s_AssertStmt(self, s):
        message = s.message.value if isinstance(s.message, E.StringImm) else str(s.message)
        cond = self.expr(s.condition)
        self.fail_if(self.b.not_(cond), message)
        self.stmt(s.body)

    def s_IfThenElse(self, s):
        cond = self.expr(s.condition)
        then_block = self.fn.append_basic_block("if.then")
        done = self.fn.append_basic_block("if.end")
        else_block = self.fn.append_basic_block("if.else") if s.else_case is not None else done
        self.b.cbranch(cond, then_block, else_block)
        self.b.position_at_end(then_block)
        self.stmt(s.then_case)
        self.b.branch(done)
        if s.else_case is not None:
            self.b.position_at_end(else_block)
            self.stmt(s.else_case)
            self.b.branch(done)
        self.b.position_at_end(done)

    def s_While(self, s):
        head = self.fn.append_basic_block("while.head")
        body = self.fn.append_basic_block("while.body")
        done = self.fn.append_basic_block("while.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(self.expr(s.condition), body, done)
        self.b.position_at_end(body)
        self.stmt(s.body)
        self.b.branch(head)
        self.b.position_at_end(done)

    def s_Allocate(self, s):
        elem = memory_type(s.dtype)
        elem_bytes = max(1, parse_dtype(s.dtype).bits * parse_dtype(s.dtype).lanes // 8)
        constant = all(isinstance(x, E.IntImm) for x in s.extents)
        count = 1
        for x in s.extents:
            count *= int(x.value) if isinstance(x, E.IntImm) else 1
        if constant and count * elem_bytes <= STACK_LIMIT:
            slot = self.alloca(ir.ArrayType(elem, max(count, 1)), ALIGN)
            self.vars[s.buffer_var] = slot
            self.aligned.add(s.buffer_var)
            self.stmt(s.body)
            return
        # the heap: aligned_alloc(64, bytes rounded up to 64), freed after the body
        size = ir.Constant(I64, elem_bytes)
        for x in s.extents:
            size = self.b.mul(size, self.cast(self.expr(x), x.dtype, "int64"))
        size = self.b.and_(self.b.add(size, ir.Constant(I64, ALIGN - 1)),
                           ir.Constant(I64, -ALIGN))
        size = self.b.select(self.b.icmp_signed("==", size, ir.Constant(I64, 0)),
                             ir.Constant(I64, ALIGN), size)
        alloc = self.cg.function("aligned_alloc", PTR, [I64, I64])
        ptr = self.b.call(alloc, [ir.Constant(I64, ALIGN), size])
        self.fail_if(self.b.icmp_unsigned("==", self.b.ptrtoint(ptr, I64), ir.Constant(I64, 0)),
                     None, abi.ERR_ALLOC)
        self.vars[s.buffer_var] = ptr
        self.aligned.add(s.buffer_var)
        self.stmt(s.body)
        self.b.call(self.cg.function("free", ir.VoidType(), [PTR]), [ptr])

    def s_For(self, s):
        if s.kind == S.ForKind.THREAD_BINDING:
            raise CodegenError(f"loop {s.loop_var.name_hint} is bound to a GPU thread; the CPU "
                               f"targets cannot run it", s)
        if s.kind == S.ForKind.PARALLEL:
            self._parallel(s)
            return
        lo = self.expr(s.min)
        hi = self.b.add(lo, self.expr(s.extent), flags=("nsw",)) if parse_dtype(
            s.loop_var.dtype).code == "int" else self.b.add(lo, self.expr(s.extent))
        self._loop(s.loop_var, lo, hi, s.body)

    def _loop(self, var, lo, hi, body):
        signed = parse_dtype(var.dtype).code == "int"
        pre = self.b.block
        head = self.fn.append_basic_block(f"for.{var.name_hint}")
        inner = self.fn.append_basic_block(f"for.{var.name_hint}.body")
        done = self.fn.append_basic_block(f"for.{var.name_hint}.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        i = self.b.phi(lo.type, name=var.name_hint)
        i.add_incoming(lo, pre)
        cmp = self.b.icmp_signed("<", i, hi) if signed else self.b.icmp_unsigned("<", i, hi)
        self.b.cbranch(cmp, inner, done)
        self.b.position_at_end(inner)
        self.vars[var] = i
        self.stmt(body)
        nxt = self.b.add(i, ir.Constant(lo.type, 1), flags=("nsw",) if signed else ())
        self.b.branch(head)
        i.add_incoming(nxt, self.b.block)
        self.b.position_at_end(done)
        del self.vars[var]

    # -- parallel loops ------------------------------------------------------------------
    def _parallel(self, s):
        cg = self.cg
        free = [v for v in vars_used(s) if v in self.vars and v is not s.loop_var]
        self.par_count += 1
        base = f"{self.fn.name.rsplit('_compute', 1)[0]}_parallel_{self.par_count}"
        if base in cg.module.globals:
            base = f"{self.fn.name}_parallel_{self.par_count}"
        # the chunk: compute(begin, end, free vars...) runs the loop over [begin, end)
        begin = E.Var("begin", "int64")
        end = E.Var("end", "int64")
        chunk = _FunctionBuilder(cg, base + "_compute", [begin, end] + free, self.noalias,
                                 {v for v in free if v in self.aligned}, self.info,
                                 self.buffers)
        lo = chunk.b.add(chunk.cast(chunk.vars[begin], "int64", s.loop_var.dtype),
                         chunk.expr(s.min))
        hi = chunk.b.add(chunk.cast(chunk.vars[end], "int64", s.loop_var.dtype),
                         chunk.expr(s.min))
        chunk._loop(s.loop_var, lo, hi, s.body)
        chunk.finish()
        # the body the runtime calls: body(begin, end, closure) unpacks the closure
        body = cg.function(base, I32, [I64, I64, PTR])
        bb = ir.IRBuilder(body.append_basic_block("entry"))
        values = [body.args[0], body.args[1]]
        for k, var in enumerate(free):
            word = bb.load(bb.gep(body.args[2], [ir.Constant(I64, k)], source_etype=I64),
                           typ=I64)
            values.append(_from_word(bb, word, var.dtype))
        bb.ret(bb.call(chunk.fn, values))
        # here: fill the closure, call the hook (or the body directly if no runtime is there)
        closure = self.alloca(ir.ArrayType(I64, max(len(free), 1)), 8)
        for k, var in enumerate(free):
            slot = self.b.gep(closure, [ir.Constant(I32, 0), ir.Constant(I32, k)],
                              source_etype=closure.allocated_type)
            self.b.store(_to_word(self.b, self.vars[var], var.dtype), slot)
        extent = self.cast(self.expr(s.extent), s.extent.dtype, "int64")
        hook = self.b.load(cg.hook(abi.PARALLEL_HOOK), typ=PTR)
        has_runtime = self.b.icmp_unsigned("!=", self.b.ptrtoint(hook, I64), ir.Constant(I64, 0))
        with self.b.if_else(has_runtime) as (pooled, serial):
            with pooled:
                fty = ir.FunctionType(I32, [PTR, PTR, I64])
                status_a = self.b.call(_IndirectCallee(hook, fty), [body, closure, extent])
                block_a = self.b.block
            with serial:
                status_b = self.b.call(body, [ir.Constant(I64, 0), extent, closure])
                block_b = self.b.block
        status = self.b.phi(I32)
        status.add_incoming(status_a, block_a)
        status.add_incoming(status_b, block_b)
        fail = self.fn.append_basic_block("parallel.fail")
        ok = self.fn.append_basic_block("parallel.ok")
        self.b.cbranch(self.b.icmp_signed("!=", status, ir.Constant(I32, 0)), fail, ok)
        self.b.position_at_end(fail)
        self.b.ret(status)
        self.b.position_at_end(ok)


class _IndirectCallee:
    """Makes ``IRBuilder.call`` emit ``call <fty> %ptr(...)`` with opaque pointers."""

    def __init__(self, pointer, fty):
        self.pointer = pointer
        self.function_type = fty
        self.type = PTR

    def get_reference(self):
        return self.pointer.get_reference()

    def __str__(self):
        return str(self.pointer)


def _splat_const(ty, value):
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, value)] * ty.count)
    return ir.Constant(ty, value)


__all__ = ["CodegenLLVM", "llvm_type"]
