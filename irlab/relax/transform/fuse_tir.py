"""FuseTIR: each call of a ``Primitive`` Relax function (made by ``FuseOps``) becomes one
``call_tir`` of a single PrimFunc holding the bodies of the group's PrimFuncs::

    gv = cls.fused_matmul_add_relu(x, w, b)   =>   gv = R.call_tir(cls.fused_matmul_add_relu,
                                                                   (x, w, b), out_sinfo=...)

The fused PrimFunc takes the group's inputs and output as buffers (shapes from their struct
info, int32 dims as ``emit_te`` makes them; a tuple output gives one buffer per field, as
``call_tir`` with a tuple ``out_sinfo`` expects), allocates each intermediate in its root
block, and runs the inlined bodies in order; each inlined body gets fresh loop / block
variables, its buffers and shape variables replaced by the fused function's (a body indexing
in int64, written against Relax shapes, is first narrowed to int32). Primitive functions and
PrimFuncs left unused are removed.
"""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relax import expr as rx
from irlab.relax.analysis import all_global_vars
from irlab.relax.expr_functor import ExprMutator
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.normalizer import bind_symbols, derive_call_ret
from irlab.relax.op.base import call_tir
from irlab.relax.struct_info import TensorStructInfo, TupleStructInfo
from irlab.relax.te_bridge import ShapeConverter, retype_index
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer, BufferRegion, decl_buffer
from irlab.tir.function import PrimFunc
from irlab.tir.functor import StmtExprMutator
from irlab.tir.transform.force_narrow_index import force_narrow_index_to_int32
from irlab.transform import module_pass

__all__ = ["FuseTIR"]


class _Inliner(StmtExprMutator):
    """A PrimFunc body with buffers / shape vars replaced and its own variables renewed."""

    def __init__(self, var_map, buffer_map):
        super().__init__()
        self.var_map = dict(var_map)
        self.buffer_map = dict(buffer_map)

    def visit_var(self, v):
        return self.var_map.get(v, v)

    visit_size_var = visit_var

    def _mutate_value(self, value):
        if isinstance(value, Buffer):
            return self.buffer_map.get(value, value)
        if isinstance(value, BufferRegion):
            region = super()._mutate_value(value)
            buffer = self.buffer_map.get(value.buffer, value.buffer)
            return region if buffer is value.buffer else region.with_fields(buffer=buffer)
        return super()._mutate_value(value)

    def visit_buffer_load(self, e):
        new = self._mutate_children(e)
        buffer = self.buffer_map.get(e.buffer, e.buffer)
        return new if buffer is e.buffer else E.BufferLoad(buffer, new.indices)

    def visit_buffer_store(self, s):
        new = self._mutate_stmt_children(s)
        buffer = self.buffer_map.get(s.buffer, s.buffer)
        return new if buffer is s.buffer else new.with_fields(buffer=buffer)

    def visit_for(self, s):
        var = E.Var(s.loop_var.name_hint, s.loop_var.dtype)
        self.var_map[s.loop_var] = var
        new = self._mutate_stmt_children(s)
        return new.with_fields(loop_var=var)

    def visit_block(self, block):
        if block.match_buffers:
            raise DiagnosticError(f"FuseTIR: block {block.name_hint} has match_buffers", block)
        iter_vars = []
        for iv in block.iter_vars:
            var = E.Var(iv.var.name_hint, iv.var.dtype)
            self.var_map[iv.var] = var
            iter_vars.append(S.IterVar(self._mutate_value(iv.dom), var, iv.iter_type,
                                       iv.thread_tag))
        allocs = []
        for buf in block.alloc_buffers:
            new = decl_buffer([self.visit_expr(d) for d in buf.shape], buf.dtype, buf.name)
            self.buffer_map[buf] = new
            allocs.append(new)
        new = self._mutate_stmt_children(block)
        return new.with_fields(iter_vars=tuple(iter_vars), alloc_buffers=tuple(allocs))


