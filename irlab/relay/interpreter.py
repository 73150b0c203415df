"""The Relay reference interpreter: evaluates any program with numpy.

It is the semantic oracle of the project: every pass, schedule and codegen test compares its
results with this. Each operator runs its registered numpy reference implementation; the
program is type-checked first so every call knows its output type.

``relay.create_executor("debug", mod=mod).evaluate()(*inputs)`` is TVM's entry point.
Dataflow (calls, tuples) and let chains are evaluated iteratively: deep programs do not recurse.
"""

from __future__ import annotations

import numbers

import numpy as np

from irlab.errors import InterpreterError, IrlabError
from irlab.runtime.dtype import to_numpy_dtype
from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.ir.type import TensorType, TupleType
from irlab.ir.adt import Constructor
from irlab.relay.adt import PatternConstructor, PatternTuple, PatternVar
from irlab.relay.expr import Call, Let, Tuple, TupleGetItem
from irlab.relay.expr_functor import visit_method
from irlab.relay.function import Function
from irlab.runtime.ndarray import NDArray, array as nd_array


class Closure:
    """A function value: a Relay function plus the environment it was created in."""

    __slots__ = ("func", "env")

    def __init__(self, func, env):
        self.func = func
        self.env = env

    def __repr__(self):
        return f"<closure of {len(self.func.params)} parameters>"


class ConstructorValue:
    """A value of an algebraic data type: the ``constructor`` that built it and its
    ``fields`` (TVM's interpreter ``ConstructorValue``; ``tag`` says which constructor)."""

    __slots__ = ("tag", "fields", "constructor")

    def __init__(self, tag, fields, constructor):
        self.tag = tag
        self.fields = tuple(fields)
        self.constructor = constructor

    def __repr__(self):
        if not self.fields:
            return self.constructor.name_hint
        return f"{self.constructor.name_hint}({', '.join(map(repr, self.fields))})"


