"""relay.optimize runs TVM's relay.build pipeline: instruments see TVM's pass sequence, and
the optimized program computes what the original computes."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relay
from irlab.instrument import IRSnapshot
from irlab.relay.testing import MODELS, SMALL_MODELS
from irlab.testing.check import check_numerics


def _fn_pass(name, required=True):
    """A function pass as instruments see it: required InferType, the pass, nested InferType."""
    return (["InferType"] if required else []) + [name, ("InferType",)]


# reference §2.3 at opt_level=3 (steps 7-9 and 19 are opt 4: skipped). Tuples are nested runs.
EXPECTED_OPT3 = [
    ("sequential", [
        "RemoveUnusedFunctions", "ToBasicBlockNormalForm",
        ("qnn.Legalize", [*_fn_pass("QnnLegalize"), *_fn_pass("QnnCanonicalize")]),
        *_fn_pass("Legalize"), *_fn_pass("SimplifyInference"),
        *_fn_pass("EliminateCommonSubexpr"), *_fn_pass("FoldConstant", required=False),
        ("FoldScaleAxis", [*_fn_pass("BackwardFoldScaleAxis"), *_fn_pass("ForwardFoldScaleAxis"),
                           *_fn_pass("FoldConstant", required=False)]),
        *_fn_pass("SimplifyExpr"), *_fn_pass("CanonicalizeCast"), *_fn_pass("CanonicalizeOps"),
        *_fn_pass("FlattenAtrousConv"), "InferType", *_fn_pass("AlterOpLayout"),
        *_fn_pass("SimplifyExprPostAlterOp"), *_fn_pass("FoldConstant", required=False),
        *_fn_pass("SplitArgs"),
        ("PlanDevices", [*_fn_pass("PlanDevicesRewrite", required=False),
                         "PlanDevicesCheckConflicts", "InferType", "PlanDevicesCore"]),
        *_fn_pass("FuseOps"),
    ]),
    "InferType", "InlineGlobals", "InferType", *_fn_pass("LabelOps", required=False),
    *_fn_pass("AnnotateMemoryScope", required=False),
]


def _flatten(entries, depth=0):
    """(name, depth) in start order from the nested EXPECTED description."""
    out = []
    for entry in entries:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], list):
            out.append((entry[0], depth))
            out.extend(_flatten(entry[1], depth + 1))
        elif isinstance(entry, tuple):  # the InferType nested inside the preceding pass
            out.append((entry[0], depth + 1))
        else:
            out.append((entry, depth))
    return out


def test_instruments_see_tvm_pass_sequence_at_opt_level_3():
    mod, params = MODELS["simplenet"]()
    snapshot = IRSnapshot(track_counts=False)
    with tvm.transform.PassContext(opt_level=3, instruments=[snapshot]):
        relay.optimize(mod, "llvm", params)
    seen = [(r.name, r.depth) for r in snapshot]
    assert seen == _flatten(EXPECTED_OPT3)


def test_opt_level_gates_only_inside_the_sequential():
    mod, params = MODELS["mlp"]()
    snapshot = IRSnapshot(track_counts=False)
    with tvm.transform.PassContext(opt_level=0, instruments=[snapshot]):
        relay.optimize(mod, "llvm", params)
    top = [r.name for r in snapshot.top_level()]
    assert top == ["sequential", "InferType", "InlineGlobals", "InferType", "LabelOps",
                   "AnnotateMemoryScope"]
    inside = [r.name for r in snapshot.children_of(snapshot[0])]
    assert "FoldConstant" not in inside and "FuseOps" in inside  # opt 2 off, opt 0 on
    with tvm.transform.PassContext(opt_level=4, instruments=[snapshot]):
        snapshot.clear()
        relay.optimize(mod, "llvm", params)
    names = [r.name for r in snapshot]
    assert "FastMath" in names and "CombineParallelConv2d" in names


def test_disabled_pass_is_skipped():
    mod, params = MODELS["mlp"]()
    snapshot = IRSnapshot(track_counts=False)
    with tvm.transform.PassContext(opt_level=3, instruments=[snapshot],
                                   disabled_pass=["FoldScaleAxis", "FuseOps"]):
        out, _ = relay.optimize(mod, "llvm", params)
    names = {r.name for r in snapshot}
    assert "FoldScaleAxis" not in names and "FuseOps" not in names
    assert "Primitive" not in str(out)


@pytest.mark.parametrize("name", sorted(SMALL_MODELS))
@pytest.mark.parametrize("opt_level", [0, 3])
def test_optimized_models_compute_the_same(name, opt_level):
    mod, params = MODELS[name]()
    with tvm.transform.PassContext(opt_level=opt_level):
        out, _ = relay.optimize(mod, "llvm", params)
    bound = relay.build_module.bind_params_by_name(mod["main"], params)
    data = {p.name_hint: np.random.default_rng(1).standard_normal(p.checked_type.shape).astype(
        p.checked_type.dtype) for p in out["main"].params}
    check_numerics(tvm.IRModule.from_expr(bound), out, inputs=data, rtol=1e-4, atol=1e-4)
