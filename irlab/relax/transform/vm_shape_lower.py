"""VMShapeLower: symbolic shapes become run-time computation on the VM's shape heap.

Each Relax function allocates an int64 heap with one slot per symbolic variable (and per
compound dim such as ``n * 2``). On entry every parameter is checked against its struct info:
``vm.builtin.check_tensor_info`` (kind, ndim, dtype) and ``vm.builtin.match_shape``, which stores
a variable's first sight in its slot and asserts every later one; ``R.match_cast`` does the same
in the body. A failed check raises a ``VMError`` naming the function, the value, the dimension
and the symbolic variable. Compound dims are computed by a generated PrimFunc ``shape_func``
over the heap. Symbolic ``R.shape`` / ``R.prim_value`` arguments become
``vm.builtin.make_shape`` / ``make_prim_value`` reads of the heap::

    def main(x: R.Tensor((n, 4))):            heap = R.call_builtin_with_ctx(
        y = R.builtin.alloc_tensor(                "vm.builtin.alloc_shape_heap", (1,))
              R.shape([n, 4]), ...)     =>     _ = R.call_packed("vm.builtin.check_tensor_info",
                                                                 x, 2, "float32", "main: x ...")
                                               _ = R.call_packed("vm.builtin.match_shape", x,
                                                                 heap, 2, STORE, 0, IMM, 4, ...)
                                               s = R.call_packed("vm.builtin.make_shape", heap,
                                                                 2, LOAD, 0, IMM, 4)
                                               y = R.builtin.alloc_tensor(s, ...)
"""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.expr import GlobalVar
from irlab.relax.expr import (Call, ExternFunc, MatchCast, PrimValue, ShapeExpr, StringImm,
                              Tuple, TupleGetItem, Var, VarBinding)
from irlab.relax.op.builtin import call_builtin_with_ctx
from irlab.relax.struct_info import (FuncStructInfo, ObjectStructInfo, PrimStructInfo,
                                     ShapeStructInfo, TensorStructInfo, TupleStructInfo)
from irlab.relax.transform.binding_rewriter import (BindingRewriter, fill_struct_info,
                                                   relax_functions)
from irlab.runtime.relax_vm.builtin import MakeShapeCode, MatchShapeCode
from irlab.tir import expr as tir_expr
from irlab.tir.buffer import decl_buffer
from irlab.tir.function import PrimFunc
from irlab.tir.functor import substitute
from irlab.tir.stmt import BufferStore, SeqStmt
from irlab.transform import module_pass

LOWERED_ATTR = "relax.vm_shape_lowered"


def _is_static(dim) -> bool:
    return isinstance(dim, tir_expr.IntImm)