class RefValue:
    """A mutable reference cell (``ref(%x)``): ``value`` is what it holds now."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"ref({self.value!r})"


_DATAFLOW = (Call, Tuple, TupleGetItem)


class Interpreter:
    """Evaluates expressions of a type-checked module."""

    def __init__(self, mod: IRModule):
        self.mod = mod

    # -- evaluation ---------------------------------------------------------------------------
    def eval(self, expr, env=None):
        return self._eval(expr, dict(env or {}), {})

    def _eval(self, expr, env, memo):
        if expr in memo:
            return memo[expr]
        stack = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if node in memo:
                continue
            if not ready and isinstance(node, _DATAFLOW):
                stack.append((node, True))
                for child in reversed(_dataflow_children(node)):
                    if child not in memo:
                        stack.append((child, False))
                continue
            memo[node] = self._eval_node(node, env, memo)
        return memo[expr]

    def _eval_node(self, node, env, memo):
        """``visit_<kind>(node, env, memo)``: the dataflow children are in ``memo`` already."""
        evaluate = visit_method(type(self), type(node))
        if evaluate is None:
            raise InterpreterError(f"cannot evaluate a {type(node).__name__}", node)
        return evaluate(self, node, env, memo)

    # -- one node of each kind ----------------------------------------------------------------
    def visit_var(self, node, env, memo):
        if node not in env:
            raise InterpreterError(f"variable %{node.name_hint} is not bound", node)
        return env[node]

    def visit_constant(self, node, env, memo):
        # A read-only view, not a copy: FoldConstant on BERT-base copied its 85 M weights here;
        # an op reference that wrote its input would corrupt the constant, so it raises instead.
        view = np.asarray(node.data).view()
        view.flags.writeable = False
        return view

    def visit_tuple(self, node, env, memo):
        return tuple(memo[f] for f in node.fields)

    def visit_tuple_getitem(self, node, env, memo):
        value = memo[node.tuple_value]
        if not isinstance(value, tuple):
            raise InterpreterError("TupleGetItem of a non-tuple value", node)
        return value[node.index]

    def visit_let(self, node, env, memo):
        body = node
        while isinstance(body, Let):  # a let chain is a loop, not a recursion
            env[body.var] = self._eval(body.value, env, memo)
            body = body.body
        return self._eval(body, env, memo)

    def visit_if(self, node, env, memo):
        cond = self._eval(node.cond, env, memo)
        branch = node.true_branch if bool(np.asarray(cond)) else node.false_branch
        return self._eval(branch, env, memo)

    def visit_function(self, node, env, memo):
        return Closure(node, env)

    def visit_global_var(self, node, env, memo):
        func = self.mod[node.name_hint]
        if not isinstance(func, Function):
            raise InterpreterError(f"@{node.name_hint} is not a Relay function", node)
        return Closure(func, {})

    def visit_constructor(self, node, env, memo):
        return node  # applied by visit_call

    def visit_match(self, node, env, memo):
        value = self._eval(node.data, env, memo)
        for clause in node.clauses:
            bindings = {}
            if _match(clause.lhs, value, bindings):
                return self._eval(clause.rhs, {**env, **bindings}, {})
        raise InterpreterError("no clause of the match fits the value "
                               f"{value!r}", node)

    def visit_ref_create(self, node, env, memo):
        return RefValue(self._eval(node.value, env, memo))

    def visit_ref_read(self, node, env, memo):
        return self._ref(node, env, memo).value

    def visit_ref_write(self, node, env, memo):
        cell = self._ref(node, env, memo)
        cell.value = self._eval(node.value, env, memo)
        return ()

    def _ref(self, node, env, memo):
        cell = self._eval(node.ref, env, memo)
        if not isinstance(cell, RefValue):
            raise InterpreterError(f"expected a reference, got {type(cell).__name__}", node)
        return cell

    def visit_op(self, node, env, memo):
        raise InterpreterError(f"operator {node.name} used as a value; call it instead", node)

    def visit_call(self, call, env, memo):
        args = [memo[a] for a in call.args]
        if isinstance(call.op, Op):
            return self._apply_op(call, args)
        callee = memo[call.op]
        if isinstance(callee, Constructor):
            return ConstructorValue(callee.tag, args, callee)
        if not isinstance(callee, Closure):
            raise InterpreterError("calling a value that is not a function", call)
        return self.apply_closure(callee, args)

    def apply_closure(self, closure, args):
        func = closure.func
        if len(args) != len(func.params):
            raise InterpreterError(f"function expects {len(func.params)} arguments, "
                                   f"got {len(args)}", func)
        env = dict(closure.env)
        env.update(zip(func.params, args))
        return self._eval(func.body, env, {})

    def _apply_op(self, call, args):
        op = call.op
        reference = op.reference
        if reference is None:
            raise InterpreterError(f"operator {op.name} has no reference implementation", call)
        out_type = call.checked_type
        try:
            result = reference(args, call.attrs, out_type)
        except IrlabError:
            raise
        except Exception as err:  # a bug or bad input in a reference: say which op
            raise InterpreterError(f"{op.name} failed in its reference implementation: "
                                   f"{type(err).__name__}: {err}", call) from err
        return _conform(result, out_type, op.name, call)


def _match(pattern, value, bindings) -> bool:
    """Whether ``value`` fits ``pattern``; the variables it binds go into ``bindings``."""
    if isinstance(pattern, PatternVar):
        bindings[pattern.var] = value
        return True
    if isinstance(pattern, PatternConstructor):
        if not isinstance(value, ConstructorValue) or \
                value.constructor.name_hint != pattern.constructor.name_hint:
            return False
        return all(_match(p, v, bindings) for p, v in zip(pattern.patterns, value.fields))
    if isinstance(pattern, PatternTuple):
        return isinstance(value, tuple) and len(value) == len(pattern.patterns) and all(
            _match(p, v, bindings) for p, v in zip(pattern.patterns, value))
    return True  # the wildcard


def _dataflow_children(node):
    if isinstance(node, Call):
        return list(node.args) if isinstance(node.op, Op) else [node.op, *node.args]
    if isinstance(node, Tuple):
        return list(node.fields)
    return [node.tuple_value]


def _conform(value, ty, op_name, call):
    """Check a reference result against the inferred type (catches reference bugs early)."""
    if isinstance(ty, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(ty.fields):
            raise InterpreterError(f"{op_name}: reference returned {type(value).__name__}, "
                                   f"expected a {len(ty.fields)}-tuple", call)
        return tuple(_conform(v, t, op_name, call) for v, t in zip(value, ty.fields))
    if isinstance(ty, TensorType):
        array = np.asarray(value)
        if array.shape != ty.shape:
            raise InterpreterError(f"{op_name}: reference returned shape {array.shape}, "
                                   f"type inference says {ty.shape}", call)
        return array.astype(to_numpy_dtype(ty.dtype), copy=False)
    return value


# ---------------------------------------------------------------------------------------------
# user-facing executor
def _to_array(value, param, ty):
    """Convert a user input for ``param`` and check it against its type."""
    if isinstance(value, NDArray):
        value = value.numpy()
    elif isinstance(value, (numbers.Number, np.generic, list)):
        value = np.asarray(value)
    if isinstance(ty, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(ty.fields):
            raise IrlabError(f"input %{param.name_hint}: expected a tuple of "
                             f"{len(ty.fields)} values")
        return tuple(_to_array(v, param, t) for v, t in zip(value, ty.fields))
    if not isinstance(value, np.ndarray):
        raise IrlabError(f"input %{param.name_hint}: expected an array, got "
                         f"{type(value).__name__}")
    if isinstance(ty, TensorType):
        expected_dtype = to_numpy_dtype(ty.dtype)
        if value.shape != ty.shape:
            raise IrlabError(f"input %{param.name_hint}: expected shape {ty.shape}, got "
                             f"{value.shape}")
        if value.dtype != expected_dtype:
            if value.ndim == 0 and np.can_cast(value, expected_dtype, casting="same_kind"):
                value = value.astype(expected_dtype)
            else:
                raise IrlabError(f"input %{param.name_hint}: expected dtype {ty.dtype}, got "
                                 f"{value.dtype} (convert with .astype('{ty.dtype}'))")
    return value


def _to_output(value):
    if isinstance(value, tuple):
        return tuple(_to_output(v) for v in value)
    if isinstance(value, (Closure, RefValue)):
        return value
    if isinstance(value, ConstructorValue):
        return ConstructorValue(value.tag, [_to_output(f) for f in value.fields],
                                value.constructor)
    return nd_array(value)


class Executor:
    """TVM's interpreter executor: ``evaluate(expr=None, binds=None)``."""

    def __init__(self, mod: IRModule | None, device=None, target="llvm", params=None):
        self.mod = mod if mod is not None else IRModule()
        self.device = device
        self.target = target
        self.params = dict(params or {})

    def _typed_module(self):
        from irlab.relay.build_module import bind_params_by_name
        from irlab.relay.transform import InferType

        mod = self.mod
        if self.params and "main" in mod:
            mod = mod.copy()
            mod["main"] = bind_params_by_name(mod["main"], self.params)
        return InferType()(mod)

    def evaluate(self, expr=None, binds=None):
        """A callable for ``main`` (or for a function ``expr``); the value of any other expr."""
        from irlab.relay.ty_infer import infer_expr

        mod = self._typed_module()
        if expr is None:
            if "main" not in mod:
                raise IrlabError("the module has no @main to evaluate")
            func = mod["main"]
        elif isinstance(expr, GlobalVar):
            func = mod[expr.name_hint]
        else:
            if binds:
                from irlab.relay.expr import bind

                expr = bind(expr, {k: Constant(np.asarray(
                    v.numpy() if isinstance(v, NDArray) else v)) for k, v in binds.items()})
            typed = infer_expr(expr, mod)
            if not isinstance(typed, Function):
                return _to_output(Interpreter(mod).eval(typed))
            func = typed
        interpreter = Interpreter(mod)
        return _Callable(interpreter, func)


