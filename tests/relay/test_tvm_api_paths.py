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


def test_virtual_device_is_a_value():
    vd = tvm.target.VirtualDevice(tvm.cpu(), tvm.target.Target("llvm"))
    assert vd.device_type == 1 and vd.virtual_device_id == 0 and vd.memory_scope == ""
    assert vd == tvm.target.VirtualDevice(tvm.cpu(), tvm.target.Target("llvm"))
    assert tvm.target.VirtualDevice().is_fully_unconstrained()


def test_import_from_std_core_declares_storage_only():
    import pytest

    mod = tvm.IRModule()
    mod.import_from_std("core.rly")
    assert len(mod) == 0 and mod.get_global_type_var("Storage")
    with pytest.raises(tvm.TVMError, match="standard library"):
        mod.import_from_std("nope.rly")
    assert relay.parse is relay.parser.parse


def test_make_node_and_custom_op_with_dict_attrs_and_stateful_flag():
    attrs = tvm.ir.make_node("DictAttrs", Primitive=1, Composite="x")
    assert attrs == tvm.ir.DictAttrs({"Primitive": 1, "Composite": "x"})
    name = "test_paths.custom_identity"
    relay.op.op.register(name, "identity with free-form attrs")
    op = relay.op.op.get(name)
    op.set_num_inputs(1).add_argument("data", "Tensor", "input")
    op.set_attrs_type_key("DictAttrs")
    op.add_type_rel("custom_identity", lambda arg_types, attrs: arg_types[0])
    relay.op.op.register_stateful(name, True)
    assert op.get_attr("TOpIsStateful") is True
    x = relay.var("x", shape=(3,))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Call(op, [x])))
    assert mod["main"].ret_type == relay.TensorType((3,), "float32")


def test_top_level_datatype_is_the_runtime_one():
    from irlab.runtime.dtype import DataType

    assert tvm.DataType is DataType
