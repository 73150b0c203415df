"""Differential runs: compiled code against the reference interpreters, with the comparison
tolerance of each op family written down in one place.

Tolerances (``TOLERANCES`` as ``(rtol, atol)``; an element passes when ``|got - expected| <=
atol * scale + rtol * |expected|`` with ``scale = max(1, max |expected|)`` over the output):
- integers and bools: exact;
- floats the generator proved deterministic (exact or correctly rounded IEEE steps only):
  exact, with NaN in the same positions;
- ``transcendental`` (TIR values through exp/log/tanh/sigmoid, or a product that LLVM's or
  gcc's FMA contraction may fuse): float32 ``rtol=1e-4, atol=1e-4 * scale``; float64
  ``rtol=1e-9, atol=1e-9 * scale`` -- libm and numpy differ by a few ulp, and a subtraction
  after them may cancel, hence the absolute part relative to the output's scale;
- Relay ``elementwise`` (add, multiply, maximum, relu, clip, ...): ``rtol=1e-5, atol=1e-6``
  (an FMA may still contract ``a * b + c`` in compiled code);
- Relay ``math`` (exp, tanh, sigmoid, log, sqrt, softmax, divide): ``rtol=1e-4, atol=1e-5``;
- Relay ``accumulate`` (sum/mean reductions, dense, conv2d, pooling): ``rtol=1e-4,
  atol=1e-4`` -- compiled code sums in another order (tiles, vector lanes).
A Relay graph is compared with the loosest family among its ops.
Infinite values must match exactly (same sign, same positions), as must NaN positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOLERANCES = {
    "exact": (0.0, 0.0),
    "transcendental": (1e-4, 1e-4),
    "transcendental64": (1e-9, 1e-9),
    "elementwise": (1e-5, 1e-6),
    "math": (1e-4, 1e-5),
    "accumulate": (1e-4, 1e-4),
}


@dataclass
class Mismatch:
    """One disagreement: which target and output, and what differed."""

    target: str
    output: str
    message: str

    def __str__(self):
        return f"[{self.target}] {self.output}: {self.message}"


def compare(expected, got, family="exact") -> str | None:
    """None when ``got`` matches ``expected`` under ``family``'s tolerance, else a message."""
    expected, got = np.asarray(expected), np.asarray(got)
    if expected.shape != got.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    if expected.dtype != got.dtype:
        return f"dtype {got.dtype}, expected {expected.dtype}"
    if expected.dtype.kind != "f":
        bad = np.argwhere(expected != got)
        if len(bad):
            at = tuple(bad[0])
            return f"{len(bad)} elements differ, first at {at}: {got[at]} != {expected[at]}"
        return None
    return _compare_float(expected, got, family)


def _compare_float(expected, got, family):
    e_nan, g_nan = np.isnan(expected), np.isnan(got)
    if (e_nan != g_nan).any():
        at = tuple(np.argwhere(e_nan != g_nan)[0])
        return (f"NaN positions differ ({int(e_nan.sum())} expected, {int(g_nan.sum())} "
                f"got), first at {at}: {got[at]} vs {expected[at]}")
    e_inf, g_inf = np.isinf(expected), np.isinf(got)
    if (e_inf != g_inf).any() or (expected[e_inf] != got[g_inf]).any():
        at = tuple(np.argwhere((e_inf != g_inf) | (e_inf & (expected != got)))[0])
        return f"infinities differ, first at {at}: {got[at]} vs {expected[at]}"
    finite = ~(e_nan | e_inf)
    e, g = expected[finite].astype(np.float64), got[finite].astype(np.float64)
    if e.size == 0:
        return None
    rtol, atol = TOLERANCES[family]
    scale = max(1.0, float(np.abs(e).max()))
    err = np.abs(g - e)
    bad = err > atol * scale + rtol * np.abs(e)
    if bad.any():
        first = int(np.argmax(bad))
        return (f"{int(bad.sum())} elements beyond {family} tolerance (rtol={rtol}, "
                f"atol={atol}*{scale:.3g}); max abs error {err.max():.3g}; first: "
                f"{g[first]!r} vs {e[first]!r}")
    return None


# -- TIR: compiled targets against the TIR interpreter ------------------------------------
def tir_family(program, output) -> str:
    """The tolerance family of one output of a ``TIRProgram``."""
    state = program.states.get(output.name, "exact")
    if not state.startswith("nondet"):
        return "exact"
    if state == "nondet" and output.dtype == "float64":
        return "transcendental64"
    return "transcendental"  # float32 outputs, and float64 ones fed by float32 math


