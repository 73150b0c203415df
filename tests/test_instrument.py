"""The PassInstrument protocol, case by case as TVM's test_pass_instrument.py (reference §3.2),
and the built-in instruments (timing, printing, IRSnapshot, VerifyAfterEach)."""

import re

import pytest

import irlab as tvm
from irlab import relay
from irlab.errors import IrlabError
from irlab.instrument import (IRSnapshot, PassInstrument, PassPrintingInstrument,
                              PassTimingInstrument, PrintAfterAll, PrintBeforeAll,
                              VerificationError, VerifyAfterEach, pass_instrument)
from irlab.relay.transform import InferType, function_pass


def get_test_model():
    x, y, z = [relay.var(c, shape=(3, 4), dtype="float32") for c in "xyz"]
    e1 = x + y
    e2 = x - z
    e3 = e1 * (e1 / e2)
    return tvm.IRModule.from_expr(e3 + e2)


def _recorder_pass(name, events, opt_level=2):
    @tvm.transform.module_pass(opt_level=opt_level, name=name)
    def p(mod, ctx):
        events.append(f"transform pass")
        return mod
    return p


def test_pass_timing_instrument():
    pass_timing = PassTimingInstrument()
    tvm.transform.PassContext.current().override_instruments([pass_timing])
    mod = get_test_model()
    mod = InferType()(mod)
    mod = tvm.transform.Sequential([InferType()], name="MySeq")(mod)
    profiles = pass_timing.render()
    assert "InferType" in profiles and "MySeq" in profiles
    lines = profiles.splitlines()
    assert re.fullmatch(r"InferType: \d+us \[\d+us\] \(\d+\.\d\d%; \d+\.\d\d%\)", lines[0])
    assert lines[2].startswith("\tInferType: ")  # nested under MySeq, one tab deeper
    tvm.transform.PassContext.current().override_instruments(None)
    with pytest.warns(UserWarning):
        assert pass_timing.render() == ""


@pytest.mark.parametrize("style", ["decorator", "subclass"])
def test_custom_instrument(style):
    events = []

    class Base:
        def enter_pass_ctx(self):
            events.append("enter ctx")

        def exit_pass_ctx(self):
            events.append("exit ctx")

        def run_before_pass(self, mod, info):
            events.append("run before " + info.name)

        def run_after_pass(self, mod, info):
            events.append("run after " + info.name)

    if style == "decorator":
        instrument = pass_instrument(Base)()
    else:
        class Sub(PassInstrument, Base):
            def __init__(self):
                PassInstrument.__init__(self)
        instrument = Sub()
    assert isinstance(instrument, PassInstrument)
    with tvm.transform.PassContext(instruments=[instrument]):
        InferType()(get_test_model())
    assert events == ["enter ctx", "run before InferType", "run after InferType", "exit ctx"]


def test_disable_pass():
    seen = []

    @pass_instrument
    class CustomPI:
        def should_run(self, mod, info):
            return "InferType" in info.name

        def run_before_pass(self, mod, info):
            seen.append(info.name)

    mod = get_test_model()
    with tvm.transform.PassContext(instruments=[CustomPI()]):
        mod = _recorder_pass("SkipMe", [])(mod)
        mod = InferType()(mod)
    assert seen == ["InferType"]


def test_multiple_instrument():
    @pass_instrument
    class SkipPass:
        def __init__(self, skip_pass_name):
            self.skip_pass_name = skip_pass_name

        def should_run(self, mod, info):
            return self.skip_pass_name not in info.name

    seen = []

    @pass_instrument
    class Printer:
        def run_before_pass(self, mod, info):
            seen.append(info.name)

    with tvm.transform.PassContext(instruments=[SkipPass("A"), SkipPass("B"), Printer()]):
        mod = _recorder_pass("A", [])(get_test_model())
        mod = _recorder_pass("B", [])(mod)
        InferType()(mod)
    assert seen == ["InferType"]


def test_instrument_pass_counts():
    @pass_instrument
    class PassesCounter:
        def __init__(self):
            self.run_before_count = 0
            self.run_after_count = 0

        def __clear(self):
            self.run_before_count = 0
            self.run_after_count = 0

        def enter_pass_ctx(self):
            self.__clear()

        def exit_pass_ctx(self):
            self.__clear()

        def run_before_pass(self, mod, info):
            self.run_before_count += 1

        def run_after_pass(self, mod, info):
            self.run_after_count += 1

    counter = PassesCounter()
    with tvm.transform.PassContext(instruments=[counter]):
        seq = tvm.transform.Sequential([InferType(), InferType()], name="two")
        seq(get_test_model())
        assert counter.run_after_count != 0
        assert counter.run_after_count == counter.run_before_count == 3
    assert counter.run_before_count == counter.run_after_count == 0


