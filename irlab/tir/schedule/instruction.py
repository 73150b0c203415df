"""Instructions of a trace and their kinds (TVM's ``Instruction`` / ``InstructionKind``).

An ``Instruction`` records one Schedule method call: ``kind`` (the method's name), keyword
``inputs`` and ``attrs`` (lists of (keyword, value); keyword None for the variadic loops of
``fuse``/``reorder``) and ``outputs`` (the handles it made). Its ``InstructionKind`` says how
the call is laid out in TVM's JSON (``name``, which keywords are inputs, which are attrs),
whether it is pure (only reads the IR: dead ones are dropped by ``Trace.simplified``) and
whether it samples (then the trace keeps its decision)."""

from __future__ import annotations

from irlab.tir import expr as E


class Instruction:
    """One primitive call; identity matters (the trace's decisions are keyed by it).

    ``kind`` is the method name with keyword ``inputs``/``attrs``, or, as TVM builds one,
    an ``InstructionKind`` with positional ``inputs``/``attrs`` laid out as in its JSON."""

    __slots__ = ("kind", "inputs", "attrs", "outputs", "positional")

    def __init__(self, kind, inputs, attrs, outputs, positional=False):
        if isinstance(kind, InstructionKind):
            kind, inputs, attrs = kind.method, *kind.keyword_args(inputs, attrs)
        self.kind = kind
        self.inputs = inputs        # list of (keyword or None, value)
        self.attrs = attrs          # list of (keyword, value)
        self.outputs = list(outputs)
        self.positional = positional

    def __repr__(self):
        return f"Instruction({self.kind})"

    def same_as(self, other) -> bool:
        return self is other

    def value(self, key, default=None):
        """The input or attr called ``key`` (``default`` when absent)."""
        for k, v in self.inputs + self.attrs:
            if k == key:
                return v
        return default

    @property
    def positional_inputs(self) -> list:
        """The inputs given without a keyword (the loops of ``fuse`` and ``reorder``)."""
        return [v for k, v in self.inputs if k is None]


class InstructionKind:
    """How one kind of instruction is serialized and treated by trace transformations.

    ``inputs`` lists the keywords that go to the JSON inputs (where handles are named), in
    order; ``"*"`` stands for the keyword-less inputs and ``"*factors"`` for a list spread
    into the inputs (TVM's ``Split`` takes ``[loop, *factors]``). ``attrs`` lists the
    keywords that go to the JSON attrs (plain values). ``returns_list``: the method returns
    a list (printed ``l1, = sch.get_loops(...)`` when it holds one handle)."""

    __slots__ = ("method", "name", "inputs", "attrs", "is_pure", "samples", "returns_list")

    def __init__(self, method, name, inputs=(), attrs=(), is_pure=False, samples=False,
                 returns_list=False):
        self.method, self.name = method, name
        self.inputs, self.attrs = tuple(inputs), tuple(attrs)
        self.is_pure, self.samples, self.returns_list = is_pure, samples, returns_list

    def __repr__(self):
        return f"InstructionKind({self.name})"

    @property
    def is_postproc(self) -> bool:
        return self.name == "EnterPostproc"

    @staticmethod
    def get(name) -> "InstructionKind":
        """The kind called ``name`` (TVM's "Split", or the method name "split")."""
        kind = KINDS_BY_NAME.get(name) or KINDS.get(name)
        if kind is None:
            raise ValueError(f"unknown instruction kind {name!r}")
        return kind

    def keyword_args(self, inputs, attrs):
        """(keyword inputs, keyword attrs) from positional ones laid out as in the JSON."""
        inputs, keyed, pos = [_plain(v) for v in inputs], [], 0
        for key in self.inputs:
            if key == "*":
                keyed += [(None, v) for v in inputs[pos:]]
                pos = len(inputs)
            elif key.startswith("*"):
                keyed.append((key[1:], inputs[pos:]))
                pos = len(inputs)
            elif pos < len(inputs):
                keyed.append((key, inputs[pos]))
                pos += 1
        if pos != len(inputs) or len(attrs) > len(self.attrs):
            raise ValueError(f"{self.name}: {len(inputs)} inputs and {len(attrs)} attrs do "
                             f"not match inputs {list(self.inputs)}, attrs {list(self.attrs)}")
        return keyed, [(k, _plain(v)) for k, v in zip(self.attrs, attrs)]


