"""VMCodeGen: lowered Relax functions become Relax VM bytecode through ``ExecBuilder``.

It expects the output of the lowering pipeline: no dataflow blocks, no ``call_tir`` (explicit
allocations and PrimFunc calls instead), shapes either static or read from the shape heap. Each
bound variable gets a register (an alias of a variable or a constant gets none); a PrimFunc or
a packed function is called by its symbol, another Relax function by name; ``If`` becomes
``If``/``Goto`` around the two branches, which write the same register.
"""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.op import Op
from irlab.relax.exec_builder import ExecBuilder
from irlab.relax.expr_dispatch import visit_method
from irlab.relax.op.registry import call_packed_name
from irlab.relax.expr import (Call, ExternFunc, Function, If, MatchCast, SeqExpr, Tuple,
                              TupleGetItem, Var)
from irlab.relax.transform.attach_global_symbol import global_symbol
from irlab.runtime.container import ShapeTuple
from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as tir_expr

_LOWER_FIRST = {"relax.call_tir": "CallTIRRewrite", "relax.call_dps_packed": "CallTIRRewrite",
                "relax.call_pure_packed": "RemovePurityChecking"}


class _FunctionCodeGen:
    """Emits one Relax function into ``builder``."""

    def __init__(self, builder, mod, name, func):
        self.ib = builder
        self.mod = mod
        self.name = name
        self.func = func
        self.values: dict = {}  # relax Var -> instruction argument
        self.next_register = len(func.params)
        self.killed = _killed_vars(func.body)

    def run(self):
        params = [p.name_hint for p in self.func.params]
        with self.ib.function(self.name, num_inputs=len(params), param_names=params):
            for k, param in enumerate(self.func.params):
                self.values[param] = self.ib.r(k)
            result = self.seq(self.func.body)
            self.ib.emit_ret(self.in_register(result))

    def fresh(self):
        register = self.ib.r(self.next_register)
        self.next_register += 1
        return register

    def in_register(self, arg, dst=None):
        """``arg`` in a register (a constant or an immediate is copied into one)."""
        if arg.is_register and dst is None:
            return arg
        dst = dst or self.fresh()
        self.ib.emit_call("vm.builtin.copy", [arg], dst)
        return dst

    # -- sequences -------------------------------------------------------------------------
    def seq(self, seq: SeqExpr):
        for block in seq.blocks:
            for binding in block.bindings:
                if isinstance(binding, MatchCast):  # checks were lowered by VMShapeLower
                    self.values[binding.var] = self.arg(binding.value)
                elif isinstance(binding.value, Var) and \
                        {binding.var, binding.value} & self.killed:
                    # an alias outlives a kill of the original (and the reverse): copy
                    self.values[binding.var] = self.in_register(self.arg(binding.value),
                                                                self.fresh())
                else:
                    self.values[binding.var] = self.value(binding.value)
        return self.arg(seq.body)

    def value(self, expr):
        """Emit what computes ``expr``; the instruction argument holding its value (by its
        ``visit_<kind>_`` method, ``relax.expr_dispatch``)."""
        method = visit_method(type(self), type(expr))
        if method is None:
            raise DiagnosticError(f"{self.name}: the VM code generator cannot handle a "
                                  f"{type(expr).__name__}", expr)
        return method(self, expr)

    def arg(self, expr):
        """An argument for a leaf expression (a register, an immediate or a constant)."""
        if isinstance(expr, (Call, If, TupleGetItem, Function)):
            raise DiagnosticError(f"{self.name}: the VM code generator cannot handle a "
                                  f"{type(expr).__name__}", expr)
        return self.value(expr)

    # -- one method per kind ---------------------------------------------------------------
    def visit_tuple_(self, expr):
        dst = self.fresh()
        self.ib.emit_call("vm.builtin.make_tuple", [self.arg(f) for f in expr.fields], dst)
        return dst

    def visit_tuple_getitem_(self, expr):
        dst = self.fresh()
        self.ib.emit_call("vm.builtin.tuple_getitem",
                          [self.arg(expr.tuple_value), self.ib.imm(expr.index)], dst)
        return dst

    def visit_function_(self, expr):
        raise DiagnosticError(f"{self.name}: local functions are not supported by the VM "
                              f"code generator; lift them to the module", expr)

    def visit_var_(self, expr):
        if expr not in self.values:
            raise DiagnosticError(f"{self.name}: variable {expr.name_hint!r} is used but "
                                  f"not defined", expr)
        return self.values[expr]

    visit_dataflow_var_ = visit_var_

    def visit_constant_(self, expr):
        return self.ib.convert_constant(expr.data)

    def visit_shape_expr_(self, expr):
        if not all(isinstance(d, tir_expr.IntImm) for d in expr.values):
            raise DiagnosticError(f"{self.name}: symbolic shape {list(expr.values)} left: "
                                  f"run VMShapeLower first", expr)
        return self.ib.convert_constant(ShapeTuple([d.value for d in expr.values]))

    def visit_string_imm_(self, expr):
        return self.ib.convert_constant(expr.value)

    def visit_data_type_imm_(self, expr):
        return self.ib.convert_constant(parse_dtype(expr.value))

    def visit_global_var_(self, expr):
        return self.ib.f(self.callee_name(expr))

    visit_extern_func_ = visit_global_var_

    def visit_prim_value_(self, expr):
        value = expr.value
        if isinstance(value, tir_expr.IntImm):
            return self.ib.imm(value.value) if value.dtype != "bool" else \
                self.ib.convert_constant(bool(value.value))
        if isinstance(value, tir_expr.FloatImm):
            return self.ib.convert_constant(float(value.value))
        raise DiagnosticError(f"{self.name}: symbolic value {value} left: run VMShapeLower "
                              f"first", expr)

    # -- calls -----------------------------------------------------------------------------
    def callee_name(self, op) -> str:
        if isinstance(op, ExternFunc):
            return op.global_symbol
        if op not in self.mod:
            raise DiagnosticError(f"{self.name}: call of @{op.name_hint}, which is not in the "
                                  f"module", op)
        return global_symbol(op, self.mod[op])

    def visit_call_(self, call: Call):
        op = call.op
        if isinstance(op, Op):
            return self.op_call(call)
        args = [self.arg(a) for a in call.args]
        dst = self.fresh()
        if isinstance(op, Var):  # a closure held in a variable
            self.ib.emit_call("vm.builtin.invoke_closure",
                              [self.ib.vm_state(), self.values[op], *args], dst)
        else:
            self.ib.emit_call(self.callee_name(op), args, dst)
        return dst

    def op_call(self, call: Call):
        name = call.op.name
        emit = _OP_EMITTERS.get(name)
        if emit is not None:
            return emit(self, call)
        packed = call_packed_name(call.op)
        if packed is not None:  # an op that runs as a packed function (FCallPacked)
            dst = self.fresh()
            self.ib.emit_call(packed, [self.arg(a) for a in call.args], dst)
            return dst
        if name in _LOWER_FIRST:
            raise DiagnosticError(f"{self.name}: {name} is left in the program: run "
                                  f"{_LOWER_FIRST[name]} first (relax.build does)", call)
        raise DiagnosticError(f"{self.name}: operator {name} has no VM lowering; legalize it "
                              f"first (relax.transform.LegalizeOps)", call)

    def builtin(self, name, args, with_vm=False):
        dst = self.fresh()
        self.ib.emit_call(name, ([self.ib.vm_state()] if with_vm else []) + args, dst)
        return dst

    # -- control flow ----------------------------------------------------------------------
    def visit_if_(self, node: If):
        cond = self.in_register(self.arg(node.cond))
        dst = self.fresh()
        branch_pc = self.ib.num_instructions()
        self.ib.emit_if(cond, 1)
        self.in_register(self.seq(node.true_branch), dst)
        goto_pc = self.ib.num_instructions()
        self.ib.emit_goto(1)
        self.ib.set_jump_offset(branch_pc, self.ib.num_instructions() - branch_pc)
        self.in_register(self.seq(node.false_branch), dst)
        self.ib.set_jump_offset(goto_pc, self.ib.num_instructions() - goto_pc)
        return dst


