"""LabelOps: ``hash`` and ``*layout*`` attrs on functions, as src/relay/transforms/label_ops.cc."""

import re

from irlab import relay
from irlab.ir.module import IRModule
from irlab.ir.structural import structural_equal, structural_hash
from irlab.relay import transform
from irlab.relay.expr_functor import post_order
from irlab.relay.function import Function
from irlab.testing.check import check_numerics


def _conv_block():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1), channels=4, kernel_size=(3, 3))
    y = relay.nn.relu(relay.add(y, relay.const(1.0)))
    z = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    # a reduction ends the pool's group, so exp gets a function of its own
    return IRModule.from_expr(relay.Function([x, w], relay.exp(relay.sum(z, axis=1))))


def _fused(mod):
    return transform.FuseOps(fuse_opt_level=2)(transform.InferType()(mod))


def _functions(expr):
    return [n for n in post_order(expr) if isinstance(n, Function) and n.get_attr("Primitive")]


def test_pass_info():
    info = transform.LabelOps().info
    assert (info.name, info.opt_level, list(info.required)) == ("LabelOps", 1, [])


def test_primitive_functions_get_hash_and_layouts():
    fused = _fused(_conv_block())
    labelled = transform.LabelOps()(fused)
    by_name = {}
    for f in _functions(labelled["main"]):
        ops = [n.op.name for n in post_order(f.body) if isinstance(n, relay.Call)]
        by_name[ops[0]] = f
        assert re.fullmatch(r"[0-9a-f]{16}", f.get_attr("hash"))
    conv = by_name["nn.conv2d"]
    assert conv.get_attr("data_layout") == "NCHW"
    assert conv.get_attr("kernel_layout") == "OIHW"
    assert conv.get_attr("out_layout") == ""
    pool = by_name["nn.max_pool2d"]
    assert pool.get_attr("layout") == "NCHW" and pool.get_attr("kernel_layout") is None
    exp = by_name["exp"]
    assert exp.attrs.keys() == ["Primitive", "hash"]  # no layout attrs on plain exp
    check_numerics(fused, labelled)


def test_hash_is_the_structural_hash_before_labelling():
    fused = _fused(_conv_block())
    labelled = transform.LabelOps()(fused)
    for before, after in zip(_functions(fused["main"]), _functions(labelled["main"])):
        want = f"{structural_hash(before) & ((1 << 64) - 1):016x}"
        assert after.get_attr("hash") == want


def test_equal_functions_get_equal_hashes():
    x1, x2 = relay.var("x1", shape=(4,)), relay.var("x2", shape=(4,))
    out = relay.Tuple([relay.add(relay.nn.relu(x), relay.const(2.0)) for x in (x1, x2)])
    mod = IRModule.from_expr(relay.Function([x1, x2], out))
    labelled = transform.LabelOps()(_fused(mod))
    hashes = [f.get_attr("hash") for f in _functions(labelled["main"])]
    assert len(hashes) == 2 and hashes[0] == hashes[1]


def test_outer_function_is_labelled_too_as_in_tvm():
    """TVM labels every function it visits, the pass's own function included; the layout table
    is reset on entering a function and not restored on leaving it."""
    labelled = transform.LabelOps()(_fused(_conv_block()))
    main = labelled["main"]
    assert re.fullmatch(r"[0-9a-f]{16}", main.get_attr("hash"))
    # Callees are visited before arguments, so the conv's function (the innermost argument)
    # is the last one entered: main gets its layouts, and the pool's "layout" was reset.
    assert main.get_attr("data_layout") == "NCHW"
    assert main.get_attr("layout") is None


def test_unfused_program_only_gets_its_own_label():
    x = relay.var("x", shape=(3,))
    mod = transform.InferType()(IRModule.from_expr(relay.Function([x], relay.exp(x))))
    labelled = transform.LabelOps()(mod)
    assert labelled["main"].attrs.keys() == ["hash"]
    main = labelled["main"]
    stripped = relay.Function(main.params, main.body, main.ret_type)
    assert structural_equal(stripped, mod["main"])
