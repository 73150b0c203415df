"""Relax operators (``tvm.relax.op``): one module per op family, each op registered once with
its struct-info rule and legalization (``irlab.relax.op.registry``)."""

from irlab.relax.op.base import (call_tir, call_dps_packed, call_pure_packed, call_packed,
                                 shape_of)
from irlab.relax.op.binary import *  # noqa: F401,F403
from irlab.relax.op.unary import *  # noqa: F401,F403
from irlab.relax.op.datatype import astype
from irlab.relax.op.unary import clip
from irlab.relax.op.linear_algebra import matmul, linear
from irlab.relax.op import nn, image, attrs, registry  # noqa: F401
from irlab.relax.op.manipulate import (reshape, flatten, permute_dims, concat, split, squeeze,
                                       expand_dims, broadcast_to, tile, repeat)
from irlab.relax.op.index import strided_slice, take
from irlab.relax.op.statistical import (sum, mean, max, min, prod,  # noqa: A004 (TVM's)
                                        variance, cumsum)
from irlab.relax.op.create import (zeros, ones, full, zeros_like, ones_like, full_like, arange,
                                   tril, triu, one_hot)
from irlab.relax.op.search import where, argmax, argmin
from irlab.relax.op.set import unique
from irlab.relax.op import builtin, memory, vm  # noqa: F401 (lowering to the VM: relax-vm)
from irlab.relax.op.builtin import (call_builtin_with_ctx, null_value, make_closure,
                                    invoke_closure, invoke_pure_closure)
