"""Normalize: every Relax function of the module in normal form with its struct info deduced
(nested calls bound to variables, bodies as SeqExprs), as ``BlockBuilder.normalize`` makes it;
for IR built by hand or by a rewrite that skipped normalization."""

from __future__ import annotations

from irlab.relax import expr as rx
from irlab.relax.block_builder import BlockBuilder
from irlab.transform import module_pass

__all__ = ["Normalize"]


def Normalize():  # noqa: N802 (TVM's name)
    """The pass normalizing every Relax function."""

    def transform(mod, ctx):
        bb = BlockBuilder(mod)
        for gv, func in mod.items():
            if isinstance(func, rx.Function):
                bb.update_func(gv, bb.normalize(func))
        return bb.get()

    return module_pass(transform, opt_level=0, name="Normalize")
