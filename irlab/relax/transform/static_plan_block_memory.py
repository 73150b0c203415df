"""StaticPlanBlockMemory: tensors of static shape allocated by ``R.builtin.alloc_tensor`` share
storages when their lifetimes do not overlap (one storage per tensor alive at once)::

    a = R.builtin.alloc_tensor(R.shape([4, 4]), "float32", 0)     s0 = R.memory.alloc_storage(
    _ = cls.exp(x, a)                                                   R.shape([64]), ...)
    b = R.builtin.alloc_tensor(R.shape([4, 4]), "float32", 0)  =>  s1 = ...
    _ = cls.exp(a, b)                                             a = R.memory.alloc_tensor(s0, ..)
    c = R.builtin.alloc_tensor(R.shape([4, 4]), "float32", 0)     b = R.memory.alloc_tensor(s1, ..)
    _ = cls.exp(b, c)                                             c = R.memory.alloc_tensor(s0, ..)

A tensor's last use is its last appearance as an argument of a PrimFunc call. Any other use
(returned, put in a tuple, passed to a Relax or packed function that might keep it) makes it
escape: its storage is never reused after it.

A symbolic shape is planned when the function bounds its variables (TVM's attribute
``tir_var_upper_bound``, e.g. ``{"n": 64}``): its storage has the size of the bound, the tensor
keeps its symbolic shape (checked to fit at run time). Otherwise it keeps
``R.builtin.alloc_tensor`` (a fresh allocation per call).
"""

from __future__ import annotations

from dataclasses import dataclass

from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relax.expr import (BindingBlock, Call, Function, If, SeqExpr, Tuple, TupleGetItem,
                              Var, VarBinding)
from irlab.relax.op.memory import alloc_storage, alloc_tensor
from irlab.relax.struct_info import ObjectStructInfo
from irlab.runtime.dtype import parse_dtype
from irlab.relax.transform.binding_rewriter import update_functions
from irlab.arith import Analyzer
from irlab.tir import expr as tir_expr
from irlab.tir.functor import substitute
from irlab.transform import module_pass


@dataclass
class _Storage:
    nbytes: int
    var: Var | None = None


class _Planner:
    """Plans one function's top-level bindings: ``storage_of[binding var]`` -> storage."""

    def __init__(self, mod, func):
        self.mod = mod
        self.bindings = [b for block in func.body.blocks for b in block.bindings]
        self.result = func.body.body
        self.bounds = _upper_bounds(func)
        self.token_of: dict = {}  # var (an allocation or an alias of one) -> allocating var
        self.nbytes: dict = {}  # allocating var -> size in bytes
        self.last_use: dict = {}
        self.escaped: set = set()
        self.storage_of: dict = {}
        self.storages: list = []

    def run(self):
        for pos, binding in enumerate(self.bindings):
            self._scan(pos, binding)
        for var in _vars_in(self.result):
            self._escape(var)
        free: list = []
        for pos, binding in enumerate(self.bindings):
            if binding.var in self.nbytes:
                self.storage_of[binding.var] = self._take(free, self.nbytes[binding.var])
            for token, last in self.last_use.items():
                if last == pos and token not in self.escaped:
                    free.append(self.storage_of[token])
            for token in self.nbytes:  # never used after its allocation
                if token is binding.var and token not in self.last_use \
                        and token not in self.escaped:
                    free.append(self.storage_of[token])
        return self

    def _scan(self, pos, binding):
        value = binding.value
        size = _static_alloc_bytes(value, self.bounds)
        if size is not None and isinstance(binding, VarBinding):
            self.token_of[binding.var] = binding.var
            self.nbytes[binding.var] = size
        elif isinstance(value, Var) and value in self.token_of and \
                isinstance(binding, VarBinding):
            self.token_of[binding.var] = self.token_of[value]
        elif isinstance(value, Call) and self._is_prim_func_call(value):
            for arg in value.args:
                if isinstance(arg, Var) and arg in self.token_of:
                    self.last_use[self.token_of[arg]] = pos
                else:
                    for var in _vars_in(arg):
                        self._escape(var)
        else:
            for var in _vars_in(value):
                self._escape(var)

    def _is_prim_func_call(self, call) -> bool:
        op = call.op
        return isinstance(op, GlobalVar) and op in self.mod and \
            type(self.mod[op]).__name__ == "PrimFunc"

    def _escape(self, var):
        token = self.token_of.get(var)
        if token is not None:
            self.escaped.add(token)

    def _take(self, free, nbytes) -> _Storage:
        """A free storage that fits (the smallest), else the largest free one grown, else a
        new one."""
        fits = [s for s in free if s.nbytes >= nbytes]
        if fits:
            choice = min(fits, key=lambda s: s.nbytes)
        elif free:
            choice = max(free, key=lambda s: s.nbytes)
            choice.nbytes = nbytes
        else:
            choice = _Storage(nbytes)
            self.storages.append(choice)
            return choice
        free.remove(choice)
        return choice


