"""SimplifyInference: lower training-only and normalization ops to plain arithmetic for inference.

Rules (TVM's simplify_inference.cc):

- ``nn.batch_norm(x, gamma, beta, mean, var)[0]`` => ``x * scale + shift`` with
  ``scale = 1 / sqrt(var + eps) * gamma`` and ``shift = -mean * scale + beta`` laid along the
  channel axis with ``expand_dims`` (``center``/``scale`` attrs drop ``beta``/``gamma``);
- ``nn.dropout(x)[0]`` => ``x``;
- ``nn.layer_norm(x, gamma, beta)`` => ``(x - mean) / sqrt(variance + eps) * gamma + beta``
  with the statistics over ``axis``; ``nn.instance_norm`` likewise, with the statistics over
  every axis but the batch and channel ones.

Only field 0 of batch_norm/dropout is rewritten: the other fields (moving statistics, mask)
keep the original call, exactly as TVM.

Each op gives its inference form in its definition (``FSimplifyInference(attrs, args,
data_type)``, the replacement of the call, or of its field 0 when the op returns a tuple).
"""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.ir.type import TupleType
from irlab.relay.expr import Call
from irlab.relay.expr_functor import ExprMutator
from irlab.relay.transform import function_pass
from irlab.relay.transform.canonicalize import typed_function


def _inference_form(call):
    """The op's ``FSimplifyInference(attrs, args, data_type)``, or None."""
    return call.op.get_attr("FSimplifyInference") if isinstance(call.op, Op) else None


class _InferenceSimplifier(ExprMutator):
    def __init__(self):
        super().__init__()
        # new data argument of a tuple-valued call -> type of the original one (new nodes are
        # untyped)
        self.data_types = {}

    def visit_call(self, call):
        new = super().visit_call(call)
        lower = _inference_form(call)
        if lower is None:
            return new
        if isinstance(call.checked_type, TupleType):  # rewritten where field 0 is read
            self.data_types[new.args[0]] = call.args[0].checked_type
            return new
        return lower(new.attrs, list(new.args), call.args[0].checked_type)

    def visit_tuple_getitem(self, item):
        new = super().visit_tuple_getitem(item)
        if new.index != 0 or not isinstance(new.tuple_value, Call):
            return new
        call = new.tuple_value
        lower = _inference_form(call)
        if lower is None or call.args[0] not in self.data_types:
            return new
        return lower(call.attrs, list(call.args), self.data_types[call.args[0]])


def SimplifyInference():
    """Replace batch_norm, dropout, layer_norm and instance_norm by inference-time arithmetic.

    Before::

        %0 = nn.batch_norm(%x, %gamma, %beta, %mean, %var);   /* %x: (1, 16, 8, 8) */
        %0.0

    After::

        %0 = add(%var, 1e-05f);
        %1 = sqrt(%0);
        %2 = divide(1f, %1);
        %3 = multiply(%2, %gamma);
        %4 = expand_dims(%3, axis=1, num_newaxis=2);
        %5 = negative(%mean);
        %6 = multiply(%5, %3);
        %7 = add(%6, %beta);
        %8 = multiply(%x, %4);
        %9 = expand_dims(%7, axis=1, num_newaxis=2);
        add(%8, %9)
    """

    def transform(func, mod, ctx):
        return _InferenceSimplifier().visit(typed_function(func, mod))

    return function_pass(transform, opt_level=0, name="SimplifyInference",
                         required=["InferType"])


__all__ = ["SimplifyInference"]
