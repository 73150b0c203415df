"""memory.alloc_storage / memory.kill: typed with core.rly's Storage, parsed with a
VirtualDevice from the meta table, and kept in place by DeadCodeElimination as TVM does."""

import pytest

import irlab
from irlab import relay
from irlab.relay import transform

PROGRAM = """
#[version = "0.0.5"]
def @main() {
  let %size: int64 = cast(64, dtype="int64");
  let %unused = memory.alloc_storage(%size, %size, virtual_device=meta[VirtualDevice][0]);
  let %x = memory.alloc_storage(%size, %size, virtual_device=meta[VirtualDevice][0]);
  let %_ = memory.kill(%x);
  0
}
"""


def parse_program():
    core = irlab.IRModule()
    core.import_from_std("core.rly")
    device = irlab.target.VirtualDevice(irlab.cpu())
    return relay.parse(PROGRAM, "from_string", core, {"VirtualDevice": [device]}), device


def test_storage_type_and_meta_table_attrs():
    mod, device = parse_program()
    storage = mod.get_global_type_var("Storage")
    alloc = mod["main"].body.body.body.value
    assert alloc.attrs.virtual_device == device
    assert alloc.checked_type == storage()


def test_dead_code_elimination_inlines_pure_allocations_and_keeps_kills():
    mod, _ = parse_program()
    out = transform.DeadCodeElimination(inline_once=True)(mod)
    text = out["main"].astext()
    assert text.count("memory.alloc_storage") == 1 and "memory.kill" in text
    assert "%unused" not in text and "let %x" not in text


def test_kill_evaluates_to_unit_and_alloc_needs_int64_sizes():
    mod, _ = parse_program()
    assert relay.create_executor("debug", mod=mod).evaluate()().numpy() == 0
    bad = relay.op.memory.alloc_storage(relay.const(4), relay.const(4), irlab.cpu())
    with pytest.raises(irlab.errors.RelayTypeError, match="int64 scalar"):
        transform.InferType()(irlab.IRModule.from_expr(bad))
