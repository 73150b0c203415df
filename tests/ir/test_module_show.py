"""``IRModule.show()`` prints the module's TVMScript (as TVM; the MLC course calls it)."""

from irlab import te
from irlab.ir import IRModule


def test_show_prints_the_script(capsys):
    A = te.placeholder((4,), name="A")
    mod = IRModule({"main": te.create_prim_func([A, te.compute((4,), lambda i: A[i] * 2.0,
                                                              name="B")])})
    mod.show()
    assert capsys.readouterr().out == mod.script() + "\n"
