"""Calls in the LLVM code generator: intrinsics (LLVM's own, or the C math library per lane),
``if_then_else``, ``call_extern`` and ``T.call_packed`` through the runtime hook."""

from __future__ import annotations

import llvmlite.ir as ir

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.runtime import abi
from irlab.tir import expr as E
from irlab.tir.intrinsics import INTRINSICS, register_lowering
from irlab.target.llvm_types import (F64, I1, I32, I64, PTR, _IndirectCallee, splat_const,
                                     _to_word, _type_suffix, llvm_type)
from irlab.target.llvm_vector_math import is_float32_vector, vector_exp


class CallLowering:
    """Mixin of ``_FunctionBuilder``: ``visit_call`` and its helpers."""

    def visit_call(self, e):
        """By the intrinsic's record (``irlab.tir.intrinsics``): its LLVM lowering, else its
        LLVM intrinsic, else its C math function called per lane."""
        record = INTRINSICS.get(e.op)
        if record is None:
            raise CodegenError(f"LLVM codegen does not know the intrinsic {e.op}", e)
        lowering = record.lowering("llvm")
        if lowering is not None:
            return lowering(self, e)
        if record.llvm is None and record.libm is None:
            raise CodegenError(f"LLVM codegen does not know the intrinsic {e.op}", e)
        args = [self.expr(a) for a in e.args]
        ty = llvm_type(e.dtype)
        if record.llvm is not None:
            return self._float_intrinsic(record.llvm, args, ty)
        return self._libm(record.libm, args, ty)

    def _float_intrinsic(self, name, args, ty):
        elem = ty.element if isinstance(ty, ir.VectorType) else ty
        if isinstance(elem, ir.HalfType) and name not in ("fabs", "floor", "ceil", "trunc",
                                                          "roundeven", "sqrt", "copysign"):
            # compute in float32: f16 libm calls are not available everywhere
            wide = ir.VectorType(ir.FloatType(), ty.count) if isinstance(
                ty, ir.VectorType) else ir.FloatType()
            args = [self.b.fpext(a, wide) for a in args]
            return self.b.fptrunc(self._float_call(name, args, wide), ty)
        return self._float_call(name, args, ty)

    def _float_call(self, name, args, ty):
        if name == "exp" and is_float32_vector(ty):
            return vector_exp(self.cg, self.b, args[0])  # not expf once per lane
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


# -- lowerings of the intrinsics that no LLVM intrinsic or C function spells -----------------
# each is ``fn(builder, call)``: builder is the _FunctionBuilder translating the call
def _operands(builder, call):
    return [builder.expr(a) for a in call.args], llvm_type(call.dtype)


register_lowering("tir.if_then_else", "llvm", lambda bld, e: bld._if_then_else(e))
register_lowering("tir.likely", "llvm", lambda bld, e: bld.expr(e.args[0]))
register_lowering("tir.assume", "llvm", lambda bld, e: ir.Constant(I32, 0))
for _name in ("tir.tvm_call_packed", "tir.call_packed"):
    register_lowering(_name, "llvm", lambda bld, e: bld._call_packed(e))
for _name in ("tir.call_extern", "tir.call_pure_extern"):
    register_lowering(_name, "llvm", lambda bld, e: bld._call_extern(e))


@register_lowering("tir.fma", "llvm")
def _fma(bld, e):
    args, ty = _operands(bld, e)
    return bld.b.call(bld.cg.intrinsic("fma", ty, 3), args)


@register_lowering("tir.rsqrt", "llvm")
def _rsqrt(bld, e):
    args, ty = _operands(bld, e)
    sqrt = bld.b.call(bld.cg.intrinsic("sqrt", ty), args)
    return bld.b.fdiv(splat_const(ty, 1.0), sqrt, flags=bld.fastmath)


@register_lowering("tir.sigmoid", "llvm")
def _sigmoid(bld, e):
    args, ty = _operands(bld, e)
    b = bld.b
    ex = bld._float_intrinsic("exp", [b.fneg(args[0])], ty)
    one = splat_const(ty, 1.0)
    return b.fdiv(one, b.fadd(one, ex, flags=bld.fastmath), flags=bld.fastmath)


@register_lowering("tir.isnan", "llvm")
def _isnan(bld, e):
    (a,), _ = _operands(bld, e)
    return bld.b.fcmp_unordered("uno", a, a)


def _magnitude_compare(op):
    def lower(bld, e):
        (a,), _ = _operands(bld, e)
        absolute = bld.b.call(bld.cg.intrinsic("fabs", a.type), [a])
        return bld.b.fcmp_ordered(op, absolute, splat_const(a.type, float("inf")))

    return lower


register_lowering("tir.isinf", "llvm", _magnitude_compare("=="))
register_lowering("tir.isfinite", "llvm", _magnitude_compare("<"))


def _instruction(method):
    def lower(bld, e):
        args, _ = _operands(bld, e)
        return getattr(bld.b, method)(*args)

    return lower


for _name, _method in (("tir.bitwise_and", "and_"), ("tir.bitwise_or", "or_"),
                       ("tir.bitwise_xor", "xor"), ("tir.bitwise_not", "not_"),
                       ("tir.shift_left", "shl")):
    register_lowering(_name, "llvm", _instruction(_method))


@register_lowering("tir.shift_right", "llvm")
def _shift_right(bld, e):
    args, _ = _operands(bld, e)
    signed = parse_dtype(e.dtype).code == "int"
    return bld.b.ashr(*args) if signed else bld.b.lshr(*args)


@register_lowering("tir.popcount", "llvm")
def _popcount(bld, e):
    args, ty = _operands(bld, e)
    return bld.b.call(bld.cg.function(f"llvm.ctpop.{_type_suffix(ty)}", ty, [ty]), args)


@register_lowering("tir.clz", "llvm")
def _clz(bld, e):
    args, ty = _operands(bld, e)
    src = args[0].type
    ctlz = bld.cg.function(f"llvm.ctlz.{_type_suffix(src)}", src, [src, I1])
    count = bld.b.call(ctlz, [args[0], ir.Constant(I1, 0)])  # 0 is defined: the width
    width, to = _int_width(src), _int_width(ty)
    if width == to:
        return count
    return bld.b.trunc(count, ty) if width > to else bld.b.zext(count, ty)


def _int_width(ty):
    return (ty.element if isinstance(ty, ir.VectorType) else ty).width


@register_lowering("tir.reinterpret", "llvm")
def _reinterpret(bld, e):
    args, ty = _operands(bld, e)
    return bld.b.bitcast(args[0], ty)
