"""SimplifyExpr and SimplifyExprPostAlterOp: algebraic clean-ups written as named rewrite rules.

Each rule is, as in TVM, a dataflow pattern with a callback (a ``DFPatternCallback``): the
pattern says which calls it looks at (and indexes the rule by their operators), the callback
looks at one such call (its arguments already simplified) and returns a replacement, or the
call itself when it does not apply. The rules are TVM's SimplifyExpr rewrites that make sense
for irlab's operators, in TVM's order::

    %0 = reshape(%x, newshape=[4, 6]);
    %1 = reshape(%0, newshape=[2, 12]);     =>     reshape(%x, newshape=[2, 12])
    multiply(%1, 1f)

Every rewrite is counted under the rule's name ("reshape(reshape(x)) => reshape(x)", "x * 1 =>
x"...). After a run, ``rules_fired(mod)`` gives the counts for the module that run returned
(a pass stepper holding the output module can show which rules fired) and
``last_rule_counts()`` those of the latest run; the pass object keeps them in ``rules_fired``.

Rules are applied bottom-up by the engine every IR shares (``irlab.ir.rewrite``, indexed by
operator name); at each call the rules are tried again on the result until none applies (a
result whose type differs from the call's is rolled back), and whole sweeps repeat until a
sweep changes nothing (rules can expose new chances to the sub-expressions they build).
"""

from __future__ import annotations

import weakref
from collections import Counter

import numpy as np

from irlab.errors import IrlabError
from irlab.runtime.dtype import parse_dtype, to_numpy_dtype
from irlab.ir.op import Op, OpPattern
from irlab.ir.rewrite import RuleDriver, RuleTable, rewrite_to_fixpoint
from irlab.ir.type import TensorType, TupleType
from irlab.relay.dataflow_pattern import (DFPatternCallback, is_constant, is_op, wildcard)
from irlab.relay.expr import Call, Constant, Tuple, TupleGetItem, const
from irlab.relay.expr_functor import ExprMutator, expr_children
from irlab.relay.type_relation import Defer, infer_call_type
from irlab.relay.op import tensor as _tensor
from irlab.relay.op import transform as _transform


# ---------------------------------------------------------------------------------------------
# rules
class Rule(DFPatternCallback):
    """A named rewrite of the calls matching ``pattern``: ``function(call)`` returns the
    replacement, or None when it does not apply (the pattern is what the rule needs at
    least; ``function`` checks the rest: types, attributes, constants' values)."""

    def __init__(self, name, pattern, function):
        super().__init__()
        self.name, self.pattern, self.function = name, pattern, function

    @property
    def ops(self):
        """The operators whose calls the rule rewrites (None: any operator)."""
        return self.keys

    def __repr__(self):
        return f"Rule({self.name!r})"

    def callback(self, pre, post, node_map):
        result = self.function(post)
        return post if result is None else result


def _calls(name):
    """A call of the operator ``name``, with any arguments."""
    return is_op(name)(None)


def _a_transpose():
    """transpose or layout_transform (a permutation, or a layout change)."""
    return is_op("transpose") | is_op("layout_transform")


def _twice_nested(name):
    """``name(name(x))``."""
    return is_op(name)(is_op(name)(wildcard()))


def _with_constants(outer, inner):
    """``outer(inner(x, c1), c2)``, c1 and c2 constants (either order: add and multiply
    commute)."""
    return is_op(outer)(is_op(inner)(wildcard(), is_constant()), is_constant())


def _twice():
    x = wildcard()
    return is_op("add")(x, x)


def _call_of(expr, *names):
    """``expr`` when it is a call of one of the operators ``names``, else None."""
    if isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name in names:
        return expr
    return None


def _tensor_type(expr):
    ty = expr.checked_type if expr.has_checked_type() else None
    return ty if isinstance(ty, TensorType) else None


def _same_type(a, b) -> bool:
    ta, tb = _tensor_type(a), _tensor_type(b)
    return ta is not None and ta == tb


def _scalar_value(expr):
    """The value of a constant whose dims are all 1 (TVM's IsScalar), else None."""
    if not isinstance(expr, Constant):
        return None
    array = np.asarray(expr.data)  # read only: no copy of a weight
    if array.size != 1 or array.dtype.kind not in "biuf":
        return None
    return array.reshape(()).item()


