"""Analyses of Relax IR (``tvm.relax.analysis``)."""

from irlab.relax.analysis.well_formed import well_formed, verify_well_formed
from irlab.relax.analysis.variables import (free_vars, bound_vars, all_vars, all_global_vars,
                                            get_var2val, free_symbolic_vars)
from irlab.relax.struct_info import is_base_of, struct_info_lca, erase_to_well_defined
from irlab.relax.normalizer import derive_call_ret as derive_call_ret_struct_info
