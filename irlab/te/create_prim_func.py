"""``create_prim_func``: TE tensors to a block-form ``PrimFunc`` (src/te/operation/
create_primfunc.cc, then what TVMScript's ``Complete`` adds).

- params ``var_<name>`` (handles) with buffers named after the tensors, in argument order;
  scalar Vars in the argument list become scalar params;
- attrs ``{"global_symbol": "main", "tir.noalias": True}``;
- an implicit root block allocating the tensors that are not arguments;
- per compute op, loops named after its iter vars (spatial then reduce) around one block per
  output (one block for a reduction) named after the op, with ``v_``-prefixed block vars bound
  to the loop vars, reads/writes inferred from the body, and ``init`` for reductions;
- an iter var whose domain uses an outer iter var goes one level deeper: its loops sit inside
  an outer block ``<name>_l<k>`` (TVM's nested iteration levels).
"""

from __future__ import annotations

from irlab.errors import TIRError
from irlab.ir.node import Node
from irlab.ir.structural import structural_equal
from irlab.tir import op as _op
from irlab.tir.buffer import BufferRegion, Range, decl_buffer
from irlab.tir.expr import Add, BufferLoad, IntImm, PrimExpr, Sub, Var, convert
from irlab.tir.function import PrimFunc
from irlab.tir.functor import DEEP, post_order_below, substitute
from irlab.tir.stmt import (Block, BlockRealize, BufferStore, For, IfThenElse, IterVar, LetStmt,
                            SeqStmt)
from irlab.te.index_dtype import override_index_dtype
from irlab.te.reduction import Reduce
from irlab.te.tensor import ComputeOp, PlaceholderOp, ProducerLoad, Tensor

# Block annotations TVM drops (LayoutFreePlaceholdersNormalizer's block list).
_DROPPED_ATTRS = ("const_matrix", "auto_scheduler_simplify_const_tensor_indices", "workload")
_LAYOUT_FREE = "layout_free_placeholders"


class _NameSupply:
    """Unique block names: ``B``, then ``B_1``, ``B_2``..."""

    def __init__(self):
        self.used = set()

    def fresh(self, base):
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name


class _Info:
    def __init__(self, args):
        self.args = args
        self.tensor2buffer = {}
        self.root_alloc = []
        self.names = _NameSupply()

    def is_arg(self, tensor):
        return any(isinstance(a, Tensor) and a == tensor for a in self.args)


# -- expression rewriting (ProducerLoad -> BufferLoad, axis var -> block var) -------------
def _rewrite(expr, var_map, info):
    """``expr`` with tensor reads turned into buffer loads and variables substituted."""
    memo = {}
    depth = [0]

    def visit(e):
        key = id(e)
        if key in memo:
            return memo[key]
        if depth[0] > DEEP:  # deep: rewrite what is below first, children before parents
            saved, depth[0] = depth[0], 0
            for node in post_order_below(e):
                if id(node) not in memo:
                    visit(node)
            depth[0] = saved
        depth[0] += 1
        try:
            out = _visit_node(e)
        finally:
            depth[0] -= 1
        memo[key] = out
        return out

    def _visit_node(e):
        if isinstance(e, ProducerLoad):
            buffer = info.tensor2buffer.get(e.producer)
            if buffer is None:
                raise TIRError(f"cannot find the buffer of tensor {e.producer.name}")
            out = BufferLoad(buffer, [visit(i) for i in e.indices])
        elif isinstance(e, Var):
            out = var_map.get(e, e)
        elif isinstance(e, Reduce):
            raise TIRError("a Reduce can only be the whole body of a compute")
        elif isinstance(e, PrimExpr):
            changes = {}
            for name in e._fields:
                value = getattr(e, name)
                if isinstance(value, PrimExpr):
                    new = visit(value)
                elif isinstance(value, tuple) and any(isinstance(v, PrimExpr) for v in value):
                    new = tuple(visit(v) if isinstance(v, PrimExpr) else v for v in value)
                    new = value if all(a is b for a, b in zip(new, value)) else new
                else:
                    continue
                if new is not value:
                    changes[name] = new
            out = e.with_fields(**changes) if changes else e
        else:
            out = e
        return out

    try:
        return visit(convert(expr))
    finally:
        del visit, _visit_node  # recursive closures: break their cycle now


