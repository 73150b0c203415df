"""LLVM codegen: lowered TIR -> LLVM IR built with ``llvmlite.ir``.

One visitor method per TIR node, as TVM's ``CodeGenLLVM``. For each PrimFunc ``f``:

* ``f_compute`` (internal) takes the typed parameters -- buffer data pointers marked
  ``noalias`` (when the PrimFunc says ``tir.noalias``) and ``align 64`` -- and holds the body;
* ``f`` (exported) is the entry of ``irlab.runtime.abi``: it unpacks the ``int64_t *args``
  slots and calls ``f_compute``, which is ``noinline`` (optimized once, with its parameters'
  alias facts; inlined, O2 would simplify the body a second time in its caller).

Vectors (``Ramp``, ``Broadcast``, vector ``BufferLoad``/``BufferStore``) become LLVM vector
types and operations. A ``parallel`` loop is outlined into ``f_parallel_k`` (its free
variables travel in an ``int64`` closure) and handed to the runtime's thread pool through the
``__irlab_parallel_for`` hook. Float ``a * b + c`` may contract to FMA; with
``-fast-math`` every fast-math flag is set.

Parts: ``llvm_types.py`` (types, argument slots, constants), ``llvm_calls.py`` (intrinsics,
``if_then_else``, ``call_extern``, ``T.call_packed``); this file the rest.
"""

from __future__ import annotations

import llvmlite.ir as ir

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.runtime.lru import LRUCache
from irlab.runtime import abi
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir import stmt as S
from irlab.tir.analysis import vars_used, written_buffer_data
from irlab.tir.functor import method_table
from irlab.target.llvm_types import (ALIGN, I1, I32, I64, I8, PTR, STACK_LIMIT, _IndirectCallee,
                                     _fptrunc, _from_word, splat_const, _to_word, _type_suffix,
                                     llvm_type, memory_type)
from irlab.target import deep_expr
from irlab.target.function_info import bound_vars, function_info
from irlab.target.llvm_calls import CallLowering
from irlab.target.llvm_contract import MAX_LOAD_STRIDE, UNROLL_COUNT_KEY


# llvmlite fills its table for escaping string constants on first use, unguarded: a thread
# reading the half-filled table of another one raised KeyError (two modules generated at once,
# e.g. irlab.build from several threads). One string constant printed at import fills it.
str(ir.Constant(ir.ArrayType(I8, 1), bytearray(1)))