class _ShapeLower(BindingRewriter):
    """Lowers the shapes of one function; new shape PrimFuncs go to ``shape_funcs``."""

    def __init__(self, name, func, shape_funcs, taken_names):
        super().__init__()
        self.name = name
        self.shape_funcs = shape_funcs
        self.taken_names = taken_names
        self.slots: dict = {}  # str(PrimExpr) -> heap slot
        self.exprs: dict = {}  # heap slot -> PrimExpr
        self.known: set = set()  # slots holding their value at this point
        self.heap = Var("shape_heap", TensorStructInfo(dtype="int64", ndim=1))
        self.made: dict = {}  # str(dims) -> the Var a make_shape of them is bound to
        self._collect(func)

    # -- slots -------------------------------------------------------------------------------
    def _collect(self, func):
        for param in func.params:
            self._add_dims(param.struct_info_)
        for binding in _all_bindings(func.body):
            if isinstance(binding, MatchCast):
                self._add_dims(binding.struct_info)
            for value in _shape_values(binding.value):
                self._add_dim(value)
        for result in _all_results(func.body):
            for value in _shape_values(result):
                self._add_dim(value)

    def _add_dims(self, sinfo):
        for dim in _sinfo_dims(sinfo):
            self._add_dim(dim)

    def _add_dim(self, dim):
        if _is_static(dim):
            return
        for var in _tir_vars(dim):
            self._slot(var)
        self._slot(dim)

    def _slot(self, expr) -> int:
        key = str(expr)
        if key not in self.slots:
            self.slots[key] = len(self.slots)
            self.exprs[self.slots[key]] = expr
        return self.slots[key]

    # -- the prologue: the heap and the parameters' checks -----------------------------------
    def prologue(self, func):
        """The heap, then every parameter checked: variables are stored first (from any
        parameter), compound dims asserted once all parameters are seen."""
        out = [VarBinding(self.heap, call_builtin_with_ctx(
            "vm.builtin.alloc_shape_heap", [PrimValue(len(self.slots))],
            TensorStructInfo(dtype="int64", ndim=1)))]
        deferred = []
        for param in func.params:
            ctx = f"{self.name}: param {param.name_hint}: {param.struct_info_}"
            out += self._match(param, param.struct_info_, ctx, deferred)
        out += self._compute_compound()
        for check in deferred:
            out += self._assert_pending(*check)
        return out

    def rewrite_result(self, body):
        out = []
        if isinstance(body, (ShapeExpr, PrimValue)):
            body = self._make(body, out)
        elif isinstance(body, Tuple):
            body = self._lift_shapes(body, out)
        return out, body

    def rewrite_seq(self, seq, prologue=()):
        """A shape made before an ``If`` is reused inside its branches, never the reverse."""
        saved = dict(self.made)
        try:
            return super().rewrite_seq(seq, prologue)
        finally:
            self.made = saved

    def rewrite_binding(self, binding):
        out = []
        value = self._lift_shapes(binding.value, out)
        if isinstance(binding, MatchCast):
            ctx = f"{self.name}: match_cast {binding.var.name_hint}: {binding.struct_info}"
            out += self._match(value, binding.struct_info, ctx)
            out.append(VarBinding(binding.var, value, binding.span))
            return out
        out.append(binding if value is binding.value else
                   VarBinding(binding.var, value, binding.span))
        return out

    # -- checks --------------------------------------------------------------------------------
    def _match(self, value, sinfo, ctx, deferred=None) -> list:
        """Checks of ``value`` against ``sinfo``; compound dims are asserted at once, or
        later when ``deferred`` (a list) collects them."""
        if sinfo is None or isinstance(sinfo, ObjectStructInfo):
            return []
        if isinstance(sinfo, TensorStructInfo):
            dtype = "" if sinfo.is_unknown_dtype else sinfo.dtype
            out = [_packed("vm.builtin.check_tensor_info", value, PrimValue(sinfo.ndim),
                           StringImm(dtype), StringImm(ctx))]
            return out + (self._match_dims(value, sinfo.dims, ctx, deferred)
                          if sinfo.dims else [])
        if isinstance(sinfo, ShapeStructInfo):
            out = [_packed("vm.builtin.check_shape_info", value, PrimValue(sinfo.ndim),
                           StringImm(ctx))]
            return out + (self._match_dims(value, sinfo.values, ctx, deferred)
                          if sinfo.values else [])
        if isinstance(sinfo, PrimStructInfo):
            out = [_packed("vm.builtin.check_prim_value_info", value, StringImm(sinfo.dtype),
                           StringImm(ctx))]
            if sinfo.value is not None:
                out += self._match_dims(value, [sinfo.value], ctx, deferred, scalar=True)
            return out
        if isinstance(sinfo, TupleStructInfo):
            out = [_packed("vm.builtin.check_tuple_info", value, PrimValue(len(sinfo.fields)),
                           StringImm(ctx))]
            for k, field in enumerate(sinfo.fields):
                item = Var(f"item{k}", field)
                out.append(VarBinding(item, TupleGetItem(value, k)))
                out += self._match(item, field, f"{ctx} [field {k}]", deferred)
            return out
        if isinstance(sinfo, FuncStructInfo):
            return [_packed("vm.builtin.check_func_info", value, StringImm(ctx))]
        return []

    def _match_dims(self, value, dims, ctx, deferred, scalar=False) -> list:
        codes, pending = [], []
        for k, dim in enumerate(dims):
            slot = self.slots.get(str(dim))
            if _is_static(dim):
                codes += [MatchShapeCode.ASSERT_EQUAL_TO_IMM, dim.value]
            elif isinstance(dim, tir_expr.Var) and slot not in self.known:
                codes += [MatchShapeCode.STORE_TO_HEAP, slot]
                self.known.add(slot)
            elif slot in self.known:
                codes += [MatchShapeCode.ASSERT_EQUAL_TO_LOAD, slot]
            else:  # a compound dim: checked once its variables are known
                codes += [MatchShapeCode.NO_OP, 0]
                pending.append(k)
        names = ",".join("" if _is_static(d) else str(d) for d in dims)
        out = [self._match_call(value, codes, ctx, names, scalar)]
        check = (value, dims, pending, ctx, names, scalar)
        if deferred is not None:
            if pending:
                deferred.append(check)
            return out
        return out + self._compute_compound() + self._assert_pending(*check)

    def _assert_pending(self, value, dims, pending, ctx, names, scalar) -> list:
        """The second check of compound dims, once their variables are known."""
        if not pending:
            return []
        codes = []
        for k, dim in enumerate(dims):
            slot = self.slots.get(str(dim))
            if k in pending and slot not in self.known:
                raise DiagnosticError(f"{ctx}: cannot deduce the dimension {dim} (its "
                                      f"variables are not defined before)", value)
            codes += [MatchShapeCode.ASSERT_EQUAL_TO_LOAD, slot] if k in pending \
                else [MatchShapeCode.NO_OP, 0]
        return [self._match_call(value, codes, ctx, names, scalar)]

    def _match_call(self, value, codes, ctx, names, scalar):
        if scalar:
            return _packed("vm.builtin.match_prim_value", value, self.heap,
                           PrimValue(int(codes[0])), PrimValue(int(codes[1])), StringImm(ctx))
        return self._match_shape(value, codes, ctx, names)

    def _match_shape(self, value, codes, ctx, names):
        return _packed("vm.builtin.match_shape", value, self.heap, PrimValue(len(codes) // 2),
                       *[PrimValue(int(c)) for c in codes], StringImm(ctx), StringImm(names))

    def _compute_compound(self) -> list:
        """A shape_func call computing every compound dim whose variables are now known."""
        ready = []
        for slot, expr in self.exprs.items():
            if slot in self.known or isinstance(expr, tir_expr.Var) or _is_static(expr):
                continue
            if all(self.slots[str(v)] in self.known for v in _tir_vars(expr)):
                ready.append(slot)
        if not ready:
            return []
        gv = GlobalVar(self._fresh_name("shape_func"))
        self.shape_funcs.append((gv, self._shape_func(ready)))
        self.known.update(ready)
        return [VarBinding(Var("_", TupleStructInfo([])), Call(gv, [self.heap]))]

    def _fresh_name(self, base):
        name, k = base, 0
        while name in self.taken_names:
            k += 1
            name = f"{base}{k}"
        self.taken_names.add(name)
        return name

    def _shape_func(self, slots) -> PrimFunc:
        heap = decl_buffer((len(self.slots),), "int64", "H")
        handle = tir_expr.Var("H_handle", "handle")

        def load(var):
            index = tir_expr.IntImm("int64", self.slots[str(var)])
            return _as_dtype(tir_expr.BufferLoad(heap, [index]), var.dtype)

        stores = []
        for slot in slots:
            expr = self.exprs[slot]
            value = substitute(expr, lambda v: load(v) if str(v) in self.slots else None)
            if value.dtype != "int64":
                value = tir_expr.Cast("int64", value)
            stores.append(BufferStore(heap, value, [tir_expr.IntImm("int64", slot)]))
        body = stores[0] if len(stores) == 1 else SeqStmt(stores)
        return PrimFunc([handle], body, buffer_map={handle: heap})

    # -- symbolic shape values ------------------------------------------------------------------
    def _lift_shapes(self, value, out):
        """``value`` with symbolic ``R.shape`` / ``R.prim_value`` operands read from the heap."""
        if isinstance(value, (ShapeExpr, PrimValue)):
            return self._make(value, out, bind=False)
        if isinstance(value, Call):
            args = [self._make(a, out) for a in value.args]
            if all(a is b for a, b in zip(args, value.args)):
                return value
            return Call(value.op, args, value.attrs, value.sinfo_args, value.span)
        if isinstance(value, Tuple):
            fields = [self._make(f, out) for f in value.fields]
            if all(a is b for a, b in zip(fields, value.fields)):
                return value
            return Tuple(fields, value.span)
        return value

    def _make(self, expr, out, bind=True):
        if isinstance(expr, ShapeExpr) and not all(_is_static(d) for d in expr.values):
            codes = []
            for dim in expr.values:
                codes += [MakeShapeCode.USE_IMM, dim.value] if _is_static(dim) else \
                    [MakeShapeCode.LOAD_SHAPE, self._known_slot(dim)]
            call = Call(ExternFunc("vm.builtin.make_shape"),
                        [self.heap, PrimValue(len(expr.values)),
                         *[PrimValue(int(c)) for c in codes]],
                        sinfo_args=[ShapeStructInfo(ndim=len(expr.values))])
            sinfo = ShapeStructInfo(list(expr.values))
        elif isinstance(expr, PrimValue) and not _is_static(expr.value) and \
                not isinstance(expr.value, tir_expr.FloatImm):
            call = Call(ExternFunc("vm.builtin.make_prim_value"),
                        [self.heap, PrimValue(int(MakeShapeCode.LOAD_SHAPE)),
                         PrimValue(self._known_slot(expr.value))],
                        sinfo_args=[PrimStructInfo("int64")])
            sinfo = PrimStructInfo("int64")
        else:
            return expr
        if not bind:
            return call
        key = str(list(expr.values)) if isinstance(expr, ShapeExpr) else str(expr.value)
        known = self.made.get((type(expr), key))
        if known is not None:  # heap slots never change once stored: the same value
            return known
        var = Var("shape" if isinstance(expr, ShapeExpr) else "value", sinfo)
        out.append(VarBinding(var, call))
        self.made[(type(expr), key)] = var
        return var

    def _known_slot(self, dim) -> int:
        slot = self.slots.get(str(dim))
        if slot is None or slot not in self.known:
            raise DiagnosticError(f"{self.name}: the symbolic value {dim} is used before any "
                                  f"parameter or match_cast defines it", dim)
        return slot


def _packed(name, *args):
    return VarBinding(Var("_", ObjectStructInfo()), Call(ExternFunc(name), list(args)))


def _as_dtype(expr, dtype):
    return expr if expr.dtype == dtype else tir_expr.Cast(dtype, expr)


def _sinfo_dims(sinfo):
    if isinstance(sinfo, TensorStructInfo):
        return list(sinfo.dims or ())
    if isinstance(sinfo, ShapeStructInfo):
        return list(sinfo.values or ())
    if isinstance(sinfo, PrimStructInfo):
        return [sinfo.value] if sinfo.value is not None else []
    if isinstance(sinfo, TupleStructInfo):
        return [d for f in sinfo.fields for d in _sinfo_dims(f)]
    return []


def _shape_values(value):
    """Symbolic dims of the ShapeExpr / PrimValue operands of a binding's value."""
    operands = [value]
    if isinstance(value, Call):
        operands = list(value.args)
    elif isinstance(value, Tuple):
        operands = list(value.fields)
    dims = []
    for operand in operands:
        if isinstance(operand, ShapeExpr):
            dims += [d for d in operand.values if not _is_static(d)]
        elif isinstance(operand, PrimValue) and not _is_static(operand.value):
            dims.append(operand.value)
    return dims


def _tir_vars(expr):
    found, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, tir_expr.Var):
            if all(node is not f for f in found):
                found.append(node)
        elif isinstance(node, tir_expr.PrimExpr):
            stack.extend(c for c in node.children() if isinstance(c, tir_expr.PrimExpr))
    return found