# -- read/write regions ---------------------------------------------------------------------
def _collect_accesses(stmt, loop_vars):
    """(reads, writes): lists of (buffer, indices) in order of appearance; the vars of loops
    met inside are added to ``loop_vars``."""
    reads, writes = [], []

    def expr(root):
        # pre-order with an explicit stack (a body may be a deep expression); a shared
        # sub-expression is looked at once (its loads are the same accesses)
        stack, seen = [root], set()
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, BufferLoad):
                reads.append((e.buffer, e.indices))
            if isinstance(e, Node):
                children = []
                for name in e._fields:
                    value = getattr(e, name)
                    for v in value if isinstance(value, tuple) else (value,):
                        if isinstance(v, PrimExpr):
                            children.append(v)
                stack.extend(reversed(children))

    def stmt_(s):
        if isinstance(s, BufferStore):
            writes.append((s.buffer, s.indices))
            expr(s.value)
            for i in s.indices:
                expr(i)
        elif isinstance(s, SeqStmt):
            for x in s.seq:
                stmt_(x)
        elif isinstance(s, LetStmt):
            expr(s.value)
            stmt_(s.body)
        elif isinstance(s, IfThenElse):
            expr(s.condition)
            stmt_(s.then_case)
            if s.else_case is not None:
                stmt_(s.else_case)
        elif isinstance(s, BlockRealize):
            # An inner block: its iter values index the same buffers; use its regions.
            inner_r, inner_w = _collect_accesses(SeqStmt([s.block.init, s.block.body]),
                                                 loop_vars)
            m = {iv.var: v for iv, v in zip(s.block.iter_vars, s.iter_values)}
            reads.extend((b, tuple(substitute(i, m) for i in idx)) for b, idx in inner_r)
            writes.extend((b, tuple(substitute(i, m) for i in idx)) for b, idx in inner_w)
        elif isinstance(s, For):
            loop_vars.append(s.loop_var)
            stmt_(s.body)
        elif s is not None:
            raise TIRError(f"create_prim_func: unexpected statement {type(s).__name__}")

    stmt_(stmt)
    del expr, stmt_  # recursive closures: break their cycle now
    return reads, writes


def _split_offset(e):
    """``e`` as (base, constant offset); base None for a constant."""
    if isinstance(e, IntImm):
        return None, e.value
    if isinstance(e, Add) and isinstance(e.b, IntImm):
        return e.a, e.b.value
    if isinstance(e, Sub) and isinstance(e.b, IntImm):
        return e.a, -e.b.value
    return e, 0


def _dim_range(exprs, extent, loop_vars):
    first = exprs[0]
    if loop_vars and any(any(v is lv for lv in loop_vars for v in _free_vars(e))
                         for e in exprs):
        # Indexed by a loop inside the block: cover the whole dimension (TVM would relax
        # over the loop's range; this is a safe over-approximation).
        return Range.from_min_extent(IntImm(extent.dtype, 0), extent)
    if all(structural_equal(first, e) for e in exprs[1:]):
        return Range.from_min_extent(first, IntImm(first.dtype, 1))
    parts = [_split_offset(e) for e in exprs]
    base = parts[0][0]
    if all((b is None and base is None) or (b is not None and base is not None
                                              and structural_equal(b, base)) for b, _ in parts):
        lo, hi = min(o for _, o in parts), max(o for _, o in parts)
        dtype = first.dtype
        start = IntImm(dtype, lo) if base is None else _op.add(base, IntImm(dtype, lo))
        return Range.from_min_extent(start, IntImm(dtype, hi - lo + 1))
    # Not a constant distance apart: cover the whole dimension (a safe over-approximation).
    return Range.from_min_extent(IntImm(extent.dtype, 0), extent)


def _regions(accesses, loop_vars, exclude=()):
    order, by_buffer = [], {}
    for buffer, indices in accesses:
        if any(buffer is x for x in exclude):
            continue
        if id(buffer) not in by_buffer:
            order.append(buffer)
            by_buffer[id(buffer)] = []
        by_buffer[id(buffer)].append(indices)
    out = []
    for buffer in order:
        all_idx = by_buffer[id(buffer)]
        region = [_dim_range([idx[d] for idx in all_idx], buffer.shape[d], loop_vars)
                  for d in range(len(buffer.shape))]
        out.append(BufferRegion(buffer, region))
    return out


