"""LoweringExplorer: kernels, the six panes, one loop linked across TIR / LLVM / assembly."""

import re
from pathlib import Path

import pytest

import irlab
import irlab.relay.testing
from irlab import relay
from irlab.widgets.lowering_data import (kernel_symbol, llvm_loop_blocks, tir_loops,
                                         _script_function)

pytest.importorskip("anywidget")

from irlab.widgets import LoweringExplorer  # noqa: E402

EVIL = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def mlp():
    mod, params = relay.testing.MODELS["mlp"]()
    return relay.build(mod, "llvm", params=params)


@pytest.fixture(scope="module")
def explorer(mlp):
    return LoweringExplorer(mlp)


def dense_name(factory):
    return next(low.name for low in factory.lowered
                if low.anchor and low.anchor[2].name == "nn.dense")


def test_kernels_listed_with_anchor_ops(mlp, explorer):
    names = [k["name"] for k in explorer.kernels]
    assert names == [low.name for low in mlp.lowered]
    ops = {k["op"] for k in explorer.kernels}
    assert {"nn.dense", "nn.softmax"} <= ops
    assert explorer.kernel == names[0]
    with pytest.raises(Exception):
        explorer.select("no_such_kernel")


def test_panes_non_empty_and_only_this_kernel(mlp, explorer):
    name = dense_name(mlp)
    explorer.select(name)
    texts = explorer.texts
    for pane in ("relay", "te", "scheduled", "lowered", "llvm", "asm", "trace"):
        assert texts[pane].strip(), pane
    assert "nn.dense" in texts["relay"]
    assert "T.block" in texts["te"] and "T.block" not in texts["lowered"]
    assert "sch." in texts["trace"]
    defined = re.findall(r'^define[^@]*@"?([\w.]+)', texts["llvm"], re.M)
    assert defined and all(kernel_symbol(name, d) for d in defined)
    assert name in defined and name + "_compute" in defined
    symbols = re.findall(r"^\s*\.type\s+(\S+?),@function", texts["asm"], re.M)
    assert symbols and all(kernel_symbol(name, sym) for sym in symbols)
    # a kernel whose name is a prefix of another one's keeps only its own functions
    assert not kernel_symbol("f_dense", "f_dense_relu") and kernel_symbol("f", "f_parallel_2")


def test_assembly_is_lazy(mlp):
    view = LoweringExplorer(mlp, kernel=dense_name(mlp))
    assert view.panes["asm"].get("pending") and not view.library.asm_ready()
    view.load_asm()
    assert view.library.asm_ready() and view.panes["asm"]["text"].strip()


def test_loop_highlighted_across_levels(mlp, explorer):
    explorer.select(dense_name(mlp))
    explorer.load_asm()
    scheduled = explorer.panes["scheduled"]["text"].split("\n")
    # a click on a `for` line selects that loop
    line = next(i for i, text in enumerate(scheduled) if re.match(r"\s*for ax2 in", text))
    var = explorer.loop_at("scheduled", line)
    assert var == "ax2"
    explorer.select_loop(var)
    marks = explorer.marks
    for pane in ("scheduled", "lowered", "llvm", "asm"):
        assert marks[pane]["head"], pane
    assert f"for {var} in" in scheduled[marks["scheduled"]["head"][0]]
    lowered = explorer.panes["lowered"]["text"].split("\n")
    assert f"for {var} in" in lowered[marks["lowered"]["head"][0]]
    llvm = explorer.panes["llvm"]["text"].split("\n")
    assert any(llvm[i].startswith(f"for.{var}") for i in marks["llvm"]["head"])
    assert all(f"for.{var}" in llvm[i] for i in marks["llvm"]["head"])
    asm = explorer.panes["asm"]["text"].split("\n")
    assert all(f"%for.{var}" in asm[i] for i in marks["asm"]["head"])
    # the same loop is selected back from its LLVM and assembly lines
    assert explorer.loop_at("llvm", marks["llvm"]["head"][0]) == var
    assert explorer.loop_at("asm", marks["asm"]["head"][0]) == var
    # an outer loop's body holds the inner loop's blocks
    loops = llvm_loop_blocks(explorer.panes["llvm"]["text"])
    assert loops[var] < loops["i0_i1_0_fused"]
    explorer.select_loop("")
    assert explorer.marks == {}


