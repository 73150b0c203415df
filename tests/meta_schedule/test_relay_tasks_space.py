"""The default CPU rules on the kernels Relay hands to TOPI (the fused primitive functions
of a small CNN, as LowerTE builds them before any schedule): each design space generates and
its samples compute what the unscheduled kernel computes."""

import numpy as np

import irlab
from irlab import meta_schedule as ms
from irlab import relay
from irlab.relay.backend.te_compiler import lower_function
from irlab.relay.expr_functor import ExprVisitor
from irlab.target import Target

from test_design_space import TARGET, outputs, sample


def small_cnn():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w1 = relay.var("w1", shape=(4, 4, 3, 3))
    b1 = relay.var("b1", shape=(4,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w1, padding=(1, 1)), b1))
    y = relay.nn.max_pool2d(relay.add(y, x), pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y))
    y = relay.nn.softmax(relay.nn.dense(y, relay.var("w2", shape=(5, 4))))
    return irlab.IRModule.from_expr(relay.Function(relay.analysis.free_vars(y), y))


class _Primitives(ExprVisitor):
    def __init__(self):
        super().__init__()
        self.found = []

    def visit_function(self, fn):
        if fn.attrs is not None and fn.attrs.get("Primitive", 0):
            self.found.append(fn)
        else:
            super().visit_function(fn)


def fused_kernels():
    mod = small_cnn()
    with irlab.transform.PassContext(opt_level=3):
        mod = relay.transform.InferType()(mod)
        mod = relay.transform.FuseOps(2)(mod)
        mod = relay.transform.InferType()(mod)
    visitor = _Primitives()
    visitor.visit(mod["main"])
    return [lower_function(fn, Target("llvm")).tir_from_te for fn in visitor.found]


def test_relay_kernels_design_spaces():
    kernels = fused_kernels()
    names = sorted(f.attrs["global_symbol"] for f in kernels)
    assert any("conv2d_nn_bias_add_nn_relu_add" in n for n in names) and len(kernels) == 6
    for func in kernels:
        func = func.with_attr("global_symbol", "main")
        ctx = ms.TuneContext(func, target=TARGET, space_generator="post-order-apply",
                             rand_state=0)
        spaces = ctx.generate_design_space()
        expected = outputs(func)
        for seed in range(2):
            sch = sample(ctx, spaces[seed % len(spaces)], seed)
            if sch is not None:
                np.testing.assert_allclose(outputs(sch.mod["main"]), expected, rtol=1e-4,
                                           atol=1e-5)
