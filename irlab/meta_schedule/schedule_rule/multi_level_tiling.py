"""``MultiLevelTiling``: tile a block's loops in a structure such as ``SSRSRS`` (spatial and
reduction tiles interleaved, TVM's CPU default), with an optional write cache computed at one
of the spatial tile levels (a register/L1 tile accumulated in a small buffer).

For a GEMM ``C[i, j] += A[i, k] * B[k, j]`` and ``SSRSRS`` the loop nest becomes
``i0 j0 | i1 j1 | k0 | i2 j2 | k1 | i3 j3`` with every factor a ``sample_perfect_tile``
decision; the innermost spatial tile is what ParallelizeVectorizeUnroll later vectorizes.
"""

from __future__ import annotations

from typing import NamedTuple

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.schedule_rule.schedule_rule import ScheduleRule
from irlab.tir import expr as E


class ReuseType(NamedTuple):
    """How a rule caches a buffer: ``req`` "no" / "may" / "must", at which tile ``levels``
    (1-based), in which storage ``scope``."""

    req: str
    levels: list
    scope: str

    def as_dict(self) -> dict:
        return {"req": self.req, "levels": list(self.levels), "scope": self.scope}


def _reuse(config):
    if config is None:
        return ReuseType("no", [], "global")
    if isinstance(config, ReuseType):
        return config
    return ReuseType(config.get("req", "no"), list(config.get("levels", [])),
                     config.get("scope", "global"))


def _index_vars(region):
    """The iterator variables indexing ``region`` point-wise, in order (None when an index
    is not a plain variable or covers more than one element)."""
    out = []
    for rng in region.region:
        if not isinstance(rng.min, E.Var) or not (isinstance(rng.extent, E.IntImm)
                                                  and rng.extent.value == 1):
            return None
        out.append(id(rng.min))
    return out if len(set(out)) == len(out) else None


def is_write_cache(block) -> bool:
    """TVM's IsWriteCache: one write, and every read indexed by distinct iterators of the
    write in the write's order (a copy, or an elementwise epilogue such as ReLU or a bias
    add: ``T_relu[n, f, y, x] = max(conv[n, f, y, x] + bias[f], 0)``). Such a consumer can
    take the place of a write cache: computed at a tile, it finishes each tile in cache."""
    if len(block.writes) != 1:
        return False
    written = _index_vars(block.writes[0])
    if written is None:
        return False
    position = {v: i for i, v in enumerate(written)}
    for region in block.reads:
        read = _index_vars(region)
        if read is None or any(v not in position for v in read):
            return False
        order = [position[v] for v in read]
        if order != sorted(order):
            return False
    return True


class MultiLevelTiling(ScheduleRule):
    """TVM's ``ms.schedule_rule.MultiLevelTiling`` for CPUs (no thread bindings, no read
    caches): blocks that NeedsMultiLevelTiling (a reduction with data reuse, e.g. GEMM,
    conv2d) get their loops tiled; ``reuse_write`` {"req": "may", "levels": [1, 2],
    "scope": "global"} yields the untouched tiling plus one schedule per level with a write
    cache computed there; when the block's only consumer is elementwise (a fused ReLU),
    that consumer is computed at the level instead of a new cache."""

    def __init__(self, structure="SSRSRS", tile_binds=None, max_innermost_factor=64,
                 vector_load_lens=None, reuse_read=None, reuse_write=None, filter_fn=None):
        if not structure or set(structure) - {"S", "R"}:
            raise ValueError(f"MultiLevelTiling structure must be made of S and R, got "
                             f"{structure!r}")
        if tile_binds or vector_load_lens:
            raise ValueError("MultiLevelTiling: tile_binds and vector_load_lens (GPU thread "
                             "binding, cooperative fetch) are not supported by irlab's CPU "
                             "rules")
        self.structure = structure
        self.max_innermost_factor = -1 if max_innermost_factor is None \
            else int(max_innermost_factor)
        self.reuse_read = _reuse(reuse_read)
        if self.reuse_read.req != "no":
            raise ValueError("MultiLevelTiling: reuse_read (read caches, TVM's GPU shared "
                             "memory staging) is not supported by irlab's CPU rules")
        self.reuse_write = _reuse(reuse_write)
        self.filter_fn = filter_fn
        self.s_indices = [i for i, c in enumerate(structure) if c == "S"]
        self.r_indices = [i for i, c in enumerate(structure) if c == "R"]

    def apply(self, sch, block) -> list:
        realize = BA.realize_of(sch, block)
        if self.filter_fn is not None:
            if not self.filter_fn(sch, block):
                return [sch]
        elif not BA.needs_multi_level_tiling(realize, BA.loops_of(sch, block)):
            return [sch]
        sch.annotate(block, BA.TILING_STRUCTURE, self.structure)
        tiles = self._tile_loop_nest(sch, block)
        return self._add_write_reuse(sch, block, tiles)

    def _tile_loop_nest(self, sch, block) -> list:
        """Split each spatial / reduction loop into as many tiles as the structure has S /
        R letters, and reorder the tiles level by level; returns the loops of each level."""
        kinds = [BA.loop_iter_type(lp) for lp in BA.loops_of(sch, block)]
        tiles = [[] for _ in self.structure]
        for loop, kind in zip(sch.get_loops(block), kinds):
            indices = {BA.DATA_PAR: self.s_indices, BA.REDUCE: self.r_indices}.get(kind)
            if not indices:
                continue
            if len(indices) == 1:
                tiles[indices[0]].append(loop)
                continue
            factors = sch.sample_perfect_tile(loop, len(indices), self.max_innermost_factor)
            for index, split in zip(indices, sch.split(loop, factors)):
                tiles[index].append(split)
        sch.reorder(*[loop for level in tiles for loop in level])
        return tiles

    def _add_write_reuse(self, sch, block, tiles) -> list:
        """TVM's AddWriteReuse: with "may", the schedule without a cache is kept too."""
        config = self.reuse_write
        if config.req == "no":
            return [sch]
        levels = [lv for lv in config.levels if 1 <= lv <= len(tiles) and tiles[lv - 1]]
        results = []
        consumers = sch.get_consumers(block)
        if len(consumers) == 1 and is_write_cache(BA.realize_of(sch, consumers[0]).block):
            cache = consumers[0]
            results.append(sch.copy())
        else:
            if config.req == "may":
                results.append(sch.copy())
            cache = sch.cache_write(block, 0, config.scope)
        for level in levels:
            state = sch.copy()
            state.reverse_compute_at(cache, tiles[level - 1][-1], preserve_unit_loops=True)
            results.append(state)
        return results or [sch]
