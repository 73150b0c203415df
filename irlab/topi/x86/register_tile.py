"""Register tiles sized from the target: the vector lanes and the accumulator budget that the
x86 schedules' tile choices (``nchw_tile``, ``nhwc_tile``, ``dense_tile``...) are derived from.

A register tile of ``rows x vectors`` accumulators stays in registers only if, beside the
accumulators, there are registers for the ``vectors`` loaded operand vectors and the broadcast
scalar of each step. Half the vector register file for accumulators keeps that true on every
x86 ISA and was the fastest on both measured: 16 of AVX-512's 32 zmm (a 4 x 64 float tile,
``benchmarks/bench_gemm.py``: 1.1x OpenBLAS on Zen 5) and 8 of AVX2's 16 ymm (4 x 16: 85
GFLOPS vs 27 for the 4 x 64 tile that spills, OpenBLAS 72-76, on Zen 3).
"""

from __future__ import annotations


def vector_lanes(dtype: str, target) -> int:
    """Elements of ``dtype`` in one vector register of ``target``."""
    return target.vector_width(dtype)


def accumulator_budget(target) -> int:
    """How many vector accumulators a register tile may hold on ``target``."""
    return target.num_vector_registers // 2


def best_tile(n_rows, n_cols, lanes, max_cols, budget):
    """(rows, cols) of a register tile: cols (the vector lanes) a divisor of n_cols up to
    max_cols, rows a divisor of n_rows, with at most ``budget`` vectors; the tile with the most
    accumulators wins (ties: wider vectors, full vectors)."""
    best, best_key = (1, 1), None
    for cols in range(1, min(n_cols, max_cols) + 1):
        if n_cols % cols:
            continue
        vecs = -(-cols // lanes)
        for rows in range(1, n_rows + 1):
            if n_rows % rows or rows * vecs > budget:
                continue
            key = (rows * vecs * min(1.0, cols / (vecs * lanes)), cols % lanes == 0, cols)
            if best_key is None or key > best_key:
                best, best_key = (rows, cols), key
    return best


__all__ = ["vector_lanes", "accumulator_budget", "best_tile"]
