"""PassTrace: every pass run recorded with nesting; text and graph diffs between any steps;
numerics per step pointing at the first step that changes results; provenance of nodes."""

import irlab
from irlab import relay
from irlab.relay.testing import MODELS
from irlab.relay.transform import InferType, function_pass
from irlab.viz.pass_trace import PassTrace


def _rewrite(name, src, make):
    @function_pass(opt_level=0, name=name)
    def rewrite(func, mod, ctx):
        class Mutator(relay.ExprMutator):
            def visit_call(self, call):
                new = super().visit_call(call)
                return make(new.args[0]) if new.op.name == src else new
        return Mutator().visit(func)
    return rewrite


def test_steps_nesting_and_changes():
    mod, params = MODELS["simplenet"]()
    seq = irlab.transform.Sequential([InferType(), _rewrite("Exp", "nn.relu",
                                                            lambda x: relay.nn.relu(x))],
                                     name="seq")
    trace = PassTrace(mod, [seq], params=params)
    assert [(s.name, s.depth, s.parent) for s in trace] == [
        ("input", 0, None), ("seq", 0, None), ("InferType", 1, 1), ("Exp", 1, 1),
        ("InferType", 2, 3)]
    assert trace.error is None and trace.output is trace[-1].module


def test_numerics_points_at_first_bad_step_and_provenance():
    mod, params = MODELS["simplenet"]()
    good = _rewrite("Same", "nn.relu", lambda x: relay.maximum(x, relay.const(0.0)))
    bad = _rewrite("Wrong", "maximum", lambda x: relay.sigmoid(x))
    trace = PassTrace(mod, [good, bad], params=params)
    first = trace.check_numerics()
    assert first is not None and first.name == "Wrong"
    same = next(s for s in trace if s.name == "Same")
    assert same.changed and same.error < 1e-6
    assert first.error > 1e-2
    g = trace.graph(len(trace) - 1)
    sig = next(i for i, d in g.nodes(data=True) if d["title"] == "sigmoid")
    assert [trace[i].name for i in trace.provenance(sig)] == ["Wrong"]


def test_diff_between_any_two_steps_and_failure_kept():
    mod, params = MODELS["mlp"]()

    @irlab.transform.module_pass(opt_level=0, name="Boom")
    def boom(mod, ctx):
        raise RuntimeError("broken pass")

    trace = PassTrace(mod, [_rewrite("Soft", "nn.softmax", relay.nn.log_softmax), boom])
    assert trace.error is not None and "broken pass" in str(trace.error)
    names = [s.name for s in trace]
    assert names[:2] == ["input", "Soft"]
    d = trace.diff(0, 2)
    assert any(row.tag != "equal" for row in d["text"])
    assert "changed" in d["graph"].values() or "added" in d["graph"].values()


def test_target_in_scope_for_alter_op_layout():
    """With relay.build's target in scope, the recorded pipeline is relay.build's: the CPU
    AlterOpLayout hook makes the convs NCHWc ones with packed weights, FoldConstant folds the
    weights' transforms (the data's stay: the pooled vector goes back to NCHW)."""
    mod, params = MODELS["resnet18"]()

    def texts(trace):
        steps = {s.name: s.index for s in trace}  # the last run of each pass
        alter = [s.index for s in trace if s.name == "AlterOpLayout"][0]
        return trace.text(alter), trace.text(steps["FoldConstant"])

    after_alter, after_fold = texts(PassTrace(mod, params=params, target="llvm"))
    assert 'kernel_layout="OIHW' in after_alter and 'src_layout="OIHW"' in after_alter
    assert "nn.contrib_conv2d_NCHWc" in after_alter
    assert 'kernel_layout="OIHW' in after_fold and 'src_layout="OIHW"' not in after_fold
    after_alter, _ = texts(PassTrace(mod, params=params))  # no target: no CPU hook
    assert 'kernel_layout="OIHW' not in after_alter


def test_lazy_trace_runs_when_a_step_is_asked_for():
    mod, params = MODELS["simplenet"]()
    eager = PassTrace(mod, params=params)
    lazy = PassTrace(mod, params=params, lazy=True)
    # the input program is there at once, with the ids the run gives its nodes
    graph = lazy.graph(0)
    assert not lazy.has_run and lazy.text(0) == eager.text(0)
    assert sorted(graph.nodes) == sorted(eager.graph(0).nodes)
    assert len(lazy.steps) == len(eager.steps) and lazy.has_run
    assert lazy.graph(0) is graph and lazy.output is not None and lazy.error is None
    assert [sorted(lazy.graph(i).nodes) for i in range(len(lazy.steps))] == \
        [sorted(eager.graph(i).nodes) for i in range(len(eager.steps))]


def test_progress_names_each_pass_as_it_starts():
    mod, params = MODELS["simplenet"]()
    trace = PassTrace(mod, params=params, lazy=True)
    started = []
    trace.progress = started.append
    steps = trace.steps
    # every recorded step (nested ones too) was announced before it ran, in order
    assert started == [s.name for s in steps[1:]]