def test_list_pass_configs():
    configs = tvm.transform.PassContext.list_configs()
    assert len(configs) > 0
    assert configs["relay.backend.use_auto_scheduler"]["type"] == "IntImm"


def _pi(events, idx, fail=None):
    """An instrument that records '%idx <event>' and raises in the event named ``fail``."""
    @pass_instrument
    class PI:
        def enter_pass_ctx(self):
            self._event("enter")

        def exit_pass_ctx(self):
            self._event("exit")

        def should_run(self, mod, info):
            self._event("should_run")
            return True

        def run_before_pass(self, mod, info):
            self._event("run_before")

        def run_after_pass(self, mod, info):
            self._event("run_after")

        def _event(self, name):
            events.append(f"%{idx} {name}")
            if name == fail:
                raise RuntimeError(f"Just a dummy error in {name}")
    return PI()


def test_enter_pass_ctx_exception():
    events = []
    pass_ctx = tvm.transform.PassContext(
        instruments=[_pi(events, 1), _pi(events, 2, fail="enter"), _pi(events, 3)])
    with pytest.raises(IrlabError, match="Just a dummy error in enter"):
        with pass_ctx:
            pass
    assert events == ["%1 enter", "%2 enter", "%1 exit"]
    cur = tvm.transform.PassContext.current()
    assert cur is not pass_ctx and not cur.instruments
    assert not pass_ctx.instruments


def test_enter_pass_ctx_exception_global():
    events = []
    cur = tvm.transform.PassContext.current()
    with pytest.raises(IrlabError, match="Just a dummy error"):
        cur.override_instruments([_pi(events, 1, fail="enter")])
    assert not cur.instruments


def test_exit_pass_ctx_exception():
    events = []
    pass_ctx = tvm.transform.PassContext(
        instruments=[_pi(events, 1), _pi(events, 2, fail="exit"), _pi(events, 3)])
    with pytest.raises(IrlabError, match="Just a dummy error in exit"):
        with pass_ctx:
            events.clear()
    assert events == ["%1 exit", "%2 exit"]
    assert not pass_ctx.instruments
    assert not tvm.transform.PassContext.current().instruments


def test_exit_pass_ctx_exception_global():
    events = []
    cur = tvm.transform.PassContext.current()
    cur.override_instruments([_pi(events, 1, fail="exit")])
    with pytest.raises(IrlabError, match="Just a dummy error"):
        cur.override_instruments(None)
    assert not cur.instruments


def test_pass_exception():
    events = []

    @tvm.transform.module_pass(opt_level=2)
    def transform(mod, ctx):
        events.append("transform pass")
        raise RuntimeError("Just a dummy error")

    with pytest.raises(IrlabError, match="Just a dummy error"):
        with tvm.transform.PassContext(instruments=[_pi(events, 1)]):
            transform(get_test_model())
    assert events == ["%1 enter", "%1 should_run", "%1 run_before", "transform pass",
                      "%1 exit"]


def _run_with(events, instruments):
    transform = _recorder_pass("transform", events)
    with tvm.transform.PassContext(instruments=instruments):
        transform(get_test_model())


def test_should_run_exception():
    events = []
    with pytest.raises(IrlabError, match="Just a dummy error in should_run"):
        _run_with(events, [_pi(events, 1, fail="should_run"), _pi(events, 2)])
    assert events == ["%1 enter", "%2 enter", "%1 should_run", "%1 exit", "%2 exit"]


def test_run_before_exception():
    events = []
    with pytest.raises(IrlabError, match="Just a dummy error in run_before"):
        _run_with(events, [_pi(events, 1, fail="run_before"), _pi(events, 2)])
    assert events == ["%1 enter", "%2 enter", "%1 should_run", "%2 should_run",
                      "%1 run_before", "%1 exit", "%2 exit"]


def test_run_after_exception():
    events = []
    with pytest.raises(IrlabError, match="Just a dummy error in run_after"):
        _run_with(events, [_pi(events, 1, fail="run_after"), _pi(events, 2)])
    assert events == ["%1 enter", "%2 enter", "%1 should_run", "%2 should_run",
                      "%1 run_before", "%2 run_before", "transform pass", "%1 run_after",
                      "%1 exit", "%2 exit"]


