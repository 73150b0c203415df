"""Model builders and test helpers (as ``tvm.relay.testing``).

Every model module has ``get_workload(batch_size=1, ..., dtype="float32") -> (mod, params)``:
``mod["main"]`` takes ``data`` then the weights, ``params`` maps weight names to
``irlab.nd.NDArray`` values drawn from a fixed seed. ``MODELS`` holds small-but-real variants
(same architecture, smaller images / fewer classes / narrower BERT) for tests and notebooks.
"""

from __future__ import annotations

from irlab.relay.testing import (bert, chain, inception_v3, layers, mlp, mobilenet, resnet,
                                simplenet, synthetic)
from irlab.relay.testing.init import Initializer, Xavier, create_workload


def run_opt_pass(expr, opt_pass):
    """Run ``opt_pass`` on ``expr`` wrapped in a module; return the function (or its body when
    ``expr`` was not a function)."""
    from irlab.ir.module import IRModule
    from irlab.relay.function import Function

    mod = opt_pass(IRModule.from_expr(expr))
    entry = mod["main"]
    return entry if isinstance(expr, Function) else entry.body


def run_infer_type(expr):
    """``expr`` with types inferred (``checked_type`` filled)."""
    from irlab.relay.transform import InferType

    return run_opt_pass(expr, InferType())


# Small variants: each keeps its network's real layer plan, only the input and head shrink
# (and BERT-base at full size).
MODELS = {
    "simplenet": lambda: simplenet.get_workload(image_shape=(3, 32, 32)),
    "mlp": lambda: mlp.get_workload(batch_size=1),
    # 32x32 images take ResNet's CIFAR stem (3x3 conv, no max-pool), as TVM's builder does.
    "resnet18": lambda: resnet.get_workload(num_classes=10, num_layers=18,
                                            image_shape=(3, 32, 32)),
    # 64x64 images keep the ImageNet stem (7x7/2 conv + 3x3/2 max-pool): 2x2 at stage 4.
    "resnet50": lambda: resnet.get_workload(num_classes=10, num_layers=50,
                                            image_shape=(3, 64, 64)),
    # The five stride-2 stages bring 32x32 down to 1x1 before global pooling.
    "mobilenet_v2": lambda: mobilenet.get_workload(num_classes=10, image_shape=(3, 32, 32)),
    "bert": lambda: bert.get_workload(batch_size=1, seq_len=8, hidden_size=32, num_heads=4,
                                      intermediate_size=64),
    # BERT-base at full size (12 layers, 768 hidden, 12 heads, seq 128): 85 M weights, for the
    # explorer's figures at the scale of real models (issue 21); slow to run in the interpreter.
    "bert_base": lambda: bert.get_workload(batch_size=1, seq_len=128, num_layers=12),
}
# The models small enough for tests that build and run every model.
SMALL_MODELS = tuple(name for name in MODELS if name != "bert_base")

__all__ = ["bert", "chain", "layers", "mlp", "mobilenet", "resnet", "simplenet", "synthetic",
           "Initializer", "Xavier", "create_workload", "run_opt_pass", "run_infer_type", "MODELS",
           "SMALL_MODELS"]
