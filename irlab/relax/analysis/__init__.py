"""Analyses of Relax IR (``tvm.relax.analysis``)."""

from irlab.relax.analysis.well_formed import well_formed, verify_well_formed
from irlab.relax.analysis.variables import (free_vars, bound_vars, all_vars, all_global_vars,
                                            get_var2val, free_symbolic_vars)
from irlab.relax.struct_info import is_base_of, struct_info_lca, erase_to_well_defined
from irlab.relax.normalizer import derive_call_ret as derive_call_ret_struct_info


def remove_all_unused(func):
    """``func`` without its unused pure bindings (TVM's ``relax.analysis.remove_all_unused``)."""
    from irlab.relax.transform.dead_code_elimination import remove_unused_bindings

    return remove_unused_bindings(func)