def _complete_block(block):
    """Reads/writes as TVMScript infers them; buffers written are left out of the reads."""
    loop_vars = []
    reads, writes = _collect_accesses(SeqStmt([block.init, block.body]), loop_vars)
    w = _regions(writes, loop_vars)
    r = _regions(reads, loop_vars, exclude=[x.buffer for x in w])
    return block.with_fields(reads=tuple(r), writes=tuple(w))


# -- compute ops to blocks -------------------------------------------------------------------
def _free_vars(expr):
    out = []

    def visit(e):
        if isinstance(e, Var):
            if not any(e is v for v in out):
                out.append(e)
        elif isinstance(e, Node):
            for name in e._fields:
                value = getattr(e, name)
                for v in value if isinstance(value, tuple) else (value,):
                    if isinstance(v, PrimExpr):
                        visit(v)

    visit(expr)
    del visit  # a recursive closure is a cycle (function -> cell -> function)
    return out


def _nested_levels(axes):
    """Axes grouped by depth: an axis whose domain uses another axis goes below it."""
    by_var = {id(a.var): a for a in axes}
    depth = {}

    def traverse(axis, stack=()):
        if id(axis) in depth:
            return depth[id(axis)]
        if id(axis) in stack:
            raise TIRError(f"iter var {axis.var.name_hint} has a domain depending on itself")
        d = 0
        for v in _free_vars(axis.dom.min) + _free_vars(axis.dom.extent):
            dep = by_var.get(id(v))
            if dep is not None:
                d = max(d, traverse(dep, stack + (id(axis),)) + 1)
        depth[id(axis)] = d
        return d

    for a in axes:
        traverse(a)
    levels = [[] for _ in range(max(depth.values(), default=0) + 1)]
    for a in axes:
        levels[depth[id(a)]].append(a)
    del traverse  # a recursive closure is a cycle (function -> cell -> function)
    return levels


class _Scope:
    """Loops, block iter vars and bindings of one nesting level."""

    def __init__(self):
        self.loops = []
        self.iters = []
        self.bindings = []
        self.store_indices = []
        self.remap = {}

    def add(self, axis, iv, value):
        self.iters.append(iv)
        self.bindings.append(value)
        if axis is not None:
            if iv.iter_type != IterVar.CommReduce:
                self.store_indices.append(iv.var)
            self.remap[axis.var] = iv.var


def _index_dtype(axis):
    bits = max(int(axis.dom.min.dtype[3:] or 32), int(axis.dom.extent.dtype[3:] or 32))
    return f"int{bits}"


def _in_index_dtype(e, dtype):
    """A constant bound in the loop's index dtype (``range(T.int64(0), n)`` for an int64
    ``n``, as TVM builds it); other expressions as they are."""
    if isinstance(e, IntImm) and e.dtype != dtype:
        return IntImm(dtype, e.value)
    return e


def _make_scopes(axes):
    levels = _nested_levels(axes)
    scopes, defined = [], set()
    for i, level in enumerate(levels):
        cur = _Scope()
        for axis in axes:
            dtype = _index_dtype(axis)
            if any(axis is a for a in level):
                lo, ext = axis.dom.min, axis.dom.extent
                if i > 0:
                    lo = substitute(lo, scopes[i - 1].remap)
                    ext = substitute(ext, scopes[i - 1].remap)
                loop_var = Var(axis.var.name_hint, dtype)
                lo, ext = _in_index_dtype(lo, dtype), _in_index_dtype(ext, dtype)
                dom = Range.from_min_extent(lo, ext)
                iv = IterVar(dom, Var("v_" + axis.var.name_hint, dtype), axis.iter_type,
                             axis.thread_tag)
                cur.loops.append((loop_var, dom))
                cur.add(axis, iv, loop_var)
                defined.add(id(axis))
            elif id(axis) in defined:
                prev = scopes[i - 1].remap[axis.var]
                iv = IterVar(Range.from_min_extent(prev, IntImm(dtype, 1)),
                             Var("v_" + axis.var.name_hint, dtype), axis.iter_type,
                             axis.thread_tag)
                cur.add(axis, iv, prev)
        if i == len(levels) - 1 and not cur.iters:
            # The leaf block needs at least one block var (a 0-d compute).
            cur.add(None, IterVar(Range.from_min_extent(0, 1), Var("vi"), IterVar.DataPar),
                    IntImm("int32", 0))
        scopes.append(cur)
    return scopes


