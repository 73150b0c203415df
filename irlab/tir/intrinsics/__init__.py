"""TIR intrinsics, each defined once: an ``Intrinsic`` record per name holds its arity,
effect, numpy reference (the interpreter's semantics), LLVM intrinsic or C math function,
C operator, and how VectorizeLoop treats it; a code generator that needs code for one
registers a lowering (``register_lowering``) that the record names. The interpreter,
VectorizeLoop, both code generators and the numpy code generator read the records, and the
builders ``tir.<name>``, ``te.<name>`` and ``T.<name>`` are made from them: adding an
intrinsic is one ``register_intrinsic`` call (plus a lowering where no spelling field says
it).

Example (an intrinsic added from Python, run by the interpreter, LLVM and C)::

    cube_root = tir.intrinsics.register_intrinsic(
        "tir.cbrt", 1, numpy=np.cbrt, libm="cbrt", elementwise=True)
    B = te.compute((n,), lambda i: te.cbrt(A[i]))   # cube_root(A[i]) alike
"""

from irlab.tir.intrinsics.record import (INTRINSICS, Intrinsic, get_intrinsic, intrinsic_name,
                                         register_intrinsic, register_lowering)
from irlab.tir.intrinsics import bitwise, control, float_math  # noqa: F401  (the definitions)
from irlab.tir.intrinsics.control import OPAQUE_BUILTINS

__all__ = ["INTRINSICS", "Intrinsic", "OPAQUE_BUILTINS", "get_intrinsic", "intrinsic_name",
           "register_intrinsic", "register_lowering"]