def _plain(value):
    """Python numbers for IntImm / FloatImm constants (TVM's traces hold those), lists
    for arrays; everything else as is."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (E.IntImm, E.FloatImm)):
        return value.value
    return value


def _kinds(*rows):
    return {row.method: row for row in rows}


K = InstructionKind
KINDS = _kinds(
    K("get_block", "GetBlock", (), ("name", "func_name"), is_pure=True),
    K("get_loops", "GetLoops", ("block",), is_pure=True, returns_list=True),
    K("get_child_blocks", "GetChildBlocks", ("*",), is_pure=True, returns_list=True),
    K("get_producers", "GetProducers", ("block",), is_pure=True, returns_list=True),
    K("get_consumers", "GetConsumers", ("block",), is_pure=True, returns_list=True),
    K("split", "Split", ("loop", "*factors"), ("preserve_unit_iters",), returns_list=True),
    K("fuse", "Fuse", ("*",), ("preserve_unit_iters",)),
    K("add_unit_loop", "AddUnitLoop", ("block_or_loop",)),
    K("reorder", "Reorder", ("*",)),
    K("parallel", "Parallel", ("loop",)),
    K("vectorize", "Vectorize", ("loop",)),
    K("unroll", "Unroll", ("loop",)),
    K("bind", "Bind", ("loop",), ("thread_axis",)),
    K("annotate", "Annotate", ("block_or_loop", "ann_val"), ("ann_key",)),
    K("unannotate", "Unannotate", ("block_or_loop",), ("ann_key",)),
    K("compute_inline", "ComputeInline", ("block",)),
    K("reverse_compute_inline", "ReverseComputeInline", ("block",)),
    K("compute_at", "ComputeAt", ("block", "loop"), ("preserve_unit_loops", "index")),
    K("reverse_compute_at", "ReverseComputeAt", ("block", "loop"),
      ("preserve_unit_loops", "index")),
    K("decompose_reduction", "DecomposeReduction", ("block", "loop")),
    K("cache_read", "CacheRead", ("block", "consumer_blocks"),
      ("read_buffer_index", "storage_scope")),
    K("cache_write", "CacheWrite", ("block", "consumer_blocks"),
      ("write_buffer_index", "storage_scope")),
    K("reindex_cache_read", "ReindexCacheRead", ("block", "index_map"),
      ("read_buffer_index", "storage_scope")),
    K("reindex_cache_write", "ReindexCacheWrite", ("block", "index_map"),
      ("write_buffer_index", "storage_scope")),
    K("rfactor", "RFactor", ("loop",), ("factor_axis",)),
    K("blockize", "Blockize", ("target",), ("preserve_unit_iters",)),
    K("transform_layout", "TransformLayout", ("block", "index_map", "pad_value"),
      ("buffer", "assume_injective_transform")),
    K("sample_perfect_tile", "SamplePerfectTile", ("loop",), ("n", "max_innermost_factor"),
      is_pure=True, samples=True, returns_list=True),
    K("sample_categorical", "SampleCategorical", (), ("candidates", "probs"),
      is_pure=True, samples=True),
    K("sample_compute_location", "SampleComputeLocation", ("block",), (),
      is_pure=True, samples=True),
    K("enter_postproc", "EnterPostproc"),
)
del K
KINDS_BY_NAME = {kind.name: kind for kind in KINDS.values()}


def kind_of(inst) -> InstructionKind:
    """The kind of ``inst`` (a kind not in the table is impure and serializes its keywords
    in recording order)."""
    kind = KINDS.get(inst.kind)
    if kind is None:
        kind = InstructionKind(inst.kind, inst.kind,
                               [k for k, _ in inst.inputs], [k for k, _ in inst.attrs])
    return kind
