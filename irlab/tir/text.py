"""A plain, indented text form of TIR for ``repr`` (not TVMScript; that printer comes later)."""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import method_table

_BINARY = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/", E.FloorDiv: "//",
           E.FloorMod: "%", E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">",
           E.GE: ">=", E.And: "and", E.Or: "or"}


def expr_to_text(e) -> str:
    """One-line text of an expression (iterative on long binary chains)."""
    out = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.append(x)
            continue
        op = _BINARY.get(type(x))
        if op is not None:
            stack.extend([")", x.b, f" {op} ", x.a, "("])
            continue
        out.append(_leaf_text(x))
    return "".join(out)


def _leaf_text(x) -> str:
    method = method_table(_TextForm)[type(x)]
    return repr(x) if method is None else method(x)


def stmt_to_text(s, indent=0) -> str:
    lines: list[str] = []
    _stmt(s, indent, lines)
    return "\n".join(lines)


def _region(r) -> str:
    return r.astext()


def _stmt(s, ind, lines):
    if s is None:
        return
    method = method_table(_TextForm)[type(s)]
    if method is None:
        lines.append(f"{'    ' * ind}{type(s).__name__}")
    else:
        method(s, "    " * ind, ind, lines)


class _TextForm:
    """The ``visit_<node>`` methods (non-binary expressions, statements) of the text
    form, found through ``tir.functor.method_table``; they need no state, hence static."""

    @staticmethod
    def visit_var(x):
        return x.name_hint

    visit_size_var = visit_var

    @staticmethod
    def visit_int_imm(x):
        if x.dtype == "int32":
            return str(x.value)
        if x.dtype == "bool":
            return "True" if x.value else "False"
        return f"{x.dtype}({x.value})"

    @staticmethod
    def visit_float_imm(x):
        return f"{x.dtype}({x.value!r})"

    @staticmethod
    def visit_string_imm(x):
        return repr(x.value)

    @staticmethod
    def visit_cast(x):
        return f"{x.dtype}({expr_to_text(x.value)})"

    @staticmethod
    def visit_mod(x):
        return f"truncmod({expr_to_text(x.a)}, {expr_to_text(x.b)})"

    @staticmethod
    def visit_min(x):
        return f"{type(x).__name__.lower()}({expr_to_text(x.a)}, {expr_to_text(x.b)})"

    visit_max = visit_min

    @staticmethod
    def visit_not(x):
        return f"not {expr_to_text(x.a)}"

    @staticmethod
    def visit_select(x):
        t = expr_to_text
        return f"select({t(x.condition)}, {t(x.true_value)}, {t(x.false_value)})"

    @staticmethod
    def visit_buffer_load(x):
        return f"{x.buffer.name}[{', '.join(expr_to_text(i) for i in x.indices)}]"

    @staticmethod
    def visit_ramp(x):
        return f"ramp({expr_to_text(x.base)}, {expr_to_text(x.stride)}, {x.lanes})"

    @staticmethod
    def visit_broadcast(x):
        return f"broadcast({expr_to_text(x.value)}, {x.lanes})"

    @staticmethod
    def visit_shuffle(x):
        t = expr_to_text
        return f"shuffle({[t(v) for v in x.vectors]}, {[t(i) for i in x.indices]})"

    @staticmethod
    def visit_let(x):
        t = expr_to_text
        return f"(let {x.var.name_hint} = {t(x.value)} in {t(x.body)})"

    @staticmethod
    def visit_call(x):
        return f"{x.op}({', '.join(expr_to_text(a) for a in x.args)})"

    @staticmethod
    def visit_seq_stmt(s, pad, ind, lines):
        for x in s.seq:
            _stmt(x, ind, lines)

    @staticmethod
    def visit_buffer_store(s, pad, ind, lines):
        idx = ", ".join(expr_to_text(i) for i in s.indices)
        lines.append(f"{pad}{s.buffer.name}[{idx}] = {expr_to_text(s.value)}")

    @staticmethod
    def visit_for(s, pad, ind, lines):
        t = expr_to_text
        kind = "" if s.kind == S.ForKind.SERIAL else f" ({s.kind.name.lower()})"
        lines.append(f"{pad}for {s.loop_var.name_hint} in range({t(s.min)}, "
                     f"{t(s.min + s.extent)}){kind}:")
        _stmt(s.body, ind + 1, lines)

    @staticmethod
    def visit_while(s, pad, ind, lines):
        lines.append(f"{pad}while {expr_to_text(s.condition)}:")
        _stmt(s.body, ind + 1, lines)

    @staticmethod
    def visit_if_then_else(s, pad, ind, lines):
        lines.append(f"{pad}if {expr_to_text(s.condition)}:")
        _stmt(s.then_case, ind + 1, lines)
        if s.else_case is not None:
            lines.append(f"{pad}else:")
            _stmt(s.else_case, ind + 1, lines)

    @staticmethod
    def visit_let_stmt(s, pad, ind, lines):
        lines.append(f"{pad}{s.var.name_hint} = {expr_to_text(s.value)}")
        _stmt(s.body, ind, lines)

    @staticmethod
    def visit_allocate(s, pad, ind, lines):
        ext = ", ".join(expr_to_text(e) for e in s.extents)
        lines.append(f"{pad}{s.buffer_var.name_hint} = allocate(({ext}), {s.dtype})")
        _stmt(s.body, ind, lines)

    @staticmethod
    def visit_decl_buffer(s, pad, ind, lines):
        lines.append(f"{pad}{s.buffer.name} = decl_buffer({s.buffer.astext()})")
        _stmt(s.body, ind, lines)

    @staticmethod
    def visit_attr_stmt(s, pad, ind, lines):
        lines.append(f"{pad}attr [{s.attr_key}] = {expr_to_text(s.value)}")
        _stmt(s.body, ind, lines)

    @staticmethod
    def visit_assert_stmt(s, pad, ind, lines):
        lines.append(f"{pad}assert {expr_to_text(s.condition)}, {expr_to_text(s.message)}")
        _stmt(s.body, ind, lines)

    @staticmethod
    def visit_evaluate(s, pad, ind, lines):
        lines.append(f"{pad}{expr_to_text(s.value)}")

    @staticmethod
    def visit_block_realize(s, pad, ind, lines):
        _block(s, ind, lines)

    @staticmethod
    def visit_block(s, pad, ind, lines):
        _block(S.BlockRealize([], True, s), ind, lines)


