"""Vector math the LLVM code generator writes inline: ``exp`` of a float32 vector.

LLVM's ``llvm.exp`` on a vector has no native instruction on x86: it becomes one call of the C
library's ``expf`` per lane, ~20 cycles each, which made the exponent the whole cost of a
softmax or a sigmoid. Here it is a few vector instructions per vector:

- range reduction ``x = n ln2 + r``, ``|r| <= ln2 / 2``: ``n`` rounded to nearest with the
  1.5 * 2**23 trick (the sum's low mantissa bits *are* the integer, no float-to-int
  conversion), ``r`` in two steps (Cody and Waite: ``ln2`` split so that ``n * hi`` is exact);
- ``exp(r)`` by a degree-7 polynomial (Cephes' ``expf`` coefficients, from S. Moshier's
  Cephes library: relative error ~1e-7, i.e. an ulp or two of float32);
- ``2**n`` built in the exponent field, in two factors so that results in the subnormal range
  (``x`` down to -103.9) and up to ``FLT_MAX`` (``x`` up to 88.72) come out right; beyond
  them the product overflows to ``inf`` or underflows to 0, as ``expf`` does.

``x`` is clamped to [-104, 89] first (so ``n`` stays in the two factors' range); NaN passes
through every step unchanged (comparisons with NaN are false), so ``exp(NaN)`` is NaN.
The operations carry no fast-math flags (a reassociation would undo the rounding trick);
the polynomial's multiply-adds are ``llvm.fmuladd``, an FMA where the CPU has one.
"""

from __future__ import annotations

import llvmlite.ir as ir

from irlab.target.llvm_types import I32, splat_const

LOG2E = 1.44269504088896341
LN2_HI = 0.693359375          # 9 significant bits: n * LN2_HI is exact for |n| < 2**15
LN2_LO = -2.12194440e-4       # ln2 - LN2_HI
ROUND_MAGIC = 12582912.0      # 1.5 * 2**23: x + magic rounds x to an integer (|x| < 2**22)
ROUND_MAGIC_BITS = 0x4B400000
EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
            1.6666665459e-1, 5.0000001201e-1)  # exp(r) ~ 1 + r + r^2 (p0 r^5 + ... + p5)
X_MIN, X_MAX = -104.0, 89.0


def is_float32_vector(ty) -> bool:
    return isinstance(ty, ir.VectorType) and isinstance(ty.element, ir.FloatType)


def vector_exp(cg, b: ir.IRBuilder, x):
    """``exp`` of the float32 vector ``x``, inline (see the module's docstring)."""
    ty = x.type
    ity = ir.VectorType(I32, ty.count)

    def const(v):
        return splat_const(ty, v)

    def iconst(v):
        return ir.Constant(ity, [ir.Constant(I32, v)] * ty.count)

    fmuladd = cg.intrinsic("fmuladd", ty, 3)
    x = b.select(b.fcmp_ordered("<", x, const(X_MIN)), const(X_MIN), x)
    x = b.select(b.fcmp_ordered(">", x, const(X_MAX)), const(X_MAX), x)
    t = b.call(fmuladd, [x, const(LOG2E), const(ROUND_MAGIC)])
    n = b.fsub(t, const(ROUND_MAGIC))                  # round(x / ln2), exact
    ni = b.sub(b.bitcast(t, ity), iconst(ROUND_MAGIC_BITS))
    r = b.call(fmuladd, [n, const(-LN2_HI), x])
    r = b.call(fmuladd, [n, const(-LN2_LO), r])
    p = const(EXP_POLY[0])
    for c in EXP_POLY[1:]:
        p = b.call(fmuladd, [p, r, const(c)])
    p = b.call(fmuladd, [p, b.fmul(r, r), r])
    p = b.fadd(p, const(1.0))
    half = b.ashr(ni, iconst(1))                       # 2**n = 2**half * 2**(n - half)
    scales = [b.bitcast(b.shl(b.add(k, iconst(127)), iconst(23)), ty)
              for k in (half, b.sub(ni, half))]
    return b.fmul(b.fmul(p, scales[0]), scales[1])
