"""Annotation operators: the BYOC flow's ``annotation.compiler_begin`` / ``compiler_end``,
``annotation.stop_fusion`` (FuseOps ends a fused group at it) and ``on_device`` (where a value
lives).

They mark the edges of a region of the graph that an external compiler handles::

    x = relay.var("x", shape=(2, 2))
    begin = compiler_begin(x, "test_target")        # the value enters the region
    end = compiler_end(relay.abs(begin), "test_target")  # and leaves it

Both are identities at run time (the value passes through unchanged, whatever its type, tuples
included); only the partitioning passes (``MergeCompilerRegions``, ``PartitionGraph``) read them.
"""

from __future__ import annotations

from irlab.ir.attrs import Attrs
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.relay.op.op_common import make_call
from irlab.target.virtual_device import VirtualDevice


class CompilerAttrs(Attrs):
    """The external compiler an annotation names (no default: it always prints)."""

    _type_key = "relay.attrs.CompilerAttrs"
    compiler: str


def _identity_rel(ctx):
    # Any type passes through: a region may begin or end on a tuple.
    return ctx.arg(0)


def _identity_reference(inputs, attrs, out_type):
    return inputs[0]


for _name, _what in (("annotation.compiler_begin", "the start"),
                     ("annotation.compiler_end", "the end")):
    register_op(_name, num_inputs=1, arguments=[("data", "Tensor", "The input data.")],
                attrs_type=CompilerAttrs, type_rel=_identity_rel, pattern=OpPattern.OPAQUE,
                reference=_identity_reference, support_level=10,
                description=f"Mark {_what} of a region handled by an external compiler.",
                # partitioning removes them before lowering: nothing to compute or schedule
                ).set_attrs(FTVMCompute=NOT_APPLICABLE, FTVMStrategy=NOT_APPLICABLE,
                            FInferCorrectLayout=NOT_APPLICABLE)


register_op("annotation.stop_fusion", num_inputs=1,
            arguments=[("data", "Tensor", "The input data.")], type_rel=_identity_rel,
            pattern=OpPattern.OPAQUE, reference=_identity_reference, support_level=10,
            description="Keep FuseOps from fusing the producer of its input with its consumers.",
            # FuseOps drops it (after cutting the group there): nothing to compute
            ).set_attrs(FTVMCompute=NOT_APPLICABLE, FTVMStrategy=NOT_APPLICABLE,
                        FInferCorrectLayout=NOT_APPLICABLE)


def stop_fusion(data):
    """``data``, marked so that FuseOps does not fuse its producer with its consumers."""
    return make_call("annotation.stop_fusion", [data])


def compiler_begin(data, compiler: str):
    """Annotate ``data`` as an input of a region offloaded to ``compiler``."""
    return make_call("annotation.compiler_begin", [data], CompilerAttrs(compiler=str(compiler)))


def compiler_end(data, compiler: str):
    """Annotate ``data`` as an output of a region offloaded to ``compiler``."""
    return make_call("annotation.compiler_end", [data], CompilerAttrs(compiler=str(compiler)))


__all__ = ["CompilerAttrs", "compiler_begin", "compiler_end", "stop_fusion"]


class OnDeviceAttrs(Attrs):
    """Where ``on_device``'s value lives (TVM's ``relay.attrs.OnDeviceAttrs``)."""

    _type_key = "relay.attrs.OnDeviceAttrs"
    virtual_device: object = None
    constrain_result: bool = False
    constrain_body: bool = True


register_op("on_device", num_inputs=1, arguments=[("body", "Expr", "The annotated expression.")],
            attrs_type=OnDeviceAttrs, type_rel=_identity_rel, pattern=OpPattern.OPAQUE,
            reference=_identity_reference, support_level=10,
            description="Say which device the value of an expression lives on.",
            ).set_attrs(TNonComputational=True, FTVMCompute=NOT_APPLICABLE,
                        FTVMStrategy=NOT_APPLICABLE, FInferCorrectLayout=NOT_APPLICABLE)


def on_device(body, virtual_device, constrain_result=False, constrain_body=True):
    """``body``, annotated to live on ``virtual_device`` (a ``VirtualDevice`` or a Device
    such as ``tvm.cpu()``); an identity at run time."""
    if not isinstance(virtual_device, VirtualDevice):
        virtual_device = VirtualDevice(virtual_device)
    return make_call("on_device", [body], OnDeviceAttrs(
        virtual_device=virtual_device, constrain_result=bool(constrain_result),
        constrain_body=bool(constrain_body)))


def strip_on_device(expr):
    """The expression an ``on_device`` annotation wraps (``expr`` itself when it has none)."""
    while getattr(getattr(expr, "op", None), "name", None) == "on_device":
        expr = expr.args[0]
    return expr
