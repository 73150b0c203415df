"""Relay operators: each family registers its ops (attrs, type relation, pattern, reference)."""

from irlab.ir.op import Op, OpPattern, register_op
from irlab.relay.op import tensor, transform, reduce, nn, image  # noqa: F401 - registration
from irlab.relay.op import annotation  # noqa: F401 - registration
from irlab.relay.op.tensor import *  # noqa: F401,F403
from irlab.relay.op.transform import *  # noqa: F401,F403
from irlab.relay.op.reduce import *  # noqa: F401,F403

get = Op.get
