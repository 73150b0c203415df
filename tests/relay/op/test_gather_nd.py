"""gather_nd (type relation, reference, kernel), and small constants linked into a fused
function (``relay.FuseOps.link_params``) compiled as index tables."""

import numpy as np
import pytest

import irlab
from irlab import relay


def _np_gather_nd(x, idx, batch_dims=0):
    m = idx.shape[0]
    out = np.empty(idx.shape[1:] + x.shape[batch_dims + m:], x.dtype)
    for y in np.ndindex(*idx.shape[1:]):
        out[y] = x[y[:batch_dims] + tuple(idx[(k,) + y] for k in range(m))]
    return out


def _run(func, args, kind):
    return relay.create_executor(kind, mod=irlab.IRModule.from_expr(func),
                                 target="llvm").evaluate()(*args).numpy()


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd_matches_numpy(batch_dims):
    rng = np.random.default_rng(0)
    x = rng.random((3, 4, 5), dtype="float32")
    idx = np.array([[0, 2, 1], [3, 1, 0]], "int32") if batch_dims == 0 else \
        np.array([[1, 3, 0]], "int32")
    xv, iv = relay.var("x", shape=x.shape), relay.var("i", shape=idx.shape, dtype="int32")
    func = relay.Function([xv, iv], relay.gather_nd(xv, iv, batch_dims=batch_dims))
    want = _np_gather_nd(x, idx, batch_dims)
    np.testing.assert_array_equal(_run(func, (x, idx), "debug"), want)
    np.testing.assert_array_equal(_run(func, (x, idx), "graph"), want)


def test_gather_nd_refuses_too_many_indexed_axes():
    xv = relay.var("x", shape=(2, 2))
    func = relay.Function([xv], relay.gather_nd(xv, relay.const(np.zeros((3, 1), "int32"))))
    with pytest.raises(irlab.errors.IrlabError, match="exceed data.s rank"):
        relay.transform.InferType()(irlab.IRModule.from_expr(func))


def test_linked_index_constant_compiles():
    """With link_params the index table stays inside the fused function; it still builds
    and computes what the interpreter does."""
    x = np.arange(10, dtype="float32").reshape(10, 1)
    xv = relay.var("x", shape=(10, 1))
    cat = relay.concatenate([xv, xv], axis=-1)
    out = relay.gather_nd(cat, relay.const(np.array([[0, 1], [1, 0]], "int64")))
    func = relay.Function([xv], out)
    with irlab.transform.PassContext(opt_level=2,
                                     config={"relay.FuseOps.link_params": True}):
        lib = relay.build(irlab.IRModule.from_expr(func), target="llvm")
    from irlab.contrib import graph_executor

    module = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    module.set_input("x", x)
    module.run()
    np.testing.assert_array_equal(module.get_output(0).numpy(),
                                  _np_gather_nd(np.concatenate([x, x], -1),
                                                np.array([[0, 1], [1, 0]])))
