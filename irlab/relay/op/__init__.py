"""Relay operators: each family registers its ops (attrs, type relation, pattern, reference)."""

from irlab.ir.op import Op, OpPattern, register_op
from irlab.relay.op import tensor, transform, reduce, nn, image  # noqa: F401 - registration
from irlab.relay.op import annotation  # noqa: F401 - registration
from irlab.relay.op.tensor import *  # noqa: F401,F403
from irlab.relay.op.transform import *  # noqa: F401,F403
from irlab.relay.op.reduce import *  # noqa: F401,F403

get = Op.get

# TVM's registration API at relay.op.* (relay.op.register_compute, register_strategy...)
from irlab.relay.op import op  # noqa: E402
from irlab.relay.op.op import (register_pattern, register_compute, register_strategy,  # noqa
                               register_schedule, register_injective_schedule,
                               register_broadcast_schedule, register_reduce_schedule,
                               register_opaque_schedule, register_legalize,
                               register_alter_op_layout, register_convert_op_layout)
from irlab.relay.op.op_strategy import OpStrategy, OpImplementation  # noqa: E402,F401