def test_loop_kept_across_kernels_and_optimized_ir(mlp):
    view = LoweringExplorer(mlp, kernel=dense_name(mlp))
    other = [low.name for low in mlp.lowered if low.name != view.kernel and
             "nn_relu" in low.name][0]
    shared = [v for v in view.loops if v in LoweringExplorer(mlp, kernel=other).loops]
    assert shared, "the two dense kernels share their schedule's loop names"
    view.select_loop(shared[0])
    view.select(other)  # the same schedule: the loop exists there too
    assert view.loop == shared[0] and view.marks["scheduled"]["head"]
    view.optimized = True  # optimized IR: the loop's blocks carry ".i" after inlining
    assert "define" in view.panes["llvm"]["text"]
    view.select(mlp.lowered[0].name)
    assert view.loop in view.loops or view.loop == ""


def test_tir_and_script_helpers():
    text = "for i, j in T.grid(2, 3):\n    a[i, j] = 0\nb = 1"
    rows = tir_loops(text)
    assert rows[0][0] == ["i", "j"] and rows[1][1] == ["i", "j"] and rows[2][1] == []
    module = ("@I.ir_module\nclass Module:\n    @T.prim_func\n    def f(a):\n        x = 1\n\n"
              "    @T.prim_func\n    def g(a):\n        y = 2\n")
    assert _script_function(module, "f") == "@T.prim_func\ndef f(a):\n    x = 1"
    assert _script_function(module, "g").endswith("y = 2")


def test_builds_a_module_and_escapes_names():
    x = relay.var(EVIL, shape=(4, 8))
    w = relay.var("w", shape=(16, 8))
    func = relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w)))
    view = LoweringExplorer(irlab.IRModule.from_expr(func))
    assert view.kernels and view.texts["relay"]
    view.set_times({view.kernel: 1e-3})
    assert view.kernels[0]["ms"] == pytest.approx(1.0)
    # a model string in every pane: escaped in the HTML fallback
    view.panes = {**view.panes, "relay": {**view.panes["relay"],
                                          "text": EVIL + "\n" + view.panes["relay"]["text"]}}
    page = view.to_html()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert str(view).startswith("LoweringExplorer")
    bundle = view._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "<img" not in data["text/html"]


def test_browser_module_never_assigns_html():
    static = Path(irlab.widgets.__file__).parent / "static"
    for name in ("lowering_explorer.js", "run_panel.js"):
        source = (static / name).read_text(encoding="utf-8")
        assert "innerHTML" not in source and "insertAdjacentHTML" not in source
        assert "http" not in source  # offline pages: no URL at all


def test_library_compiled_in_parts(monkeypatch):
    """A library compiled in parts (irlab.target.llvm_build) shows each kernel's LLVM IR and
    assembly as a one-part library does."""
    from irlab.target import llvm_build

    monkeypatch.setattr(llvm_build, "PART_INSTRUCTIONS", 1)
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "1")
    monkeypatch.setattr(irlab.relay.build_module, "_built", irlab.runtime.lru.LRUCache(4))
    monkeypatch.setattr(irlab.build_module, "_built", irlab.runtime.lru.LRUCache(4))
    mod, params = relay.testing.MODELS["mlp"]()
    factory = relay.build(mod, "llvm", params=params)
    assert factory.get_lib().num_parts == len(factory.lowered) + 1  # + the glue object
    explorer = LoweringExplorer(factory)
    name = dense_name(factory)
    explorer.select(name)
    texts = explorer.texts
    defined = re.findall(r'^define[^@]*@"?([\w.]+)', texts["llvm"], re.M)
    assert name in defined and all(kernel_symbol(name, d) for d in defined)
    symbols = re.findall(r"^\s*\.type\s+(\S+?),@function", texts["asm"], re.M)
    assert name in symbols
