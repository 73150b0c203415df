"""TE tensors and the operations producing them (``PlaceholderOp``, ``ComputeOp``).

A ``Tensor`` is output ``value_index`` of an ``Operation``; indexing it (``A[i, j]`` or
``A(i, j)``) gives a ``ProducerLoad`` expression, which ``create_prim_func`` turns into a
``BufferLoad`` of the buffer made for that tensor (TVM's python/tvm/te/tensor.py).
"""

from __future__ import annotations

from irlab.errors import TIRError
from irlab.ir.node import Node
from irlab.tir.expr import PrimExpr, _DerivedDtype, convert
from irlab.tir.stmt import IterVar


def _as_index(x):
    # IterVars stand for their variable, as in TVM's Tensor.__call__.
    return x.var if isinstance(x, IterVar) else convert(x)


class ProducerLoad(_DerivedDtype):
    """``producer[indices]``: a read of a TE tensor element (dtype: the tensor's)."""

    producer: object
    indices: tuple
    span: object

    def __init__(self, producer, indices, span=None):
        super().__init__(producer, tuple(_as_index(i) for i in indices), span)
        self._set_dtype(producer.dtype)

    def astext(self):
        from irlab.tir.text import expr_to_text

        args = ", ".join(expr_to_text(i) for i in self.indices)
        return f"{self.producer.name}[{args}]"


class Operation(Node):
    """Base of TE operations: something that produces ``num_outputs`` tensors."""

    __slots__ = ("_outputs",)  # output tensors, made on first use
    name: str
    tag: str
    attrs: dict

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    @property
    def num_outputs(self) -> int:
        return 1

    def output(self, index) -> "Tensor":
        """The ``index``-th output tensor (cached: ``op.output(0) is op.output(0)``)."""
        outs = getattr(self, "_outputs", None)
        if outs is None:
            outs = [Tensor(shape, dtype, self, i)
                    for i, (shape, dtype) in enumerate(self._output_types())]
            object.__setattr__(self, "_outputs", outs)
        if not 0 <= index < len(outs):
            raise TIRError(f"operation {self.name} has {len(outs)} outputs, asked for {index}")
        return outs[index]

    @property
    def input_tensors(self) -> list:
        return []


class PlaceholderOp(Operation):
    """An input tensor of the given shape and dtype."""

    shape: tuple
    dtype: str

    def _output_types(self):
        return [(self.shape, self.dtype)]


class ComputeOp(Operation):
    """``out[axis] = body[k]`` for every point of the ``axis`` domain; a body made of Reduce
    nodes also iterates ``reduce_axis``. One output per body expression."""

    __slots__ = ("_inputs",)  # input tensors, found on first use
    axis: tuple
    reduce_axis: tuple
    body: tuple

    @property
    def num_outputs(self) -> int:
        return len(self.body)

    def _output_types(self):
        shape = tuple(iv.dom.extent for iv in self.axis)
        return [(shape, b.dtype) for b in self.body]

    @property
    def input_tensors(self) -> list:
        """Tensors read by the body, in order of first appearance (found once: LowerTE and
        the schedules ask again and again)."""
        found = getattr(self, "_inputs", None)
        if found is None:
            found = []
            for b in self.body:
                for t in collect_producers(b):
                    if t not in found:
                        found.append(t)
            object.__setattr__(self, "_inputs", tuple(found))
        return list(found)


def collect_producers(expr) -> list:
    """Tensors read (through ProducerLoad) anywhere in ``expr``."""
    out, seen, stack = [], set(), [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ProducerLoad) and e.producer not in out:
            out.append(e.producer)
        if isinstance(e, Node):
            children = []
            for name in e._fields:
                value = getattr(e, name)
                if isinstance(value, (PrimExpr, Node)) and not isinstance(value, Tensor):
                    children.append(value)
                elif isinstance(value, tuple):
                    children.extend(v for v in value if isinstance(v, (PrimExpr, Node)))
            stack.extend(reversed(children))
    return out


class Tensor(Node):
    """Output ``value_index`` of ``op``; two Tensors are equal when op and index are."""

    shape: tuple
    dtype: str
    op: Operation
    value_index: int

    def __eq__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        return self.op is other.op and self.value_index == other.value_index

    def __hash__(self):
        return hash((id(self.op), self.value_index))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def name(self) -> str:
        # TVM's Tensor::GetNameHint: ops with several outputs suffix ".v<k>".
        if self.op.num_outputs == 1:
            return self.op.name
        return f"{self.op.name}.v{self.value_index}"

    @property
    def axis(self):
        return self.op.axis

    def __call__(self, *indices):
        if len(indices) == 1 and isinstance(indices[0], (tuple, list)):
            indices = tuple(indices[0])
        if len(indices) != self.ndim:
            raise TIRError(f"tensor {self.name} needs {self.ndim} indices, "
                           f"{len(indices)} were provided")
        return ProducerLoad(self, indices)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) == self.ndim:
            return self(*indices)
        return TensorSlice(self, indices)

    def astext(self):
        dims = ", ".join(str(getattr(s, "value", s)) for s in self.shape)
        return f"Tensor(shape=({dims}), op.name={self.name})"

    def __repr__(self):
        return self.astext()

    def __bool__(self):
        return True


class TensorSlice:
    """``A[i]`` on a tensor of more dimensions: index further (``A[i][j]``) to load."""

    def __init__(self, tensor, indices):
        self.tensor, self.indices = tensor, tuple(indices)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        return self.tensor[self.indices + indices]

    @property
    def dtype(self):
        return self.tensor.dtype