def _upper_bounds(func) -> dict:
    """Symbolic variable name -> upper bound, from the ``tir_var_upper_bound`` attribute."""
    bounds = func.attrs.get("tir_var_upper_bound") if func.attrs is not None else None
    if not bounds:
        return {}
    return {str(name): int(getattr(value, "value", value)) for name, value in
            dict(bounds).items()}


def _static_alloc_bytes(value, bounds):
    """Bytes of a ``builtin.alloc_tensor`` whose shape is static or bounded, else None."""
    if not (isinstance(value, Call) and isinstance(value.op, Op)
            and value.op.name == "relax.builtin.alloc_tensor"):
        return None
    dims = getattr(value.args[0], "values", None)
    if dims is None:
        return None
    count = 1
    for dim in dims:
        bound = _bound(dim, bounds)
        if bound is None:
            return None
        count *= bound
    dtype = parse_dtype(value.args[1].value)
    itemsize = 1 if dtype.code == "bool" else (dtype.bits * dtype.lanes + 7) // 8
    return count * itemsize


def _bound(dim, bounds):
    """An upper bound of a dim (an integer), or None. Dims are products and sums of
    non-negative terms here, so bounding each variable bounds the dim."""
    if isinstance(dim, tir_expr.IntImm):
        return dim.value
    if not bounds:
        return None
    names = {}
    for node in _prim_vars(dim):
        if node.name_hint not in bounds:
            return None
        names[node] = tir_expr.IntImm(dim.dtype, bounds[node.name_hint])
    bounded = Analyzer().simplify(substitute(dim, names))
    return bounded.value if isinstance(bounded, tir_expr.IntImm) else None


def _prim_vars(expr):
    found, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, tir_expr.Var):
            found.append(node)
        elif isinstance(node, tir_expr.PrimExpr):
            stack.extend(c for c in node.children() if isinstance(c, tir_expr.PrimExpr))
    return found


def _vars_in(expr):
    """Relax variables an expression reads (If branches included)."""
    if isinstance(expr, Var):
        return [expr]
    if isinstance(expr, Call):
        return [v for a in expr.args for v in _vars_in(a)]
    if isinstance(expr, Tuple):
        return [v for f in expr.fields for v in _vars_in(f)]
    if isinstance(expr, TupleGetItem):
        return _vars_in(expr.tuple_value)
    if isinstance(expr, If):
        return _vars_in(expr.cond) + _vars_in(expr.true_branch) + _vars_in(expr.false_branch)
    if isinstance(expr, SeqExpr):
        inner = [v for b in expr.blocks for x in b.bindings for v in _vars_in(x.value)]
        return inner + _vars_in(expr.body)
    return []


def _plan_function(mod, func):
    planner = _Planner(mod, func).run()
    if not planner.storage_of:
        return func
    prologue = []
    for k, storage in enumerate(planner.storages):
        storage.var = Var(f"storage{k}", ObjectStructInfo())
        prologue.append(VarBinding(storage.var, alloc_storage([storage.nbytes], 0, "global",
                                                              "uint8")))
    blocks = [BindingBlock(prologue)]
    for block in func.body.blocks:
        bindings = []
        for binding in block.bindings:
            storage = planner.storage_of.get(binding.var)
            if storage is not None:
                shape, dtype = binding.value.args[0], binding.value.args[1]
                binding = VarBinding(binding.var, alloc_tensor(storage.var, 0, shape, dtype),
                                     binding.span)
            bindings.append(binding)
        blocks.append(type(block)(bindings, block.span))
    body = SeqExpr(blocks, func.body.body, func.body.span)
    return Function(func.params, body, func.ret_struct_info, func.is_pure, func.attrs,
                    func.span)


def StaticPlanBlockMemory():
    """Share storages between tensors of static shape whose lifetimes do not overlap."""

    def run(mod, ctx):
        return update_functions(mod, lambda gv, f: _plan_function(mod, f))

    return module_pass(run, opt_level=0, name="StaticPlanBlockMemory")


__all__ = ["StaticPlanBlockMemory"]