def _block(realize, ind, lines):
    pad, inner = "    " * ind, "    " * (ind + 1)
    t = expr_to_text
    block = realize.block
    lines.append(f'{pad}block "{block.name_hint}":')
    for iv, value in zip(block.iter_vars, realize.iter_values):
        kind = {S.IterVar.DataPar: "spatial", S.IterVar.CommReduce: "reduce"}.get(
            iv.iter_type, "opaque")
        lines.append(f"{inner}{iv.var.name_hint} = axis.{kind}({t(iv.dom.extent)}, {t(value)})")
    if not (isinstance(realize.predicate, E.IntImm) and realize.predicate.value):
        lines.append(f"{inner}where({t(realize.predicate)})")
    if block.reads or block.writes:
        lines.append(f"{inner}reads({', '.join(_region(r) for r in block.reads)})")
        lines.append(f"{inner}writes({', '.join(_region(r) for r in block.writes)})")
    for b in block.alloc_buffers:
        lines.append(f"{inner}{b.name} = alloc_buffer({b.astext()})")
    for m in block.match_buffers:
        lines.append(f"{inner}{m.buffer.name} = match_buffer({_region(m.source)})")
    if block.init is not None:
        lines.append(f"{inner}init:")
        _stmt(block.init, ind + 2, lines)
    _stmt(block.body, ind + 1, lines)


def func_to_text(f) -> str:
    params = []
    for p in f.params:
        buf = f.buffer_map.get(p)
        params.append(f"{p.name_hint}: {buf.astext()}" if buf is not None
                      else f"{p.name_hint}: {p.dtype}")
    head = f"def prim_func({', '.join(params)}):"
    attrs = f"\n    attrs {f.attrs!r}" if f.attrs is not None and len(f.attrs) else ""
    return head + attrs + "\n" + stmt_to_text(f.body, 1)
