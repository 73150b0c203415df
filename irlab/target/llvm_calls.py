"""Calls in the LLVM code generator: intrinsics (LLVM's own, or the C math library per lane),
``if_then_else``, ``call_extern`` and ``T.call_packed`` through the runtime hook."""

from __future__ import annotations

import llvmlite.ir as ir

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.runtime import abi
from irlab.tir import expr as E
from irlab.target.llvm_types import (F64, I32, I64, PTR, _IndirectCallee, _LIBM, _LLVM_BINARY,
                                     _LLVM_UNARY, _splat_const, _to_word, _type_suffix, llvm_type)


class CallLowering:
    """Mixin of ``_FunctionBuilder``: ``visit_call`` and its helpers."""

    def visit_call(self, e):
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