def _all_bindings(seq):
    for block in seq.blocks:
        for binding in block.bindings:
            yield binding
            value = binding.value
            if type(value).__name__ == "If":
                yield from _all_bindings(value.true_branch)
                yield from _all_bindings(value.false_branch)


def _all_results(seq):
    """The result of ``seq`` and of the SeqExprs of its Ifs."""
    yield seq.body
    for binding in _all_bindings(seq):
        if type(binding.value).__name__ == "If":
            yield binding.value.true_branch.body
            yield binding.value.false_branch.body


def _lower(mod, ctx):
    out, shape_funcs = mod.copy(), []
    taken = {gv.name_hint for gv in mod.functions}
    for gv, func in relax_functions(mod):
        if func.attrs is not None and func.attrs.get(LOWERED_ATTR):
            continue
        lowered = _ShapeLower(gv.name_hint, func, shape_funcs, taken).rewrite_function(func)
        out[gv] = lowered.with_attr(LOWERED_ATTR, True)
    for gv, prim_func in shape_funcs:
        out[gv] = prim_func.with_attr("global_symbol", gv.name_hint)
    for gv, func in relax_functions(out):
        fill_struct_info(func, out)
    return out


def VMShapeLower():
    """Lower symbolic shapes and struct-info checks to VM builtins over a shape heap."""
    return module_pass(_lower, opt_level=0, name="VMShapeLower")


__all__ = ["VMShapeLower"]