def _orders(call):
    """Argument orders to match: both for a commutative op (``TCommutative``: add,
    multiply...), as TVM's matcher."""
    a, b = call.args
    return [(a, b), (b, a)] if call.op.get_attr("TCommutative", False) else [(a, b)]


def _fold(op_name, lhs: Constant, rhs: Constant) -> Constant:
    """``op(lhs, rhs)`` evaluated now with the operator's reference implementation."""
    op = Op.get(op_name)
    types = [TensorType(c.data.shape, c.data.dtype) for c in (lhs, rhs)]
    out_type = infer_call_type(op, types)
    value = op.reference([lhs.data.numpy(), rhs.data.numpy()], None, out_type)
    return Constant(np.asarray(value).astype(to_numpy_dtype(out_type.dtype), copy=False))


def _concretize_zeros_like(call):
    ty = _tensor_type(call)
    return _tensor.zeros(ty.shape, ty.dtype) if ty is not None else None


def _concretize_ones_like(call):
    ty = _tensor_type(call)
    return _tensor.ones(ty.shape, ty.dtype) if ty is not None else None


def _concretize_full_like(call):
    ty = _tensor_type(call)
    return _tensor.full(call.args[1], ty.shape, ty.dtype) if ty is not None else None


def _concretize_reshape_like(call):
    ty = _tensor_type(call)
    return _transform.reshape(call.args[0], ty.shape) if ty is not None else None


def _add_to_multiply(call):
    x, y = call.args
    ty = _tensor_type(call)
    if x is not y or ty is None or parse_dtype(ty.dtype).is_bool:
        return None
    return _tensor.multiply(x, const(2, ty.dtype))


def _divide_sqrt(call):
    numerator, denominator = call.args
    root = _call_of(denominator, "sqrt")
    ty = _tensor_type(call)
    # Integer division truncates: x / sqrt(y) is not x * rsqrt(y) there.
    if root is None or ty is None or parse_dtype(ty.dtype).code != "float":
        return None
    return _tensor.multiply(numerator, _tensor.rsqrt(root.args[0]))


def _is_identity_element(expr, value) -> bool:
    """zeros()/zeros_like() for 0, ones()/ones_like() for 1, or a scalar constant equal to it."""
    names = ("zeros", "zeros_like") if value == 0 else ("ones", "ones_like")
    if _call_of(expr, *names) is not None:
        return True
    scalar = _scalar_value(expr)
    return scalar is not None and scalar == value


def _identity_rule(value):
    def rewrite(call):
        for x, other in _orders(call):
            if _is_identity_element(other, value) and _same_type(x, call):
                return x
        return None
    return rewrite


def _merge_reshapes(call):
    inner = _call_of(call.args[0], "reshape")
    ty = _tensor_type(call)
    if inner is None or ty is None:
        return None
    return _transform.reshape(inner.args[0], ty.shape)


def _layout_tokens(layout):
    """``"NCHW4c"`` -> ``["N", "C", "H", "W", "4c"]``."""
    return [a if f is None else f"{f}{a}" for a, f in _transform.parse_layout(layout)]


def _permutation(call, ndim):
    """The axes order of a transpose or of a layout_transform between plain layouts (NCHW ->
    NHWC); None for split layouts (NCHW4c), which change the shape, not just the order."""
    if call.op.name == "transpose":
        axes = call.attrs.axes
        if axes is None:
            return list(range(ndim - 1, -1, -1))
        return [a + ndim if a < 0 else a for a in axes]
    src, dst = call.attrs.src_layout, call.attrs.dst_layout
    if not (src.isalpha() and src.isupper() and sorted(src) == sorted(dst)
            and len(src) == ndim):
        return None
    return [src.index(axis) for axis in dst]


def _fold_layout_transforms(x, outer, inner):
    """Two transforms of which one changes the layout's rank, as one layout_transform (TVM's
    FoldRankChangingLayoutTrans), or None."""
    def rank(call):
        return len(_tensor_type(call).shape)

    if outer.op.name == inner.op.name == "layout_transform":
        if outer.attrs.src_layout != inner.attrs.dst_layout:
            return None
        src, dst = inner.attrs.src_layout, outer.attrs.dst_layout
        return x if src == dst else _transform.layout_transform(x, src, dst)
    if outer.op.name == "layout_transform":
        # A permutation, then a layout change that adds axes: start from the permuted layout.
        src, dst = _layout_tokens(outer.attrs.src_layout), _layout_tokens(outer.attrs.dst_layout)
        axes = _permutation(inner, rank(inner))
        if axes is None or len(src) >= len(dst) or len(axes) != len(src):
            return None
        inverse = [0] * len(axes)
        for i, a in enumerate(axes):
            inverse[a] = i
        return _transform.layout_transform(x, "".join(src[j] for j in inverse),
                                           outer.attrs.dst_layout)
    if inner.op.name == "layout_transform":
        # A layout change that drops axes, then a permutation: end in the permuted layout.
        src, dst = _layout_tokens(inner.attrs.src_layout), _layout_tokens(inner.attrs.dst_layout)
        axes = _permutation(outer, rank(outer))
        if axes is None or len(src) <= len(dst) or len(axes) != len(dst):
            return None
        return _transform.layout_transform(x, inner.attrs.src_layout,
                                           "".join(dst[a] for a in axes))
    return None