class _Callable:
    """``f(*args, **kwargs)`` running a function in the interpreter; returns NDArrays."""

    def __init__(self, interpreter, func):
        self.interpreter = interpreter
        self.func = func

    def __call__(self, *args, **kwargs):
        params = self.func.params
        if len(args) > len(params):
            raise IrlabError(f"the function takes {len(params)} inputs, got {len(args)}")
        values = list(args) + [None] * (len(params) - len(args))
        by_name = {p.name_hint: i for i, p in enumerate(params)}
        for name, value in kwargs.items():
            if name not in by_name:
                raise IrlabError(f"no input named {name!r} (inputs: {', '.join(by_name)})")
            values[by_name[name]] = value
        missing = [p.name_hint for p, v in zip(params, values) if v is None]
        if missing:
            raise IrlabError(f"missing inputs: {', '.join(missing)}")
        arrays = [_to_array(v, p, p.checked_type) for v, p in zip(values, params)]
        result = self.interpreter.apply_closure(Closure(self.func, {}), arrays)
        return _to_output(result)


def create_executor(kind="debug", mod=None, device=None, target="llvm", params=None):
    """An executor for ``mod``: ``"debug"`` is the numpy reference interpreter."""
    if kind != "debug":
        raise IrlabError(f"unknown executor kind {kind!r}: use kind='debug' (the reference "
                         f"interpreter) or 'graph' / 'vm' / 'aot' (compiled with relay.build)")
    if mod is not None and not isinstance(mod, IRModule):
        mod = IRModule.from_expr(mod)
    return Executor(mod, device, target, params)
