"""Type inference for Relay (the engine behind ``relay.transform.InferType``).

Constraint solving, as TVM does it:
1. Walk each function in post-order (iteratively) and give every node a type: a known type, or
   an ``IncompleteType`` unknown. Structural facts (a let binds its value's type, both branches
   of an ``if`` agree, a call of a function matches its signature) are unified at once.
2. Every call of an operator becomes a pending *relation*. The solver runs the pending relations
   in program order; a relation whose inputs are still unknown defers (``Defer``) and is retried
   after the others have run, so an unannotated weight gets its type from conv2d's attrs.
3. The results are written back: ``checked_type`` on every node, missing variable annotations
   and function return types filled in (TVM's Resolver does the same).

A rejected program raises ``RelayTypeError`` naming the operator, with the offending call shown
in the printed program under a caret and the relation's expected-vs-actual message.
"""

from __future__ import annotations

from irlab.errors import IrlabError, RelayTypeError
from irlab.instrument import register_module_verifier
from irlab.runtime.dtype import parse_dtype
from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.ir.adt import Constructor
from irlab.ir.type import (FuncType, GlobalTypeVar, IncompleteType, PrimType, RelayRefType,
                           TensorType, TupleType, Type, TypeCall, TypeVar, flatten_tuple_type)
from irlab.relay.adt import Match, PatternConstructor, PatternTuple, PatternVar
from irlab.relay.analysis import check_well_formed
from irlab.relay.expr import Call, Var
from irlab.relay.expr_functor import ExprMutator, post_order, visit_method
from irlab.relay.function import Function
from irlab.runtime.lru import LRUCache
from irlab.relay.type_relation import Defer, RelationContext, TypeRelationError, is_complete


class _Unresolved(Exception):
    """A pending constraint cannot make progress yet."""


