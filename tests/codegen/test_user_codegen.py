"""User code generators: ``CodeGenBase`` (visitor + indenting emitter), ``tvm.build(...,
codegen=)``, target kinds registered from Python (``target.build.<kind>``), and the example
``NumpyCodeGen`` checked against the LLVM build on random inputs (hand schedules and random
programs with random schedules)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irlab as tvm
from irlab import te, tir
from irlab.codegen import build_module
from irlab.codegen.numpy_codegen import NumpyCodeGen
from irlab.errors import ArgumentError, CodegenError, IrlabError
from irlab.runtime.module import Module
from irlab.testing.tir_strategies import loop_nests, schedules
from irlab.tir import Schedule


# -- workloads ------------------------------------------------------------------------------
def matmul_exp_vectorized():
    A = te.placeholder((16, 8), name="A")
    B = te.placeholder((8, 12), name="B")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((16, 12), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((16, 12), lambda i, j: te.exp(C[i, j] * 0.1)
                   + tir.if_then_else(i > 3, 1.0, 2.0), name="D")
    sch = Schedule(te.create_prim_func([A, B, D]))
    i, j = sch.get_loops(sch.get_block("D"))
    sch.parallel(i)
    sch.vectorize(sch.split(j, [None, 4])[1])
    sch.unroll(sch.get_loops(sch.get_block("C"))[-1])
    return sch.mod


def conv2d_padded(h=7, w=6, ci=2, co=3):
    X = te.placeholder((ci, h, w), name="X")
    W = te.placeholder((co, ci, 3, 3), name="W")
    P = te.compute((ci, h + 2, w + 2), lambda c, y, x: te.if_then_else(
        te.all(y >= 1, y < h + 1, x >= 1, x < w + 1), X[c, y - 1, x - 1], 0.0), name="pad")
    rc, ry, rx = (te.reduce_axis((0, n), name=s) for n, s in ((ci, "rc"), (3, "ry"),
                                                                (3, "rx")))
    Y = te.compute((co, h, w), lambda f, y, x: te.sum(
        P[rc, y + ry, x + rx] * W[f, rc, ry, rx], axis=[rc, ry, rx]), name="conv")
    return tvm.IRModule({"main": te.create_prim_func([X, W, Y])})


def softmax_rows(n=5, m=12):
    A = te.placeholder((n, m), name="A")
    k1 = te.reduce_axis((0, m), name="k1")
    mx = te.compute((n,), lambda i: te.max(A[i, k1], axis=k1), name="mx")
    E = te.compute((n, m), lambda i, j: te.exp(A[i, j] - mx[i]), name="E")
    k2 = te.reduce_axis((0, m), name="k2")
    s = te.compute((n,), lambda i: te.sum(E[i, k2], axis=k2), name="s")
    out = te.compute((n, m), lambda i, j: te.sigmoid(E[i, j] / s[i]), name="out")
    return tvm.IRModule({"main": te.create_prim_func([A, out])})


def integer_division(n=24):
    A = te.placeholder((n,), "int32", name="A")
    B = te.compute((n,), lambda i: tir.floordiv(A[i], 3) * 100 + tir.floormod(A[i], 7)
                   + tir.floordiv(i - 11, 4), name="B")
    C = te.compute((n,), lambda i: te.max(B[i].astype("float32") * 0.5, -3.0), name="C")
    return tvm.IRModule({"main": te.create_prim_func([A, C])})


WORKLOADS = {"matmul_exp_vectorized": matmul_exp_vectorized, "conv2d_padded": conv2d_padded,
             "softmax_rows": softmax_rows, "integer_division": integer_division}


def random_args(func, seed=0):
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        buf = func.buffer_map[param]
        shape = tuple(int(d) for d in buf.shape)
        if buf.dtype.startswith("int"):
            arrays.append(rng.integers(-50, 50, shape).astype(buf.dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(buf.dtype))
    return arrays


def run_both(mod, seed=0):
    """(numpy codegen outputs, llvm outputs): every argument array after the call."""
    func = next(iter(mod.functions.values()))
    inputs = random_args(func, seed)
    results = []
    for lib in (tvm.build(mod, target="llvm", codegen=NumpyCodeGen()),
                tvm.build(mod, target="llvm")):
        args = [tvm.nd.array(a) for a in inputs]
        lib(*args)
        results.append([a.numpy() for a in args])
    return results


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_numpy_codegen_matches_llvm(name):
    ours, llvm = run_both(WORKLOADS[name]())
    for got, want in zip(ours, llvm):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_numpy_codegen_source_and_module():
    lib = tvm.build(matmul_exp_vectorized(), target="llvm", codegen=NumpyCodeGen())
    source = lib.get_source()
    assert "def main(A, B, D):" in source and "np.arange(4)" in source
    assert lib.format == "py" and lib.get_func_names() == ["main"]
    compile(source, "<generated>", "exec")  # the source stands alone
    with pytest.raises(ArgumentError, match="main takes 3 arguments"):
        lib(tvm.nd.array(np.zeros((16, 8), "float32")))
    with pytest.raises(ArgumentError, match="argument B must be float32 of shape"):
        lib["main"](*[tvm.nd.array(np.zeros(s, "float32")) for s in ((16, 8), (8, 8), (16, 12))])


@st.composite
def scheduled(draw):
    return draw(schedules(draw(loop_nests())))


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(scheduled())
def test_numpy_codegen_matches_llvm_on_random_schedules(case):
    ours, llvm = run_both(case.sch.mod)
    for got, want in zip(ours, llvm):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5,
                                   err_msg=case.sch.mod.script())


# -- the base class ----------------------------------------------------------------------------
class CountingCodeGen(build_module.CodeGenBase):
    """A pseudo-assembly emitter built only from the base's pieces."""

    source_format = "txt"

    def visit_prim_func(self, func):
        with self.indented(f"func {self.symbol_of(func)} {{", "}"):
            self.visit(func.body)

    def visit_for(self, s):
        with self.indented(f"loop {self.name_of(s.loop_var)} < {self.visit(s.extent)}:"):
            self.visit(s.body)

    def visit_buffer_store(self, s):
        self.emit(f"store {s.buffer.name}")

    def visit_int_imm(self, e):
        return str(e.value)