class CodegenLLVM:
    """Collects PrimFuncs into one LLVM module.

    ``define_hooks=False`` makes a *part* of a library compiled in several objects: the hook
    variables are only declared (the library's glue object, ``glue_module``, defines them
    once with the metadata, so the parts link without duplicate symbols)."""

    def __init__(self, target, module_name="irlab_module", define_hooks=True):
        self.target = target
        self.module = ir.Module(name=module_name)
        self.module.triple = target.triple
        self.loop_ids = 0  # loops given an !llvm.loop ID (_FunctionBuilder._unroll_loop_id)
        self.infos: list[abi.FunctionInfo] = []
        self.define_hooks = define_hooks
        self._globals: dict = {}
        self._strings: dict = {}
        self._workspaces: list = []  # the cache slots of the function being generated

    # -- module-level helpers ---------------------------------------------------------------
    def hook(self, symbol) -> ir.GlobalVariable:
        var = self._globals.get(symbol)
        if var is None:
            var = ir.GlobalVariable(self.module, PTR, symbol)
            if self.define_hooks:
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

    def workspace_slot(self) -> ir.GlobalVariable:
        """A new cache slot for one heap allocation of the function being generated: a
        private pointer, null while no block is cached (``_FunctionBuilder.visit_allocate``)."""
        var = ir.GlobalVariable(self.module, PTR, f"__irlab_ws.{len(self.module.globals)}")
        var.initializer = ir.Constant(PTR, None)
        var.linkage = "internal"
        self._workspaces.append(var)
        return var

    def _release_workspaces(self, name):
        """``void <RELEASE_PREFIX><name>()``: free the blocks the function's slots cache (the
        runtime calls it when the library is freed)."""
        if not self._workspaces:
            return
        fn = self.function(abi.WORKSPACE_RELEASE_PREFIX + name, ir.VoidType(), [])
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        free = self.function("free", ir.VoidType(), [PTR])
        for slot in self._workspaces:
            b.call(free, [b.atomic_rmw("xchg", slot, ir.Constant(PTR, None), "acq_rel")])
        b.ret_void()
        self._workspaces = []

    def function(self, name, ret, args) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, args), name)

    def intrinsic(self, name, ty, nargs=1) -> ir.Function:
        return self.function(f"llvm.{name}.{_type_suffix(ty)}", ty, [ty] * nargs)

    def add_metadata(self, infos=None):
        """The library's ``__irlab_metadata`` string, describing ``infos`` (default: the
        functions of this module)."""
        text = abi.metadata_json(self.infos if infos is None else infos, str(self.target))
        data = bytearray(text.encode() + b"\0")
        ty = ir.ArrayType(I8, len(data))
        var = ir.GlobalVariable(self.module, ty, abi.METADATA_SYMBOL)
        var.initializer = ir.Constant(ty, data)
        var.global_constant = True

    def define_declared_hooks(self):
        """Turn this module's hook declarations into definitions: a one-part library."""
        for var in self._globals.values():
            var.initializer = ir.Constant(PTR, None)
        self.define_hooks = True

    @classmethod
    def glue_module(cls, target, infos) -> str:
        """The glue object of a library compiled in parts: the hook variables and the metadata
        of every part's functions (``infos``), as LLVM IR text."""
        cg = cls(target, "irlab_glue")
        for symbol in (abi.PARALLEL_HOOK, abi.PACKED_HOOK):
            cg.hook(symbol)
        cg.add_metadata(list(infos))
        return str(cg.module)

    # -- functions -----------------------------------------------------------------------
    def add_function(self, func, name: str) -> abi.FunctionInfo:
        """Generate the entry ``name`` for a lowered PrimFunc."""
        if name in self.module.globals:
            raise CodegenError(f"two functions are named {name!r} in one module")
        info = function_info(func, name, written=written_buffer_data(func))
        noalias = bool((func.attrs or {}).get("tir.noalias", False)) if func.attrs else False
        bound = bound_vars(func)
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
        self._workspaces = []
        compute.emit_body(func.body)
        self._release_workspaces(name)
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


