"""Annotation operators: the BYOC flow's ``annotation.compiler_begin`` / ``compiler_end``, and
``annotation.stop_fusion`` (FuseOps ends a fused group at it).

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