def test_codegen_base_emitter_names_and_missing_kinds():
    A = te.placeholder((4, 3), name="A")
    B = te.compute((4, 3), lambda i, j: A[i, j] + 1.0, name="B")
    lib = tvm.build(te.create_prim_func([A, B]), target="llvm", codegen=CountingCodeGen())
    assert lib.get_source() == ("func main {\n    loop i < 4:\n        loop j < 3:\n"
                                "            store B\n}\n")
    with pytest.raises(IrlabError, match="source only"):
        lib(tvm.nd.array(np.zeros((4, 3), "float32")))
    gen = CountingCodeGen()
    x, x2 = tir.Var("lambda", "int32"), tir.Var("lambda", "int32")
    assert (gen.name_of(x), gen.name_of(x2), gen.name_of(x)) == ("lambda_1", "lambda_2",
                                                                 "lambda_1")
    with pytest.raises(CodegenError, match="CountingCodeGen has no visit method for Add"):
        gen.visit(x + 1)


def test_seed_style_codegen_returning_text_module_or_nothing():
    class Text(build_module.CodeGenBase):
        def generate_code(self, stmt, target):
            return f"// {self.symbol_of(stmt)} for {target.kind}\n"

    class Wraps(build_module.CodeGenBase):
        def generate_code(self, stmt, target):
            return tvm.build(stmt, target="llvm")

    func = integer_division()
    assert tvm.build(func, codegen=Text()).get_source() == "// main for llvm\n"
    inner = tvm.build(func, codegen=Wraps())
    assert isinstance(inner, Module) and inner.get_func_names() == ["main"]

    class Bad(build_module.CodeGenBase):
        def generate_code(self, stmt, target):
            return 42

    with pytest.raises(CodegenError, match="Bad.generate_code returned int for @main"):
        tvm.build(func, codegen=Bad())

    class Raises(build_module.CodeGenBase):
        def generate_code(self, stmt, target):
            raise KeyError("boom")

    with pytest.raises(CodegenError, match="Raises.generate_code failed on @main: KeyError"):
        tvm.build(func, codegen=Raises())
    with pytest.raises(IrlabError, match="codegen= takes an object with generate_code"):
        tvm.build(func, codegen=object())


