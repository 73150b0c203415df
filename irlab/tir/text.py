"""A plain, indented text form of TIR for ``repr`` (not TVMScript; that printer comes later)."""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S

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
    t = expr_to_text
    if isinstance(x, E.Var):
        return x.name_hint
    if isinstance(x, E.IntImm):
        if x.dtype == "int32":
            return str(x.value)
        if x.dtype == "bool":
            return "True" if x.value else "False"
        return f"{x.dtype}({x.value})"
    if isinstance(x, E.FloatImm):
        return f"{x.dtype}({x.value!r})"
    if isinstance(x, E.StringImm):
        return repr(x.value)
    if isinstance(x, E.Cast):
        return f"{x.dtype}({t(x.value)})"
    if isinstance(x, E.Mod):
        return f"truncmod({t(x.a)}, {t(x.b)})"
    if isinstance(x, (E.Min, E.Max)):
        return f"{type(x).__name__.lower()}({t(x.a)}, {t(x.b)})"
    if isinstance(x, E.Not):
        return f"not {t(x.a)}"
    if isinstance(x, E.Select):
        return f"select({t(x.condition)}, {t(x.true_value)}, {t(x.false_value)})"
    if isinstance(x, E.BufferLoad):
        return f"{x.buffer.name}[{', '.join(t(i) for i in x.indices)}]"
    if isinstance(x, E.Ramp):
        return f"ramp({t(x.base)}, {t(x.stride)}, {x.lanes})"
    if isinstance(x, E.Broadcast):
        return f"broadcast({t(x.value)}, {x.lanes})"
    if isinstance(x, E.Shuffle):
        return f"shuffle({[t(v) for v in x.vectors]}, {[t(i) for i in x.indices]})"
    if isinstance(x, E.Let):
        return f"(let {x.var.name_hint} = {t(x.value)} in {t(x.body)})"
    if isinstance(x, E.Call):
        return f"{x.op}({', '.join(t(a) for a in x.args)})"
    return repr(x)


def stmt_to_text(s, indent=0) -> str:
    lines: list[str] = []
    _stmt(s, indent, lines)
    return "\n".join(lines)


def _region(r) -> str:
    return r.astext()


def _stmt(s, ind, lines):
    pad = "    " * ind
    t = expr_to_text
    if s is None:
        return
    if isinstance(s, S.SeqStmt):
        for x in s.seq:
            _stmt(x, ind, lines)
    elif isinstance(s, S.BufferStore):
        idx = ", ".join(t(i) for i in s.indices)
        lines.append(f"{pad}{s.buffer.name}[{idx}] = {t(s.value)}")
    elif isinstance(s, S.For):
        kind = "" if s.kind == S.ForKind.SERIAL else f" ({s.kind.name.lower()})"
        lines.append(f"{pad}for {s.loop_var.name_hint} in range({t(s.min)}, "
                     f"{t(s.min + s.extent)}){kind}:")
        _stmt(s.body, ind + 1, lines)
    elif isinstance(s, S.While):
        lines.append(f"{pad}while {t(s.condition)}:")
        _stmt(s.body, ind + 1, lines)
    elif isinstance(s, S.IfThenElse):
        lines.append(f"{pad}if {t(s.condition)}:")
        _stmt(s.then_case, ind + 1, lines)
        if s.else_case is not None:
            lines.append(f"{pad}else:")
            _stmt(s.else_case, ind + 1, lines)
    elif isinstance(s, S.LetStmt):
        lines.append(f"{pad}{s.var.name_hint} = {t(s.value)}")
        _stmt(s.body, ind, lines)
    elif isinstance(s, S.Allocate):
        ext = ", ".join(t(e) for e in s.extents)
        lines.append(f"{pad}{s.buffer_var.name_hint} = allocate(({ext}), {s.dtype})")
        _stmt(s.body, ind, lines)
    elif isinstance(s, S.DeclBuffer):
        lines.append(f"{pad}{s.buffer.name} = decl_buffer({s.buffer.astext()})")
        _stmt(s.body, ind, lines)
    elif isinstance(s, S.AttrStmt):
        lines.append(f"{pad}attr [{s.attr_key}] = {t(s.value)}")
        _stmt(s.body, ind, lines)
    elif isinstance(s, S.AssertStmt):
        lines.append(f"{pad}assert {t(s.condition)}, {t(s.message)}")
        _stmt(s.body, ind, lines)
    elif isinstance(s, S.Evaluate):
        lines.append(f"{pad}{t(s.value)}")
    elif isinstance(s, S.BlockRealize):
        _block(s, ind, lines)
    elif isinstance(s, S.Block):
        _block(S.BlockRealize([], True, s), ind, lines)
    else:
        lines.append(f"{pad}{type(s).__name__}")


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
