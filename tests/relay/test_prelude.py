"""irlab's Relay standard library (import_from_std): the prelude's list functions run in the
interpreter with the values numpy gives; gradient.rly and core.rly import; errors are clear."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.errors import IrlabError


def prelude_module(main_text):
    mod = irlab.IRModule()
    mod.import_from_std("prelude.rly")
    mod.import_from_std("prelude.rly")  # once per module
    return relay.parse('#[version = "0.0.5"]\n' + main_text, init_module=mod)


def run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def test_prelude_list_functions_compute_what_numpy_does():
    mod = prelude_module("""
    def @main(%a: float32, %b: float32, %c: float32) {
      %0 = Cons(%a, Cons(%b, Cons(%c, Nil)));
      %1 = @map(fn (%x: float32) -> float32 { %x * %x }, %0);
      (@sum(%1), @length(%1), @nth(@rev(%0), 0), @sum(@concat(%0, @filter(
         fn (%x: float32) -> bool { %x > 1f }, %0))))
    }
    """)
    values = np.array([0.5, 2.0, 3.0], dtype="float32")
    total, length, last, concat_filtered = run(mod, *values)
    np.testing.assert_allclose(total.numpy(), np.sum(values ** 2))
    assert length.numpy() == 3 and last.numpy() == values[-1]
    np.testing.assert_allclose(concat_filtered.numpy(), values.sum() + values[values > 1].sum())


def test_prelude_types_and_text_round_trip():
    mod = irlab.IRModule()
    mod.import_from_std("prelude.rly")
    assert {"List", "Option", "Tree"} <= {t.name_hint for t in mod.type_definitions}
    assert mod["map"].checked_type.type_params  # polymorphic
    irlab.ir.assert_structural_equal(relay.parse(mod.astext()), mod)


def test_gradient_cells_skip_known_zeros():
    mod = irlab.IRModule()
    mod.import_from_std("gradient.rly")
    mod = relay.parse("""#[version = "0.0.5"]
    def @main(%x: float32) -> float32 {
      %0 = fn (%a: float32, %b: float32) -> float32 { %a + %b };
      %1 = Zero(fn () -> float32 { 0f });
      @FromGradCell(@AddGradCell(%0, %1, Raw(%x)))
    }""", init_module=mod)
    assert run(mod, np.float32(4.5)).numpy() == 4.5


def test_unknown_std_file_is_named():
    with pytest.raises(IrlabError, match="no Relay standard library file 'nope.rly'"):
        irlab.IRModule().import_from_std("nope.rly")
