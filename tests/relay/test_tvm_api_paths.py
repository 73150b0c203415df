"""TVM's module paths for public names that irlab defines elsewhere resolve to the same objects."""

import importlib

import irlab as tvm
from irlab import relay


def test_pass_hook_registration_lives_with_the_op_api():
    from irlab.relay.transform import layout

    for name in ("register_alter_op_layout", "register_legalize", "register_convert_op_layout"):
        assert getattr(relay.op, name) is getattr(relay.op.op, name) is getattr(layout, name)


def test_ir_instrument_and_transform_paths():
    assert importlib.import_module("irlab.ir.instrument") is tvm.instrument
    assert importlib.import_module("irlab.ir.transform") is tvm.transform
    assert tvm.ir.instrument.PassInstrument is tvm.instrument.PassInstrument
