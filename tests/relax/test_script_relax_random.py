"""Random Relax programs (built with the BlockBuilder: dataflow blocks, symbolic shapes, nested
calls, tuples, reshapes, match_cast, TE computes called with call_tir, an If) print and parse
back structurally equal, and the parsed program computes what the built one does."""

import numpy as np
import pytest

from irlab import relax, te, tir
from irlab.ir import assert_structural_equal
from irlab.relax.testing import evaluate
from irlab.script import from_source


def random_module(seed):
    """A module whose main takes x: (n, 4), y: (4,), c: bool and returns an (n, 4) tensor."""
    rng = np.random.default_rng(seed)
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 4], "float32"))
    y = relax.Var("y", relax.TensorStructInfo([4], "float32"))
    c = relax.Var("c", relax.TensorStructInfo([], "bool"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y, c]):
        values = [x]
        with bb.dataflow():
            for _ in range(int(rng.integers(1, 7))):
                values.append(bb.emit(_random_op(bb, rng, values, y, n)))
            out = bb.emit_output(values[-1])
        if rng.random() < 0.5:  # a match_cast outside the block, n checked again
            out = bb.match_cast(out, relax.TensorStructInfo([n, 4], "float32"))
        if rng.random() < 0.4:  # control flow: out, or -out computed in the other branch
            neg = relax.Var("neg", out.struct_info)
            other = relax.SeqExpr([relax.BindingBlock([relax.VarBinding(
                neg, bb.normalize(relax.op.negative(out)))])], neg)
            out = bb.emit(relax.If(c, relax.SeqExpr([], out), other))
        bb.emit_func_output(out)
    return bb.get()


def _scaled_sum(a, b):
    return te.compute(a.shape, lambda i, j: a[i, j] * 0.5 + b[i, j], name="scaled_sum")


def _random_op(bb, rng, values, y, n):
    a = values[int(rng.integers(len(values)))]
    b = values[int(rng.integers(len(values)))]
    kind = int(rng.integers(8))
    if kind == 6:  # a TE compute: a PrimFunc of the module and a call_tir
        return bb.call_te(_scaled_sum, a, b)
    if kind == 7:  # a tuple-valued op: halves swapped
        halves = bb.emit(relax.op.split(a, 2, axis=1))
        return relax.op.concat([halves[1], halves[0]], axis=1)
    if kind == 0:
        return relax.op.add(a, y)
    if kind == 1:
        return relax.op.multiply(a, b)
    if kind == 2:
        return relax.op.nn.relu(relax.op.subtract(a, b))  # nested: A-normal form
    if kind == 3:
        flat = relax.op.reshape(a, relax.ShapeExpr([n * 4]))
        return relax.op.reshape(flat, relax.ShapeExpr([n, 4]))
    if kind == 4:
        return relax.TupleGetItem(relax.Tuple([a, b]), int(rng.integers(2)))
    return relax.op.nn.softmax(a, axis=1)


@pytest.mark.parametrize("seed", range(40))
def test_random_program_round_trips(seed):
    mod = random_module(seed)
    text = mod.script()
    again = from_source(text)
    assert_structural_equal(again, mod)
    assert again.script() == text


@pytest.mark.parametrize("seed", [3, 10])
def test_random_program_parsed_computes_the_same(seed):
    mod = random_module(seed)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4)).astype("float32")
    y = rng.standard_normal(4).astype("float32")
    for c in (np.array(True), np.array(False)):
        np.testing.assert_allclose(evaluate(from_source(mod.script()), [x, y, c]),
                                   evaluate(mod, [x, y, c]), rtol=1e-6)
