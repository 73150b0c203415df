"""TOPI: TE implementations of the Relay operators, and CPU schedules for them.

``irlab.topi.<op>(tensors..., attrs...)`` builds ``te.compute`` stages, as TVM's ``topi``;
``irlab.topi.x86`` holds TIR schedules (``fn(sch, outs, target)`` on a ``tir.Schedule``).
The Relay ops point at these through their registered ``FTVMCompute`` / ``FTVMStrategy``
(``irlab/relay/op/strategy/``).
"""

from irlab.topi.math import *  # noqa: F401,F403
from irlab.topi.broadcast import *  # noqa: F401,F403
from irlab.topi import math, broadcast, x86, utils  # noqa: F401
from irlab.topi import nn  # noqa: F401,E402
from irlab.topi import transform, image, reduction  # noqa: F401,E402
# TVM's topi has its transform and reduction ops at top level too (``topi.reshape``, ``topi.sum``)
from irlab.topi.transform import *  # noqa: F401,F403,E402
from irlab.topi.reduction import *  # noqa: F401,F403,E402
