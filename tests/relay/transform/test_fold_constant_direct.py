"""FoldConstant's direct path (an op of constants folded from its type relation and reference,
without type-checking a function around it): the same values and types as the general path
(the interpreter), a typed result, user params never written nor shared, and the general
path's errors for what the direct path declines."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.errors import IrlabError
from irlab.ir import IRModule, assert_structural_equal
from irlab.relay import transform
from irlab.relay.build_module import bind_params_by_name
from irlab.relay.expr import Constant
from irlab.relay.testing import run_opt_pass
from irlab.relay.transform import fold_constant as fc


def _fold(func):
    return run_opt_pass(func, transform.FoldConstant())


def _general_only(monkeypatch):
    monkeypatch.setattr(fc, "_fold_op_of_constants", lambda op, args, attrs: None)


def _graph(weight):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=weight.shape)
    scale = relay.const(np.linspace(0.5, 2.0, 8).astype("float32"))
    w2 = relay.multiply(w, relay.expand_dims(scale, axis=1, num_newaxis=3))
    w3 = relay.layout_transform(w2, "OIHW", "OIHW4o")
    w3 = relay.layout_transform(w3, "OIHW4o", "OIHW")
    out = relay.nn.conv2d(x, relay.reshape(relay.sqrt(relay.abs(w3)), weight.shape),
                          padding=(1, 1))
    one = relay.cast(relay.const(3, "int32"), "float32")
    return relay.Function([x, w], relay.add(out, relay.negative(one)))


def test_direct_path_matches_general_path(monkeypatch):
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((8, 4, 3, 3)).astype("float32")
    bound = bind_params_by_name(_graph(weight), {"w": irlab.nd.array(weight)})
    direct = _fold(bound)
    with monkeypatch.context() as m:
        _general_only(m)
        general = _fold(bound)
    assert_structural_equal(direct, general)
    consts = []
    relay.analysis.post_order_visit(direct, lambda e: consts.append(e)
                                    if isinstance(e, Constant) else None)
    assert consts and all(c.has_checked_type() for c in consts)
    for c in consts:
        assert c.checked_type == relay.TensorType(c.data.shape, c.data.dtype)


def test_user_params_neither_written_nor_shared():
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((8, 4, 3, 3)).astype("float32")
    user = irlab.nd.array(weight)
    before = user.numpy()
    x = relay.var("x", shape=(8, 4, 3, 3))
    w = relay.var("w", shape=(8, 4, 3, 3))
    flat = relay.reshape(w, (8, 36))  # numpy returns a view of the param: copied when folded
    func = relay.Function([x, w], relay.add(x, relay.reshape(flat, (8, 4, 3, 3))))
    folded = _fold(bind_params_by_name(func, {"w": user}))
    np.testing.assert_array_equal(user.numpy(), before)
    consts = []
    relay.analysis.post_order_visit(folded, lambda e: consts.append(e)
                                    if isinstance(e, Constant) else None)
    assert len(consts) == 1
    data = np.asarray(consts[0].data)
    assert not np.shares_memory(data, np.asarray(user))  # a view of the param was copied
    np.testing.assert_array_equal(data, weight)


def test_declined_calls_keep_the_general_path_errors():
    # a relation that fails on constants: the general path's type error, with the program
    bad = relay.Function([], relay.add(relay.const(np.ones((2, 3), "float32")),
                                       relay.const(np.ones((4,), "float32"))))
    with pytest.raises(IrlabError, match="broadcast"):
        fc._ConstantFolder(IRModule(), False).visit(bad)  # the pass would infer types first


def test_tuple_results_still_fold():
    c = relay.const(np.arange(6, dtype="float32"))
    parts = relay.split(c, 3)
    func = relay.Function([], relay.add(parts[0], parts[2]))
    folded = _fold(func)
    assert isinstance(folded.body, Constant)
    np.testing.assert_array_equal(np.asarray(folded.body.data), [4.0, 6.0])


def test_one_value_in_two_tuple_fields_is_not_shared():
    c = relay.const(np.arange(4, dtype="float32"))
    doubled = relay.add(c, c)
    folded = fc.evaluate_constant(relay.Tuple([doubled, doubled]))
    first, second = (np.asarray(f.data) for f in folded.fields)
    np.testing.assert_array_equal(first, second)
    assert not np.shares_memory(first, second)
