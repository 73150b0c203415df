"""What TVM's reference external compiler ``ccompiler`` takes: elementwise add, subtract and
multiply, plus two composite patterns (multiply-add, add-relu) whose bodies it emits as C.

``partition_for_ccompiler(mod)`` runs the BYOC flow of seed 002: pattern table ->
MergeComposite -> AnnotateTarget -> MergeCompilerRegions -> PartitionGraph. ``relay.build``
then hands each ``Compiler="ccompiler"`` function to ``relay.ext.ccompiler``.
"""

from __future__ import annotations

from irlab.relay.dataflow_pattern import is_op, wildcard
from irlab.relay.op.contrib.register import register_op_attr, register_pattern_table

COMPILER = "ccompiler"
_ELEMENTWISE = ("add", "subtract", "multiply")


def _one_dtype(expr) -> bool:
    """ccompiler emits C for calls whose tensor arguments share one dtype."""
    dtypes = {getattr(a.checked_type, "dtype", None) for a in expr.args}
    return len(dtypes) == 1 and None not in dtypes


for _name in _ELEMENTWISE:
    register_op_attr(_name, f"target.{COMPILER}", _one_dtype)


@register_pattern_table(COMPILER)
def pattern_table():
    """Composite regions ccompiler emits as one C function."""
    multiply_add = is_op("add")(is_op("multiply")(wildcard(), wildcard()), wildcard())
    add_relu = is_op("nn.relu")(is_op("add")(wildcard(), wildcard()))
    return [(f"{COMPILER}.multiply_add", multiply_add), (f"{COMPILER}.add_relu", add_relu)]


def partition_for_ccompiler(mod, params=None):
    """Offload what ccompiler supports: composite patterns first, then single ops."""
    from irlab.relay import transform
    from irlab.relay.build_module import bind_params_by_name
    from irlab.relay.op.contrib.register import get_pattern_table
    from irlab.transform import Sequential

    if params:
        mod = mod.copy()
        mod["main"] = bind_params_by_name(mod["main"], params)
    seq = Sequential([transform.InferType(),
                      transform.MergeComposite(get_pattern_table(COMPILER)),
                      transform.AnnotateTarget([COMPILER]),
                      transform.MergeCompilerRegions(),
                      transform.PartitionGraph()])
    return seq(mod)


__all__ = ["partition_for_ccompiler", "pattern_table"]