def _merge_transposes(call):
    inner = _call_of(call.args[0], "transpose", "layout_transform")
    ty = _tensor_type(call)
    if inner is None or ty is None or _tensor_type(inner) is None:
        return None
    ndim = len(ty.shape)
    outer_axes = _permutation(call, ndim)
    inner_axes = _permutation(inner, len(_tensor_type(inner).shape))
    if outer_axes is None or inner_axes is None or len(inner_axes) != ndim:
        return _fold_layout_transforms(inner.args[0], call, inner)
    # transpose(transpose(x, A), B)[i] reads x along A[B[i]].
    return _transform.transpose(inner.args[0], [inner_axes[b] for b in outer_axes])


def _drop_noop_transpose(call):
    ty = _tensor_type(call)
    if ty is None:
        return None
    if call.op.name == "layout_transform":
        same = call.attrs.src_layout == call.attrs.dst_layout
        return call.args[0] if same else None
    axes = _permutation(call, len(ty.shape))
    return call.args[0] if axes == list(range(len(ty.shape))) else None


def _drop_same_cast(call):
    x = call.args[0]
    tx, ty = _tensor_type(x), _tensor_type(call)
    return x if tx is not None and ty is not None and tx.dtype == ty.dtype else None


_MANTISSA_BITS = {16: 11, 32: 24, 64: 53}


def _exact_integer_limit(dtype):
    """Integers of magnitude up to this are exact in a float dtype (None: not a float)."""
    parsed = parse_dtype(dtype)
    if parsed.code != "float":
        return None
    return 2 ** _MANTISSA_BITS[parsed.bits]


def _dtype_range(dtype):
    parsed = parse_dtype(dtype)
    if parsed.is_bool:
        return 0, 1
    if parsed.code in ("int", "uint"):
        info = np.iinfo(to_numpy_dtype(dtype))
        return int(info.min), int(info.max)
    return -np.inf, np.inf


def _cast_keeps_values(src, dst, lo=None, hi=None) -> bool:
    """True when casting any ``src`` value (in ``[lo, hi]`` if given) to ``dst`` is exact."""
    s, d = parse_dtype(src), parse_dtype(dst)
    if s.code == "bfloat" or d.code == "bfloat":
        return False
    s_lo, s_hi = _dtype_range(src)
    lo = s_lo if lo is None else max(lo, s_lo)
    hi = s_hi if hi is None else min(hi, s_hi)
    if s.code == "float":
        return d.code == "float" and d.bits >= s.bits
    # Integral source (bool, int, uint): every integer in [lo, hi] must survive.
    if d.code == "float":
        limit = _exact_integer_limit(dst)
        return max(abs(lo), abs(hi)) <= limit
    d_lo, d_hi = _dtype_range(dst)
    return d_lo <= lo and hi <= d_hi


def _merge_casts(call):
    inner = _call_of(call.args[0], "cast")
    if inner is None:
        return None
    x = inner.args[0]
    tx, ti, ty = _tensor_type(x), _tensor_type(inner), _tensor_type(call)
    if tx is None or ti is None or ty is None:
        return None
    # Only a widening inner cast can go: a narrowing one changes values. (TVM's check calls
    # int8 -> uint8 or int32 -> float32 widening; here the cast must keep every value.)
    if not _cast_keeps_values(tx.dtype, ti.dtype):
        return None
    return _tensor.cast(x, ty.dtype)


