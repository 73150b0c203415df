"""BYOC in relay.build: functions with Compiler="<name>" go to relay.ext.<name>; the
ccompiler external codegen (C source compiled by the system compiler), a user-written codegen
on its base class, saving/loading, and the error cases. Checked against the native build."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import irlab
from irlab import relay
from irlab.contrib import graph_executor
from irlab.errors import CompileError, IrlabError
from irlab.ir.module import IRModule
from irlab.relay import transform
from irlab.relay.backend.contrib import CodegenC, CSourceModuleCodegenBase
from irlab.relay.op.contrib import partition_for_ccompiler, register_op_attr
from irlab.runtime.module import find_c_compiler, load_module
from irlab.runtime.registry import register_func, remove_global_func
from irlab.testing.strategies import relay_functions

pytestmark = pytest.mark.skipif(find_c_compiler() is None, reason="needs a C compiler")
SHAPE = (4, 5)


def _two_regions(const_shape=SHAPE):
    """add/multiply (ccompiler), relu (native), subtract a constant/multiply (ccompiler)."""
    x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
    c = relay.const(np.random.default_rng(1).normal(size=const_shape).astype("float32"))
    out = relay.multiply(relay.subtract(relay.nn.relu(relay.multiply(relay.add(x, y), y)), c), x)
    return IRModule.from_expr(relay.Function([x, y], out))


def _partition(mod, compiler="ccompiler", bind_constants=True):
    seq = [transform.InferType(), transform.AnnotateTarget([compiler]),
           transform.MergeCompilerRegions(), transform.PartitionGraph(
               bind_constants=bind_constants)]
    for p in seq:
        mod = p(mod)
    return mod


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {n: rng.normal(size=SHAPE).astype("float32") for n in ("x", "y")}


def _run(factory, inputs, lib=None):
    lib = lib if lib is not None else factory.get_lib()
    module = graph_executor.create(factory.get_graph_json(), lib, irlab.cpu())
    module.set_input(**factory.get_params())
    module.run(**inputs)
    return module.get_output(0).numpy()


def _check_against_native(mod, partitioned, seeds=(0, 1)):
    native, external = relay.build(mod, "llvm"), relay.build(partitioned, "llvm")
    for seed in seeds:
        inputs = _inputs(seed)
        np.testing.assert_allclose(_run(external, inputs), _run(native, inputs),
                                   rtol=1e-6, atol=1e-6)
    return external


@pytest.mark.parametrize("bind_constants", [True, False])
def test_two_ccompiler_regions_around_a_native_op(bind_constants):
    mod = _two_regions()
    partitioned = _partition(mod, bind_constants=bind_constants)
    symbols = [gv.name_hint for gv in partitioned.get_global_vars() if gv.name_hint != "main"]
    assert len(symbols) == 2
    factory = _check_against_native(mod, partitioned)
    imported = factory.get_lib().imported_modules
    assert len(imported) == 2
    for symbol, module in zip(sorted(symbols), imported):
        assert module.type_key == "c" and symbol in module.get_source()
    ops = [n["attrs"]["func_name"] for n in
           __import__("json").loads(factory.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    assert sorted(set(ops) & set(symbols)) == sorted(symbols)


def test_a_region_with_two_outputs():
    x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
    a = relay.add(x, y)
    b = relay.multiply(a, y)
    out = relay.subtract(relay.nn.relu(a), relay.exp(b))  # subtract: a second region
    mod = IRModule.from_expr(relay.Function([x, y], out))
    partitioned = _partition(mod)
    bodies = [partitioned[gv].body for gv in partitioned.get_global_vars()
              if gv.name_hint != "main"]
    assert any(isinstance(b, relay.Tuple) and len(b.fields) == 2 for b in bodies)
    _check_against_native(mod, partitioned)


def test_unsupported_node_in_a_region_is_named():
    x = relay.var("x", shape=SHAPE)
    func = relay.Function([x], relay.If(relay.const(True), x, relay.add(x, x)))
    func = transform.InferType()(IRModule.from_expr(func))["main"]
    func = func.with_attr("Compiler", "ccompiler").with_attr("global_symbol", "cc_if")
    with pytest.raises(IrlabError, match="ccompiler codegen: If nodes are not supported in "
                                         "cc_if"):
        irlab.get_global_func("relay.ext.ccompiler")(func)


def test_composites_and_broadcasting_with_partition_for_ccompiler():
    x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
    row = relay.const(np.arange(SHAPE[1], dtype="float32") - 2.0)
    out = relay.nn.relu(relay.add(relay.add(relay.multiply(x, y), row), y))
    out = relay.exp(relay.subtract(out, relay.const(np.float32(0.5))))
    mod = IRModule.from_expr(relay.Function([x, y], out))
    partitioned = partition_for_ccompiler(mod)
    text = partitioned.astext()
    assert 'Composite="ccompiler.multiply_add"' in text
    assert 'Composite="ccompiler.add_relu"' in text
    _check_against_native(mod, partitioned)


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("suffix", [".irlab", ".so"])
def test_export_library_and_load_module_carry_the_external_modules(tmp_path, target, suffix):
    mod = _two_regions()
    factory = relay.build(_partition(mod), target)
    loaded = load_module(factory.export_library(tmp_path / f"model{suffix}"))
    assert [m.type_key for m in loaded.imported_modules] == ["library", "library"]
    assert "ccompiler" in loaded.imported_modules[0].get_source()
    inputs = _inputs(3)
    np.testing.assert_allclose(_run(factory, inputs, loaded),
                               _run(relay.build(mod, "llvm"), inputs), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("suffix", [".irlab", ".so"])
def test_a_graph_offloaded_entirely_saves_and_loads(tmp_path, suffix):
    x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
    mod = IRModule.from_expr(relay.Function([x, y], relay.add(relay.multiply(x, y), x)))
    factory = relay.build(_partition(mod), "llvm")
    assert not factory.get_lib().get_func_names()
    loaded = load_module(factory.export_library(tmp_path / f"model{suffix}"))
    inputs = _inputs(4)
    np.testing.assert_allclose(_run(factory, inputs, loaded), inputs["x"] * inputs["y"] +
                               inputs["x"], rtol=1e-6)


def test_missing_external_codegen_names_the_compiler_and_function():
    register_op_attr("add", "target.nowhere", lambda expr: True)
    x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
    mod = _partition(IRModule.from_expr(relay.Function([x, y], relay.add(x, y))), "nowhere")
    with pytest.raises(IrlabError, match=r"tvmgen_default_nowhere_main_0.*'nowhere'.*"
                                         r"relay\.ext\.nowhere"):
        relay.build(mod, "llvm")


def test_external_codegen_that_raises_shows_compiler_function_and_relay_text():
    register_op_attr("add", "target.broken", lambda expr: True)

    def broken(func):
        raise ValueError("unsupported layout")

    register_func("relay.ext.broken", broken, override=True)
    try:
        x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
        mod = _partition(IRModule.from_expr(relay.Function([x, y], relay.add(x, y))), "broken")
        with pytest.raises(IrlabError) as info:
            relay.build(mod, "llvm")
        message = str(info.value)
        assert "relay.ext.broken" in message and "tvmgen_default_broken_main_0" in message
        assert "unsupported layout" in message and "add(%broken_0_i0" in message
    finally:
        remove_global_func("relay.ext.broken")


class _TypoCodegen(CodegenC):
    """Emits C with an undeclared identifier for add."""

    ELEMENTWISE = {**CodegenC.ELEMENTWISE, "add": "{0} + undeclared_value"}


class _TypoModuleCodegen(CSourceModuleCodegenBase):
    compiler, codegen_class = "typo", _TypoCodegen


def test_c_that_does_not_compile_shows_the_compiler_error_and_source_line():
    register_op_attr("add", "target.typo", lambda expr: True)
    _TypoModuleCodegen.register()
    try:
        x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
        mod = _partition(IRModule.from_expr(relay.Function([x, y], relay.add(x, y))), "typo")
        with pytest.raises(CompileError) as info:
            relay.build(mod, "llvm")
        message = str(info.value)
        assert "relay.ext.typo" in message and "tvmgen_default_typo_main_0" in message
        assert "undeclared_value" in message and "at line" in message
    finally:
        remove_global_func("relay.ext.typo")


# -- a user's external codegen, as a notebook cell would write it ------------------------------
class ClampCodegen(CodegenC):
    """C for maximum/minimum and a clip, on top of ccompiler's elementwise ops."""

    ELEMENTWISE = {**CodegenC.ELEMENTWISE,
                   "maximum": "({0} > {1} ? {0} : {1})",
                   "minimum": "({0} < {1} ? {0} : {1})"}

    def emit_op(self, call, inputs):
        if call.op.name != "clip":
            return super().emit_op(call, inputs)
        low, high = float(call.attrs.a_min), float(call.attrs.a_max)
        template = f"({{0}} < {low!r} ? {low!r} : ({{0}} > {high!r} ? {high!r} : {{0}}))"
        return self.emit_elementwise(call, inputs, template)


