"""The global function registry and PackedFunc."""

import pytest

import irlab
from irlab import runtime
from irlab.errors import IrlabError
from irlab.runtime import PackedFunc


@pytest.fixture
def cleanup():
    names = []
    yield names
    for name in names:
        runtime.remove_global_func(name)


def test_three_registration_forms(cleanup):
    cleanup += ["test_reg_plain", "test.reg.named", "test.reg.direct"]

    @irlab.register_func
    def test_reg_plain(a, b):
        return a + b

    @irlab.register_func("test.reg.named")
    def named(a):
        return a * 10

    returned = irlab.register_func("test.reg.direct", lambda: "direct")

    assert isinstance(test_reg_plain, PackedFunc)  # the decorator binds the PackedFunc, as TVM
    assert test_reg_plain(2, 3) == 5 and test_reg_plain.name == "test_reg_plain"
    assert irlab.get_global_func("test_reg_plain")(1, 1) == 2
    assert irlab.get_global_func("test.reg.named")(4) == 40
    assert irlab.get_global_func("test.reg.direct") is returned and returned() == "direct"
    assert runtime.get_global_func("test.reg.named") is named
    names = runtime.list_global_func_names()
    assert {"test_reg_plain", "test.reg.named", "test.reg.direct"} <= set(names)
    assert names == sorted(names)


def test_duplicates_need_override(cleanup):
    cleanup.append("test.reg.dup")
    irlab.register_func("test.reg.dup", lambda: 1)
    with pytest.raises(IrlabError, match="test.reg.dup is already registered"):
        irlab.register_func("test.reg.dup", lambda: 2)
    assert irlab.get_global_func("test.reg.dup")() == 1
    irlab.register_func("test.reg.dup", lambda: 3, override=True)
    assert irlab.get_global_func("test.reg.dup")() == 3


def test_missing_functions(cleanup):
    cleanup.append("test.reg.matmul")
    irlab.register_func("test.reg.matmul", lambda: None)
    assert irlab.get_global_func("test.reg.nothing_like_it", allow_missing=True) is None
    with pytest.raises(IrlabError, match="did you mean test.reg.matmul"):
        irlab.get_global_func("test.reg.matmu")
    with pytest.raises(IrlabError, match="Cannot find global function zzz_qqq$"):
        irlab.get_global_func("zzz_qqq")


def test_remove_global_func():
    irlab.register_func("test.reg.gone", lambda: None)
    runtime.remove_global_func("test.reg.gone")
    assert irlab.get_global_func("test.reg.gone", allow_missing=True) is None
    runtime.remove_global_func("test.reg.gone")  # removing twice is harmless, as in TVM
    irlab.register_func("test.reg.gone", lambda: 1)  # and the name is free again
    runtime.remove_global_func("test.reg.gone")


def test_bad_names_and_packed_func():
    with pytest.raises(IrlabError, match="function name"):
        irlab.register_func(42, lambda: None)
    with pytest.raises(TypeError):
        PackedFunc(3)

    def add(a, b):
        return a + b

    pf = PackedFunc(add)
    assert pf(1, 2) == 3 and pf.name == "add"
    assert repr(pf) == f"<PackedFunc 'add' -> {__name__}.test_bad_names_and_packed_func.<locals>.add>"
    assert PackedFunc(add, "my.add").name == "my.add"
