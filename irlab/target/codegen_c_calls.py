"""Calls in the C code generator: math functions, ``if_then_else``, ``call_extern`` and
``T.call_packed`` through the runtime hook (values and type codes filled on the stack)."""

from __future__ import annotations

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.runtime import abi
from irlab.tir import expr as E
from irlab.tir.intrinsics import INTRINSICS, register_lowering
from irlab.target.c_syntax import (OPERATOR_PRECEDENCE, P_ATOM, P_COND, P_EQ, P_MUL, P_UNARY,
                                   _DOUBLE_TO_BITS, _c_string, _comment, _paren_if_needed,
                                   _suffix, c_type, math_h_functions)


class CallWriter:
    """Mixin of ``_FunctionWriter``: how calls are written."""

    def visit_call(self, e):
        """By the intrinsic's record (``irlab.tir.intrinsics``): its C lowering, else its C
        math function (``f`` suffix for float32), else its C operator, else its C function."""
        record = INTRINSICS.get(e.op)
        lowering = record.lowering("c") if record is not None else None
        if lowering is not None:
            return lowering(self, e)
        if record is None or not (record.libm or record.c_operator or record.c_function):
            raise CodegenError(f"C codegen does not know the intrinsic {e.op}", e)
        args = list(e.args)
        if record.libm is not None:
            fn = self._libm_name(record.libm, e.dtype)
            text = f"{fn}({', '.join(self.expr(a) for a in args)})"
            return (text, P_ATOM) if parse_dtype(e.dtype).bits != 16 else (
                f"(_Float16){text}", P_UNARY)
        if record.c_operator is not None:
            op = record.c_operator
            p = OPERATOR_PRECEDENCE.get(op)
            if p is None or len(args) != 2:
                raise CodegenError(f"C codegen: {e.op} is spelled with {op!r}, not a binary C "
                                   f"operator on its {len(args)} argument(s)", e)
            return self._narrow(e, (f"{self.sub(args[0], p + 1)} {op} "
                                    f"{self.sub(args[1], p + 1)}", p))
        return f"{record.c_function}({', '.join(self.expr(a) for a in args)})", P_ATOM

    def call_extern(self, e):
        if not e.args or not isinstance(e.args[0], E.StringImm):
            raise CodegenError("call_extern needs the function name (a string) first", e)
        fname = e.args[0].value
        args = list(e.args[1:])
        if fname not in math_h_functions():
            types = ", ".join(c_type(a.dtype) if not isinstance(a, E.StringImm)
                              else "const char *" for a in args) or "void"
            decl = f"extern {c_type(e.dtype) if e.dtype != 'void' else 'void'} {fname}({types});"
            old = self.cg.externs.setdefault(fname, decl)
            if old != decl:
                raise CodegenError(f"call_extern {fname} is called with two signatures", e)
        return f"{fname}({', '.join(self.expr(a) for a in args)})", P_ATOM

    def call_packed(self, e):
        if not e.args or not isinstance(e.args[0], E.StringImm):
            raise CodegenError("T.call_packed needs the function name (a string) first", e)
        args = list(e.args[1:])
        n = len(args)
        self.open_block(f"{{  /* T.call_packed({_comment(e.args[0].value)}, ...) */")
        self.line(f"int64_t values[{max(n, 1)}];")
        self.line(f"int32_t codes[{max(n, 1)}];")
        for k, arg in enumerate(args):
            code, word = self.packed_value(arg, k)
            code, _, note = code.partition("  ")
            self.line(f"values[{k}] = {word};")
            self.line(f"codes[{k}] = {code};{'  ' + note if note else ''}")
        self.line(f"if ({abi.PACKED_HOOK} == NULL) {self.ret(abi.ERR_CALLBACK)}  "
                  f"/* no runtime attached */")
        self.line(f"if ({abi.PACKED_HOOK}({_c_string(e.args[0].value)}, values, codes, {n}) "
                  f"!= 0) {self.ret(abi.ERR_CALLBACK)}")
        self.close_block()

    def packed_value(self, arg, k):
        t = parse_dtype(arg.dtype)
        if isinstance(arg, E.StringImm):
            return f"{abi.CODE_STR}  /* str */", f"(int64_t)(intptr_t){_c_string(arg.value)}"
        self.pending, self.faults = [], []
        if t.code == "handle":
            buffer = self.buffers.get(arg) if isinstance(arg, E.Var) else None
            ptr = self.expr(arg)
            if buffer is None:
                return f"{abi.CODE_HANDLE}  /* handle */", f"(int64_t)(intptr_t){ptr}"
            bits = 8 if buffer.dtype == "bool" else parse_dtype(buffer.dtype).bits
            words = [f"(int64_t)(intptr_t){ptr}", str(len(buffer.shape)),
                     str(abi.dl_code(buffer.dtype)), str(bits),
                     str(parse_dtype(buffer.dtype).lanes)]
            words += [str(int(d.value)) if isinstance(d, E.IntImm) else
                      f"(int64_t){self.sub(d, P_UNARY)}" for d in buffer.shape]
            for decl in self.pending:
                self.line(decl)
            desc = E.Var(f"{buffer.name}_array", "handle")
            name = self.bind(desc)
            self.line("/* array descriptor: data, ndim, dtype code, bits, lanes, shape */")
            self.line(f"int64_t {name}[{len(words)}] = {{{', '.join(words)}}};")
            return f"{abi.CODE_ARRAY}  /* array */", f"(int64_t)(intptr_t){name}"
        value = self.expr(arg)
        for decl in self.pending:
            self.line(decl)
        self.check_faults()
        if t.is_float:
            self.cg.helper("irlab_double_to_bits", _DOUBLE_TO_BITS)
            return f"{abi.CODE_FLOAT}  /* float */", f"irlab_double_to_bits({value})"
        if t.code == "uint" or t.code == "bool":
            return f"{abi.CODE_UINT if t.code == 'uint' else abi.CODE_INT}  /* {t.code} */", \
                f"(int64_t)(uint64_t){_paren_if_needed(value)}"
        return f"{abi.CODE_INT}  /* int */", f"(int64_t){_paren_if_needed(value)}"