class _FunctionBuilder(CallLowering):
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
        # not inlined into its caller (the ABI entry, or the parallel chunk's trampoline):
        # LLVM's O2 would simplify the body again after inlining, doubling the compile
        # time of every kernel (ResNet-18: 1.2 -> 0.8 s of LLVM's IR pipeline), for the
        # saving of one call per kernel (or per parallel chunk)
        self.fn.attributes.add("noinline")
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
        self.numbered: dict = {}  # see pure()
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
        method = method_table(type(self))[type(s)]
        if method is None:
            raise CodegenError(f"LLVM codegen cannot translate {type(s).__name__} "
                               f"(lower the function first: irlab.lower)", s)
        method(self, s)

    def expr(self, e) -> ir.Value:
        ahead = self.__dict__.get("_ahead")
        if ahead is None:  # the outermost call: a statement's expression
            self._ahead, self._depth = {}, 0
            try:
                return self.expr(e)
            finally:
                self._ahead = None
        hit = ahead.get(id(e))
        if hit is not None and hit[2] is self.b.block:  # defined earlier in this block
            return hit[1]
        if self._depth > deep_expr.DEEP:
            self._translate_below(e, ahead)
        method = method_table(type(self))[type(e)]
        if method is None:
            raise CodegenError(f"LLVM codegen cannot translate {type(e).__name__}: {e}", e)
        self._depth += 1
        try:
            return method(self, e)
        finally:
            self._depth -= 1

    def _translate_below(self, e, ahead):
        """A deep expression: translate its pure parts below ``e`` first (see deep_expr)."""
        saved, self._depth = self._depth, 0
        try:
            for node in deep_expr.evaluation_order(e, ahead):
                value = self.expr(node)
                ahead[id(node)] = (node, value, self.b.block)
        finally:
            self._depth = saved

    # -- expressions ---------------------------------------------------------------------
    def visit_var(self, e):
        value = self.vars.get(e)
        if value is None:
            raise CodegenError(f"variable {e.name_hint} is used outside its scope", e)
        return value

    visit_size_var = visit_var

    def visit_int_imm(self, e):
        return ir.Constant(llvm_type(e.dtype), int(e.value))

    def visit_float_imm(self, e):
        return ir.Constant(llvm_type(e.dtype), float(e.value))

    def visit_string_imm(self, e):
        return self.cg.string(e.value)

    def visit_cast(self, e):
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

    def pure(self, op, *operands, **kwargs):
        """``self.b.<op>(*operands, **kwargs)`` for an operation without side effects, or the
        value the same operation on the same operands already made in the current block
        (local value numbering). Unrolled tiles repeat their index arithmetic in every copy
        (``rco * 4096 + y % 7 * 512 + ...`` for each of a 7 x 4 tile's 28 statements): made
        once, ResNet-18's kernels are 10,041 LLVM instructions instead of 18,244 to generate,
        print, parse and optimize. Operands are keyed by identity (values) or by type and value
        (scalar constants, which are made anew for each use); others are not numbered."""
        key = [id(self.b.block), op, kwargs.get("flags")]
        for v in operands:
            if isinstance(v, ir.Constant):
                c = v.constant
                if not isinstance(c, (int, float)) or isinstance(c, bool):
                    return getattr(self.b, op)(*operands, **kwargs)
                key.append((id(v.type) if isinstance(v.type, ir.IntType) else str(v.type), c))
            else:
                key.append(id(v))
        key = tuple(key)
        hit = self.numbered.get(key)
        if hit is None:
            hit = self.numbered[key] = getattr(self.b, op)(*operands, **kwargs)
        return hit

    def _binary(self, e, int_op, uint_op, float_op):
        a, c = self.expr(e.a), self.expr(e.b)
        t = parse_dtype(e.a.dtype)
        if t.is_float:
            return getattr(self.b, float_op)(a, c, flags=self.fastmath)
        if t.code == "int" and t.bits >= 32 and int_op in ("add", "sub", "mul"):
            # int32/int64 overflow is undefined (TVM's nsw); int8/int16 arithmetic wraps
            return self.pure(int_op, a, c, flags=("nsw",))
        return self.pure(uint_op if t.code in ("uint", "bool") else int_op, a, c)

    def visit_add(self, e):
        return self._binary(e, "add", "add", "fadd")

    def visit_sub(self, e):
        return self._binary(e, "sub", "sub", "fsub")

    def visit_mul(self, e):
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
        minus_one = self.b.icmp_signed("==", c, splat_const(c.type, -1))
        return self.b.select(minus_one, splat_const(c.type, 1), c), minus_one

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

    def visit_div(self, e):
        if parse_dtype(e.dtype).is_float:
            return self._binary(e, "fdiv", "fdiv", "fdiv")
        a, c = self.expr(e.a), self.expr(e.b)
        c, minus_one = self._int_divisor(e, c)
        if parse_dtype(e.dtype).code == "uint":
            return self.pure("udiv", a, c)
        return self._negate_where(minus_one, a, self.pure("sdiv", a, c))

    def visit_mod(self, e):
        if parse_dtype(e.dtype).is_float:
            return self._binary(e, "frem", "frem", "frem")
        a, c = self.expr(e.a), self.expr(e.b)
        c, _ = self._int_divisor(e, c)  # x % -1 == x % 1 == 0
        return self.pure("urem" if parse_dtype(e.dtype).code == "uint" else "srem", a, c)

    def visit_floor_div(self, e):
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
            else splat_const(a.type, 1)), q))

    def visit_floor_mod(self, e):
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
        """``a op c ? a : c`` for integers. Floats propagate NaN as ``np.maximum`` does:
        ``(p op q || p != p) ? p : q`` (a NaN ``q`` fails the test and is picked), ``p`` being
        the constant operand if there is one, whose NaN test LLVM drops: relu ``max(x, 0)``
        becomes ``0 > x ? 0 : x``, one ``maxps`` on x86. (TVM picks ``c`` when ``a`` is NaN.)
        Under ``-fast-math`` (no NaNs assumed) the NaN test is left out."""
        t = parse_dtype(e.dtype)
        a, c = self.expr(e.a), self.expr(e.b)
        if t.is_float:
            p, q = (a, c) if O.never_nan(e.a) and not O.never_nan(e.b) else (c, a)
            cond = self.b.fcmp_ordered(op, p, q)
            if not self.cg.target.fast_math:
                cond = self.b.or_(cond, self.b.fcmp_unordered("uno", p, p))
            return self.b.select(cond, p, q)
        if t.code == "int":
            cond = self.b.icmp_signed(op, a, c)
        else:
            cond = self.b.icmp_unsigned(op, a, c)
        return self.b.select(cond, a, c)

    def visit_min(self, e):
        return self._minmax(e, "<")

    def visit_max(self, e):
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

    def visit_eq(self, e):
        return self._compare(e, "==")

    def visit_ne(self, e):
        return self._compare(e, "!=")

    def visit_lt(self, e):
        return self._compare(e, "<")

    def visit_le(self, e):
        return self._compare(e, "<=")

    def visit_gt(self, e):
        return self._compare(e, ">")

    def visit_ge(self, e):
        return self._compare(e, ">=")

    def visit_and(self, e):
        return self.b.and_(self.expr(e.a), self.expr(e.b))

    def visit_or(self, e):
        return self.b.or_(self.expr(e.a), self.expr(e.b))

    def visit_not(self, e):
        return self.b.not_(self.expr(e.a))

    def visit_select(self, e):
        cond = self.expr(e.condition)
        return self.b.select(cond, self.expr(e.true_value), self.expr(e.false_value))

    def visit_ramp(self, e):
        base, stride = self.expr(e.base), self.expr(e.stride)
        lanes = e.lanes
        vec = self.splat(base, lanes)
        steps = _shared(("steps", str(base.type), lanes), lambda: ir.Constant(
            ir.VectorType(base.type, lanes), [ir.Constant(base.type, i) for i in range(lanes)]))
        if isinstance(e.stride, E.IntImm) and e.stride.value == 1:
            return self.b.add(vec, steps)
        return self.b.add(vec, self.b.mul(self.splat(stride, lanes), steps))

    def visit_broadcast(self, e):
        return self.splat(self.expr(e.value), e.lanes)

    def splat(self, value, lanes):
        if isinstance(value, ir.Constant) and not isinstance(value.type, ir.VectorType):
            key = ("splat", str(value.type), value.get_reference(), lanes)
            return _shared(key, lambda: ir.Constant(ir.VectorType(value.type, lanes),
                                                    [value] * lanes))
        ty = ir.VectorType(value.type, lanes)
        one = self.b.insert_element(ir.Constant(ty, ir.Undefined), value, ir.Constant(I32, 0))
        mask = _shared(("mask", lanes), lambda: ir.Constant(ir.VectorType(I32, lanes),
                                                           [0] * lanes))
        return self.b.shuffle_vector(one, ir.Constant(ty, ir.Undefined), mask)

    def visit_shuffle(self, e):
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

    def visit_let(self, e):
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
        base = self.visit_var(buffer.data)
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
            idx = self.pure("sext", idx, I64)
        return self.b.gep(base, [idx], inbounds=True, source_etype=elem_ty)

    def _contiguous(self, index):
        return isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm) and \
            index.stride.value == 1

    def _short_stride(self, index, buffer_dtype):
        """Whether a vector load at ``index`` reads every 2nd to 4th element (a stride-2
        convolution's or pool's columns) of a buffer of 32- or 64-bit scalars."""
        t = parse_dtype(buffer_dtype)
        return isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm) and \
            2 <= index.stride.value <= MAX_LOAD_STRIDE and t.lanes == 1 and t.bits >= 32

    def _strided_load(self, base, index, elem, elem_bytes):
        """A strided vector load as one contiguous load of the span it covers, its lanes
        picked by a shuffle (on x86 vpermt2ps; LLVM's lane-by-lane alternative became gathers,
        ~10x slower than the scalar loop on recent Intel cores). The span's tail past the last
        lane read is masked off, so nothing beyond the accessed elements is touched."""
        stride, lanes = index.stride.value, index.lanes
        span = stride * (lanes - 1) + 1
        wide = ir.VectorType(elem, stride * lanes)
        mask_ty = ir.VectorType(ir.IntType(1), wide.count)
        mask = ir.Constant(mask_ty, [ir.Constant(ir.IntType(1), int(i < span))
                                     for i in range(wide.count)])
        load = self.cg.function(f"llvm.masked.load.{_type_suffix(wide)}.p0", wide,
                                [PTR, I32, mask_ty, wide])
        ptr = self._gep(base, self.expr(index.base), elem)
        value = self.b.call(load, [ptr, ir.Constant(I32, elem_bytes), mask,
                                   ir.Constant(wide, ir.Undefined)])
        picks = ir.Constant(ir.VectorType(I32, lanes), [ir.Constant(I32, i * stride)
                                                        for i in range(lanes)])
        return self.b.shuffle_vector(value, ir.Constant(wide, ir.Undefined), picks)

    def _clamped_load(self, e, index):
        """A vector load at a clamped ramp (an inlined or vectorized padding's
        ``max(ramp, lo)`` / ``min(ramp, hi)`` indices): the plain ramp load when no lane is
        clamped (a branch on the ramp's ends: all but a border's loads), else lane by lane.
        """
        offset, ramp, lows, highs = _clamped_ramp(index)
        last = ramp.base + ramp.stride * (ramp.lanes - 1)
        inside = None
        for bound, check in [(lo, ramp.base >= lo) for lo in lows] + \
                [(hi, last <= hi) for hi in highs]:
            inside = check if inside is None else E.And(inside, check)
        plain = E.Ramp(ramp.base if offset is None else offset + ramp.base, ramp.stride,
                       ramp.lanes)
        cond = self.expr(inside)
        with self.b.if_else(cond) as (fast, slow):
            with fast:
                value_a = self.visit_buffer_load(E.BufferLoad(e.buffer, [plain]))
                block_a = self.b.block
            with slow:
                value_b = self._lanes_load(e, index)
                block_b = self.b.block
        value = self.b.phi(value_a.type)
        value.add_incoming(value_a, block_a)
        value.add_incoming(value_b, block_b)
        return value

    def _lanes_load(self, e, index):
        """A vector load lane by lane, at the (flat, vector) ``index``."""
        base, index = self._address(e.buffer, index)
        elem = memory_type(e.buffer.dtype)
        elem_bytes = max(1, parse_dtype(e.buffer.dtype).bits // 8)
        idx = self.expr(index)
        value = ir.Constant(ir.VectorType(elem, idx.type.count), ir.Undefined)
        for i in range(idx.type.count):
            one = self.b.extract_element(idx, ir.Constant(I32, i))
            scalar = self.b.load(self._gep(base, one, elem), typ=elem, align=elem_bytes)
            value = self.b.insert_element(value, scalar, ir.Constant(I32, i))
        return value

    def visit_buffer_load(self, e):
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
        elif self._short_stride(index, e.buffer.dtype):
            value = self._strided_load(base, index, elem, elem_bytes)
        elif _clamped_ramp(index) is not None and parse_dtype(e.buffer.dtype).lanes == 1 and \
                isinstance(e.buffer.elem_offset, E.IntImm) and e.buffer.elem_offset.value == 0:
            value = self._clamped_load(e, index)  # (index: without an offset to add again)
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

    def visit_buffer_store(self, s):
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
    def visit_seq_stmt(self, s):
        for child in s.seq:
            self.stmt(child)

    def visit_evaluate(self, s):
        if isinstance(s.value, (E.IntImm, E.FloatImm)):
            return
        self.expr(s.value)

    def visit_let_stmt(self, s):
        self.vars[s.var] = self.expr(s.value)
        self.stmt(s.body)

    def visit_attr_stmt(self, s):
        self.stmt(s.body)

    def visit_decl_buffer(self, s):
        self.buffers.setdefault(s.buffer.data, s.buffer)
        self.stmt(s.body)

    def visit_assert_stmt(self, s):
        message = s.message.value if isinstance(s.message, E.StringImm) else str(s.message)
        cond = self.expr(s.condition)
        self.fail_if(self.b.not_(cond), message)
        self.stmt(s.body)

    def visit_if_then_else(self, s):
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

    def visit_while(self, s):
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

    def visit_allocate(self, s):
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
        # the heap: a block of ``bytes`` rounded up to 64 (+ a 64-byte header holding its
        # capacity), cached between calls in a slot of its own (see _heap_block)
        size = ir.Constant(I64, elem_bytes)
        for x in s.extents:
            size = self.b.mul(size, self.cast(self.expr(x), x.dtype, "int64"))
        size = self.b.and_(self.b.add(size, ir.Constant(I64, 2 * ALIGN - 1)),
                           ir.Constant(I64, -ALIGN))
        slot = self.cg.workspace_slot()
        block = self._heap_block(slot, size)
        self.vars[s.buffer_var] = self.b.gep(block, [ir.Constant(I64, ALIGN)], source_etype=I8)
        self.aligned.add(s.buffer_var)
        self.stmt(s.body)
        # give the block back to the slot; if another call (another thread) filled it
        # meanwhile, free it
        kept = self.b.extract_value(self.b.cmpxchg(slot, ir.Constant(PTR, None), block,
                                                   "acq_rel", "monotonic"), 1)
        free_bb = self.fn.append_basic_block("ws.free")
        done = self.fn.append_basic_block("ws.done")
        self.b.cbranch(kept, done, free_bb)
        self.b.position_at_end(free_bb)
        self.b.call(self.cg.function("free", ir.VoidType(), [PTR]), [block])
        self.b.branch(done)
        self.b.position_at_end(done)

    def _heap_block(self, slot, size):
        """A 64-byte aligned block of at least ``size`` bytes whose first word is its
        capacity: the one cached in ``slot`` when it is large enough (taken atomically, so
        two threads never share it), else a new one (aligned_alloc). A large temporary
        allocated and freed on every call costs page faults each time, once glibc returns
        its memory to the system: ResNet-18's 64-channel Winograd conv, with 3.6 MB of
        temporaries, took 2.0 ms that way and 0.76 ms with them cached (Xeon Emerald
        Rapids)."""
        null = ir.Constant(PTR, None)
        cached = self.b.atomic_rmw("xchg", slot, null, "acq_rel")
        check = self.fn.append_basic_block("ws.check")
        drop = self.fn.append_basic_block("ws.drop")
        fresh = self.fn.append_basic_block("ws.alloc")
        join = self.fn.append_basic_block("ws.ready")
        self.b.cbranch(self.b.icmp_unsigned("!=", cached, null), check, fresh)
        self.b.position_at_end(check)
        capacity = self.b.load(cached, typ=I64, align=ALIGN)
        self.b.cbranch(self.b.icmp_unsigned(">=", capacity, size), join, drop)
        self.b.position_at_end(drop)
        self.b.call(self.cg.function("free", ir.VoidType(), [PTR]), [cached])
        self.b.branch(fresh)
        self.b.position_at_end(fresh)
        alloc = self.cg.function("aligned_alloc", PTR, [I64, I64])
        ptr = self.b.call(alloc, [ir.Constant(I64, ALIGN), size])
        self.fail_if(self.b.icmp_unsigned("==", self.b.ptrtoint(ptr, I64), ir.Constant(I64, 0)),
                     None, abi.ERR_ALLOC)
        self.b.store(size, ptr, align=ALIGN)
        allocated = self.b.block
        self.b.branch(join)
        self.b.position_at_end(join)
        block = self.b.phi(PTR)
        block.add_incoming(cached, check)
        block.add_incoming(ptr, allocated)
        return block

    def visit_for(self, s):
        if s.kind == S.ForKind.THREAD_BINDING:
            raise CodegenError(f"loop {s.loop_var.name_hint} is bound to a GPU thread; the CPU "
                               f"targets cannot run it", s)
        if s.kind == S.ForKind.PARALLEL:
            self._parallel(s)
            return
        lo = self.expr(s.min)
        hi = self.b.add(lo, self.expr(s.extent), flags=("nsw",)) if parse_dtype(
            s.loop_var.dtype).code == "int" else self.b.add(lo, self.expr(s.extent))
        self._loop(s.loop_var, lo, hi, s.body,
                   unroll_count=(s.annotations or {}).get(UNROLL_COUNT_KEY))

    def _loop(self, var, lo, hi, body, unroll_count=None):
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
        latch = self.b.branch(head)
        if unroll_count is not None:
            latch.set_metadata("llvm.loop", self._unroll_loop_id(int(unroll_count)))
        i.add_incoming(nxt, self.b.block)
        self.b.position_at_end(done)
        del self.vars[var]

    def _unroll_loop_id(self, count):
        """A loop ID (``!llvm.loop``) asking LLVM's unroller for ``count`` copies of the body:
        a node whose first operand is itself (as LLVM requires), made unique per loop."""
        module = self.cg.module
        self.cg.loop_ids += 1
        hint = module.add_metadata([ir.MetaDataString(module, UNROLL_COUNT_KEY),
                                    ir.Constant(I32, count)])
        tag = module.add_metadata([ir.MetaDataString(module, f"irlab.loop.{self.cg.loop_ids}")])
        loop_id = module.add_metadata([tag, hint])
        loop_id.operands = (loop_id,) + loop_id.operands
        return loop_id

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


def _clamped_ramp(index):
    """``(offset or None, ramp, lows, highs)`` when the flat vector ``index`` is
    ``[broadcast(offset) +] min/max(...(ramp, broadcast(bound))...)`` with a constant positive
    ramp stride (what a vectorized padding reads), else None."""
    offset = None
    if isinstance(index, E.Add) and isinstance(index.a, E.Broadcast):
        offset, index = index.a.value, index.b
    lows, highs = [], []
    while isinstance(index, (E.Max, E.Min)) and isinstance(index.b, E.Broadcast):
        (lows if isinstance(index, E.Max) else highs).append(index.b.value)
        index = index.a
    if not (lows or highs) or not isinstance(index, E.Ramp):
        return None
    if not (isinstance(index.stride, E.IntImm) and index.stride.value > 0):
        return None
    return offset, index, lows, highs


# Constant vectors (splatted constants, broadcast masks, ramp steps) by what they hold: the
# same few recur in every vectorized kernel, and a shared one is printed once (llvmlite keeps
# a value's text), where each fresh one printed its lanes one by one -- a tenth of turning a
# model's kernels into LLVM IR text. Constants belong to no module, so sharing them is safe.
# Bounded: a long tuning session meets many distinct constants.
_SHARED_CONSTANTS = LRUCache(4096)


def _shared(key, make):
    constant = _SHARED_CONSTANTS.get(key)
    if constant is None:
        constant = _SHARED_CONSTANTS[key] = make()
    return constant


__all__ = ["CodegenLLVM", "llvm_type"]  # llvm_type: re-exported from llvm_types
