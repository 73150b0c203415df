"""Small workloads shared by the MetaSchedule tests."""

import numpy as np

import irlab as tvm
from irlab import te
from irlab.script import tir as T


def gemm_mod(n=64, m=None, k=None):
    """A TE GEMM ``C = A @ B`` as a one-function IRModule (no schedule)."""
    m, k = m or n, k or n
    a = te.placeholder((n, k), name="A")
    b = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


@T.prim_func
def aborts(A: T.Buffer((4,), "float32")):
    """Kills its process when run (a stand-in for a candidate that segfaults)."""
    T.func_attr({"global_symbol": "main"})
    T.evaluate(T.call_extern("int32", "abort"))


@T.prim_func
def copies_a(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
    """Writes C = A: a 'GEMM' candidate that computes the wrong values."""
    T.func_attr({"global_symbol": "main"})
    for i, j in T.grid(64, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj]


@T.prim_func
def spins(A: T.Buffer((4,), "int32")):
    """Never returns (a candidate that hangs)."""
    T.func_attr({"global_symbol": "main"})
    while A[0] >= 0:
        A[1] = A[1] + 1


def mlp(batch=4, sizes=(32, 64, 16), seed=0):
    """A Relay MLP (dense + bias_add, relu between layers) and its params."""
    from irlab import relay

    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=(batch, sizes[0]))
    args, params, h = [x], {}, x
    for i, (d_in, d_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = relay.var(f"w{i}", shape=(d_out, d_in))
        b = relay.var(f"b{i}", shape=(d_out,))
        args += [w, b]
        params[f"w{i}"] = rng.uniform(-1, 1, (d_out, d_in)).astype("float32")
        params[f"b{i}"] = rng.uniform(-1, 1, (d_out,)).astype("float32")
        h = relay.nn.bias_add(relay.nn.dense(h, w), b)
        if i < len(sizes) - 2:
            h = relay.nn.relu(h)
    return tvm.IRModule.from_expr(relay.Function(args, h)), params


def run_graph(lib, inputs):
    """Run a relay.build result on the graph executor; the first output as numpy."""
    from irlab.contrib import graph_executor

    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    for name, value in inputs.items():
        module.set_input(name, value)
    module.run()
    return module.get_output(0).numpy()


def interpret(mod, params, x):
    """The Relay interpreter's result (the reference)."""
    from irlab import relay

    names = [p.name_hint for p in mod["main"].params[1:]]
    return relay.create_executor("debug", mod=mod).evaluate()(
        x, *[params[n] for n in names]).numpy()


def small_space():
    """The CPU design space with short unrolls (0 or 16 steps): fast to compile in tests."""
    from irlab import meta_schedule as ms
    from irlab.meta_schedule.schedule_rule.auto_inline import AutoInline
    from irlab.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling
    from irlab.meta_schedule.schedule_rule.parallel_vectorize_unroll import (
        ParallelizeVectorizeUnroll)

    rules = [AutoInline(), MultiLevelTiling(structure="SSRSRS", max_innermost_factor=16,
                                            reuse_write={"req": "may", "levels": [1, 2],
                                                         "scope": "global"}),
             ParallelizeVectorizeUnroll(max_jobs_per_core=16, max_vectorize_extent=16,
                                        unroll_max_steps=[0, 16], unroll_explicit=True)]
    return ms.space_generator.PostOrderApply(sch_rules=rules)


def small_search():
    from irlab import meta_schedule as ms

    return ms.search_strategy.EvolutionarySearch(population_size=8, init_min_unmeasured=4,
                                                 genetic_num_iters=1)


def quick_runner():
    from irlab import meta_schedule as ms

    return ms.runner.LocalRunner(evaluator_config=ms.runner.EvaluatorConfig(1, 1, 1))