def _drop_casts_after_clip(call):
    chain = [call]
    node = call.args[0]
    while _call_of(node, "cast") is not None:
        chain.append(node)
        node = node.args[0]
    clip = _call_of(node, "clip")
    if clip is None or len(chain) < 2:
        return None
    lo, hi = clip.attrs.a_min, clip.attrs.a_max
    dtypes = [_tensor_type(c) for c in [clip, *reversed(chain)]]
    if any(t is None for t in dtypes):
        return None
    dtypes = [t.dtype for t in dtypes]
    # The casts can go when the chain ends where one direct cast would: after the first cast
    # every value must survive (TVM only checks ranges, which drops a float -> int -> float
    # truncation). A first float -> int cast truncates, as a direct cast to an int type does.
    first_ok = _cast_keeps_values(dtypes[0], dtypes[1], lo, hi) or (
        parse_dtype(dtypes[0]).code == "float" and _holds_range(dtypes[1], lo, hi)
        and _holds_range(dtypes[-1], lo, hi))
    rest_ok = all(_cast_keeps_values(a, b, lo, hi) for a, b in zip(dtypes[1:], dtypes[2:]))
    if not (first_ok and rest_ok):
        return None
    return clip if dtypes[-1] == dtypes[0] else _tensor.cast(clip, dtypes[-1])


def _holds_range(dtype, lo, hi) -> bool:
    """An integer dtype that holds every integer in ``[lo, hi]``."""
    parsed = parse_dtype(dtype)
    if parsed.code not in ("int", "uint"):
        return False
    d_lo, d_hi = _dtype_range(dtype)
    return d_lo <= lo and hi <= d_hi


def _drop_clip(call):
    ty = _tensor_type(call)
    if ty is None:
        return None
    lo, hi = _dtype_range(ty.dtype)
    return call.args[0] if call.attrs.a_min <= lo and call.attrs.a_max >= hi else None


def _fill_value(expr):
    """The scalar a full/ones/zeros(-like) call fills with, as a constant of its dtype."""
    call = _call_of(expr, "full", "full_like", "ones", "ones_like", "zeros", "zeros_like")
    ty = _tensor_type(expr)
    if call is None or ty is None:
        return None
    name = call.op.name
    if name.startswith("ones"):
        return const(1, ty.dtype)
    if name.startswith("zeros"):
        return const(0, ty.dtype)
    fill = call.args[-1]
    if not isinstance(fill, Constant) or fill.data.numpy().ndim != 0:
        return None
    value = fill.data.numpy()
    with np.errstate(all="ignore"):  # np.full converts the same way
        return Constant(np.asarray(value.astype(to_numpy_dtype(ty.dtype))))


def _fill_into_broadcast(call):
    if call.op.get_attr("TOpPattern") != OpPattern.BROADCAST or len(call.args) != 2:
        return None
    for position in (0, 1):
        value = _fill_value(call.args[position])
        x = call.args[1 - position]
        if value is None or not _same_type(x, call):
            continue
        args = [value, x] if position == 0 else [x, value]
        return Call(call.op, args, call.attrs, call.type_args, call.span)
    return None


def _switch_add_multiply(call):
    for inner, c2 in _orders(call):
        add = _call_of(inner, "add")
        if add is None or not isinstance(c2, Constant):
            continue
        for x, c1 in _orders(add):
            if isinstance(c1, Constant) and not isinstance(x, Constant):
                return _tensor.add(_tensor.multiply(x, c2), _fold("multiply", c1, c2))
    return None


def _merge_constant_operands(call):
    name = call.op.name
    for inner, c2 in _orders(call):
        same = _call_of(inner, name)
        if same is None or not isinstance(c2, Constant):
            continue
        for x, c1 in _orders(same):
            if isinstance(c1, Constant) and not isinstance(x, Constant):
                return Call(call.op, [x, _fold(name, c1, c2)], call.attrs, call.type_args)
    return None