def _output_buffers(op, info):
    buffers = []
    for k in range(op.num_outputs):
        tensor = op.output(k)
        buffer = decl_buffer(tensor.shape, tensor.dtype, tensor.name)
        info.tensor2buffer[tensor] = buffer
        buffers.append(buffer)
        if not info.is_arg(tensor):
            info.root_alloc.append(buffer)
    return buffers


def _annotations(op, info):
    def conv(v):
        return info.tensor2buffer.get(v, v) if isinstance(v, Tensor) else v

    out = {}
    for key, value in op.attrs.items():
        if key in _DROPPED_ATTRS:
            continue
        out[key] = tuple(conv(v) for v in value) if isinstance(value, (list, tuple)) \
            else conv(value)
    return out


def _init_stmt(indices, buffers, reduce, remap, info):
    starts = reduce.init or reduce.combiner.identity_element
    return SeqStmt.flatten(*[BufferStore(b, _rewrite(s, remap, info), indices)
                             for b, s in zip(buffers, starts)])


def _reduce_body(indices, buffers, reduce, remap, info):
    lhs = [BufferLoad(b, indices) for b in buffers]
    rhs = [_rewrite(s, remap, info) for s in reduce.source]
    combined = reduce.combiner(lhs, rhs)
    if len(buffers) == 1:
        body = BufferStore(buffers[0], combined[0], indices)
    else:
        # Several accumulators: compute all new values before storing any (TVM's Let vars).
        temps = [Var("v_" + b.name, b.dtype) for b in buffers]
        body = SeqStmt([BufferStore(b, t, indices) for b, t in zip(buffers, temps)])
        for t, value in reversed(list(zip(temps, combined))):
            body = LetStmt(t, value, body)
    cond = _rewrite(reduce.condition, remap, info)
    if not (isinstance(cond, IntImm) and cond.value):
        body = IfThenElse(cond, body)
    return body


def _compute_stmt(op, info):
    axes = list(op.axis) + list(op.reduce_axis)
    scopes = _make_scopes(axes)
    buffers = _output_buffers(op, info)
    annotations = _annotations(op, info)
    leaf = scopes[-1]
    reduce = op.body[0] if isinstance(op.body[0], Reduce) else None
    realizes = []
    if reduce is not None:
        block = Block(leaf.iters, (), (), info.names.fresh(op.name),
                      _reduce_body(leaf.store_indices, buffers, reduce, leaf.remap, info),
                      _init_stmt(leaf.store_indices, buffers, reduce, leaf.remap, info),
                      annotations=annotations)
        realizes.append(BlockRealize(leaf.bindings, True, _complete_block(block)))
    else:
        for k, (buffer, body) in enumerate(zip(buffers, op.body)):
            iters, remap = leaf.iters, leaf.remap
            if k > 0:
                # Fresh block vars for every block: each block defines its own.
                iters = [iv.with_fields(var=Var(iv.var.name_hint, iv.var.dtype))
                         for iv in leaf.iters]
                old = {id(a.var): b.var for a, b in zip(leaf.iters, iters)}
                remap = {k_: old.get(id(v), v) for k_, v in leaf.remap.items()}
            indices = [remap[a.var] for a in op.axis]
            store = BufferStore(buffer, _rewrite(body, remap, info), indices)
            block = Block(iters, (), (), info.names.fresh(buffer.name), store,
                          annotations=annotations)
            realizes.append(BlockRealize(leaf.bindings, True, _complete_block(block)))
    stmt = SeqStmt.flatten(*realizes)
    for i in range(len(scopes), 0, -1):
        cur = scopes[i - 1]
        if i < len(scopes):
            init = None
            if reduce is not None and any(iv.iter_type == IterVar.CommReduce
                                          for iv in cur.iters):
                init = _init_stmt(cur.store_indices, buffers, reduce, cur.remap, info)
            block = Block(cur.iters, (), (), info.names.fresh(f"{op.name}_l{i}"), stmt, init,
                          annotations=annotations)
            stmt = BlockRealize(cur.bindings, True, _complete_block(block))
        for loop_var, dom in reversed(cur.loops):
            stmt = For(loop_var, dom.min, dom.extent, body=stmt)
    return stmt


