"""``ms.tune_tir(..., task_name=)`` is accepted, as in TVM (the MLC course passes it): it names
the task of a lone PrimFunc; a module's tasks are named after its functions."""

from irlab import te
from irlab.ir import IRModule
from irlab.meta_schedule import tir_integration


def _func():
    a = te.placeholder((4,), name="A")
    return te.create_prim_func([a, te.compute((4,), lambda i: a[i] + 1.0, name="B")])


def test_task_name_names_a_lone_prim_func_and_module_tasks_keep_their_names():
    func = _func()
    assert tir_integration._tasks_of(func, "mm") == [("mm", func)]
    assert [n for n, _ in tir_integration._tasks_of(IRModule({"add": func}), "mm")] == ["add"]