RULES = {
    "zeros_like": Rule("zeros_like(x) => zeros(shape(x))", _calls("zeros_like"),
                       _concretize_zeros_like),
    "ones_like": Rule("ones_like(x) => ones(shape(x))", _calls("ones_like"),
                      _concretize_ones_like),
    "full_like": Rule("full_like(x, c) => full(c, shape(x))", _calls("full_like"),
                      _concretize_full_like),
    "reshape_like": Rule("reshape_like(x, y) => reshape(x, shape(y))", _calls("reshape_like"),
                         _concretize_reshape_like),
    "add_self": Rule("x + x => x * 2", _twice(), _add_to_multiply),
    "rsqrt": Rule("x / sqrt(y) => x * rsqrt(y)",
                  is_op("divide")(wildcard(), is_op("sqrt")(wildcard())), _divide_sqrt),
    "add_zero": Rule("x + 0 => x", _calls("add"), _identity_rule(0)),
    "subtract_zero": Rule("x - 0 => x", _calls("subtract"), _identity_rule(0)),
    "multiply_one": Rule("x * 1 => x", _calls("multiply"), _identity_rule(1)),
    "divide_one": Rule("x / 1 => x", _calls("divide"), _identity_rule(1)),
    "reshape": Rule("reshape(reshape(x)) => reshape(x)", _twice_nested("reshape"),
                    _merge_reshapes),
    "transpose": Rule("transpose(transpose(x)) => transpose(x)",
                      _a_transpose()(_a_transpose()(wildcard())), _merge_transposes),
    "noop_transpose": Rule("transpose(x, identity) => x", _a_transpose()(None),
                           _drop_noop_transpose),
    "same_cast": Rule("cast(x, dtype(x)) => x", _calls("cast"), _drop_same_cast),
    "consecutive_cast": Rule("cast(cast(x)) => cast(x)", _twice_nested("cast"),
                             _merge_casts),
    "full_elementwise": Rule("op(full(c), x) => op(c, x)", wildcard()(None),
                             _fill_into_broadcast),
    "switch_add_multiply": Rule("(x + c1) * c2 => x * c2 + c1 * c2",
                                _with_constants("multiply", "add"), _switch_add_multiply),
    "multiply_constants": Rule("(x * c1) * c2 => x * (c1 * c2)",
                               _with_constants("multiply", "multiply"),
                               _merge_constant_operands),
    "add_constants": Rule("(x + c1) + c2 => x + (c1 + c2)", _with_constants("add", "add"),
                          _merge_constant_operands),
    "clip_casts": Rule("cast(...cast(clip(x))) => clip(x)", _twice_nested("cast"),
                       _drop_casts_after_clip),
    "clip": Rule("clip(x) => x", _calls("clip"), _drop_clip),
}

# TVM's SimplifyExpr order (simplify_expr.cc), less the rewrites of ops irlab does not have
# (cast_like, collapse_sum_like, broadcast_to_like, qnn.dequantize + argmax/argmin/argsort).
SIMPLIFY_EXPR_RULES = [RULES[k] for k in (
    "zeros_like", "ones_like", "full_like", "reshape_like", "add_self", "rsqrt", "add_zero",
    "subtract_zero", "multiply_one", "divide_one", "reshape", "transpose", "noop_transpose",
    "same_cast", "consecutive_cast", "full_elementwise", "switch_add_multiply",
    "multiply_constants", "add_constants", "clip_casts", "clip")]

# The clean-ups TVM runs after AlterOpLayout (SimplifyExprPostAlterOp).
POST_ALTER_OP_RULES = [RULES[k] for k in (
    "add_zero", "subtract_zero", "multiply_one", "divide_one", "reshape", "same_cast",
    "consecutive_cast", "clip_casts", "clip")]


# ---------------------------------------------------------------------------------------------
# the rewrite engine
_MAX_STEPS_PER_CALL = 32
_MAX_SWEEPS = 10


def _local_type(node):
    """The type of a node built by a rule, from its (typed) children."""
    if isinstance(node, Call) and isinstance(node.op, Op):
        return infer_call_type(node.op, [a.checked_type for a in node.args], node.attrs)
    if isinstance(node, Constant):
        return TensorType(node.data.shape, node.data.dtype)
    if isinstance(node, Tuple):
        return TupleType([f.checked_type for f in node.fields])
    if isinstance(node, TupleGetItem):
        return node.tuple_value.checked_type.fields[node.index]
    raise IrlabError(f"internal: a rewrite rule built a {type(node).__name__}, which the rule "
                     f"engine cannot type")


