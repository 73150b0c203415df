"""The sampling algorithms behind ``Schedule.sample_*`` (TVM's ``primitive/sampling.cc``):
random perfect tilings, categorical draws and the candidate compute locations of a block.
They read the IR and a ``RandomEngine``; they never change the IR."""

from __future__ import annotations

from irlab.ir.module import IRModule
from irlab.tir import stmt as S
from irlab.tir.analysis import WellFormedError, verify_well_formed
from irlab.tir.schedule import primitives_compute_at as PC
from irlab.tir.schedule import primitives_getters as G
from irlab.tir.schedule import primitives_inline as PI
from irlab.tir.schedule.errors import ScheduleError

# Rejection sampling of a tiling whose innermost factor is small enough gives up after this
# many draws and builds one directly (only extents with large prime factors get there).
_MAX_TRIES = 64


def factorize(n: int) -> list:
    """(prime, exponent) pairs of ``n`` >= 1, by trial division."""
    out, p = [], 2
    while p * p <= n:
        k = 0
        while n % p == 0:
            n //= p
            k += 1
        if k:
            out.append((p, k))
        p += 1
    if n > 1:
        out.append((n, 1))
    return out


def _random_tiling(rand, extent, n):
    """``n`` factors of ``extent``: each prime's exponent spread uniformly over the n
    positions (stars and bars), as TVM's ``SamplePerfectTile``."""
    result = [1] * n
    for prime, exponent in factorize(extent):
        bars = sorted(rand.sample_without_replacement(exponent + n - 1, n - 1))
        last = -1
        for i, bar in enumerate(bars + [exponent + n - 1]):
            result[i] *= prime ** (bar - last - 1)
            last = bar
    return result


def sample_perfect_tile(rand, extent: int, n: int, max_innermost_factor: int) -> list:
    """A random list of ``n`` factors whose product is ``extent``, the last one at most
    ``max_innermost_factor`` (<= 0: no limit)."""
    if n == 1:
        return [extent]
    if extent == 1:
        return [1] * n
    limit = max_innermost_factor if max_innermost_factor > 0 else extent
    for _ in range(_MAX_TRIES):
        tiles = _random_tiling(rand, extent, n)
        if tiles[-1] <= limit:
            return tiles
    small = [d for d in range(1, min(limit, extent) + 1) if extent % d == 0]
    inner = small[rand.sample_int(0, len(small))]
    return _random_tiling(rand, extent // inner, n - 1) + [inner]


def check_perfect_tile(decision, extent, n, max_innermost_factor, loop_name):
    """``decision`` as a list of ints, or a ScheduleError saying what is wrong with it."""
    where = f"sample_perfect_tile of loop {loop_name} (extent {extent}, n={n})"
    if not isinstance(decision, (list, tuple)) or len(decision) != n or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in decision):
        raise ScheduleError(f"{where}: the decision must be a list of {n} positive integers, "
                            f"got {decision!r}")
    product = 1
    for d in decision:
        product *= d
    if product != extent:
        raise ScheduleError(f"{where}: the decision {list(decision)} multiplies to {product}, "
                            f"not to the extent {extent}")
    if 0 < max_innermost_factor < decision[-1]:
        raise ScheduleError(f"{where}: the innermost factor {decision[-1]} of the decision "
                            f"exceeds max_innermost_factor={max_innermost_factor}")
    return [int(d) for d in decision]


def check_categorical(candidates, probs):
    """Raise unless ``candidates`` and ``probs`` describe a distribution."""
    if not candidates:
        raise ScheduleError("sample_categorical needs at least one candidate")
    if len(candidates) != len(probs):
        raise ScheduleError(f"sample_categorical: {len(candidates)} candidates but "
                            f"{len(probs)} probabilities")
    if any(not isinstance(p, (int, float)) or p < 0 for p in probs) or sum(probs) <= 0:
        raise ScheduleError(f"sample_categorical: probabilities must be non-negative with a "
                            f"positive sum, got {list(probs)}")


def _verifies(func) -> bool:
    try:
        verify_well_formed(IRModule({"main": func}))
    except WellFormedError:
        return False
    return True


def _can_inline(func, realize) -> bool:
    try:
        return _verifies(PI.compute_inline(func, realize))
    except ScheduleError:
        return False


def _can_compute_at(func, realize, loop) -> bool:
    try:
        return _verifies(PC.compute_at(func, realize, loop, True, -1))
    except ScheduleError:
        return False


def _drives_reduction(loop) -> bool:
    """Whether ``loop``'s variable feeds a reduction iterator of a block under it."""
    for node, _ in G.walk(loop.body):
        if not isinstance(node, S.BlockRealize):
            continue
        for iv, value in zip(node.block.iter_vars, node.iter_values):
            if iv.iter_type != S.IterVar.DataPar and G.uses_var(value, loop.loop_var):
                return True
    return False


def _common_loops(func, consumer_realizes):
    """The loops of the first consumer (outermost first) that enclose every consumer."""
    loops = G.loops_of(func, consumer_realizes[0])
    for other in consumer_realizes[1:]:
        path = G.find_path(func, other)
        loops = [lp for lp in loops if any(node is lp for node in path)]
    return loops


def compute_locations(func, realize) -> list:
    """The candidate locations of a block, as (index, loop) pairs in TVM's order: (-2,
    "inline") when it can be inlined, (-1, "root"), then (i, For) for each loop ``i`` of
    its first consumer where ``compute_at`` is valid (no unit loops, no data-parallel loop
    below a reduction loop, no trailing reduction loops)."""
    out = [(-2, "inline")] if _can_inline(func, realize) else []
    out.append((-1, "root"))
    users = G.consumers(func, realize)
    if not users:
        return out
    loops = G.loops_of(func, users[0])
    common = _common_loops(func, users)
    reduce_flags = [_drives_reduction(lp) for lp in common]
    last_datapar = max((i for i, r in enumerate(reduce_flags) if not r), default=-1)
    seen_reduce = False
    for i, loop in enumerate(common):
        if G.is_const(loop.extent, 1):
            continue
        if reduce_flags[i]:
            seen_reduce = True
            if i > last_datapar:
                break
        elif seen_reduce:
            break
        if _can_compute_at(func, realize, loop):
            out.append((loops.index(loop), loop))
    return out


def pick_compute_location(rand, candidates, decision):
    """The (index, location) for ``decision``: itself when it is a candidate, else the
    nearest candidate before it (TVM keeps a mutated decision that way); a random one
    when there is no decision."""
    if decision is None:
        return candidates[rand.sample_int(0, len(candidates))]
    if isinstance(decision, bool) or not isinstance(decision, int) or decision < -2:
        raise ScheduleError(f"sample_compute_location: the decision must be an integer >= -2 "
                            f"(-2 inline, -1 root, i: the i-th loop of the first consumer), "
                            f"got {decision!r}")
    before = [c for c in candidates if c[0] <= decision]
    return before[-1] if before else (-1, "root")
