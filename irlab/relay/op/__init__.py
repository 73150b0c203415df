"""Relay operators: each op is defined in one module, with everything passes ask of it.

``register_op`` gives the inputs, attrs type, type relation, fusion pattern (``TOpPattern``) and
numpy reference (``FReference``); the same module then sets, with ``op.set_attrs(...)``:

- ``FTVMCompute`` / ``FTVMStrategy`` (through ``relay/op/strategy/``): lowering;
- ``FInferCorrectLayout`` (a rule of ``layout_rules.py``, or ``NOT_APPLICABLE``: layout-opaque)
  and the ``FTVMConvertOpLayout`` / ``FTVMAlterOpLayout`` / ``FTVMLegalize`` hooks: layouts;
- ``TScaleAxisRule`` and ``FScaleAxisChannels`` (``scale_axis.py``): FoldScaleAxis;
- ``FCombineParallel``: CombineParallelConv2D / Dense / BatchMatmul;
- ``FSimplifyInference``: SimplifyInference; ``TFastVersion``: FastMath;
- ``TOpIsStateful``, ``TGenerator``, ``FFoldFromShape``: FoldConstant; ``TReshapeOp``: FuseOps and
  graph codegen; ``TCopiesValues``: FoldScaleAxis's sign check; ``TCommutative``: SimplifyExpr.

Passes read these with ``op.get_attr(...)`` and keep no lists of op names;
``tests/relay/op/test_op_definitions.py`` checks every op for them.
"""

from irlab.ir.op import Op, OpPattern, register_op
from irlab.relay.op import tensor, transform, reduce, nn, image  # noqa: F401 - registration
from irlab.relay.op import annotation  # noqa: F401 - registration
from irlab.relay.op import memory  # noqa: F401 - registration
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