class Solver:
    """Unknown types (``IncompleteType``) and their solutions, plus pending constraints."""

    def __init__(self):
        self.solution: dict = {}
        self.pending: list = []  # (node, thunk); thunk() raises Defer/_Unresolved to wait

    # -- unknowns ---------------------------------------------------------------------------
    def fresh(self) -> IncompleteType:
        return IncompleteType()

    def resolve(self, ty):
        """``ty`` with every solved unknown replaced (unsolved unknowns stay)."""
        if isinstance(ty, IncompleteType):
            seen = []
            while isinstance(ty, IncompleteType) and ty in self.solution:
                seen.append(ty)
                ty = self.solution[ty]
            for t in seen[:-1]:  # path compression
                self.solution[t] = ty
            if isinstance(ty, IncompleteType):
                return ty
        if isinstance(ty, TupleType):
            fields = tuple(self.resolve(f) for f in ty.fields)
            return ty if all(a is b for a, b in zip(fields, ty.fields)) else TupleType(fields)
        if isinstance(ty, FuncType):
            args = tuple(self.resolve(a) for a in ty.arg_types)
            ret = self.resolve(ty.ret_type)
            if ret is ty.ret_type and all(a is b for a, b in zip(args, ty.arg_types)):
                return ty
            return FuncType(args, ret, ty.type_params, ty.type_constraints)
        if isinstance(ty, TypeCall):
            args = tuple(self.resolve(a) for a in ty.args)
            return ty if all(a is b for a, b in zip(args, ty.args)) else TypeCall(ty.func, args)
        if isinstance(ty, RelayRefType):
            value = self.resolve(ty.value)
            return ty if value is ty.value else RelayRefType(value)
        return ty

    def instantiate(self, ty: FuncType):
        """A polymorphic function type with fresh unknowns for its type parameters, and
        those unknowns (the call's type arguments)."""
        fresh = [self.fresh() for _ in ty.type_params]
        mapping = dict(zip(ty.type_params, fresh))
        plain = FuncType(ty.arg_types, ty.ret_type)
        return substitute(plain, mapping), fresh

    def unify(self, lhs, rhs) -> Type:
        lhs, rhs = self.resolve(lhs), self.resolve(rhs)
        if lhs is rhs:
            return lhs
        if isinstance(lhs, IncompleteType):
            if self._occurs(lhs, rhs):
                raise TypeRelationError(f"recursive type: {rhs} contains itself")
            self.solution[lhs] = rhs
            return rhs
        if isinstance(rhs, IncompleteType):
            return self.unify(rhs, lhs)
        lhs, rhs = _as_type_call(lhs, rhs), _as_type_call(rhs, lhs)
        if isinstance(lhs, FuncType) and isinstance(rhs, FuncType) and (
                lhs.type_params or rhs.type_params):
            return self._unify_polymorphic(lhs, rhs)
        if type(lhs) is not type(rhs):
            raise TypeRelationError(f"expected {lhs}, got {rhs}")
        if isinstance(lhs, TupleType):
            if len(lhs.fields) != len(rhs.fields):
                raise TypeRelationError(f"expected a {len(lhs.fields)}-tuple {lhs}, "
                                        f"got a {len(rhs.fields)}-tuple {rhs}")
            return TupleType([self.unify(a, b) for a, b in zip(lhs.fields, rhs.fields)])
        if isinstance(lhs, FuncType):
            if len(lhs.arg_types) != len(rhs.arg_types):
                raise TypeRelationError(f"expected a function of {len(lhs.arg_types)} "
                                        f"arguments, got one of {len(rhs.arg_types)}")
            args = [self.unify(a, b) for a, b in zip(lhs.arg_types, rhs.arg_types)]
            return FuncType(args, self.unify(lhs.ret_type, rhs.ret_type))
        if isinstance(lhs, TypeCall):
            if lhs.func != rhs.func or len(lhs.args) != len(rhs.args):
                raise TypeRelationError(f"expected {lhs}, got {rhs}")
            return TypeCall(lhs.func, [self.unify(a, b) for a, b in zip(lhs.args, rhs.args)])
        if isinstance(lhs, RelayRefType):
            return RelayRefType(self.unify(lhs.value, rhs.value))
        if lhs != rhs:
            raise TypeRelationError(f"expected {lhs}, got {rhs}")
        return lhs

    def _unify_polymorphic(self, lhs, rhs):
        """Two function types of which one at least is polymorphic: with as many type
        parameters, the right one's are renamed to the left one's; otherwise a polymorphic
        side is instantiated (``fn [A](A) -> A`` fits where ``fn (int32) -> int32`` is
        expected)."""
        if len(lhs.type_params) == len(rhs.type_params):
            renamed = substitute(FuncType(rhs.arg_types, rhs.ret_type),
                                 dict(zip(rhs.type_params, lhs.type_params)))
            self.unify(FuncType(lhs.arg_types, lhs.ret_type), renamed)
            return lhs
        if lhs.type_params:
            lhs = self.instantiate(lhs)[0]
        if rhs.type_params:
            rhs = self.instantiate(rhs)[0]
        return self.unify(lhs, rhs)

    def _occurs(self, unknown, ty) -> bool:
        if ty is unknown:
            return True
        if isinstance(ty, TupleType):
            return any(self._occurs(unknown, f) for f in ty.fields)
        if isinstance(ty, FuncType):
            return any(self._occurs(unknown, a) for a in ty.arg_types) or self._occurs(
                unknown, ty.ret_type)
        if isinstance(ty, TypeCall):
            return any(self._occurs(unknown, a) for a in ty.args)
        if isinstance(ty, RelayRefType):
            return self._occurs(unknown, ty.value)
        return False

    # -- pending constraints ------------------------------------------------------------------
    def solve(self, on_error):
        """Run pending constraints to a fixed point. ``on_error(node, message)`` raises; it gets
        ``message=None`` when no constraint can make progress (something stays unknown)."""
        while self.pending:
            waiting = []
            for node, thunk in self.pending:
                try:
                    thunk()
                except (Defer, _Unresolved):
                    waiting.append((node, thunk))
                except TypeRelationError as err:
                    on_error(node, str(err))
            if len(waiting) == len(self.pending):
                on_error(waiting[0][0], None)
            self.pending = waiting


