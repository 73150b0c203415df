"""How a Relax operator is registered: one call gives its struct-info rule, purity, fusion
pattern and legalization (TVM's ``FInferStructInfo``, ``FPurity``, ``TOpPattern`` and
``FLegalize`` op attributes), so passes read everything about an op from the op itself."""

from __future__ import annotations

from typing import Callable

from irlab.ir.op import Op, OpPattern, register_op

# Op attribute keys read by the normalizer and passes.
INFER_STRUCT_INFO = "FInferStructInfo"  # (call, block_builder) -> StructInfo
PURITY = "FPurity"  # bool: False for ops with side effects
LEGALIZE = "FLegalize"  # (block_builder, call) -> Expr (usually a call_tir via call_te)
CALL_PACKED = "FCallPacked"  # str: the packed function the VM calls for the op (its args as is)


def register_relax_op(name: str, infer: Callable, *, num_inputs: int = -1,
                      attrs_type=None, pure: bool = True, pattern=OpPattern.OPAQUE,
                      legalize: Callable | None = None, description: str = "") -> Op:
    """Register ``relax.<name>`` (the name is given in full) with its rules."""
    op = register_op(name, num_inputs=num_inputs, attrs_type=attrs_type, pattern=pattern,
                     description=description)
    op.set_attr(INFER_STRUCT_INFO, infer)
    op.set_attr(PURITY, pure)
    if legalize is not None:
        op.set_attr(LEGALIZE, legalize)
    return op


def call_packed_name(op) -> str | None:
    """The packed function an op runs as (TVM's ``FCallPacked``: ops without a TE compute,
    e.g. of data-dependent output shape), or None."""
    return op.get_attr(CALL_PACKED, None)


def set_legalize(name: str, legalize: Callable) -> Op:
    """Attach (or replace) the legalization of an op (``relax.transform.LegalizeOps``)."""
    return Op.get(name).set_attr(LEGALIZE, legalize)


def is_pure_op(op: Op) -> bool:
    return bool(op.get_attr(PURITY, True))