# -- lowerings of the intrinsics that no C function or operator spells ----------------------
# each is ``fn(writer, call) -> (text, precedence)``: writer is the _FunctionWriter
def _if_then_else(w, e):
    cond, t, f = e.args
    return f"{w.sub(cond, P_EQ)} ? {w.sub(t, P_COND + 1)} : {w.sub(f, P_COND)}", P_COND


def _call_packed_refused(w, e):
    raise CodegenError("C codegen: T.call_packed must be a statement of its own "
                       "(T.evaluate(T.call_packed(...)))", e)


def _one(dtype, value):
    return f"{value}f" if parse_dtype(dtype).bits == 32 else value


register_lowering("tir.if_then_else", "c", _if_then_else)
register_lowering("tir.likely", "c", lambda w, e: w.prec(e.args[0]))
register_lowering("tir.assume", "c", lambda w, e: ("0", P_ATOM))
for _name in ("tir.call_packed", "tir.tvm_call_packed"):
    register_lowering(_name, "c", _call_packed_refused)
for _name in ("tir.call_extern", "tir.call_pure_extern"):
    register_lowering(_name, "c", lambda w, e: w.call_extern(e))


@register_lowering("tir.sigmoid", "c")
def _sigmoid(w, e):
    one, fn = _one(e.dtype, "1.0"), w._libm_name("exp", e.dtype)
    # P_ATOM: a negative literal operand must not print as ``--1.0f`` (a decrement)
    return f"{one} / ({one} + {fn}(-{w.sub(e.args[0], P_ATOM)}))", P_MUL


@register_lowering("tir.rsqrt", "c")
def _rsqrt(w, e):
    one = _one(e.dtype, "1.0")
    return f"{one} / {w._libm_name('sqrt', e.dtype)}({w.expr(e.args[0])})", P_MUL


@register_lowering("tir.exp10", "c")
def _exp10(w, e):
    fn = w._libm_name("pow", e.dtype)
    return f"{fn}({_one(e.dtype, '10.0')}, {w.expr(e.args[0])})", P_ATOM


@register_lowering("tir.bitwise_not", "c")
def _bitwise_not(w, e):
    return w._narrow(e, (f"~{w.sub(e.args[0], P_UNARY)}", P_UNARY))


@register_lowering("tir.popcount", "c")
def _popcount(w, e):
    src = parse_dtype(e.args[0].dtype)
    fn = "__builtin_popcountll" if src.bits > 32 else "__builtin_popcount"
    cast = "(unsigned long long)" if src.bits > 32 else "(unsigned)"
    return f"({c_type(e.dtype)}){fn}({cast}{w.sub(e.args[0], P_UNARY)})", P_UNARY


@register_lowering("tir.clz", "c")
def _clz(w, e):
    bits = parse_dtype(e.args[0].dtype).bits
    fn, width = ("__builtin_clzll", 64) if bits > 32 else ("__builtin_clz", 32)
    cast = "(unsigned long long)" if bits > 32 else "(unsigned)"
    unsigned = f"(uint{bits}_t)" if bits < 32 else ""  # no sign extension of a narrow value
    x = w.sub(e.args[0], P_UNARY)
    count = f"{fn}({cast}{unsigned}{x})" + (f" - {width - bits}" if bits < width else "")
    # __builtin_clz(0) is undefined: clz(0) is the width
    return f"({c_type(e.dtype)})({x} == 0 ? {bits} : {count})", P_UNARY


@register_lowering("tir.reinterpret", "c")
def _reinterpret(w, e):
    (arg,) = e.args
    src, dst = c_type(arg.dtype), c_type(e.dtype)
    fname = f"irlab_reinterpret_{_suffix(arg.dtype)}_{_suffix(e.dtype)}"
    w.cg.helper(fname, f"static inline {dst} {fname}({src} x) {{\n"
                       f"  {dst} y;\n  memcpy(&y, &x, sizeof y);\n  return y;\n}}")
    return f"{fname}({w.expr(arg)})", P_ATOM
