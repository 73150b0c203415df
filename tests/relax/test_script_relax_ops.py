"""TVMScript for Relax: ``R.<op>`` is ``relax.op.<op>`` (``R.nn.relu`` too); op attributes
print as keywords and parse back; a parsed module computes what numpy does."""

import numpy as np
import pytest

from irlab import relax
from irlab.ir import assert_structural_equal
from irlab.relax.testing import evaluate
from irlab.script import from_source
from irlab.script import ir as I
from irlab.script import relax as R


@I.ir_module
class Ops:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor((4, 3), "float32"),
             b: R.Tensor((3,), "float32")):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
            lv2 = R.nn.relu(lv1)
            lv3 = R.nn.softmax(lv2, axis=0)
            lv4 = R.astype(lv3, "float16")
            lv5 = R.multiply(R.exp(lv3), R.const([2.0, 2.0, 2.0], "float32"))
            lv6 = R.less(lv5, lv3)
            gv = (lv4, lv5, lv6)
            R.output(gv)
        return gv


def test_ops_print_as_r_calls_with_attributes_and_round_trip():
    text = Ops.script()
    for line in ('lv2: R.Tensor((n, 3), dtype="float32") = R.nn.relu(lv1)',
                 "R.nn.softmax(lv2, axis=0)", 'R.astype(lv3, dtype="float16")',
                 "lv_1: R.Tensor((n, 3), dtype=\"float32\") = R.exp(lv3)",  # A-normal form
                 "R.less(lv5, lv3)"):
        assert line in text
    again = from_source(text)
    assert_structural_equal(again, Ops)
    assert again.script() == text
    ops = [b.value.op.name for b in Ops["main"].body.blocks[0].bindings
           if isinstance(b.value, relax.Call)]
    assert ops == ["relax.matmul", "relax.add", "relax.nn.relu", "relax.nn.softmax",
                   "relax.astype", "relax.exp", "relax.multiply", "relax.less"]


@pytest.mark.parametrize("batch", [1, 5])
def test_parsed_module_computes_as_numpy(batch):
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 4)).astype("float32")
    w = rng.standard_normal((4, 3)).astype("float32")
    b = rng.standard_normal(3).astype("float32")
    lv4, lv5, lv6 = evaluate(from_source(Ops.script()), [x, w, b])
    relu = np.maximum(x @ w + b, 0)
    soft = np.exp(relu - relu.max(0)) / np.exp(relu - relu.max(0)).sum(0)
    np.testing.assert_allclose(lv4, soft.astype("float16"), rtol=1e-2)
    np.testing.assert_allclose(lv5, np.exp(soft) * 2, rtol=1e-5)
    np.testing.assert_array_equal(lv6, np.exp(soft) * 2 < soft)


OP_CALLS = [
    "R.reshape(x, R.shape([2, 12]))", "R.reshape(x, (4, 6))", "R.flatten(x)",
    "R.permute_dims(x, axes=[2, 0, 1])", "R.permute_dims(x)",
    "R.sum(x, axis=[1], keepdims=True)", "R.mean(x, axis=1)", "R.max(x)",
    "R.split(x, [1, 3], axis=2)", "R.strided_slice(x, axes=[0], begin=[0], end=[1])",
    'R.take(x, R.const([0, 1], "int64"), axis=1)', "R.concat((x, x), axis=0)",
    "R.squeeze(R.expand_dims(x, axis=0), axis=[0])", 'R.zeros(R.shape([2, 3]), "float32")',
    'R.full(R.shape([2]), R.const(1.0, "float32"))', "R.nn.conv2d(y, w)",
    "R.nn.max_pool2d(y, pool_size=[2, 2])", "R.nn.batch_norm(y, g, g, g, g)",
    "R.nn.layer_norm(x, g4, g4, axes=[-1])", "R.clip(x, 0, 1)", "R.where(R.less(x, x), x, x)",
    "R.argmax(x, axis=1)", "R.nn.dropout(x, 0.5)",
    "R.nn.adaptive_avg_pool2d(y, output_size=[1, 1])", "R.nn.avg_pool2d(y)", "R.nn.gelu(x)",
    "R.variance(x, axis=[1])", "R.linear(x, w2)", "R.nn.pad(y, pad_width=[0, 0, 0, 0, 1, 1, 1, 1])",
]


@pytest.mark.parametrize("call", OP_CALLS)
def test_op_attributes_round_trip(call):
    text = f'''
@R.function
def f(x: R.Tensor((2, 3, 4), "float32"), y: R.Tensor((1, 3, 8, 8), "float32"),
      w: R.Tensor((4, 3, 3, 3), "float32"), g: R.Tensor((3,), "float32"),
      g4: R.Tensor((4,), "float32"), w2: R.Tensor((5, 4), "float32")):
    r = {call}
    return r
'''
    func = from_source(text)
    printed = func.script()
    assert_structural_equal(from_source(printed), func)
    assert from_source(printed).script() == printed
