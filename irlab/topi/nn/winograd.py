"""Winograd convolution F(m x m, 3 x 3) in TE (TVM's ``topi.nn.conv2d_winograd_*`` and
``conv2d_winograd_weight_transform``), on channel-blocked ``NCHW{x}c`` data.

A 3x3 stride-1 convolution computes each ``m x m`` output tile from an ``(m + 2) x (m + 2)``
input tile ``d`` and the 3x3 kernel ``g`` as ``Y = A^T [(G g G^T) * (B^T d B)] A`` (Lavin and
Gray, "Fast Algorithms for Convolutional Neural Networks", 2015): the products per tile and
channel pair fall from ``9 m^2`` to ``(m + 2)^2`` (4x fewer for m = 4, 2.25x for m = 2). Summed
over the input channels, the elementwise product becomes ``(m + 2)^2`` independent GEMMs --
what makes it fast -- between the transformed input and the transformed kernel:

* ``winograd_input`` ``V[eps, nu, p, c.o, c.i] = (B^T d_p B)[eps, nu]`` for tile ``p`` (all
  images' tiles numbered in one axis), computed separably through ``winograd_input_rows``
  ``(B^T d_p)[eps, b]`` from ``winograd_input_tile`` ``d_p`` (the padding read in place, zero
  outside the input: no padded copy of the input);
* ``winograd_gemm`` ``M[eps, nu, p, k.o, k.i] = sum_c V[eps, nu, p, c] U[eps, nu, k.o, c, k.i]``;
* ``winograd_output_rows`` ``(A^T M_p)[i, nu]`` and the output ``(A^T M_p A)[i, j]``, an
  injective stage so that an epilogue (bias, ReLU, a residual) inlines into it.

``U = G g G^T`` is the transformed kernel: ``conv2d_winograd_weight_transform`` makes it from
an OIHW kernel (TVM's op: ``(m + 2, m + 2, O, I)``); AlterOpLayout then blocks it as
``(m + 2, m + 2, O / y, I / x, x, y)`` and FoldConstant computes it once. The transforms' sums
are written out term by term from the matrices (no multiplication by 0 or 1), picked by the
tile position; once a schedule unrolls the positions, each term is a constant.

Rounding: the transforms scale values by up to 8 (m = 4) before the GEMM sums them, so a
result can differ from the direct convolution by more than float32 rounding of the direct
sum: ~1e-6 relative for m = 2, ~1e-5 for m = 4 (``tests/relay/transform/test_winograd.py``).
"""

from __future__ import annotations

from fractions import Fraction

from irlab import te
from irlab.errors import IrlabError
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.topi.nn.conv2d import pad4
from irlab.topi.utils import const_shape