class _Fuser:
    """Builds the fused PrimFunc of one Primitive function."""

    def __init__(self, mod, func):
        self.mod = mod
        self.func = func
        self.conv = ShapeConverter()
        self.buffers: dict = {}  # relax Var -> fused Buffer
        self.tuple_buffers: dict = {}  # relax Var of a tuple -> [Buffer per field]
        self.names: set = set()

    def make_buffer(self, name, sinfo, where):
        if not isinstance(sinfo, TensorStructInfo) or sinfo.dims is None:
            raise DiagnosticError(f"FuseTIR: {name} needs a tensor of known shape, got "
                                  f"{sinfo}", where)
        return decl_buffer([self.conv.dim(d) for d in sinfo.dims], sinfo.dtype, name)

    def buffer(self, var, sinfo):
        buf = self.make_buffer(var.name_hint, sinfo, var)
        self.buffers[var] = buf
        return buf

    def build(self) -> tuple:
        """(PrimFunc, Relax exprs of its scalar params in the function's terms)."""
        func = self.func
        params, buffer_map = [], []
        for p in func.params:
            handle = E.Var(f"p_{p.name_hint}", "handle")
            params.append(handle)
            buffer_map.append((handle, self.buffer(p, p.struct_info)))
        bindings = [b for block in func.body.blocks for b in block.bindings]
        out_var = func.body.body
        allocs, stmts = [], []
        for binding in bindings:
            value, var = binding.value, binding.var
            if isinstance(value, rx.TupleGetItem):
                self.buffers[var] = self.tuple_buffers[value.tuple_value][value.index]
                continue
            if isinstance(var.struct_info, TupleStructInfo):
                outs = [self.make_buffer(f"{var.name_hint}_{k}", field, var)
                        for k, field in enumerate(var.struct_info.fields)]
                self.tuple_buffers[var] = outs
            else:
                outs = [self.buffer(var, var.struct_info)]
            allocs.extend(outs)
            body, local_allocs = self.inline(binding, outs)
            stmts.append(body)
            allocs.extend(local_allocs)
        outs = self.tuple_buffers.get(out_var) or [self.buffers[out_var]]
        allocs = [b for b in allocs if not any(b is o for o in outs)]
        for out in outs:  # a tuple-valued group (batch_norm's) has one output per field
            handle = E.Var(f"p_output_{out.name}", "handle")
            params.append(handle)
            buffer_map.append((handle, out))
        known = set()
        for _, buf in buffer_map:
            known.update(v for v in buf.shape if isinstance(v, E.Var))
        extra = [v for v in self.conv.to_relax if v not in known]
        root = S.Block((), (), (), "root", S.SeqStmt.flatten(*stmts), alloc_buffers=allocs)
        prim = PrimFunc(params + extra, S.BlockRealize((), True, root), None, buffer_map,
                        {"tir.noalias": True})
        return prim, [self.conv.to_relax[v] for v in extra]

    def inline(self, binding, out_buffers):
        call = binding.value
        if not (isinstance(call, rx.Call) and isinstance(call.op, Op)
                and call.op.name == "relax.call_tir"):
            raise DiagnosticError("FuseTIR: a Primitive function may only hold call_tir "
                                  "bindings", binding.value)
        # emit_te's kernels index in int32, TIR written against Relax shapes in int64
        callee = force_narrow_index_to_int32(self.mod[call.args[0]])
        args = list(call.args[1].fields)
        scalars = list(call.args[2].values) if len(call.args) > 2 else []
        buffers = [self.arg_buffer(a) for a in args] + list(out_buffers)
        var_map, buffer_map = {}, {}
        handles = [p for p in callee.params if p in callee.buffer_map]
        scalar_params = [p for p in callee.params if p not in callee.buffer_map]
        for handle, buf in zip(handles, buffers):
            own = callee.buffer_map[handle]
            buffer_map[own] = buf
            for dim, value in zip(own.shape, buf.shape):
                if isinstance(dim, E.Var) and dim not in var_map:
                    var_map[dim] = value
        for param, value in zip(scalar_params, scalars):
            var_map[param] = self.conv.dim(value)
        inliner = _Inliner(var_map, buffer_map)
        body, local_allocs = callee.body, []
        if isinstance(body, S.BlockRealize) and body.block.name_hint == "root":
            for buf in body.block.alloc_buffers:
                new = decl_buffer([inliner.visit_expr(d) for d in buf.shape], buf.dtype,
                                  buf.name)
                inliner.buffer_map[buf] = new
                local_allocs.append(new)
            body = body.block.body
        return self.rename_blocks(inliner.visit_stmt(body)), local_allocs

    def arg_buffer(self, arg):
        if isinstance(arg, rx.Var) and arg in self.buffers:
            return self.buffers[arg]
        raise DiagnosticError(f"FuseTIR: argument {arg!r} is not a tensor variable of the "
                              f"group", arg)

    def rename_blocks(self, stmt):
        """Block names unique within the fused function (``T_add``, ``T_add_1``...)."""
        fuser = self

        class _Rename(StmtExprMutator):
            def visit_block(self, block):
                new = self._mutate_stmt_children(block)
                name, k = block.name_hint, 0
                while name in fuser.names:
                    k += 1
                    name = f"{block.name_hint}_{k}"
                fuser.names.add(name)
                return new if name == block.name_hint else new.with_fields(name_hint=name)

        return _Rename().visit_stmt(stmt)