def run_tir_program(program, targets=("llvm", "c"), seed=0) -> list:
    """Run ``program`` through the TIR interpreter and each target on the same random inputs;
    the list of ``Mismatch`` (empty when all agree)."""
    from irlab.testing.tir_programs import random_arguments

    families = {b.name: tir_family(program, b) for b in program.params}
    return compare_tir(program.func, random_arguments(program, seed), targets, families)


def compare_tir(func, args, targets=("llvm", "c"), families=None) -> list:
    """``func`` on copies of ``args`` (numpy arrays in parameter order) in the interpreter
    and compiled for each target; the ``Mismatch`` list. ``families``: buffer name ->
    tolerance family (default "exact")."""
    import irlab
    from irlab.tir.interpreter import run

    buffers = [func.buffer_map[p] for p in func.params]
    expected = [a.copy() for a in args]
    run(func, *expected)
    mismatches = []
    for target in targets:
        got = [a.copy() for a in args]
        irlab.build(func, target=target)(*got)
        for buffer, e, g in zip(buffers, expected, got):
            message = compare(e, g, (families or {}).get(buffer.name, "exact"))
            if message:
                mismatches.append(Mismatch(target, buffer.name, message))
    return mismatches


def assert_tir_targets_agree(func, args, targets=("llvm", "c"), families=None):
    """Raise AssertionError listing every disagreement of ``compare_tir``."""
    mismatches = compare_tir(func, args, targets, families)
    assert not mismatches, "\n".join(str(m) for m in mismatches)


# -- Relay: relay.build at each opt level against the Relay interpreter ------------------
def run_relay_graph(graph, seed=0, opt_levels=(0, 3), special=True, target="llvm") -> list:
    """``graph.mod`` through the Relay interpreter and through ``relay.build`` + the graph
    executor at each of ``opt_levels``, on the same inputs (with NaN/inf when ``special``);
    the list of ``Mismatch`` (target named ``"<target> O<level>"``)."""
    import irlab
    from irlab import relay
    from irlab.contrib import graph_executor
    from irlab.testing.check import run_module
    from irlab.testing.relay_graphs import graph_inputs

    inputs = graph_inputs(graph, seed, special)
    with np.errstate(all="ignore"):
        expected = run_module(graph.mod, inputs)
    mismatches = []
    for level in opt_levels:
        with irlab.transform.PassContext(opt_level=level):
            lib = relay.build(graph.mod, target)
        module = graph_executor.GraphModule(lib["default"](irlab.cpu()))
        module.run(**inputs)
        if module.get_num_outputs() != len(expected):
            mismatches.append(Mismatch(f"{target} O{level}", "outputs",
                                       f"{module.get_num_outputs()} outputs, expected "
                                       f"{len(expected)}"))
            continue
        for i, e in enumerate(expected):
            message = compare(e, module.get_output(i).numpy(), graph.family)
            if message:
                mismatches.append(Mismatch(f"{target} O{level}", f"output {i}", message))
    return mismatches


def run_tir_batch(programs, targets=("llvm", "c"), seed=0) -> list:
    """``run_tir_program`` for many programs with one build per target (one module of all
    the PrimFuncs: the long tier's throughput is compile-bound). A list of Mismatch lists, one
    per program; when a batch fails to build, each program is built alone to find which."""
    import irlab
    from irlab.ir.module import IRModule
    from irlab.testing.tir_programs import random_arguments
    from irlab.tir.interpreter import run

    funcs = {f"fuzz{k}": p.func.with_attr("global_symbol", f"fuzz{k}")
             for k, p in enumerate(programs)}
    try:
        libs = {t: irlab.build(IRModule(funcs), target=t) for t in targets}
    except Exception:  # noqa: BLE001 -- find the program at fault
        return [_run_alone(p, targets, seed + k) for k, p in enumerate(programs)]
    results = []
    for k, program in enumerate(programs):
        func, args = funcs[f"fuzz{k}"], random_arguments(program, seed + k)
        expected = [a.copy() for a in args]
        run(func, *expected)
        mismatches = []
        for target in targets:
            got = [a.copy() for a in args]
            libs[target][f"fuzz{k}"](*got)
            for buffer, e, g in zip(program.params, expected, got):
                message = compare(e, g, tir_family(program, buffer))
                if message:
                    mismatches.append(Mismatch(target, buffer.name, message))
        results.append(mismatches)
    return results


def _run_alone(program, targets, seed):
    try:
        return run_tir_program(program, targets, seed)
    except Exception as err:  # noqa: BLE001 -- a valid program must build and run
        return [Mismatch("/".join(targets), "error", f"{type(err).__name__}: {err}"[:500])]