# -- ordering and the function ----------------------------------------------------------------
def _ordered_ops(tensors):
    """Operations in post-DFS order from the arguments (producers before consumers)."""
    order, seen = [], set()

    def visit(op):
        if id(op) in seen:
            return
        seen.add(id(op))
        for t in op.input_tensors:
            visit(t.op)
        order.append(op)

    for t in tensors:
        visit(t.op)
    del visit  # a recursive closure is a cycle (function -> cell -> function)
    return order


def create_prim_func(ops_or_tensors, index_dtype_override=None) -> PrimFunc:
    """The block-form PrimFunc computing the given tensors (inputs and outputs, in order;
    scalar Vars become scalar params)."""
    args = list(ops_or_tensors) if isinstance(ops_or_tensors, (list, tuple)) \
        else [ops_or_tensors]
    for a in args:
        if not isinstance(a, (Tensor, Var)):
            raise TIRError(f"create_prim_func takes tensors (and scalar Vars), got {a!r}")
    if index_dtype_override not in (None, "int32", "int64"):
        raise TIRError(f"create_prim_func: index_dtype_override must be int32 or int64, got "
                       f"{index_dtype_override!r}")
    info = _Info(args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    root_stmts = []
    for op in _ordered_ops(tensors):
        if isinstance(op, PlaceholderOp):
            tensor = op.output(0)
            if not info.is_arg(tensor):
                names = ", ".join(a.name if isinstance(a, Tensor) else a.name_hint
                                  for a in args)
                raise TIRError(f"placeholder {op.name} is read but is not a function argument "
                               f"(the arguments are {names})")
            info.tensor2buffer[tensor] = decl_buffer(op.shape, op.dtype, op.name)
        elif isinstance(op, ComputeOp):
            root_stmts.append(_compute_stmt(op, info))
        else:
            raise TIRError(f"unsupported operation {type(op).__name__}: only te.placeholder "
                           "and te.compute are allowed")
    params, buffer_map = [], []
    for a in args:
        if isinstance(a, Var):
            params.append(a)
            continue
        param = Var("var_" + a.name, "handle")
        params.append(param)
        buffer_map.append((param, info.tensor2buffer[a]))
    root = Block((), (), (), "root", SeqStmt.flatten(*root_stmts),
                 alloc_buffers=tuple(info.root_alloc))
    func = PrimFunc(params, BlockRealize((), True, root), None, buffer_map,
                    {"global_symbol": "main", "tir.noalias": True})
    func = _layout_free(func)
    return override_index_dtype(func, "int64") if index_dtype_override == "int64" else func


def _layout_free(func):
    """Move ``layout_free_placeholders`` block annotations naming params to a func attr."""
    if _LAYOUT_FREE not in dict(_all_annotations(func.body)):
        return func
    index = {id(b): i for i, (_, b) in enumerate(func.buffer_map.items())}
    param_index = {id(p): i for i, p in enumerate(func.params)}
    found = set()

    def fix(stmt):
        if isinstance(stmt, BlockRealize):
            return stmt.with_fields(block=fix(stmt.block))
        if isinstance(stmt, Block):
            ann = dict(stmt.annotations)
            if _LAYOUT_FREE in ann:
                rest = []
                for b in ann[_LAYOUT_FREE]:
                    if id(b) in index:
                        param = func.buffer_map.items()[index[id(b)]][0]
                        found.add(param_index[id(param)])
                    else:
                        rest.append(b)
                if rest:
                    ann[_LAYOUT_FREE] = tuple(rest)
                else:
                    del ann[_LAYOUT_FREE]
            return stmt.with_fields(body=fix(stmt.body), annotations=tuple(sorted(ann.items())))
        if isinstance(stmt, SeqStmt):
            return SeqStmt([fix(s) for s in stmt.seq])
        if isinstance(stmt, For):
            return stmt.with_fields(body=fix(stmt.body))
        return stmt

    func = func.with_fields(body=fix(func.body))
    del fix  # a recursive closure is a cycle (function -> cell -> function)
    return func.with_attr("layout_free_buffers", sorted(found)) if found else func


def _all_annotations(stmt):
    if isinstance(stmt, BlockRealize):
        yield from _all_annotations(stmt.block)
    elif isinstance(stmt, Block):
        yield from stmt.annotations
        yield from _all_annotations(stmt.body)
    elif isinstance(stmt, SeqStmt):
        for s in stmt.seq:
            yield from _all_annotations(s)
    elif isinstance(stmt, For):
        yield from _all_annotations(stmt.body)


__all__ = ["create_prim_func"]
