"""Relax graphs: bindings as nodes, dataflow blocks as regions, call_tir edges from the
PrimFuncs of the same module (their TIR inside), symbolic struct info in labels, ids kept
across the Relax pipeline, escaping."""

import html

import pytest

from irlab import relax, viz
from irlab.script import ir as I
from irlab.script import relax as R
from irlab.script import tir as T
from irlab.viz.graph_diff import graph_diff
from irlab.viz.pass_trace import PassTrace
from irlab.viz.relax_graph import TIR_INLINE_LIMIT, build_relax_graph


@I.ir_module
class Seed:
    """Seed 001's MyIRModule in today's TVMScript."""

    @T.prim_func
    def tir_exp_func(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Y = T.match_buffer(y, (n,), "float32")
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = T.exp(X[vi])

    @R.function(pure=False)
    def relax_func(x: R.Tensor(("n", "k"), "float32"), w: R.Tensor(dtype="float32", ndim=2)):
        n = T.int64()
        k = T.int64()
        m = T.int64()
        cls = Seed
        with R.dataflow():
            lv0 = R.match_cast(w, R.Tensor((k, m), "float32"))
            lv1: R.Tensor((n, m), "float32") = R.matmul(x, lv0)
            lv2: R.Tensor((n * m,), "float32") = R.flatten(lv1)
            gv0 = R.call_tir(cls.tir_exp_func, (lv2,), out_sinfo=R.Tensor((n * m,), "float32"))
            R.output(gv0)
        R.call_packed("custom_inplace_update", gv0, sinfo_args=R.Tuple())
        return gv0


def _by_name(graph):
    return {d["name"] or d["title"]: n for n, d in graph.nodes(data=True)}


def test_bindings_regions_and_symbolic_types():
    g = build_relax_graph(Seed)
    ids = _by_name(g)
    nodes = g.nodes
    assert nodes[ids["x"]]["kind"] == "input" and nodes[ids["x"]]["type"] == "(n, k) float32"
    assert nodes[ids["w"]]["type"] == "ndim=2 float32"
    assert nodes[ids["lv0"]]["title"] == "match_cast"
    assert nodes[ids["lv0"]]["type"] == "(k, m) float32"
    assert nodes[ids["lv1"]]["title"] == "matmul"
    assert nodes[ids["lv2"]]["type"] == "(n * m,) float32"
    assert nodes[ids["lv2"]]["attrs"]["struct_info"] == 'R.Tensor((n * m,), dtype="float32")'
    clusters = g.graph["clusters"]
    region = nodes[ids["lv1"]]["cluster"]
    assert clusters[region]["kind"] == "dataflow"
    inside = {n for n, d in g.nodes(data=True) if d["cluster"] == region}
    assert inside == {ids[v] for v in ("lv0", "lv1", "lv2", "gv0")}
    packed = next(n for n, d in g.nodes(data=True) if d["title"].startswith("call_packed"))
    assert g.nodes[packed]["cluster"] is None  # the side effect is outside the region
    assert (ids["gv0"], packed) in g.edges
    assert {(ids["x"], ids["lv1"]), (ids["w"], ids["lv0"]), (ids["lv0"], ids["lv1"]),
            (ids["lv1"], ids["lv2"]), (ids["lv2"], ids["gv0"])} <= set(g.edges)
    assert g.graph["outputs"] == {"relax_func": ids["gv0"]}
    text = Seed.script().splitlines()
    assert text[nodes[ids["lv1"]]["ir_line"]].strip().startswith("lv1: R.Tensor((n, m)")


def test_call_tir_edge_from_its_prim_func_with_the_tir_inside():
    g = build_relax_graph(Seed)
    ids = _by_name(g)
    call = g.nodes[ids["gv0"]]
    assert call["title"] == "call_tir tir_exp_func" and call["op"] == "relax.call_tir"
    func = next(n for n, d in g.nodes(data=True) if d["kind"] == "prim_func")
    assert (func, ids["gv0"]) in g.edges
    cluster = g.nodes[func]["cluster"]
    assert g.graph["clusters"][cluster]["kind"] == "prim_func"
    # the TIR graph sits in the PrimFunc's cluster: buffers X, Y and block Y under a loop
    members = viz_members(g, cluster)
    titles = {g.nodes[n]["title"] for n in members}
    assert {"T.prim_func tir_exp_func", "X", "Y", "block Y"} <= titles
    block = next(n for n in members if g.nodes[n]["title"] == "block Y")
    loop = g.graph["clusters"][g.nodes[block]["cluster"]]
    assert loop["kind"] == "loop" and loop["parent"] == cluster
    # without the TIR: one node per PrimFunc
    bare = build_relax_graph(Seed, draw_tir=False)
    assert {d["title"] for _, d in bare.nodes(data=True)} >= {"T.prim_func tir_exp_func"}
    assert not any(d["title"] == "block Y" for _, d in bare.nodes(data=True))


def viz_members(graph, cluster):
    from irlab.widgets.graph_ops import cluster_tree

    return cluster_tree(graph)[cluster]


def test_graph_entry_point_and_dot_render_relax():
    g = viz.build_relay_graph(Seed)  # the viewers' entry point dispatches to Relax
    assert any(d["kind"] == "prim_func" for _, d in g.nodes(data=True))
    dot = viz.to_dot(g)
    assert "call_tir tir_exp_func" in dot and "(n * m,) float32" in dot


def test_text_is_escaped():
    bb = relax.BlockBuilder()
    x = relax.Var('x"<b>', R.Tensor((2,), "float32"))
    with bb.function("main", [x], pure=False):
        out = bb.emit(relax.op.call_packed('evil"</text><script>', x,
                                        sinfo_args=R.Tensor((2,), "float32")))
        bb.emit_func_output(out)
    g = build_relax_graph(bb.get())
    dot = viz.to_dot(g)
    assert 'evil\\"</text>' in dot and 'x\\"<b>' in dot
    if viz.layout_engine():
        svg = viz.render_svg(g)
        assert "<script>" not in svg and html.escape("</text><script>", quote=False) in svg


def test_ids_follow_bindings_through_the_pipeline():
    trace = PassTrace(Seed)
    assert trace.error is None and trace.is_relax
    names = [s.name for s in trace.steps]
    assert "LegalizeOps" in names and "FuseTIR" in names and "VMShapeLower" in names
    first = _by_name(trace.graph(0))
    legalize = names.index("LegalizeOps")
    after = trace.graph(legalize)
    # lv1 keeps its id: matmul became a call_tir of a new PrimFunc (changed, not new)
    assert after.nodes[first["lv1"]]["title"].startswith("call_tir matmul")
    diff = graph_diff(trace.before_graph(legalize), after)
    assert diff[first["lv1"]] == "changed"
    assert legalize in trace.provenance(first["lv1"])
    prim_funcs = [d["title"] for _, d in after.nodes(data=True) if d["kind"] == "prim_func"]
    assert len(prim_funcs) >= 3  # matmul, reshape and the seed's exp
    final = trace.graph(len(trace) - 1)
    assert not any(info["kind"] == "dataflow" for info in final.graph["clusters"].values())


@pytest.mark.parametrize("count", [TIR_INLINE_LIMIT + 1])
def test_many_prim_funcs_are_drawn_without_their_tir(count):
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor(("n", 4), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for i in range(count):  # different constants: different PrimFuncs
                value = bb.emit_te(_add, value, float(i))
            out = bb.emit_output(value)
        bb.emit_func_output(out)
    g = build_relax_graph(bb.get())
    assert sum(d["kind"] == "prim_func" for _, d in g.nodes(data=True)) == count
    assert not any(d["kind"] == "buffer" or d["title"].startswith("block")
                   for _, d in g.nodes(data=True))


def _add(a, value):
    from irlab import topi

    return topi.add(a, value)


@I.ir_module
class Square:
    @R.function
    def main(x: R.Tensor(("n", 3), "float32")):
        with R.dataflow():
            out = R.multiply(x, x)
            R.output(out)
        return out


@I.ir_module
class Cube:  # what a wrong rewrite of Square might produce
    @R.function
    def main(x: R.Tensor(("n", 3), "float32")):
        with R.dataflow():
            lv = R.multiply(x, x)
            out = R.multiply(lv, x)
            R.output(out)
        return out


def test_relax_numerics_find_the_wrong_pass():
    from irlab import transform

    @transform.module_pass(opt_level=0, name="WrongRewrite")
    def wrong(mod, ctx):
        return Cube

    trace = PassTrace(Square, [relax.transform.LegalizeOps(), wrong,
                               relax.transform.LegalizeOps()])
    bad = trace.check_numerics()
    assert bad is not None and bad.name == "WrongRewrite"
    assert trace.steps[1].abs_error == 0.0 and trace.steps[2].abs_error > 0
