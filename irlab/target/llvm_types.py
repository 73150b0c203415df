"""LLVM types and value conversions shared by the LLVM code generator's parts: TIR dtypes
to llvmlite types, the int64 argument slots to values and back, constants."""

from __future__ import annotations

import llvmlite.ir as ir

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F64 = ir.DoubleType()
PTR = ir.PointerType()
ALIGN = 64
STACK_LIMIT = 256 * 1024  # bytes: larger (or dynamic) allocations go to the heap


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
    away = b.fcmp_ordered(">", b.select(b.fcmp_ordered("<", back, splat_const(
        value.type, 0.0)), b.fneg(back), back), b.select(b.fcmp_ordered(
            "<", value, splat_const(value.type, 0.0)), b.fneg(value), value))
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


def splat_const(ty, value):
    """The constant ``value`` of type ``ty``, in every lane when ``ty`` is a vector."""
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, value)] * ty.count)
    return ir.Constant(ty, value)
