"""Default decisions: what a hand schedule would pick at a rule's sampling instructions.

A rule passes its default as the ``decision=`` of the ``sample_*`` call it makes while the
design space is generated, so the space's trace records the defaults as its decisions:
they replay, print and serialize to JSON like any decision. The search replays a space with
fresh samples for its random candidates, and as recorded for the seeded one
(``EvolutionarySearch(seed_defaults=True)`` puts it in the first population). A rule or a
``ScheduleFn`` with no default samples at random, as before.

The defaults of this module (TOPI's x86 choices, from the target):

- a multi-level tiling's register tile: the vector axis (the output channels of a packed
  conv2d, the columns of a GEMM) in whole vectors, the innermost other spatial loop as
  rows, as many accumulators as the target's budget holds (``register_tile``: 4 x 4
  vectors on AVX-512, 7 x 2 on a 7-wide row);
- the outermost spatial tiles (the parallel loop): the vector axis's whole rest (so the
  weight / B panel of a tile is reused over the loops inside it), then the outer loops
  until the parallel extent reaches ``4 x cores``; the row loop's rest goes under the
  outer reduction tile (L1 reuse of the vector operand's chunk), the other loops' to the
  second level;
- a reduction: its innermost tile the largest divisor within the rule's limit;
- a categorical choice (the unroll depth): the middle candidate;
- a compute location: the root (the block stays a stage of its own).
"""

from __future__ import annotations

# Outer parallel tiles per core the default tiling aims for (load balance over cores).
PARALLEL_TILES_PER_CORE = 4


def divisors(n: int) -> list:
    """The divisors of ``n`` in increasing order."""
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def largest_divisor_within(n: int, limit: int) -> int:
    """The largest divisor of ``n`` not above ``limit`` (``limit`` <= 0: ``n``)."""
    if limit <= 0:
        return n
    return max(d for d in divisors(n) if d <= limit)


def middle_index(candidates) -> int:
    """The index of the middle candidate (of four, the third: 64 of [0, 16, 64, 512])."""
    return len(candidates) // 2


def fits(factors, n, max_innermost) -> bool:
    """Whether ``factors`` can be the decision of ``sample_perfect_tile(loop, n,
    max_innermost)`` (the caller made them multiply to the loop's extent)."""
    return factors is not None and len(factors) == n and all(f >= 1 for f in factors) \
        and (max_innermost <= 0 or factors[-1] <= max_innermost)


ROOT_LOCATION = -1  # sample_compute_location's decision for "stay at the root"


class SpatialLoop:
    """One spatial loop of a tiled block for ``default_tiling``: its ``extent`` (for the
    vector loop, counted in whole vectors after the split by the lanes)."""

    __slots__ = ("extent", "is_vector", "is_rows")

    def __init__(self, extent, is_vector=False, is_rows=False):
        self.extent, self.is_vector, self.is_rows = int(extent), is_vector, is_rows

    def __repr__(self):
        role = "vector" if self.is_vector else "rows" if self.is_rows else "outer"
        return f"SpatialLoop({self.extent}, {role})"


def register_tile(rows_extent, vectors_extent, max_rows, max_vectors, budget) -> tuple:
    """(rows, vectors) of the default register tile: divisors of the row loop's and the
    vector loop's extents, at most ``budget`` accumulators; the most accumulators win, then
    the squarest tile (fewest loads per multiply-add), then the more vectors: 4 x 4 vectors
    with AVX-512's 16, 7 x 2 on a 7-wide row, 2 x 4 with AVX2's 8."""
    best, best_key = (1, 1), None
    for vectors in divisors(vectors_extent):
        if vectors > max(1, max_vectors):
            break
        for rows in divisors(rows_extent):
            if rows > max(1, max_rows) or rows * vectors > budget:
                break
            key = (rows * vectors, min(rows, vectors), vectors)
            if best_key is None or key > best_key:
                best, best_key = (rows, vectors), key
    return best


def default_tiling(loops, levels, *, budget, max_vectors, row_limit, cores,
                   rows_level=1) -> list:
    """The default factors (a list of ``levels`` ints per loop, outermost level first) of
    the spatial ``loops`` (``SpatialLoop``s in loop order) of a multi-level tiling: the
    register tile innermost, the parallel tiles outermost, the rest of the row loop at
    ``rows_level`` (the spatial level under the outer reduction tile: there the vector
    operand's chunk of the reduction, a B panel of a GEMM, is reused from L1 by every row
    tile: GEMM 1024 at 1 thread went from 47 to 100 GFLOPS on AVX-512), the rest of the other
    loops at level 1."""
    vector = next((lp for lp in loops if lp.is_vector), None)
    rows_loop = next((lp for lp in loops if lp.is_rows), None)
    rows, vectors = register_tile(rows_loop.extent if rows_loop else 1,
                                  vector.extent if vector else 1, row_limit, max_vectors,
                                  budget)
    inner = {id(vector): vectors, id(rows_loop): rows}
    rests = [lp.extent // inner.get(id(lp), 1) for lp in loops]
    outer = _parallel_tiles(loops, rests, PARALLEL_TILES_PER_CORE * max(1, cores))
    factors = []
    for lp, rest, par in zip(loops, rests, outer):
        if levels <= 2:
            factors.append([lp.extent] if levels == 1 else [rest, inner.get(id(lp), 1)])
            continue
        tile = [par] + [1] * (levels - 2) + [inner.get(id(lp), 1)]
        level = rows_level if lp.is_rows and 0 < rows_level < levels - 1 else 1
        tile[level] = rest // par
        factors.append(tile)
    return factors


def _parallel_tiles(loops, rests, want) -> list:
    """The outermost tile of each loop: the vector loop's whole rest, then each loop in
    order the smallest divisor of its rest bringing the product to ``want``."""
    outer = [rest if lp.is_vector else 1 for lp, rest in zip(loops, rests)]
    product = 1
    for value in outer:
        product *= value
    for i, (lp, rest) in enumerate(zip(loops, rests)):
        if product >= want:
            break
        if lp.is_vector:
            continue
        need = -(-want // product)
        outer[i] = next((d for d in divisors(rest) if d >= need), rest)
        product *= outer[i]
    return outer


def default_reduction(extent, levels, max_innermost) -> list:
    """The default factors of a reduction loop: the innermost the largest divisor within
    ``max_innermost``, the rest in the outermost level."""
    if levels == 1:
        return [extent]
    inner = largest_divisor_within(extent, max_innermost)
    return [extent // inner] + [1] * (levels - 2) + [inner]
