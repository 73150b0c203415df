"""``MultiLevelTiling``: tile a block's loops in a structure such as ``SSRSRS`` (spatial and
reduction tiles interleaved, TVM's CPU default), with an optional write cache computed at one
of the spatial tile levels (a register/L1 tile accumulated in a small buffer).

For a GEMM ``C[i, j] += A[i, k] * B[k, j]`` and ``SSRSRS`` the loop nest becomes
``i0 j0 | i1 j1 | k0 | i2 j2 | k1 | i3 j3`` with every factor a ``sample_perfect_tile``
decision; the innermost spatial tile is what ParallelizeVectorizeUnroll later vectorizes.

With ``vector_axis`` (irlab's CPU default; not in TVM) a loop other than the last spatial
one may be the vector loop (``vector_axis.choose_vector_loop``: the output channels of a
conv2d with a packed ``OIHW{n}o`` weight). It is split by the vector lanes first, its tiles
go last in the innermost spatial level (the lanes innermost), and the accumulator buffer
(the write cache, or the conv's own buffer when an elementwise epilogue is the cache) is
laid out with that axis last, so vector stores stay contiguous: for ``n, oc, oh, ow`` the
register tile is ``oh3 x ow3`` rows of ``oc3`` vectors, TOPI's x86 conv2d tile; the rows'
innermost tiles are at most the target's accumulator budget each.
"""

from __future__ import annotations

