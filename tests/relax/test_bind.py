"""BindParams and Function.bind_symbolic_vars: structure and numerics."""

import numpy as np
import pytest

from irlab import relax, tir
from irlab.errors import IrlabError
from irlab.relax.testing import evaluate
from op_testing import dims_of, rand, tensor

R = relax.op


def _module():
    n, k = tir.Var("n", "int64"), tir.Var("k", "int64")
    x = relax.Var("x", tensor([n, 4]))
    w = relax.Var("w", tensor([4, k]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv = bb.emit(R.matmul(x, w))
            gv = bb.emit_output(R.reshape(lv, relax.ShapeExpr([n * k])))
        bb.emit_func_output(gv)
    return bb.get()


def test_bind_params_makes_constants_and_binds_their_symbols():
    w = rand((4, 3), seed=1)
    mod = relax.transform.BindParams("main", {"w": w})(_module())
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["x"]
    ret = main.ret_struct_info
    assert "k" not in str(ret)  # k = 3 substituted
    assert relax.analysis.well_formed(mod)
    x = rand((2, 4), seed=2)
    legal = relax.transform.LegalizeOps()(mod)
    np.testing.assert_allclose(evaluate(legal, [x]), (x @ w).reshape(-1), rtol=1e-5)


def test_bind_params_errors():
    with pytest.raises(IrlabError, match="no parameter 'v'"):
        relax.transform.BindParams("main", {"v": np.zeros(1)})(_module())
    with pytest.raises(IrlabError, match="dtype"):
        relax.transform.BindParams("main", {"w": np.zeros((4, 3), "int32")})(_module())


def test_bind_symbolic_vars():
    main = _module()["main"]
    bound = main.bind_symbolic_vars({"n": 2, "k": 5})
    assert dims_of(bound.params[0].struct_info) == [2, 4]
    assert dims_of(bound.ret_struct_info) == [10]
    with pytest.raises(IrlabError, match="no symbolic variable 'm'"):
        main.bind_symbolic_vars({"m": 1})
