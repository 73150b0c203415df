"""The pass infrastructure in scope for the foundation: passes as values, Sequential gating,
module/function passes (function and class forms), PassContext and instrument calls."""

import pytest

import irlab
from irlab import relay, transform
from irlab.relay.transform import InferType, function_pass


def _mod():
    x = relay.var("x", shape=(2,))
    return irlab.IRModule.from_expr(relay.Function([x], relay.exp(x)))


def test_module_pass_function_and_class_forms():
    @transform.module_pass(opt_level=1, name="AddNeg")
    def add_neg(mod, ctx):
        new = mod.copy()
        f = mod["main"]
        new["main"] = relay.Function(f.params, relay.negative(f.body))
        return new

    assert add_neg.info.name == "AddNeg" and add_neg.info.opt_level == 1
    out = add_neg(_mod())
    assert out["main"].body.op.name == "negative"

    @transform.module_pass(opt_level=2)
    class Identity:
        def __init__(self, tag):
            self.tag = tag

        def transform_module(self, mod, ctx):
            return mod

    p = Identity("t")
    assert p.info.name == "Identity" and p.tag == "t"
    m = _mod()
    assert p(m) is m
    with pytest.raises(ValueError):
        transform.module_pass(lambda m, c: m)


def test_function_pass_applies_to_each_function_and_ends_with_infer_type():
    @function_pass(opt_level=1)
    def exp_to_sqrt(func, mod, ctx):
        class Rewrite(relay.ExprMutator):
            def visit_call(self, call):
                new = super().visit_call(call)
                return relay.sqrt(new.args[0]) if new.op.name == "exp" else new
        return Rewrite().visit(func)

    out = exp_to_sqrt(_mod())
    assert out["main"].body.op.name == "sqrt"
    assert out["main"].body.checked_type == relay.TensorType((2,))


def test_sequential_gating_and_required():
    ran = []

    def recorder(name, level, required=None):
        @transform.module_pass(opt_level=level, name=name, required=required)
        def p(mod, ctx):
            ran.append(name)
            return mod
        return p

    seq = transform.Sequential([recorder("A", 1), recorder("B", 3), recorder("C", 2),
                                recorder("D", 1, required=["InferType"])])
    with transform.PassContext(opt_level=2, disabled_pass=["C"]):
        seq(_mod())
    assert ran == ["A", "D"]
    ran.clear()
    with transform.PassContext(opt_level=0, required_pass=["B"]):
        seq(_mod())
    assert ran == ["B"]
    ran.clear()
    recorder("B", 3)(_mod())  # a direct call always runs
    assert ran == ["B"]


def test_pass_context_config_and_current():
    assert transform.PassContext.current().opt_level == 2
    with transform.PassContext(opt_level=3, config={"relay.FuseOps.max_depth": 10}) as ctx:
        assert transform.PassContext.current() is ctx
    with pytest.raises(AttributeError, match="Invalid config option 'nope' candidates are"):
        transform.PassContext(config={"nope": 1})
    configs = transform.PassContext.list_configs()
    assert configs["relay.backend.use_auto_scheduler"]["type"] == "IntImm"


def test_instrument_call_order():
    events = []

    class Recorder:
        def enter_pass_ctx(self):
            events.append("enter")

        def exit_pass_ctx(self):
            events.append("exit")

        def should_run(self, mod, info):
            events.append(f"should_run {info.name}")
            return True

        def run_before_pass(self, mod, info):
            events.append(f"before {info.name}")

        def run_after_pass(self, mod, info):
            events.append(f"after {info.name}")

    with transform.PassContext(instruments=[Recorder()]):
        InferType()(_mod())
    assert events == ["enter", "should_run InferType", "before InferType", "after InferType",
                      "exit"]


def test_function_pass_class_form_and_print_ir(capsys):
    @function_pass(opt_level=1, name="NegateBody")
    class NegateBody:
        def __init__(self, times):
            self.times = times

        def transform_function(self, func, mod, ctx):
            body = func.body
            for _ in range(self.times):
                body = relay.negative(body)
            return relay.Function(func.params, body)

    p = NegateBody(2)
    assert p.info.name == "NegateBody" and p.times == 2
    out = p(_mod())
    assert relay.analysis.count_ops(out["main"]) == {"exp": 1, "negative": 2}
    same = transform.PrintIR("after negate")(out)
    assert same is out
    printed = capsys.readouterr().out
    assert printed.startswith("PrintIR(after negate):\n#[version = \"0.0.5\"]\ndef @main(")