class _Rewriter(ExprMutator):
    def __init__(self, mod, primitives, fused):
        super().__init__(mod)
        self.primitives = primitives  # name -> Primitive relax Function
        self.fused = fused  # name -> (fused PrimFunc GlobalVar, scalar exprs)

    def visit_call_(self, call):
        call = super().visit_call_(call)
        op = call.op
        if not (isinstance(op, GlobalVar) and op.name_hint in self.primitives):
            return call
        new_gv, scalars = self.fused[op.name_hint]
        func = self.primitives[op.name_hint]
        mapping: dict = {}
        for param, arg in zip(func.params, call.args):
            bind_symbols(param.struct_info, arg.struct_info, mapping)
        tir_vars = [retype_index(s, mapping, "int64") for s in scalars]
        out = derive_call_ret(func.struct_info, call)
        if isinstance(out, TupleStructInfo):  # call_tir takes a list of output tensors
            out = list(out.fields)
        return call_tir(new_gv, list(call.args), out, tir_vars or None)


def _unused_prim_funcs(mod) -> list:
    used = set()
    for gv, func in mod.items():
        if isinstance(func, rx.Function):
            used.update(g.name_hint for g in all_global_vars(func))
    return [gv for gv, func in mod.items() if isinstance(func, PrimFunc)
            and gv.name_hint not in used
            and (func.attrs is None or "global_symbol" not in func.attrs.keys())]


def FuseTIR():  # noqa: N802 (TVM's name)
    """The pass turning calls of Primitive functions into call_tirs of fused PrimFuncs."""

    def transform(mod, ctx):
        primitives = {gv.name_hint: f for gv, f in mod.items() if rx.is_primitive(f)}
        if not primitives:
            return mod
        base = mod.copy()
        fused = {}
        for name, func in primitives.items():
            if func.struct_info_ is None:
                primitives[name] = func = BlockBuilder(mod).normalize(func)
            prim, scalars = _Fuser(mod, func).build()
            base.remove(name)
            gv = GlobalVar(name)
            base[gv] = prim.with_attr("op_pattern", int(_pattern_of(mod, func)))
            fused[name] = (gv, scalars)
        rewriter = _Rewriter(base, primitives, fused)
        for gv, func in base.items():
            if isinstance(func, rx.Function):
                rewriter.builder_.update_func(gv, rewriter.visit_expr(func))
        new = rewriter.builder_.get()
        for gv in _unused_prim_funcs(new):
            new.remove(gv)
        return new

    return module_pass(transform, opt_level=0, name="FuseTIR")


def _pattern_of(mod, func):
    """The largest pattern of the group's PrimFuncs."""
    patterns = [0]
    for block in func.body.blocks:
        for b in block.bindings:
            if not isinstance(b.value, rx.Call):
                continue
            callee = mod[b.value.args[0]]
            if callee.attrs is not None and "op_pattern" in callee.attrs.keys():
                patterns.append(int(callee.attrs["op_pattern"]))
    return max(patterns)
