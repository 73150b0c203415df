"""nn.contrib_dense_pack (dense with the weight pre-packed in layout ``NC{n}n``: shape
``(N // n, K, n)``): type relation and its rejections, the numpy reference against a dense of
the unpacked weight, relay.build against the interpreter."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.contrib import graph_executor
from irlab.errors import IrlabError
from irlab.ir.op import Op
from irlab.ir.type import TensorType
from irlab.relay.type_relation import TypeRelationError, infer_call_type

OP = Op.get("nn.contrib_dense_pack")
X, W = relay.var("x"), relay.var("w")


def attrs_of(**kwargs):
    return relay.nn.contrib_dense_pack(X, W, **kwargs).attrs


def pack(w_nc, block):
    """(N, K) -> (N // block, K, block) with ``packed[jo, k, ji] = w[jo * block + ji, k]``,
    written out element by element (independent of the code under test)."""
    n, k = w_nc.shape
    out = np.empty((n // block, k, block), w_nc.dtype)
    for j in range(n):
        out[j // block, :, j % block] = w_nc[j]
    return out


def test_attrs_and_defaults():
    attrs = attrs_of(weight_layout="NC16n")
    assert attrs.weight_layout == "NC16n" and attrs.units is None and attrs.out_dtype == ""
    assert type(attrs).__name__ == "DensePackAttrs"


@pytest.mark.parametrize("data,weight,layout,out", [
    ((32, 784), (4, 784, 64), "NC64n", (32, 256)),
    ((2, 5, 12), (3, 12, 8), "NC8n", (2, 5, 24)),   # N-D data, as TVM's DensePackRel
    ((7,), (1, 7, 16), "NC16n", (16,)),
])
def test_relation(data, weight, layout, out):
    ty = infer_call_type(OP, [TensorType(data), TensorType(weight)],
                         attrs_of(weight_layout=layout))
    assert ty == TensorType(out, "float32")


def test_relation_out_dtype():
    ty = infer_call_type(OP, [TensorType((4, 8)), TensorType((2, 8, 16))],
                         attrs_of(weight_layout="NC16n", out_dtype="float64"))
    assert ty == TensorType((4, 32), "float64")


@pytest.mark.parametrize("data,weight,kwargs,message", [
    ((4, 8), (2, 8, 16), {"weight_layout": "NC"}, "weight_layout NC<n>n .* got 'NC'"),
    ((4, 8), (2, 8, 16), {"weight_layout": "NC0n"}, "got 'NC0n'"),
    ((4, 8), (2, 8, 16), {"weight_layout": "NC16c"}, "got 'NC16c'"),
    ((4, 8), (16, 8), {"weight_layout": "NC16n"}, r"weight must be 3-D \(units // 16"),
    ((4, 8), (2, 8, 8), {"weight_layout": "NC16n"}, "last axis must be the block 16"),
    ((4, 9), (2, 8, 16), {"weight_layout": "NC16n"}, "data has 9 features"),
    ((4, 8), (2, 8, 16), {"weight_layout": "NC16n", "units": 16},
     "units=16 but weight has 32 units"),
])
def test_relation_rejections(data, weight, kwargs, message):
    with pytest.raises(TypeRelationError, match=message):
        infer_call_type(OP, [TensorType(data), TensorType(weight)], attrs_of(**kwargs))


def test_type_error_through_infer_type_names_layout():
    x = relay.var("x", shape=(4, 8))
    w = relay.var("w", shape=(2, 8, 16))
    mod = irlab.IRModule.from_expr(relay.Function(
        [x, w], relay.nn.contrib_dense_pack(x, w, weight_layout="NC8n")))
    with pytest.raises(IrlabError, match="NC8n"):
        relay.transform.InferType()(mod)


# ---------------------------------------------------------------------------------------------
# reference and relay.build
CASES = [((32, 784), 256, 64), ((6, 20), 48, 16), ((5, 7), 24, 8), ((2, 3, 12), 32, 32),
         ((1, 9), 16, 16)]


def _function(dshape, units, block, epilogue):
    x = relay.var("x", shape=dshape)
    w = relay.var("w", shape=(units // block, dshape[-1], block))
    b = relay.var("b", shape=(units,))
    y = relay.nn.contrib_dense_pack(x, w, weight_layout=f"NC{block}n")
    if epilogue:
        y = relay.nn.relu(relay.add(y, b))
    params = [x, w, b] if epilogue else [x, w]
    return relay.transform.InferType()(irlab.IRModule.from_expr(relay.Function(params, y)))


def _arrays(dshape, units, block, rng):
    x = rng.uniform(-1, 1, dshape).astype("float32")
    w = rng.uniform(-1, 1, (units, dshape[-1])).astype("float32")
    b = rng.uniform(-1, 1, (units,)).astype("float32")
    return x, w, b


@pytest.mark.parametrize("dshape,units,block", CASES)
def test_reference_is_dense_of_unpacked_weight(dshape, units, block):
    x, w, _ = _arrays(dshape, units, block, np.random.default_rng(0))
    mod = _function(dshape, units, block, False)
    got = relay.create_executor("debug", mod=mod).evaluate()(x=x, w=pack(w, block)).numpy()
    want = x.astype("float64") @ w.astype("float64").T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


BUILDS = [(*case, epilogue, "llvm") for case in CASES for epilogue in (False, True)] + [
    (*CASES[1], True, "c"), (*CASES[3], False, "c")]


@pytest.mark.parametrize("dshape,units,block,epilogue,target", BUILDS)
def test_build_matches_numpy(dshape, units, block, epilogue, target):
    x, w, b = _arrays(dshape, units, block, np.random.default_rng(1))
    mod = _function(dshape, units, block, epilogue)
    inputs = {"x": x, "w": pack(w, block)}
    if epilogue:
        inputs["b"] = b
    want = x.astype("float64") @ w.astype("float64").T
    if epilogue:
        want = np.maximum(want + b, 0)
    with irlab.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target)
    m = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    m.run(**inputs)
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4,
                               atol=1e-5 * dshape[-1] ** 0.5)


def test_text_round_trip():
    x = relay.var("x", shape=(4, 8))
    w = relay.var("w", shape=(2, 8, 16))
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(relay.Function(
        [x, w], relay.nn.contrib_dense_pack(x, w, weight_layout="NC16n"))))
    text = mod.astext()
    assert 'nn.contrib_dense_pack(%x, %w, units=None, weight_layout="NC16n")' in text
    assert "Tensor[(4, 32), float32]" in text
    parsed = relay.transform.InferType()(irlab.relay.fromtext(text))
    irlab.ir.assert_structural_equal(parsed, mod)
