"""ToNonDataflow: dataflow blocks become plain binding blocks and their ``DataflowVar``s plain
``Var``s (the VM has no dataflow regions)::

    with R.dataflow():                    lv: R.Tensor((n, 4)) = R.call_tir(...)
        lv = R.call_tir(...)        =>    gv: R.Tensor((n, 4)) = lv
        gv = lv
        R.output(gv)
"""

from __future__ import annotations

from irlab.relax.expr import BindingBlock, DataflowVar, MatchCast, Var, VarBinding
from irlab.relax.transform.binding_rewriter import BindingRewriter, update_functions
from irlab.transform import module_pass


class _ToNonDataflow(BindingRewriter):
    def rewrite_binding(self, binding):
        var = binding.var
        if not isinstance(var, DataflowVar):
            return [binding]
        new_var = Var(var.name_hint, self.substitute_sinfo(var.struct_info_), var.span)
        self.var_map[var] = new_var
        if isinstance(binding, MatchCast):
            return [MatchCast(new_var, binding.value, binding.struct_info, binding.span)]
        return [VarBinding(new_var, binding.value, binding.span)]

    def make_block(self, block, bindings):
        return BindingBlock(bindings, block.span)


def ToNonDataflow():
    """Turn dataflow blocks into binding blocks (``relax.transform.ToNonDataflow``)."""

    def run(mod, ctx):
        return update_functions(mod, lambda gv, f: _ToNonDataflow().rewrite_function(f))

    return module_pass(run, opt_level=0, name="ToNonDataflow")


__all__ = ["ToNonDataflow"]