def _alloc_tensor(gen, call):
    shape, dtype, device = (gen.arg(a) for a in call.args)
    storage = gen.builtin("vm.builtin.alloc_storage",
                          [shape, device, dtype, gen.ib.convert_constant("global")], True)
    return gen.builtin("vm.builtin.alloc_tensor", [storage, gen.ib.imm(0), shape, dtype])


def _alloc_storage(gen, call):
    size, device, scope, dtype = (gen.arg(a) for a in call.args)
    return gen.builtin("vm.builtin.alloc_storage", [size, device, dtype, scope], True)


def _vm_alloc_storage(gen, call):
    size, device, dtype = (gen.arg(a) for a in call.args[:3])
    scope = gen.arg(call.args[3]) if len(call.args) > 3 else gen.ib.convert_constant("global")
    return gen.builtin("vm.builtin.alloc_storage", [size, device, dtype, scope], True)


def _kill(gen, call):
    """Drop the register's reference (its memory goes when no other value holds it)."""
    target = gen.arg(call.args[0])
    if target.is_register:
        gen.ib.emit_call("vm.builtin.null_value", [], target)
    return gen.ib.void_arg()


_KILL_OPS = ("relax.vm.kill_object", "relax.memory.kill_storage", "relax.memory.kill_tensor")


