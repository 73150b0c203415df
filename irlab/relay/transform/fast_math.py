"""FastMath: swap transcendental ops for their fast approximate versions (TVM's fast_math.cc).

The ``fast_*`` ops have the exact functions as reference semantics; codegen lowers them to
polynomial approximations. An op names its fast version in its definition (``TFastVersion``:
``exp`` -> ``fast_exp``, ``nn.softmax`` -> ``nn.fast_softmax``).
"""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.relay.expr import Call
from irlab.relay.expr_functor import ExprMutator
from irlab.relay.transform import function_pass

class _FastMathMutator(ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        fast = new.op.get_attr("TFastVersion") if isinstance(new.op, Op) else None
        if fast is None:
            return new
        # attrs (softmax's axis) carry over unchanged
        return Call(Op.get(fast), new.args, new.attrs, new.type_args, new.span)


def FastMath():
    """Replace ``exp``, ``tanh``, ``erf`` and ``nn.softmax`` by their ``fast_*`` versions.

    Before::

        %0 = exp(%x);
        nn.softmax(%0, axis=1)

    After::

        %0 = fast_exp(%x);
        nn.fast_softmax(%0, axis=1)
    """

    def transform(func, mod, ctx):
        return _FastMathMutator().visit(func)

    return function_pass(transform, opt_level=4, name="FastMath")


__all__ = ["FastMath"]
