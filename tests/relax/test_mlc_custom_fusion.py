"""The MLC course's custom fusion pass (a PyExprMutator matching ``add(matmul(x, w), b)`` into
a Primitive function), then FuseTIR: built PrimFuncs equal numpy at two batch sizes."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, tir
from irlab.relax.testing import evaluate


@relax.expr_functor.mutator
class MatmulAddFusor(relax.PyExprMutator):
    def __init__(self, mod):
        super().__init__()
        self.mod_ = mod
        self.add_op = tvm.ir.Op.get("relax.add")
        self.matmul_op = tvm.ir.Op.get("relax.matmul")
        self.counter = 0

    def transform(self):
        for global_var, func in self.mod_.functions.items():
            if not isinstance(func, relax.Function):
                continue
            if func.attrs is not None and "Primitive" in func.attrs.keys() \
                    and func.attrs["Primitive"] != 0:
                continue
            updated_func = self.visit_expr(func)
            updated_func = relax.analysis.remove_all_unused(updated_func)
            self.builder_.update_func(global_var, updated_func)
        return self.builder_.get()

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)

        def match_call(node, op):
            return isinstance(node, relax.Call) and node.op == op

        if not match_call(call, self.add_op):
            return call
        value = self.lookup_binding(call.args[0])
        if value is None or not match_call(value, self.matmul_op):
            return call
        x, w, b = value.args[0], value.args[1], call.args[1]
        params = [relax.Var(name, relax.TensorStructInfo(v.struct_info.shape,
                                                         v.struct_info.dtype))
                  for name, v in (("x", x), ("w", w), ("b", b))]
        bb = relax.BlockBuilder()
        fn_name = "fused_matmul_add%d" % self.counter
        self.counter += 1
        with bb.function(fn_name, params):
            with bb.dataflow():
                lv0 = bb.emit(relax.op.matmul(params[0], params[1]))
                gv = bb.emit_output(relax.op.add(lv0, params[2]))
            bb.emit_func_output(gv)
        fused_fn = bb.get()[fn_name].with_attr("Primitive", 1)
        global_var = self.builder_.add_func(fused_fn, fn_name)
        return relax.Call(global_var, [x, w, b], None, None)


@tvm.ir.transform.module_pass(opt_level=2, name="MatmulAddFuse")
class FuseMatmulAddPass:
    def transform_module(self, mod, ctx):
        return MatmulAddFusor(mod).transform()


def _model():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 6], "float32"))
    w0, b0 = relax.Var("w0", relax.TensorStructInfo([6, 5])), relax.Var(
        "b0", relax.TensorStructInfo([5]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w0, b0]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.matmul(x, w0))
            lv1 = bb.emit(relax.op.add(lv0, b0))
            gv = bb.emit_output(relax.op.nn.relu(lv1))
        bb.emit_func_output(gv)
    return bb.get()


@pytest.mark.parametrize("batch", [1, 3])
def test_custom_fusion_then_fuse_tir(batch):
    mod = FuseMatmulAddPass()(_model())
    main = mod["main"]
    first = main.body.blocks[0].bindings[0].value
    assert first.op.name_hint == "fused_matmul_add0"
    assert len(main.body.blocks[0].bindings) == 2  # the fused call, relu
    mod = relax.transform.LegalizeOps()(mod)
    mod = relax.transform.FuseTIR()(mod)
    calls = [b.value.args[0].name_hint for b in mod["main"].body.blocks[0].bindings
             if isinstance(b.value, relax.Call)]
    assert calls == ["fused_matmul_add0", "relu"]
    rng = np.random.default_rng(batch)
    args = [rng.standard_normal(s, "float32") for s in ((batch, 6), (6, 5), (5,))]
    np.testing.assert_allclose(evaluate(mod, args), np.maximum(args[0] @ args[1] + args[2], 0),
                               rtol=1e-5, atol=1e-5)
