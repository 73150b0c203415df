"""``MutateTileSize``: move a factor between two tiles of one ``sample_perfect_tile``
decision (TVM's mutator of the same name): ``[4, 8, 2] -> [2, 8, 4]``."""

from __future__ import annotations

from irlab.meta_schedule.mutator.mutator import Mutator, as_engine

_MAX_TRIES = 32


def _divisors(n) -> list:
    return [d for d in range(1, n + 1) if n % d == 0]


def mutate_tiles(rand, tiles, max_innermost_factor):
    """``tiles`` with a divisor of one tile moved to another, None if no move is possible
    (the innermost tile stays within ``max_innermost_factor``)."""
    n = len(tiles)
    limit = max_innermost_factor if max_innermost_factor > 0 else None
    for _ in range(_MAX_TRIES):
        x = rand.sample_int(0, n)
        if tiles[x] <= 1:
            continue
        y = rand.sample_int(0, n - 1)
        y += y >= x
        factors = _divisors(tiles[x])[1:]
        if y == n - 1 and limit is not None:
            factors = [f for f in factors if f * tiles[y] <= limit]
            if not factors:
                continue
        factor = factors[rand.sample_int(0, len(factors))]
        new = list(tiles)
        new[x] //= factor
        new[y] *= factor
        return new
    return None


class MutateTileSize(Mutator):
    """Pick a tiling decision with a factor > 1 and move a divisor of one tile to another."""

    def apply(self, trace, rand_state=None):
        rand = as_engine(rand_state, self._rand)
        candidates = [inst for inst in trace.insts if inst.kind == "sample_perfect_tile"
                      and any(t > 1 for t in trace.decisions.get(inst, []))
                      and len(trace.decisions.get(inst, [])) > 1]
        if not candidates:
            return None
        inst = candidates[rand.sample_int(0, len(candidates))]
        limit = int(inst.value("max_innermost_factor", -1))
        new = mutate_tiles(rand, trace.decisions[inst], limit)
        if new is None:
            return None
        return trace.with_decision(inst, new, remove_postproc=True)