def ensure_types(expr):
    """Give ``checked_type`` to the nodes a rule built (the rest of the graph is typed)."""
    order, seen, stack = [], set(), [(expr, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in seen or isinstance(node, Op) or node.has_checked_type():
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((child, False) for child in expr_children(node))
    for node in order:
        node._set_checked_type(_local_type(node))


def _keeps_type(result, original) -> bool:
    """Type ``result`` and check it has the type of what it replaces. A rule whose output does
    not type-check (e.g. a scalar given to nn.bias_add, a broadcast op) does not apply."""
    try:
        ensure_types(result)
    except (IrlabError, Defer):
        return False
    return not original.has_checked_type() or result.checked_type == original.checked_type


def _op_name(expr):
    """The index key of a node: its operator's name for a call of an operator, else None (no
    rule rewrites it)."""
    if isinstance(expr, Call) and isinstance(expr.op, Op):
        return expr.op.name
    return None


class RuleRewriter(ExprMutator):
    """One bottom-up sweep applying ``rules``; counts every rewrite in ``fired``."""

    def __init__(self, rules, fired: Counter):
        super().__init__()
        table = rules if isinstance(rules, RuleTable) else RuleTable(rules)
        self.rules = list(table.rules)
        self.fired = fired
        self.driver = RuleDriver(table, _op_name, self._count, validate=_keeps_type,
                                 max_steps=_MAX_STEPS_PER_CALL)

    def _count(self, name):
        self.fired[name] += 1

    def rules_for(self, op_name):
        return list(self.driver.table[op_name])

    def visit(self, expr):
        new = super().visit(expr)
        # Every rule keeps the type of what it replaces, so a rebuilt node has the type of the
        # node it stands for: later rules can read it without running inference again.
        if new is not expr and not new.has_checked_type() and expr.has_checked_type():
            new._set_checked_type(expr.checked_type)
        return new

    def visit_call(self, call):
        post = super().visit_call(call)
        if post is not call and call.has_checked_type():
            post._set_checked_type(call.checked_type)
        return self.apply(post)

    def apply(self, expr):
        return self.driver.rewrite_at(expr)


def rewrite_with_rules(func, rules, fired: Counter | None = None, mod=None):
    """``func`` rewritten with ``rules`` until no rule applies; rule counts go to ``fired``."""
    from irlab.relay.ty_infer import infer_expr

    fired = Counter() if fired is None else fired
    if not func.body.has_checked_type():
        func = infer_expr(func, mod)
    table = RuleTable(rules)

    def sweep(func):
        count = sum(fired.values())
        func = RuleRewriter(table, fired).visit(func)
        return func, sum(fired.values()) != count, 1

    return rewrite_to_fixpoint(sweep, func, _MAX_SWEEPS)


# ---------------------------------------------------------------------------------------------
# the passes and their rule records
_FIRED_BY_MODULE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_LAST_RUN = {"counts": Counter()}


def rules_fired(mod) -> Counter:
    """How often each rule fired in the SimplifyExpr run that returned ``mod``."""
    return Counter(_FIRED_BY_MODULE.get(mod, {}))


def last_rule_counts() -> Counter:
    """How often each rule fired in the latest SimplifyExpr/SimplifyExprPostAlterOp run."""
    return Counter(_LAST_RUN["counts"])


def _make_pass(rules, name):
    from irlab.relay.transform import FunctionPass
    from irlab.transform import PassInfo

    class RuleRewritePass(FunctionPass):
        """A function pass applying rewrite rules; ``rules_fired`` counts the last run."""

        def __init__(self):
            self.rules = list(rules)
            self.rules_fired = Counter()
            super().__init__(self._rewrite, PassInfo(0, name, ["InferType"]))

        def _rewrite(self, func, mod, ctx):
            return rewrite_with_rules(func, self.rules, self.rules_fired, mod)

        def transform_module(self, mod, ctx):
            self.rules_fired = Counter()
            result = super().transform_module(mod, ctx)
            _FIRED_BY_MODULE[result] = Counter(self.rules_fired)
            _LAST_RUN["counts"] = Counter(self.rules_fired)
            return result

    RuleRewritePass.__name__ = name
    return RuleRewritePass()


def SimplifyExpr():
    """Algebraic clean-ups (function pass, opt level 0): reshape/transpose chains, x * 1,
    x + 0, redundant casts, full-like operands... See ``SIMPLIFY_EXPR_RULES``."""
    return _make_pass(SIMPLIFY_EXPR_RULES, "SimplifyExpr")


def SimplifyExprPostAlterOp():
    """The clean-ups left to do after AlterOpLayout (function pass, opt level 0)."""
    return _make_pass(POST_ALTER_OP_RULES, "SimplifyExprPostAlterOp")


__all__ = ["SimplifyExpr", "SimplifyExprPostAlterOp", "Rule", "RULES", "SIMPLIFY_EXPR_RULES",
           "POST_ALTER_OP_RULES", "RuleRewriter", "rewrite_with_rules", "rules_fired",
           "last_rule_counts", "ensure_types"]
