"""C syntax for the C code generator: types, names, literals, operator precedence."""

from __future__ import annotations

import re

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir.functor import post_order_visit
from irlab.tir.intrinsics import INTRINSICS

ALIGN = 64
STACK_LIMIT = 256 * 1024  # bytes, as codegen_llvm: larger or dynamic allocations use the heap
CFLAGS = ("-O2", "-march=native", "-std=c99")
INDENT = "  "

_C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum
extern float for goto if inline int long register restrict return short signed sizeof static
struct switch typedef union unsigned void volatile while _Bool _Complex _Imaginary bool true
false NULL main free args closure words err values codes status begin end
""".split())

# C operator precedence (larger binds tighter)
P_ATOM, P_UNARY, P_MUL, P_ADD, P_SHIFT, P_REL, P_EQ = 16, 15, 13, 12, 11, 10, 9
P_BAND, P_XOR, P_BOR, P_LAND, P_LOR, P_COND = 8, 7, 6, 5, 4, 3

_BINOPS = {E.Add: ("+", P_ADD), E.Sub: ("-", P_ADD), E.Mul: ("*", P_MUL),
           E.EQ: ("==", P_EQ), E.NE: ("!=", P_EQ), E.LT: ("<", P_REL), E.LE: ("<=", P_REL),
           E.GT: (">", P_REL), E.GE: (">=", P_REL)}
# the infix operators an intrinsic may be spelled with (``Intrinsic.c_operator``)
OPERATOR_PRECEDENCE = {"&": P_BAND, "|": P_BOR, "^": P_XOR, "<<": P_SHIFT, ">>": P_SHIFT,
                       "+": P_ADD, "-": P_ADD, "*": P_MUL, "/": P_MUL, "%": P_MUL}


def math_h_functions() -> set:
    """The C functions ``math.h`` declares that intrinsics call (``call_extern`` of one needs
    no declaration): each intrinsic's ``libm`` name, for double and float, and ``exp10``."""
    names = {r.libm + s for r in INTRINSICS.values() if r.libm for s in ("", "f")}
    return names | {"exp10", "exp10f"}


def c_type(dtype, memory=False) -> str:
    """The C type of a scalar ``dtype`` (``memory``: how it sits in a buffer)."""
    t = parse_dtype(dtype)
    if t.lanes != 1:
        raise CodegenError(f"C codegen scalarizes vectors; got a {dtype} value to declare")
    if t.code == "bool":
        return "uint8_t" if memory else "bool"
    if t.code == "int":
        return f"int{t.bits}_t"
    if t.code == "uint":
        return f"uint{t.bits}_t"
    if t.code == "float":
        if t.bits in (32, 64):
            return "float" if t.bits == 32 else "double"
        if t.bits == 16:
            return "_Float16"
    if t.code == "handle":
        return "void *"
    if t.code == "void":
        return "void"
    raise CodegenError(f"C codegen has no type for {dtype}")


def _suffix(dtype) -> str:
    t = parse_dtype(dtype)
    return {"int": "i", "uint": "u", "float": "f", "bool": "u"}.get(t.code, "x") + str(t.bits)


def _lanes(e) -> int:
    return parse_dtype(e.dtype).lanes


def _elem(dtype) -> str:
    return str(parse_dtype(dtype).element_of())


def _identifier(hint: str) -> str:
    name = re.sub(r"[^0-9A-Za-z_]", "_", hint or "v") or "v"
    if name[0].isdigit():
        name = "v" + name
    if name.startswith("__"):
        name = "v" + name
    return name


def _c_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif " " <= ch <= "~" and ch != "?":
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode())
    return '"' + "".join(out) + '"'


def _contains(node, types) -> bool:
    hit = []
    post_order_visit(node, lambda n: hit.append(1) if isinstance(n, types) else None)
    return bool(hit)


def _call_name(e) -> str:
    name = e.op if isinstance(e.op, str) else getattr(e.op, "name", str(e.op))
    return name if name.startswith("tir.") else "tir." + name


_DOUBLE_TO_BITS = """static inline int64_t irlab_double_to_bits(double value) {
  int64_t word;
  memcpy(&word, &value, sizeof word);
  return word;
}"""


def _simple(e) -> bool:
    return not _contains(e, (E.BufferLoad, E.Call, E.Let))


def _paren_if_needed(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_.]+", text) else f"({text})"


def _comment(text: str) -> str:
    return text.replace("*/", "* /").replace("\n", " ")