def test_instrument_call_sequence():
    events = []
    t1 = _recorder_pass("t1", events)
    t2 = _recorder_pass("t2", events)
    with tvm.transform.PassContext(instruments=[_pi(events, 1), _pi(events, 2)]):
        mod = t1(get_test_model())
        t2(mod)
    per_pass = ["%1 should_run", "%2 should_run", "%1 run_before", "%2 run_before",
                "transform pass", "%1 run_after", "%2 run_after"]
    assert events == ["%1 enter", "%2 enter"] + per_pass * 2 + ["%1 exit", "%2 exit"]


def test_required_pass_bypasses_should_run():
    ran = []

    @pass_instrument
    class Never:
        def should_run(self, mod, info):
            return False

    with tvm.transform.PassContext(instruments=[Never()], required_pass=["Needed"]):
        _recorder_pass("Needed", ran)(get_test_model())
        _recorder_pass("Other", ran)(get_test_model())
    assert ran == ["transform pass"]


# -- printing instruments -----------------------------------------------------------------------
def test_print_before_and_after_all(capsys):
    with tvm.transform.PassContext(instruments=[PrintBeforeAll(), PrintAfterAll()]):
        InferType()(get_test_model())
    out = capsys.readouterr().out
    assert out.startswith("Before Running Pass: The meta data of the pass - pass name: "
                          "InferType, opt_level: 0, required passes: []\ndef @main(")
    assert "After Running Pass: The meta data of the pass - pass name: InferType" in out
    assert "/* ty=Tensor[(3, 4), float32] */" in out  # the typed module after the pass


def test_pass_printing_instrument(capsys):
    seq = tvm.transform.Sequential([InferType(), _recorder_pass("Other", [])])
    with tvm.transform.PassContext(instruments=[PassPrintingInstrument(["Other"], ["InferType"])]):
        seq(get_test_model())
    out = capsys.readouterr().out
    assert out.count("Print IR before: Other\ndef @main(") == 1
    assert out.count("Print IR after: InferType\ndef @main(") == 1


# -- IRSnapshot and VerifyAfterEach ----------------------------------------------------------------
def test_ir_snapshot_records_nesting_changes_and_counts():
    @function_pass(opt_level=1, name="ExpToSqrt")
    def exp_to_sqrt(func, mod, ctx):
        class Rewrite(relay.ExprMutator):
            def visit_call(self, call):
                new = super().visit_call(call)
                return relay.sqrt(new.args[0]) if new.op.name == "subtract" else new
        return Rewrite().visit(func)

    snapshot = IRSnapshot()
    seq = tvm.transform.Sequential([InferType(), exp_to_sqrt, _recorder_pass("Nothing", [])],
                                   name="pipeline")
    with tvm.transform.PassContext(instruments=[snapshot]):
        out = seq(get_test_model())
    names = [(r.name, r.depth) for r in snapshot]
    # ExpToSqrt is a function pass: it ends with a nested InferType, as in TVM
    assert names == [("pipeline", 0), ("InferType", 1), ("ExpToSqrt", 1), ("InferType", 2),
                     ("Nothing", 1)]
    pipeline, infer, rewrite, nested, nothing = snapshot.records
    assert snapshot.children_of(pipeline) == [infer, rewrite, nothing]
    assert rewrite.parent == pipeline.index and nested.parent == rewrite.index
    assert rewrite.changed and not nothing.changed and pipeline.changed
    assert rewrite.op_counts["sqrt"] == 1 and "subtract" not in rewrite.op_counts
    assert rewrite.before["main"].body.args[1].op.name == "subtract"
    assert rewrite.after is not None and pipeline.after is out
    assert all(r.seconds >= 0 for r in snapshot) and pipeline.seconds >= rewrite.seconds
    assert rewrite.opt_level == 1 and "ExpToSqrt" in snapshot.summary()


def test_verify_after_each_names_the_pass_and_node():
    x = relay.var("x", shape=(3, 4))

    @tvm.transform.module_pass(opt_level=0, name="BreakTypes")
    def break_types(mod, ctx):
        new = mod.copy()
        y = relay.var("y", shape=(5,))
        new["main"] = relay.Function([x, y], relay.add(x, y))
        return new

    with pytest.raises(VerificationError) as info:
        with tvm.transform.PassContext(instruments=[VerifyAfterEach()]):
            break_types(get_test_model())
    text = str(info.value)
    assert text.startswith("after pass BreakTypes:") and "add:" in text
    assert info.value.node is not None and info.value.node.op.name == "add"
    with tvm.transform.PassContext(instruments=[VerifyAfterEach()]):
        InferType()(get_test_model())  # a good pass passes
