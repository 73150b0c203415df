"""Memory operators of Relay's explicit-allocation form (TVM's ``relay.op.memory``):
``memory.alloc_storage`` makes a block of bytes on a device, ``memory.kill`` ends its life.

As in TVM, an allocation is pure (an unused one goes, a single use takes it inline) and a kill
has effects (``TOpIsStateful``: it stays where it is); constant folding leaves both alone
(``TNonComputational``). Their values have the opaque type ``Storage`` (``extern type
Storage`` of the standard library's ``core.rly``, ``IRModule.import_from_std("core.rly")``).
"""

from __future__ import annotations

import numpy as np

from irlab.ir.attrs import Attrs
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.ir.type import GlobalTypeVar, TupleType, TypeCall
from irlab.relay.op.op_common import make_call
from irlab.target.virtual_device import VirtualDevice

# The opaque type of a storage block (declared ``extern type Storage`` in core.rly).
STORAGE = TypeCall(GlobalTypeVar("Storage"), [])


class AllocStorageAttrs(Attrs):
    """The element type the storage is meant for, and where it lives."""

    _type_key = "relay.attrs.AllocStorageAttrs"
    dtype: str = "float32"
    virtual_device: object = None


def _alloc_storage_rel(ctx):
    for i, what in ((0, "size"), (1, "alignment")):
        ty = ctx.tensor(i, what)
        ctx.expect(ty.shape == () and ty.dtype == "int64",
                   f"{what} must be an int64 scalar, got {ty}")
    return STORAGE


def _alloc_storage_reference(inputs, attrs, out_type):
    return np.zeros(int(inputs[0]), dtype=np.uint8)  # the bytes of the block


def _kill_rel(ctx):
    ctx.arg(0)
    return TupleType([])


def _kill_reference(inputs, attrs, out_type):
    return ()


for _name, _args, _attrs, _rel, _ref, _stateful, _what in (
        ("memory.alloc_storage", [("size", "Tensor", "The size in bytes."),
                                  ("alignment", "Tensor", "The alignment in bytes.")],
         AllocStorageAttrs, _alloc_storage_rel, _alloc_storage_reference, False,
         "Allocate a block of storage on a device."),
        ("memory.kill", [("data", "Tensor", "The storage or tensor to free.")], None, _kill_rel,
         _kill_reference, True, "End the life of a storage block or tensor.")):
    register_op(_name, num_inputs=len(_args), arguments=_args, attrs_type=_attrs, type_rel=_rel,
                pattern=OpPattern.OPAQUE, reference=_ref, support_level=10, description=_what,
                ).set_attrs(TOpIsStateful=_stateful, TNonComputational=True,
                            FTVMCompute=NOT_APPLICABLE, FTVMStrategy=NOT_APPLICABLE,
                            FInferCorrectLayout=NOT_APPLICABLE)


def alloc_storage(size, alignment, virtual_device, dtype_hint="float32"):
    """A storage block of ``size`` bytes aligned to ``alignment`` on ``virtual_device``."""
    if not isinstance(virtual_device, VirtualDevice):
        virtual_device = VirtualDevice(virtual_device)
    return make_call("memory.alloc_storage", [size, alignment],
                     AllocStorageAttrs(dtype=str(dtype_hint), virtual_device=virtual_device))


def kill(data):
    """Free ``data`` (a storage block or tensor); evaluates to ``()``."""
    return make_call("memory.kill", [data])


__all__ = ["AllocStorageAttrs", "alloc_storage", "kill", "STORAGE"]