from typing import NamedTuple

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.schedule_rule import default_decision as DD
from irlab.meta_schedule.schedule_rule import vector_axis as VA
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
    """The iterator variables indexing ``region`` point-wise, in order, constant indices
    skipped (a bias read at ``p2[n, c, 0, 0]``); None when an index is neither a plain
    variable nor a constant, or covers more than one element."""
    out = []
    for rng in region.region:
        if not (isinstance(rng.extent, E.IntImm) and rng.extent.value == 1):
            return None
        if isinstance(rng.min, E.IntImm):
            continue
        if not isinstance(rng.min, E.Var):
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
    that consumer is computed at the level instead of a new cache. ``vector_axis``: pick
    the vector loop from the block's reads (see the module docstring); needs a target."""

    def __init__(self, structure="SSRSRS", tile_binds=None, max_innermost_factor=64,
                 vector_load_lens=None, reuse_read=None, reuse_write=None, filter_fn=None,
                 vector_axis=False):
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
        self.vector_axis = bool(vector_axis)
        self._target = None

    def _initialize_with_tune_context(self, context) -> None:
        self._target = getattr(context, "target", None)

    def _lanes(self, block) -> int:
        """Vector lanes of the block's written dtype on the task's target (0: unknown)."""
        if not self.vector_axis or self._target is None:
            return 0
        dtype = str(block.writes[0].buffer.dtype)
        return int(self._target.vector_width(dtype))

    def _row_limit(self) -> int:
        """The innermost tile of the other spatial loops when a vector axis was chosen: at
        most the accumulators a register tile may hold (TOPI's budget, half the vector
        registers), so that a sampled tile rarely spills (TOPI's conv tiles: 4 x 4 and
        7 x 2 vectors on AVX-512)."""
        limit = self._accumulators()
        return min(limit, self.max_innermost_factor) if self.max_innermost_factor > 0 \
            else limit

    def apply(self, sch, block) -> list:
        realize = BA.realize_of(sch, block)
        if self.filter_fn is not None:
            if not self.filter_fn(sch, block):
                return [sch]
        elif not BA.needs_multi_level_tiling(realize, BA.loops_of(sch, block)):
            return [sch]
        sch.annotate(block, BA.TILING_STRUCTURE, self.structure)
        lanes = self._lanes(realize.block)
        loops = BA.loops_of(sch, block)
        vector = VA.choose_vector_loop(realize, loops, lanes) \
            if lanes and self.s_indices else None
        tiles = self._tile_loop_nest(sch, block, vector, lanes)
        layout = None
        if vector is not None:
            iter_var = VA.bound_iter_var(realize, loops[vector])
            dim = VA.written_dim(realize.block, iter_var)
            ndim = len(realize.block.writes[0].region)
            if dim is not None and dim != ndim - 1:
                layout = VA.move_last_map(ndim, dim)
        return self._add_write_reuse(sch, block, tiles, layout)

    def _tile_loop_nest(self, sch, block, vector=None, lanes=1) -> list:
        """Split each spatial / reduction loop into as many tiles as the structure has S /
        R letters, and reorder the tiles level by level; returns the loops of each level.
        Loop number ``vector`` is split by ``lanes`` first, its tiles last in the innermost
        spatial level and the lanes innermost."""
        kinds = [BA.loop_iter_type(lp) for lp in BA.loops_of(sch, block)]
        defaults = self._default_tiles(sch, block, kinds, vector, lanes)
        tiles = [[] for _ in self.structure]
        vector_tiles = []
        for number, (loop, kind) in enumerate(zip(sch.get_loops(block), kinds)):
            indices = {BA.DATA_PAR: self.s_indices, BA.REDUCE: self.r_indices}.get(kind)
            if not indices:
                continue
            innermost = self.max_innermost_factor
            if vector is not None and kind == BA.DATA_PAR:
                innermost = self._row_limit()
            if number == vector:
                loop, lane = sch.split(loop, [None, lanes])
                vector_tiles = [lane]
                innermost = max(1, self.max_innermost_factor // lanes) \
                    if self.max_innermost_factor > 0 else self.max_innermost_factor
            if len(indices) == 1:
                splits = [loop]
            else:
                default = defaults.get(number)
                if not DD.fits(default, len(indices), innermost):
                    default = None
                factors = sch.sample_perfect_tile(loop, len(indices), innermost,
                                                  decision=default)
                splits = sch.split(loop, factors)
            if number == vector:
                vector_tiles.insert(0, splits[-1])
                splits = splits[:-1]
                indices = indices[:-1]
            for index, split in zip(indices, splits):
                tiles[index].append(split)
        if vector_tiles:
            tiles[self.s_indices[-1]].extend(vector_tiles)
        sch.reorder(*[loop for level in tiles for loop in level])
        return tiles

    def _default_tiles(self, sch, block, kinds, vector, lanes) -> dict:
        """The default decision of each loop's ``sample_perfect_tile`` (loop number ->
        factors; see ``default_decision``): the register tile of the vector loop (``vector``
        split by ``lanes`` first; else the last spatial loop when whole vectors divide it)
        and the row loop, the parallel outer tiles, the reductions' inner tiles."""
        target = self._target
        extents = [BA.const_extent(lp) for lp in BA.loops_of(sch, block)]
        spatial = [i for i, k in enumerate(kinds) if k == BA.DATA_PAR]
        if not spatial or any(extents[i] is None for i in spatial):
            return {}
        dtype = str(BA.realize_of(sch, block).block.writes[0].buffer.dtype)
        vector_lanes = int(target.vector_width(dtype)) if target is not None else 4
        unit = 1  # the vector loop's innermost factor counts vectors (split by the lanes)
        if vector is None:
            lanes, unit = vector_lanes, vector_lanes
            vector = spatial[-1] if extents[spatial[-1]] % lanes == 0 else None
        inner_limit = self.max_innermost_factor if self.max_innermost_factor > 0 else 1 << 30
        rows = next((i for i in reversed(spatial) if i != vector and extents[i] > 1), None)
        loops = [DD.SpatialLoop(extents[i] // (lanes if i == vector else 1),
                                is_vector=i == vector, is_rows=i == rows) for i in spatial]
        budget = 8 if target is None else self._accumulators()
        row_limit = self._row_limit() if unit == 1 and target is not None else inner_limit
        factors = DD.default_tiling(
            loops, len(self.s_indices), budget=budget, row_limit=row_limit,
            max_vectors=min(4, max(1, inner_limit // lanes)),
            cores=1 if target is None else int(target.num_cores),
            rows_level=self.structure.index("R") if "R" in self.structure else 1)
        out = {}
        for i, tile in zip(spatial, factors):
            if i == vector and unit > 1:
                tile = tile[:-1] + [tile[-1] * unit]
            out[i] = tile
        for i, kind in enumerate(kinds):
            if kind == BA.REDUCE and extents[i] is not None:
                out[i] = DD.default_reduction(extents[i], len(self.r_indices),
                                              self.max_innermost_factor)
        return out

    def _accumulators(self) -> int:
        """The vector accumulators a register tile may hold on the target."""
        from irlab.topi.x86.register_tile import accumulator_budget

        return max(1, accumulator_budget(self._target))

    def _add_write_reuse(self, sch, block, tiles, layout=None) -> list:
        """TVM's AddWriteReuse: with "may", the schedule without a cache is kept too.
        ``layout``: an index map for the accumulators (the vector axis last); then the
        schedule without a cache is not kept (its vector stores would be scattered)."""
        config = self.reuse_write
        if config.req == "no" and layout is None:
            return [sch]
        levels = [lv for lv in config.levels if 1 <= lv <= len(tiles) and tiles[lv - 1]]
        results = []
        consumers = sch.get_consumers(block)
        if len(consumers) == 1 and is_write_cache(BA.realize_of(sch, consumers[0]).block):
            cache = consumers[0]
            if layout is not None:
                sch.transform_layout(block, ("write", 0), layout)
            results.append(sch.copy())
        else:
            if config.req == "may" and layout is None:
                results.append(sch.copy())
            cache = sch.cache_write(block, 0, config.scope)
            if layout is not None:
                sch.transform_layout(block, ("write", 0), layout)
        for level in levels:
            state = sch.copy()
            state.reverse_compute_at(cache, tiles[level - 1][-1], preserve_unit_loops=True)
            results.append(state)
        return results or [sch]