# -- a target kind registered from Python -----------------------------------------------------
def test_registered_target_kind_dispatches_to_target_build():
    name = "numpy_demo"
    tvm.target.register_target_kind(name, options={"banner": str}, override=True)
    calls = []

    def build_numpy(mod, target):
        calls.append(target.options.get("banner"))
        return NumpyCodeGen().build(mod, target)

    tvm.register_func(f"target.build.{name}", build_numpy, override=True)
    mod = softmax_rows()
    lib = tvm.build(mod, target=f"{name} -banner=hi")
    assert calls == ["hi"] and lib.format == "py"
    (a, out), want = random_args(mod["main"]), None
    want = run_both(mod)[1][1]
    result = tvm.nd.array(np.zeros_like(out))
    lib(tvm.nd.array(a), result)
    np.testing.assert_allclose(result.numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(IrlabError, match="unknown option -nope"):
        tvm.target.Target(f"{name} -nope=1")


def test_target_kind_without_build_function_and_bad_names():
    tvm.target.register_target_kind("nobuild_demo", override=True)
    with pytest.raises(IrlabError, match="register one as the global function "
                                         "target.build.nobuild_demo"):
        tvm.build(integer_division(), target="nobuild_demo")
    with pytest.raises(IrlabError, match="already registered"):
        tvm.target.register_target_kind("llvm")
    with pytest.raises(IrlabError, match="identifier"):
        tvm.target.register_target_kind("my-target")
    with pytest.raises(IrlabError, match="register_target_kind"):
        tvm.target.Target("never_registered")


def test_numpy_codegen_symbolic_shape():
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] * 2.0 + tir.Cast("float32", i), name="B")
    func = te.create_prim_func([A, B])
    lib = tvm.build(func, codegen=NumpyCodeGen())
    assert "n = A.shape[0]" in lib.get_source()
    a = np.random.default_rng(3).standard_normal((5, 3)).astype("float32")
    b = tvm.nd.array(np.zeros((5, 3), "float32"))
    lib(tvm.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + np.arange(5)[:, None], rtol=1e-6)


def test_numpy_codegen_matches_llvm_on_relay_kernels():
    """TOPI's CPU schedules (packed dense, conv2d, pooling, softmax) as relay.build lowers
    them: each kernel through NumpyCodeGen equals the LLVM build."""
    from irlab import relay

    x, w = relay.var("x", shape=(1, 3, 10, 10)), relay.var("w", shape=(8, 3, 3, 3))
    d, dw = relay.var("d", shape=(2, 16)), relay.var("dw", shape=(24, 16))
    y = relay.nn.relu(relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1)))
    out = relay.Tuple([relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2)),
                       relay.nn.softmax(relay.nn.dense(d, dw))])
    with tvm.transform.PassContext(opt_level=3):
        factory = relay.build(tvm.IRModule.from_expr(relay.Function([x, w, d, dw], out)),
                              target="llvm")
    names = " ".join(lowered.name for lowered in factory.lowered)
    # four kernels, plus a layout_transform where the host's conv2d strategy packs the input
    for op in ("conv2d", "max_pool2d", "dense", "softmax"):
        assert op in names
    for lowered in factory.lowered:
        ours, llvm = run_both(tvm.IRModule({lowered.name: lowered.prim_func}))
        for got, want in zip(ours, llvm):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=lowered.name)


def test_relay_build_for_a_registered_target_kind():
    """relay.build hands its kernels to target.build.<kind>; the graph executor calls the
    generated Python functions like compiled kernels."""
    from irlab import relay
    from irlab.contrib import graph_executor

    tvm.target.register_target_kind("pydemo", override=True)
    tvm.register_func("target.build.pydemo", lambda mod, target: NumpyCodeGen().build(
        mod, target), override=True)
    x, w = relay.var("x", shape=(2, 16)), relay.var("w", shape=(8, 16))
    mod = tvm.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w))))
    with tvm.transform.PassContext(opt_level=3):
        factory = relay.build(mod, target="pydemo")
    assert "def tvmgen_default_fused_nn_dense" in factory.get_lib().get_source()
    gmod = graph_executor.GraphModule(factory["default"](tvm.cpu()))
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(s).astype("float32") for s in ((2, 16), (8, 16)))
    gmod.set_input("x", a)
    gmod.set_input("w", b)
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), np.maximum(a @ b.T, 0), rtol=1e-5)
