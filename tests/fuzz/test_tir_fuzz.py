"""Quick tier of the TIR differential fuzzing (issue 20): random well-typed PrimFuncs (see
``irlab.testing.tir_programs``) built for LLVM and C agree with the TIR interpreter.

Fixed examples (``derandomize``) keep CI deterministic; ``benchmarks/fuzz_differential.py``
is the long tier. A failure prints the program as TVMScript: minimize it into
``tests/fuzz/regressions``."""

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from irlab.runtime.module import find_c_compiler
from irlab.testing.differential import run_tir_program
from irlab.testing.tir_programs import tir_programs

TARGETS = ("llvm", "c") if find_c_compiler() else ("llvm",)
QUICK = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))


@QUICK
@given(tir_programs(), st.integers(0, 2 ** 16))
def test_targets_agree_with_interpreter(program, seed):
    note(program.func.script())
    mismatches = run_tir_program(program, TARGETS, seed)
    assert not mismatches, "\n".join(str(m) for m in mismatches)


@settings(QUICK, max_examples=10)
@given(tir_programs(max_nests=1, max_depth=1))
def test_programs_are_well_formed(program):
    """Every generated program runs in the interpreter on its random inputs (accesses in
    bounds, no division by zero) and has inputs and outputs."""
    from irlab.testing.tir_programs import random_arguments
    from irlab.tir.interpreter import run

    run(program.func, *random_arguments(program, 0))
    assert program.outputs and program.inputs