class TypeInferencer:
    """Infers every Relay function of a module together (global calls see each other)."""

    def __init__(self, mod: IRModule | None):
        self.mod = mod
        self.solver = Solver()
        self.types: dict = {}  # node -> type (possibly with unknowns until solved)
        self.global_types: dict = {}
        self.type_args: dict = {}  # call of a polymorphic function -> its type arguments
        self.current_function = None

    # -- type of a node -------------------------------------------------------------------------
    def type_of(self, node):
        ty = self.types.get(node)
        if ty is None:
            raise IrlabError(f"internal: {type(node).__name__} has no type yet")
        return ty

    def var_type(self, var: Var):
        ty = self.types.get(var)
        if ty is None:
            ty = var.type_annotation if var.type_annotation is not None else self.solver.fresh()
            self.types[var] = ty
        return ty

    def global_var_type(self, gv: GlobalVar):
        ty = self.global_types.get(gv.name_hint)
        if ty is None:
            if self.mod is None or gv.name_hint not in self.mod:
                raise RelayTypeError(f"@{gv.name_hint} is not defined in the module", gv)
            func = self.mod[gv.name_hint]
            if not isinstance(func, Function):
                ty = _prim_func_type(func)
            else:
                params = [self.var_type(p) for p in func.params]
                ret = func.ret_type if func.ret_type is not None else self.solver.fresh()
                ty = FuncType(params, ret, func.type_params)
            self.global_types[gv.name_hint] = ty
        return ty

    # -- constraint generation ------------------------------------------------------------------
    def visit_function_tree(self, func: Function):
        for node in post_order(func):
            if node not in self.types or isinstance(node, Var):
                self.assign(node)

    def assign(self, node):
        """Type ``node`` (or defer it to the solver) by its ``visit_<kind>`` method, found
        through ``relay.expr_functor.visit_method`` as every Relay walker does."""
        method = visit_method(type(self), type(node))
        if method is None:
            raise RelayTypeError(f"cannot type a {type(node).__name__}", node)
        method(self, node)

    def visit_var(self, node):
        self.var_type(node)

    def visit_constant(self, node):
        self.types[node] = TensorType(node.data.shape, node.data.dtype)

    def visit_tuple(self, node):
        self.types[node] = TupleType([self.type_of(f) for f in node.fields])

    def visit_global_var(self, node):
        self.types[node] = self.global_var_type(node)

    def visit_op(self, node):
        self.types[node] = self.solver.fresh()  # an op used as a value: only calls are typed

    def visit_tuple_getitem(self, node):
        out = self.solver.fresh()
        self.types[node] = out
        self.defer(node, lambda n=node, o=out: self._tuple_getitem(n, o))

    def visit_let(self, node):
        self._unify_at(node, self.var_type(node.var), self.type_of(node.value))
        self.types[node] = self.type_of(node.body)

    def visit_if(self, node):
        self._unify_at(node.cond, self.type_of(node.cond), TensorType((), "bool"))
        # the unified type, not the true branch's: a polymorphic branch is instantiated
        self.types[node] = self._unify_at(node, self.type_of(node.true_branch),
                                          self.type_of(node.false_branch))

    def visit_function(self, node):
        params = [self.var_type(p) for p in node.params]
        body = self.type_of(node.body)
        if node.ret_type is not None:
            self._unify_at(node.body, node.ret_type, body)
            body = node.ret_type
        self.types[node] = FuncType(params, body, node.type_params)

    def visit_constructor(self, node):
        self.types[node] = self.constructor_type(node)

    def visit_match(self, node):
        self.types[node] = self.match_type(node)

    def visit_ref_create(self, node):
        self.types[node] = RelayRefType(self.type_of(node.value))

    def visit_ref_read(self, node):
        out = self.solver.fresh()
        self._unify_at(node, self.type_of(node.ref), RelayRefType(out))
        self.types[node] = out

    def visit_ref_write(self, node):
        self._unify_at(node, self.type_of(node.ref), RelayRefType(self.type_of(node.value)))
        self.types[node] = TupleType([])

    def visit_call(self, node):
        out = self.solver.fresh()
        self.types[node] = out
        if isinstance(node.op, Op):
            self.defer(node, lambda n=node, o=out: self._op_call(n, o))
        else:
            self.defer(node, lambda n=node, o=out: self._func_call(n, o))

    # -- algebraic data types ---------------------------------------------------------------
    def type_data(self, ctor: Constructor):
        mod = self.mod
        if mod is None or ctor.belong_to not in mod:
            raise RelayTypeError(f"constructor {ctor.name_hint}: its type "
                                 f"{ctor.belong_to.name_hint} is not defined in the module", ctor)
        return mod.get_type_data(ctor.belong_to)

    def constructor_type(self, ctor: Constructor) -> FuncType:
        """``fn [A..](inputs) -> T[A..]``: a constructor is a polymorphic function."""
        data = self.type_data(ctor)
        return FuncType(ctor.inputs, TypeCall(data.header, data.type_vars), data.type_vars)

    def match_type(self, match: Match):
        """Every pattern fits the matched value's type; every clause gives the result type."""
        out = self.solver.fresh()
        data = self.type_of(match.data)
        for clause in match.clauses:
            self.unify_pattern(clause.lhs, data, match)
            self._unify_at(clause.rhs, out, self.type_of(clause.rhs))
        return out

    def unify_pattern(self, pattern, ty, match):
        if isinstance(pattern, PatternVar):
            self._unify_at(match, self.var_type(pattern.var), ty)
        elif isinstance(pattern, PatternTuple):
            fields = [self.solver.fresh() for _ in pattern.patterns]
            self._unify_at(match, ty, TupleType(fields))
            for sub, field in zip(pattern.patterns, fields):
                self.unify_pattern(sub, field, match)
        elif isinstance(pattern, PatternConstructor):
            ctor_type, _ = self.solver.instantiate(self.constructor_type(pattern.constructor))
            self._unify_at(match, ty, ctor_type.ret_type)
            for sub, field in zip(pattern.patterns, ctor_type.arg_types):
                self.unify_pattern(sub, field, match)

    def defer(self, node, thunk):
        self.solver.pending.append((node, thunk))

    def _unify_at(self, node, lhs, rhs):
        try:
            return self.solver.unify(lhs, rhs)
        except TypeRelationError as err:
            self.error(node, str(err))

    def _tuple_getitem(self, node, out):
        ty = self.solver.resolve(self.type_of(node.tuple_value))
        if isinstance(ty, IncompleteType):
            raise _Unresolved
        if not isinstance(ty, TupleType):
            raise TypeRelationError(f"expected a tuple to take field {node.index} of, got {ty}")
        if not 0 <= node.index < len(ty.fields):
            raise TypeRelationError(f"tuple index {node.index} is out of range for a "
                                    f"{len(ty.fields)}-tuple {ty}")
        self.solver.unify(out, ty.fields[node.index])

    def _op_call(self, call, out):
        op = call.op
        if op.num_inputs >= 0 and len(call.args) != op.num_inputs:
            raise TypeRelationError(f"expects {op.num_inputs} arguments, got {len(call.args)}")
        if op.attrs_type is not None and call.attrs is not None and not isinstance(
                call.attrs, op.attrs_type):
            raise TypeRelationError(f"expects attrs of type {op.attrs_type.__name__}, got "
                                    f"{type(call.attrs).__name__}")
        rel = op.type_rel
        if rel is None:
            raise TypeRelationError(f"operator {op.name} has no type relation")
        ctx = RelationContext(op.name, [self.type_of(a) for a in call.args], call.attrs,
                              resolve=self.solver.resolve, unify=self.solver.unify,
                              arg_names=[a.name for a in op.arguments])
        result = rel(ctx)
        if not isinstance(result, Type):
            raise IrlabError(f"type relation of {op.name} returned {result!r}, not a Type")
        self.solver.unify(out, result)

    def _func_call(self, call, out):
        callee = self.solver.resolve(self.type_of(call.op))
        if isinstance(callee, IncompleteType):
            # calling an unknown: it is a function of these arguments' types
            callee = FuncType([self.type_of(a) for a in call.args], self.solver.fresh())
            self.solver.unify(self.type_of(call.op), callee)
        if isinstance(callee, FuncType) and callee.type_params:
            callee, self.type_args[call] = self.solver.instantiate(callee)
        if not isinstance(callee, FuncType):
            raise TypeRelationError(f"calling a value of type {callee}, which is not a function")
        if len(callee.arg_types) != len(call.args):
            raise TypeRelationError(f"the function takes {len(callee.arg_types)} arguments, "
                                    f"got {len(call.args)}")
        for i, (param, arg) in enumerate(zip(callee.arg_types, call.args)):
            try:
                self.solver.unify(param, self.type_of(arg))
            except TypeRelationError as err:
                raise TypeRelationError(f"argument {i}: {err}") from None
        self.solver.unify(out, callee.ret_type)

    # -- errors ---------------------------------------------------------------------------------
    def error(self, node, message):
        self._solve_error(node, message)

    # -- driver ---------------------------------------------------------------------------------
    def infer(self, functions: dict) -> dict:
        """Infer ``{name: Function}``; returns ``{name: typed Function}``."""
        for name, func in functions.items():
            self.current_function = func
            if self.mod is not None and name in self.mod:
                self.global_var_type(self.mod.get_global_var(name))
            self.visit_function_tree(func)
            if self.mod is not None and name in self.mod:
                self._unify_at(func, self.global_var_type(self.mod.get_global_var(name)),
                               self.type_of(func))
        self.solver.solve(self._solve_error)
        return {name: self.write_back(func) for name, func in functions.items()}

    def _solve_error(self, node, message):
        if message is None:
            message = self._cannot_infer(node)
        # Show the call inside the printed module (``def @main(...)``) when there is one.
        context = self.mod if self.mod is not None and len(self.mod) else self.current_function
        raise RelayTypeError(render_type_error(node, message, context), node)

    def _cannot_infer(self, node) -> str:
        if isinstance(node, Call) and isinstance(node.op, Op):
            names = [a.name for a in node.op.arguments]
            unknown = [names[i] if i < len(names) else f"argument {i}"
                       for i, a in enumerate(node.args)
                       if not is_complete(self.solver.resolve(self.types.get(a)))]
            if unknown:
                return (f"cannot infer the type of {', '.join(unknown)}: annotate it "
                        f"(relay.var(..., shape=...)) or give the op the attrs to derive it")
        return "cannot infer the type of this expression"

    def write_back(self, func: Function) -> Function:
        resolved = {}
        for node in post_order(func):
            ty = self.solver.resolve(self.types[node])
            if not isinstance(node, Op) and not is_complete(ty):
                self.error(node, f"cannot infer the type of this expression (got {ty})")
            if not isinstance(node, (Op, Function)):
                self._check_size(node, ty)
            resolved[node] = ty
        for node, ty in self.types.items():  # variables bound by patterns and unused
            if isinstance(node, Var) and node not in resolved:
                resolved[node] = self.solver.resolve(ty)
        type_args = {call: [self.solver.resolve(t) for t in args]
                     for call, args in self.type_args.items() if call in resolved}
        return _Annotator(resolved, type_args).visit(func)

    def _check_size(self, node, ty):
        """Refuse a tensor no 64-bit address space can hold (it would fail much later, inside
        numpy or the memory planner, with nothing saying which tensor)."""
        for tensor in flatten_tuple_type(ty):
            if not isinstance(tensor, TensorType):
                continue
            if not all(isinstance(d, int) for d in tensor.shape):
                continue  # a dynamic dimension: the size is known at run time
            nbytes = tensor.size * max(1, parse_dtype(tensor.dtype).bits
                                       * parse_dtype(tensor.dtype).lanes // 8)
            if nbytes >= ADDRESS_SPACE_BYTES:
                self.error(node, f"tensor type {tensor} has {tensor.size} elements "
                                 f"({nbytes} bytes): more than a 64-bit address space holds "
                                 f"(2^63 bytes)")


# The largest size in bytes a tensor may have: what a signed 64-bit offset can address.
ADDRESS_SPACE_BYTES = 1 << 63


def substitute(ty, mapping: dict):
    """``ty`` with the type variables in ``mapping`` replaced."""
    if isinstance(ty, TypeVar):
        return mapping.get(ty, ty)
    if isinstance(ty, TupleType):
        return TupleType([substitute(f, mapping) for f in ty.fields])
    if isinstance(ty, FuncType):
        inner = {k: v for k, v in mapping.items() if k not in ty.type_params}
        return FuncType([substitute(a, inner) for a in ty.arg_types],
                        substitute(ty.ret_type, inner), ty.type_params, ty.type_constraints)
    if isinstance(ty, TypeCall):
        return TypeCall(ty.func, [substitute(a, mapping) for a in ty.args])
    if isinstance(ty, RelayRefType):
        return RelayRefType(substitute(ty.value, mapping))
    return ty


def _as_type_call(ty, other):
    """An ADT without type arguments may be written ``T`` or ``T[]``: the same type."""
    if isinstance(ty, GlobalTypeVar) and isinstance(other, TypeCall):
        return TypeCall(ty, [])
    return ty


def _prim_func_type(func) -> FuncType:
    params = [PrimType("handle") for _ in getattr(func, "params", ())]
    return FuncType(params, TupleType([]))


class _Annotator(ExprMutator):
    """Writes the solved types back: ``checked_type`` everywhere, plus missing var annotations
    and function return types (new Var/Function objects where those were missing)."""

    def __init__(self, resolved, type_args=None):
        super().__init__()
        self.resolved = resolved
        self.type_args = type_args or {}

    def visit_call(self, call):
        new = super().visit_call(call)
        type_args = self.type_args.get(call)
        if type_args and not new.type_args and all(is_complete(t) for t in type_args):
            new = Call(new.op, new.args, new.attrs, type_args, new.span)
        return new

    def visit(self, expr):
        new = super().visit(expr)
        ty = self.resolved.get(expr)
        if ty is not None and not isinstance(expr, Op):
            new._set_checked_type(ty)
        return new

    def visit_var(self, var):
        if var.type_annotation is None:
            return Var(var.name_hint, self.resolved[var], var.span)
        return var

    def visit_function(self, fn):
        new = super().visit_function(fn)
        if new.ret_type is None:
            ret = self.resolved[fn].ret_type
            new = Function(new.params, new.body, ret, new.type_params, new.attrs, new.span)
        return new


def infer_module(mod: IRModule) -> IRModule:
    """Type-check every Relay function of ``mod``; returns a new module with types filled in."""
    contents = _contents(mod)
    key = tuple(id(x) for x in contents)
    known = _TYPED.get(key)
    if known is not None and all(a is b for a, b in zip(known, contents)):
        return mod.copy()  # what an earlier inference returned: typed, nothing to rebuild
    functions = {gv.name_hint: f for gv, f in mod.functions.items() if isinstance(f, Function)}
    inferencer = TypeInferencer(mod)
    typed = inferencer.infer(functions)
    result = mod.copy()
    for name, func in typed.items():
        if func is not mod[name]:
            result[mod.get_global_var(name)] = func
    contents = _contents(result)
    _TYPED[tuple(id(x) for x in contents)] = contents
    return result


def _verify_module(mod: IRModule) -> None:
    """``VerifyAfterEach``'s check of the Relay functions: well formed, and the module
    type-checks (inferred directly, not as a pass: no nested instrument calls)."""
    for func in mod.functions.values():
        if isinstance(func, Function):
            check_well_formed(func)
    infer_module(mod)


register_module_verifier(_verify_module)


# The modules infer_module returned lately, by content (global vars, functions and type
# definitions, all immutable). Most passes of the pipeline change nothing, and every function
# pass ends with InferType: a module holding exactly what an inference returned is typed
# already -- inferring it again rebuilds nothing. Entries keep their objects alive, so the
# ids in a key cannot be reused by other objects while it is cached.
_TYPED = LRUCache(8)


def _contents(mod):
    flat = []
    for gv, func in mod.functions.items():
        flat += (gv, func)
    for name, definition in mod.type_definitions.items():
        flat += (name, definition)
    return tuple(flat)


def infer_expr(expr, mod: IRModule | None = None):
    """Type-check a bare expression (free variables need annotations); returns the typed expr."""
    wrapped = Function([], expr) if not isinstance(expr, Function) else expr
    inferencer = TypeInferencer(mod)
    typed = inferencer.infer({"__expr__": wrapped})["__expr__"]
    return typed if isinstance(expr, Function) else typed.body


# ---------------------------------------------------------------------------------------------
# error rendering
def _describe(node) -> str:
    if isinstance(node, Call):
        op = node.op
        if isinstance(op, Op):
            return op.name
        if isinstance(op, GlobalVar):
            return f"call of @{op.name_hint}"
        return "function call"
    if isinstance(node, Var):
        return f"%{node.name_hint}"
    return type(node).__name__


def render_type_error(node, message, context=None) -> str:
    """``<op>: <message>`` then the printed program around the call, with a caret under it."""
    head = f"{_describe(node)}: {message}"
    shown = context if context is not None else node
    try:
        from irlab.relay.printer import pretty_print_located
    except ImportError:
        return head
    try:
        text, locations = pretty_print_located(shown)
    except Exception:  # the message must not be lost to a printing problem
        return head
    where = locations.get(node)
    lines = text.splitlines()
    if where is None:
        return head
    line_index, start, end = where
    first = max(0, line_index - 2)
    snippet = []
    for i in range(first, min(len(lines), line_index + 1)):
        snippet.append(f"  {i + 1:4d} | {lines[i]}")
    caret = " " * start + "^" * max(1, end - start)
    snippet.append(f"       | {caret}")
    return head + "\n" + "\n".join(snippet)