def _killed_vars(seq) -> set:
    """Variables a kill op ends (their aliases need registers of their own)."""
    found = set()
    for block in seq.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, Call) and isinstance(value.op, Op) and \
                    value.op.name in _KILL_OPS and isinstance(value.args[0], Var):
                found.add(value.args[0])
            elif isinstance(value, If):
                found |= _killed_vars(value.true_branch) | _killed_vars(value.false_branch)
    return found


def _memory_alloc_tensor(gen, call):
    return gen.builtin("vm.builtin.alloc_tensor", [gen.arg(a) for a in call.args])


def _call_builtin_with_ctx(gen, call):
    func, args = call.args
    fields = args.fields if isinstance(args, Tuple) else [args]
    return gen.builtin(gen.callee_name(func), [gen.arg(a) for a in fields], True)


def _shape_of(gen, call):
    return gen.builtin("vm.builtin.shape_of", [gen.arg(call.args[0])])


def _make_closure(gen, call):
    func, args = call.args
    fields = args.fields if isinstance(args, Tuple) else [args]
    return gen.builtin("vm.builtin.make_closure", [gen.arg(func)] + [gen.arg(a) for a in fields])


def _invoke_closure(gen, call):
    closure, args = call.args
    fields = args.fields if isinstance(args, Tuple) else [args]
    return gen.builtin("vm.builtin.invoke_closure",
                       [gen.arg(closure)] + [gen.arg(a) for a in fields], True)


def _null_value(gen, call):
    return gen.builtin("vm.builtin.null_value", [])


_OP_EMITTERS = {
    "relax.builtin.alloc_tensor": _alloc_tensor,
    "relax.memory.alloc_storage": _alloc_storage,
    "relax.memory.alloc_tensor": _memory_alloc_tensor,
    "relax.memory.kill_storage": _kill,
    "relax.memory.kill_tensor": _kill,
    "relax.vm.alloc_storage": _vm_alloc_storage,
    "relax.vm.alloc_tensor": _memory_alloc_tensor,
    "relax.vm.kill_object": _kill,
    "relax.call_builtin_with_ctx": _call_builtin_with_ctx,
    "relax.shape_of": _shape_of,
    "relax.null_value": _null_value,
    "relax.make_closure": _make_closure,
    "relax.invoke_closure": _invoke_closure,
    "relax.invoke_pure_closure": _invoke_closure,
}


def vm_codegen(mod, builder: ExecBuilder | None = None) -> ExecBuilder:
    """Emit every Relax function of ``mod`` (lowered) into ``builder``; PrimFuncs are left to
    the kernel library."""
    builder = builder or ExecBuilder()
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            _FunctionCodeGen(builder, mod, global_symbol(gv, func), func).run()
    return builder


__all__ = ["vm_codegen"]
