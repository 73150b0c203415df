"""CanonicalizeOps and CanonicalizeCast: rewrite ops into the forms later passes expect.

``CanonicalizeOps`` turns ``nn.bias_add`` into a plain broadcast ``add`` (TVM's
canonicalize_ops.cc); ``CanonicalizeCast`` gives each elementwise consumer of an up-cast its own
copy of the cast, so FuseOps can fuse the cast into every consumer instead of materializing the
wide tensor (canonicalize_cast.cc).

The helper ``typed_function`` is shared with the other passes of this package
(``expand_bias_to_match_axis``, re-exported here, now lives with ``expand_dims``).
"""

from __future__ import annotations

from irlab.runtime.dtype import parse_dtype
from irlab.ir.op import Op, OpPattern
from irlab.relay.expr import Call
from irlab.relay.expr_functor import ExprMutator
from irlab.relay.op import tensor as _tensor
from irlab.relay.op.transform import expand_bias_to_match_axis
from irlab.relay.transform import function_pass


def typed_function(func, mod):
    """``func`` with ``checked_type`` filled everywhere (type inference runs only if needed,
    e.g. when a pass is applied directly rather than through a Sequential that runs its
    ``required`` InferType first)."""
    if func.has_checked_type() and func.body.has_checked_type():
        return func
    from irlab.relay.ty_infer import infer_expr

    return infer_expr(func, mod)


# ---------------------------------------------------------------------------------------------
# CanonicalizeOps
class _BiasAddToAdd(ExprMutator):
    """``nn.bias_add(x, b, axis=a)`` => ``add(x, expand_dims(b, ...))``."""

    _BIAS_ADD = Op.get("nn.bias_add")

    def visit_call(self, call):
        new = super().visit_call(call)
        if call.op is not self._BIAS_ADD:
            return new
        ndim = len(call.args[0].checked_type.shape)
        axis = call.attrs.axis
        axis = axis + ndim if axis < 0 else axis
        bias = expand_bias_to_match_axis(new.args[1], ndim, [axis])
        return _tensor.add(new.args[0], bias)


def CanonicalizeOps():
    """Rewrite ``nn.bias_add`` into ``expand_dims`` + ``add``.

    Before::

        nn.bias_add(%conv, %b)              /* %conv: (1, 16, 8, 8), %b: (16) */

    After::

        %0 = expand_dims(%b, axis=1, num_newaxis=2);
        add(%conv, %0)
    """

    def transform(func, mod, ctx):
        return _BiasAddToAdd().visit(typed_function(func, mod))

    return function_pass(transform, opt_level=3, name="CanonicalizeOps",
                         required=["InferType"])


# ---------------------------------------------------------------------------------------------
# CanonicalizeCast
class _CastCanonicalizer(ExprMutator):
    """Copies an up-cast for its second and later elementwise/broadcast consumers.

    Each such consumer gets a cast of its own, so FuseOps can fuse the cheap cast into every
    consumer; the wide intermediate tensor is never written out.
    """

    _CAST = Op.get("cast")

    def __init__(self):
        super().__init__()
        self.uses = {}  # up-cast call -> number of elementwise consumers met so far

    def visit_call(self, call):
        op = call.op
        if not isinstance(op, Op) or op.pattern > OpPattern.BROADCAST:
            return super().visit_call(call)
        args = [self._argument(arg) for arg in call.args]
        if all(a is b for a, b in zip(args, call.args)):
            return call  # as TVM: an unchanged elementwise call keeps its old arguments
        return Call(op, args, call.attrs, call.type_args, call.span)

    def _argument(self, arg):
        new = self.visit(arg)
        if not self._is_upcast(arg):
            return new
        self.uses[arg] = self.uses.get(arg, 0) + 1
        if self.uses[arg] == 1:
            return new
        return Call(new.op, new.args, new.attrs, new.type_args, new.span)

    def _is_upcast(self, expr):
        if not isinstance(expr, Call) or expr.op is not self._CAST:
            return False
        source = parse_dtype(expr.args[0].checked_type.dtype)
        target = parse_dtype(expr.attrs.dtype)
        return source.bits < target.bits


def CanonicalizeCast():
    """Give every elementwise consumer of a widening ``cast`` its own copy of the cast.

    Before::

        %1 = cast(%conv_int8, dtype="int32");
        %2 = add(%1, %b1);
        %3 = add(%1, %b2);

    After::

        %1 = cast(%conv_int8, dtype="int32");
        %2 = add(%1, %b1);
        %3 = cast(%conv_int8, dtype="int32");
        %4 = add(%3, %b2);
    """

    def transform(func, mod, ctx):
        return _CastCanonicalizer().visit(typed_function(func, mod))

    return function_pass(transform, opt_level=3, name="CanonicalizeCast",
                         required=["InferType"])


__all__ = ["CanonicalizeOps", "CanonicalizeCast", "expand_bias_to_match_axis",
           "typed_function"]