class ClampModuleCodegen(CSourceModuleCodegenBase):
    compiler, codegen_class = "clamp", ClampCodegen


def test_a_user_written_external_codegen():
    for name in ("maximum", "minimum", "clip", "multiply"):
        register_op_attr(name, "target.clamp", lambda expr: True)
    ClampModuleCodegen.register()
    try:
        x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
        body = relay.clip(relay.maximum(relay.multiply(x, y), relay.minimum(x, y)), -0.5, 0.75)
        mod = IRModule.from_expr(relay.Function([x, y], relay.exp(body)))
        partitioned = _partition(mod, "clamp")
        factory = _check_against_native(mod, partitioned)
        (module,) = factory.get_lib().imported_modules
        assert "clamp" in module.get_source() and "0.75" in module.get_source()
    finally:
        remove_global_func("relay.ext.clamp")


def test_seed_002_partition_for_flow_with_ccompiler():
    """Seed 002's partition_for_cutlass, imports changed and the compiler named ccompiler."""
    import irlab as tvm
    from irlab.transform import Sequential

    def partition_for_ccompiler_as_the_seed(mod, params=None):
        ccompiler_patterns = relay.op.contrib.get_pattern_table("ccompiler")
        seq = Sequential(
            [
                transform.InferType(),
                transform.MergeComposite(ccompiler_patterns),
                transform.AnnotateTarget(["ccompiler"], include_non_call_ops=False),
                transform.PartitionGraph(bind_constants=False),
            ]
        )
        return seq(mod)

    x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
    w = relay.var("w", shape=SHAPE)
    out = relay.nn.relu(relay.add(relay.multiply(x, w), y))
    mod = tvm.IRModule.from_expr(relay.Function([x, y, w], relay.tanh(out)))
    params = {"w": np.random.default_rng(7).normal(size=SHAPE).astype("float32")}
    partitioned = partition_for_ccompiler_as_the_seed(mod)
    assert "Compiler=\"ccompiler\"" in partitioned.astext()
    native = relay.build(mod, "llvm", params=params)
    external = relay.build(partitioned, "llvm", params=params)
    assert len(external.get_lib().imported_modules) >= 1
    inputs = _inputs(5)
    np.testing.assert_allclose(_run(external, inputs), _run(native, inputs),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("returned, message", [
    (lambda func: "not a module", r"relay\.ext\.odd returned a str for function "
                                  r"tvmgen_default_odd_main_0; it must return a runtime Module"),
    (lambda func: ClampModuleCodegen()(func.with_attr("global_symbol", "other")),
     r"relay\.ext\.odd returned a module without function tvmgen_default_odd_main_0; it has: "
     r"other"),
])
def test_external_codegen_returning_the_wrong_thing(returned, message):
    register_op_attr("add", "target.odd", lambda expr: True)
    register_func("relay.ext.odd", returned, override=True)
    try:
        x, y = relay.var("x", shape=SHAPE), relay.var("y", shape=SHAPE)
        mod = _partition(IRModule.from_expr(relay.Function([x, y], relay.add(x, y))), "odd")
        with pytest.raises(IrlabError, match=message):
            relay.build(mod, "llvm")
    finally:
        remove_global_func("relay.ext.odd")


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(relay_functions(max_steps=8, nesting=False))
def test_random_graphs_offloaded_to_ccompiler_equal_the_native_build(func):
    # inputs are set by name: distinct names, apart from the constants' p0, p1...
    names = [p.name_hint for p in func.params]
    assume(len(set(names)) == len(names) and not any(re.fullmatch(r"p\d+", n) for n in names))
    mod = transform.InferType()(IRModule.from_expr(func))
    partitioned = partition_for_ccompiler(mod)
    native, external = relay.build(mod, "llvm"), relay.build(partitioned, "llvm")
    rng = np.random.default_rng(0)
    inputs = {p.name_hint: rng.normal(size=[int(d) for d in p.checked_type.shape])
              .astype(p.checked_type.dtype) for p in mod["main"].params}
    outs = []
    for factory in (native, external):
        module = graph_executor.GraphModule(factory["default"](irlab.cpu()))
        module.run(**inputs)
        outs.append([module.get_output(k).numpy() for k in range(module.get_num_outputs())])
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64", "uint8"])
def test_ccompiler_dtypes_and_constants(dtype):
    rng = np.random.default_rng(2)
    x, y = relay.var("x", shape=SHAPE, dtype=dtype), relay.var("y", shape=SHAPE, dtype=dtype)
    c = relay.const(rng.integers(0, 5, size=SHAPE[1]), dtype)
    out = relay.multiply(relay.add(x, c), relay.subtract(y, relay.const(1, dtype)))
    mod = IRModule.from_expr(relay.Function([x, y], relay.maximum(out, x)))
    partitioned = partition_for_ccompiler(mod)
    assert "Compiler=\"ccompiler\"" in partitioned.astext()
    inputs = {n: rng.integers(0, 50, size=SHAPE).astype(dtype) for n in ("x", "y")}
    results = [_run(relay.build(m, "llvm"), inputs) for m in (mod, partitioned)]
    np.testing.assert_array_equal(results[1], results[0])


def test_debug_executor_times_external_kernels():
    from irlab.contrib.debugger import debug_executor

    factory = relay.build(_partition(_two_regions()), "llvm")
    module = debug_executor.create(factory.get_graph_json(), factory.get_lib(), irlab.cpu())
    module.set_input(**factory.get_params())
    module.run(**_inputs(6))
    assert {"tvmgen_default_ccompiler_main_0", "tvmgen_default_ccompiler_main_3"} <= \
        set(module.profile())
    assert "tvmgen_default_ccompiler_main_0" in module.report()
