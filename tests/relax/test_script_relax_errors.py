"""TVMScript for Relax: bad scripts raise a ParseError naming the line and what is wrong."""

import pytest

from irlab.errors import ParseError
from irlab.script import from_source
from irlab.script import ir as I
from irlab.script import relax as R

HEAD = "@R.function\ndef f(x: R.Tensor((4,), \"float32\")):\n"

CASES = [
    # (body lines, line of the error, words in the message)
    ("    y = R.undefined_op(x)\n    return y\n", 3, "'undefined_op' is not defined in R"),
    ("    y = z\n    return y\n", 3, "undefined name 'z'"),
    ("    with R.dataflow():\n        lv = R.call_packed('f', x)\n        R.output(lv)\n"
     "    return lv\n", 4, "impure call cannot be in a dataflow block"),
    ("    y = R.call_packed('f', x, sinfo_args=R.Object)\n    return y\n", 3,
     "@R.function(pure=False)"),
    ("    with R.dataflow():\n        lv = x\n        gv = lv\n        R.output(gv)\n"
     "    return lv\n", 7, "lv is a dataflow variable of the block at line 3"),
    ("    with R.dataflow():\n        lv = x\n    return lv\n", 3, "ends with R.output"),
    ("    with R.dataflow():\n        lv = x\n        R.output(gv)\n    return x\n", 3,
     "gv is not bound in this dataflow block"),
    ("    y: R.Tensor((5,), \"float32\") = x\n    return y\n", 3, "use R.match_cast"),
    ("    y: R.Shape(ndim=1) = x\n    return y\n", 3, "cannot be a R.Shape"),
    ("    y = x\n", 2, "has no `return`"),
    ("    return x\n    y = x\n", 4, "statements after `return`"),
    ("    with open('f'):\n        pass\n    return x\n", 3, "`with R.dataflow():`"),
    ("    y = R.output(x)\n    return x\n", 3, "cannot be used inside an expression"),
    ("    for i in range(3):\n        pass\n    return x\n", 3, "unsupported statement For"),
    ("    y = R.call_tir(f, (x,), out_sinfo=5)\n    return y\n", 3,
     "expected a struct info"),
    ("    R.add(x, x)\n    return x\n", 3, "bind it to a variable (`_ = ...`)"),
    ("    if x:\n        y = x\n    return x\n", 3, "needs an `else`"),
    ("    if x:\n        y = x\n    else:\n        z = x\n    return x\n", 6,
     "same variable last"),
    ("    with R.dataflow():\n        if x:\n            y = x\n        else:\n"
     "            y = x\n        R.output(y)\n    return y\n", 4, "no `if` inside a dataflow"),
]


@pytest.mark.parametrize("body, line, words", CASES)
def test_error_names_line_and_cause(body, line, words):
    with pytest.raises(ParseError) as info:
        from_source(HEAD + body)
    message = str(info.value)
    assert f"<script>:{line}:" in message
    assert words in message
    assert "\n    " in message  # the offending source line is quoted


def test_missing_annotation_and_bad_annotation():
    with pytest.raises(ParseError, match=r":2:.*parameter x needs a struct info annotation"):
        from_source("@R.function\ndef f(x):\n    return x\n")
    with pytest.raises(ParseError, match=r":2:.*expected a struct info"):
        from_source("@R.function\ndef f(x: 3):\n    return x\n")


def test_unknown_module_function_names_the_module_functions():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Module
        y = R.call_tir(cls.nothere, (x,), out_sinfo=R.Tensor((4,), "float32"))
        return y
'''
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert "<script>:7:" in str(info.value)
    assert "module Module has no function 'nothere' (functions: main)" in str(info.value)


def test_decorator_errors_point_at_the_file():
    with pytest.raises(ParseError) as info:
        @I.ir_module
        class Bad:  # noqa: F841
            @R.function
            def main(x: R.Tensor((4,), "float32")):
                y = R.nothere(x)
                return y

    message = str(info.value)
    assert "test_script_relax_errors.py:" in message and "R.nothere" in message


def test_symbolic_var_redeclared_with_another_dtype():
    text = HEAD.replace("(4,)", '("n",)') + "    n = T.int32()\n    return x\n"
    with pytest.raises(ParseError, match=r":3:.*symbolic variable n is int64"):
        from_source(text)


def test_class_attribute_that_is_not_a_function():
    with pytest.raises(ParseError, match=r"<script>:4:.*may only hold functions"):
        from_source("@I.ir_module\nclass Module:\n    '''doc'''\n    x = 3\n")


@pytest.mark.parametrize("annotation, words", [
    ('R.Tensor((2, 3), "float32", ndim=3)', "ndim=3 disagrees with the 2 dims"),
    ('R.Tensor(dtype="float32", ndim=-2)', "ndim must be an int >= 0, or -1"),
    ('R.Tensor(dtype="float32", ndim="1")', "ndim must be an int"),
    ('R.Tensor(("m + 1", "m * 2"), "float32")', "symbolic variable m is not defined"),
])
def test_bad_struct_info_annotations(annotation, words):
    with pytest.raises(ParseError, match=r"<script>:2:") as info:
        from_source(f"@R.function\ndef f(x: {annotation}):\n    return x\n")
    assert words in str(info.value)


def test_signature_dims_may_compute_over_a_later_parameter_dim():
    f = from_source('@R.function\ndef f(x: R.Tensor(("m + 1",), "float32"), '
                    'y: R.Tensor(("m",), "float32")):\n    return x\n')
    (dim,) = f.params[0].struct_info.dims
    assert dim.a is f.params[1].struct_info.dims[0]


def test_private_function_with_a_global_symbol():
    text = ('@R.function(private=True)\ndef f(x: R.Tensor((), "int32")):\n'
            '    R.func_attr({"global_symbol": "f"})\n    return x\n')
    with pytest.raises(ParseError, match=r"<script>:2:.*private: it cannot have a global_symbol"):
        from_source(text)


def test_undefined_computed_dim_in_a_decorated_function():
    with pytest.raises(ParseError, match="symbolic variable m is not defined"):
        @R.function
        def f(x: R.Tensor(("m + 1", "m * 2"), "float32")):
            return x
