"""AnnotateSpans (print + re-parse) and InferTypeLocal (in-place typing), TVM's names."""

import numpy as np

import irlab as tvm
from irlab import relay
from irlab.ir.instrument import PassTimingInstrument, pass_instrument


def test_annotate_spans_keeps_the_program_and_is_seen_by_instruments():
    x = relay.var("x", shape=(2, 3))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(1.0))))
    names = []

    @pass_instrument
    class Names:
        def run_before_pass(self, mod, info):
            names.append(info.name)

    with tvm.transform.PassContext(instruments=[Names(), PassTimingInstrument()]):
        out = relay.transform.AnnotateSpans()(mod)
    assert "AnnotateSpans" in names
    # re-parsed text is type-checked, as TVM's parser does: the typed program comes back
    tvm.ir.assert_structural_equal(out, relay.transform.InferType()(mod))
    assert out["main"] is not mod["main"]


def test_infer_type_local_fills_checked_type_in_place():
    x = relay.var("x", shape=(4,), dtype="float32")
    y = relay.multiply(x, relay.const(np.float32(2)))
    z = relay.add(y, x)
    ty = relay.transform.InferTypeLocal(z)
    assert ty == relay.TensorType((4,), "float32")
    assert z.checked_type == ty and y.checked_type == ty


def test_tvm_error_module_names_tvm_error():
    assert tvm.error.TVMError is tvm.TVMError
    assert issubclass(tvm.error.OpNotImplemented, tvm.error.TVMError)