# The transform matrices of F(m, 3) for m = 2 and 4 (interpolation points 0, 1, -1 and
# 0, 1, -1, 2, -2, each with the point at infinity), as exact fractions.
_B_T = {
    2: [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
    4: [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
        [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
}
_G = {
    2: [[1, 0, 0], ["1/2", "1/2", "1/2"], ["1/2", "-1/2", "1/2"], [0, 0, 1]],
    4: [["1/4", 0, 0], ["-1/6", "-1/6", "-1/6"], ["-1/6", "1/6", "-1/6"],
        ["1/24", "1/12", "1/6"], ["1/24", "-1/12", "1/6"], [0, 0, 1]],
}
_A_T = {
    2: [[1, 1, 1, 0], [0, 1, -1, -1]],
    4: [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
}
TILE_SIZES = tuple(sorted(_B_T))

# MetaSchedule's custom rules for the stages (TVM's ``schedule_rule`` attr, which becomes the
# block's annotation): ``ms.schedule_rule.ApplyCustomRule`` schedules a block annotated
# ``name`` with the function registered as ``meta_schedule.<target key>.<name>``
# (irlab.meta_schedule.schedule.cpu.winograd), and no generic rule touches it. "None": no rule
# at all -- the stage's consumer's rule places it (the input tile and the transforms' rows).
DATA_PACK_RULE = "conv2d_NCHWc_winograd_data_pack"
BGEMM_RULE = "conv2d_NCHWc_winograd_bgemm"
INVERSE_RULE = "conv2d_NCHWc_winograd_inverse"
NO_RULE = {"schedule_rule": "None"}


def winograd_matrices(tile_size):
    """``(B^T, G, A^T)`` of F(tile_size, 3) as lists of rows of Fractions."""
    if tile_size not in _B_T:
        raise IrlabError(f"winograd: tile_size must be one of {TILE_SIZES}, got {tile_size!r}")
    exact = lambda rows: [[Fraction(v) for v in row] for row in rows]  # noqa: E731
    return exact(_B_T[tile_size]), exact(_G[tile_size]), exact(_A_T[tile_size])


def _pick(index, choices):
    """``choices[index]`` for a loop variable ``index``: a Select chain, which folds to one
    choice once the loop is unrolled (or ``index`` is otherwise a constant)."""
    expr = choices[-1]
    for k in range(len(choices) - 2, -1, -1):
        expr = E.Select(index == k, choices[k], expr)
    return expr


def _weighted(index, matrix, terms, dtype):
    """``sum_j matrix[index][j] * terms[j]`` for a loop variable ``index``: each term appears
    once, its coefficient picked by ``index`` (a Select chain of constants) and the term
    dropped (-0.0, which adds nothing exactly) where the coefficient is 0. Once the loop is
    unrolled (by LLVM, as the x86 schedule asks, or by TIR's UnrollLoop) the chains fold: a
    sum of the nonzero terms, +-1 as additions."""
    total = None
    for j, term in enumerate(terms):
        column = [row[j] for row in matrix]
        if not any(column):
            continue
        value = term
        if any(c not in (0, 1) for c in column):
            value = term * _pick(index, [O.const(float(c), dtype) for c in column])
        if not all(column):
            used = O.any(*(index == k for k, c in enumerate(column) if c))
            value = E.Select(used, value, O.const(-0.0, dtype))
        total = value if total is None else total + value
    return O.const(0.0, dtype) if total is None else total


def winograd_tiles(out_h, out_w, tile_size):
    """``(tiles_h, tiles_w)``: the output is covered by tiles of ``tile_size`` squared (the last
    row and column of tiles may stick out; those outputs are computed and not stored)."""
    return -(-out_h // tile_size), -(-out_w // tile_size)


def conv2d_winograd_weight_transform(kernel, tile_size):
    """``U[eps, nu, o, i] = (G g_{o,i} G^T)[eps, nu]`` of an OIHW 3x3 kernel: TVM's
    ``topi.nn.conv2d_winograd_weight_transform``, shape ``(m + 2, m + 2, O, I)``."""
    out_ch, in_ch, kh, kw = const_shape(kernel)
    if (kh, kw) != (3, 3):
        raise IrlabError(f"winograd weight transform: the kernel must be 3x3, got {kh}x{kw}")
    _, g, _ = winograd_matrices(tile_size)
    alpha, dtype = tile_size + 2, kernel.dtype

    def rows(eps, b, o, i):  # (G g)[eps, b]
        return _weighted(eps, g, [kernel[o, i, a, b] for a in range(3)], dtype)

    gg = te.compute((alpha, 3, out_ch, in_ch), rows, name="winograd_weight_rows")

    def body(eps, nu, o, i):  # (G g G^T)[eps, nu]
        return _weighted(nu, g, [gg[eps, b, o, i] for b in range(3)], dtype)

    return te.compute((alpha, alpha, out_ch, in_ch), body, name="winograd_weight",
                      tag="winograd_weight_transform")


def conv2d_NCHWc_winograd(data, kernel, tile_size, padding=(1, 1, 1, 1), out_dtype=None):
    """3x3 stride-1 conv2d by Winograd F(tile_size, 3) on ``NCHW{x}c`` data with a transformed
    kernel ``(m + 2, m + 2, O / y, I / x, x, y)`` (``conv2d_winograd_weight_transform``, blocked),
    giving ``NCHW{y}c`` output; stages as in the module docstring."""
    m, alpha = tile_size, tile_size + 2
    top, left, bottom, right = pad4(padding)
    batch, ic_chunks, height, width, ic_bn = const_shape(data)
    shape = const_shape(kernel)
    if len(shape) != 6 or shape[:2] != (alpha, alpha) or shape[3:5] != (ic_chunks, ic_bn):
        raise IrlabError(f"conv2d_NCHWc_winograd: kernel shape {shape} is not the transformed "
                         f"kernel ({alpha}, {alpha}, O/y, {ic_chunks}, {ic_bn}, y) of F({m}, 3) "
                         f"for data {const_shape(data)}")
    out_h, out_w = height + top + bottom - 2, width + left + right - 2
    if out_h < 1 or out_w < 1:
        raise IrlabError(f"conv2d_NCHWc_winograd: the padded input {height + top + bottom}x"
                         f"{width + left + right} is smaller than the 3x3 kernel")
    v = winograd_input_transform(data, m, (top, left), (out_h, out_w))
    mm = winograd_batched_gemm(v, kernel, out_dtype or data.dtype)
    return winograd_output_transform(mm, m, batch, (out_h, out_w))


def winograd_input_transform(data, tile_size, pad_before, out_hw):
    """``V[eps, nu, p, c.o, c.i] = (B^T d_p B)[eps, nu]`` for every tile ``p`` of the ``out_hw``
    output of ``NCHW{x}c`` data padded by ``pad_before`` (top, left) rows and columns."""
    bt, _, _ = winograd_matrices(tile_size)
    m, alpha = tile_size, tile_size + 2
    top, left = pad_before
    batch, ic_chunks, height, width, ic_bn = const_shape(data)
    tiles_h, tiles_w = winograd_tiles(*out_hw, m)
    per_image = tiles_h * tiles_w

    def read(p, a, b, c, ci):  # the padded input at row a, column b of tile p: 0 outside
        n, rest = p // per_image, p % per_image
        y = (rest // tiles_w) * m + a - top
        x = (rest % tiles_w) * m + b - left
        value = data[n, c, O.min(O.max(y, 0), height - 1), O.min(O.max(x, 0), width - 1), ci]
        inside = O.all(y >= 0, y < height, x >= 0, x < width)
        return E.Select(inside, value, O.const(0.0, data.dtype))

    # the tile itself first (a schedule computes it per tile, in cache): the transform's sums
    # then read it at plain indices, not through the padding test of each read
    tile = te.compute((batch * per_image, ic_chunks, alpha, alpha, ic_bn),
                      lambda p, c, a, b, ci: read(p, a, b, c, ci), name="winograd_input_tile",
                      tag="winograd_input_tile", attrs=NO_RULE)

    def input_rows(p, c, eps, b, ci):  # (B^T d)[eps, b]
        return _weighted(eps, bt, [tile[p, c, a, b, ci] for a in range(alpha)], data.dtype)

    rows = te.compute((batch * per_image, ic_chunks, alpha, alpha, ic_bn), input_rows,
                      name="winograd_input_rows", tag="winograd_input_rows",
                      attrs=NO_RULE)

    def input_tile(eps, nu, p, c, ci):  # (B^T d B)[eps, nu]
        return _weighted(nu, bt, [rows[p, c, eps, b, ci] for b in range(alpha)], data.dtype)

    return te.compute((alpha, alpha, batch * per_image, ic_chunks, ic_bn), input_tile,
                      name="winograd_input", tag="winograd_input",
                      attrs={"schedule_rule": DATA_PACK_RULE})


def winograd_batched_gemm(v, kernel, out_dtype):
    """``M[eps, nu, p, k.o, k.i] = sum_c V[eps, nu, p, c] U[eps, nu, k.o, c, k.i]``: one GEMM
    per tile position ``(eps, nu)``."""
    alpha, _, tiles, ic_chunks, ic_bn = const_shape(v)
    oc_chunks, oc_bn = const_shape(kernel)[2], const_shape(kernel)[5]
    rc = te.reduce_axis((0, ic_chunks), name="rc")
    ri = te.reduce_axis((0, ic_bn), name="ri")

    def gemm(eps, nu, p, k, ki):
        a, b = v[eps, nu, p, rc, ri], kernel[eps, nu, k, rc, ri, ki]
        if a.dtype != out_dtype:
            a, b = O.cast(a, out_dtype), O.cast(b, out_dtype)
        return te.sum(a * b, axis=[rc, ri])

    return te.compute((alpha, alpha, tiles, oc_chunks, oc_bn), gemm, name="winograd_gemm",
                      tag="winograd_gemm", attrs={"layout_free_placeholders": [kernel],
                                                    "schedule_rule": BGEMM_RULE})


def winograd_output_transform(mm, tile_size, batch, out_hw):
    """The ``NCHW{y}c`` output: ``(A^T M_p A)[y % m, x % m]`` of tile ``p = (y // m, x // m)``,
    through ``winograd_output_rows`` ``(A^T M_p)[i, nu]``."""
    _, _, at = winograd_matrices(tile_size)
    m = tile_size
    alpha, _, tiles, oc_chunks, oc_bn = const_shape(mm)
    out_h, out_w = out_hw
    tiles_h, tiles_w = winograd_tiles(out_h, out_w, m)
    per_image = tiles_h * tiles_w

    def output_rows(p, k, i, nu, ki):  # (A^T M)[i, nu]
        return _weighted(i, at, [mm[e, nu, p, k, ki] for e in range(alpha)], mm.dtype)

    s = te.compute((tiles, oc_chunks, m, alpha, oc_bn), output_rows,
                   name="winograd_output_rows", tag="winograd_output_rows", attrs=NO_RULE)

    def output(n, k, y, x, ki):  # (A^T M A)[y % m, x % m] of tile (y // m, x // m)
        p = n * per_image + (y // m) * tiles_w + x // m
        return _weighted(x % m, at, [s[p, k, y % m, nu, ki] for nu in range(alpha)], mm.dtype)

    return te.compute((batch, oc_chunks, out_h, out_w, oc_bn), output,
                      name="conv2d_winograd", tag="conv2d_NCHWc_winograd",
                      attrs={"schedule_rule": INVERSE_RULE})


__all__ = ["conv2d_NCHWc_winograd", "conv2d_winograd_weight_transform", "winograd_matrices",
           "winograd_tiles", "winograd_input_transform", "winograd_batched_gemm",
           "winograd_output_transform", "TILE_SIZES", "DATA_PACK_RULE", "BGEMM_RULE",
           "INVERSE_RULE"]
