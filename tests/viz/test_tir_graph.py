"""TIR graphs: buffers and blocks/stores as nodes, loops as nested clusters, ids kept across
the lowering passes, TIR counts, and the Relay entry point dispatching to TIR."""

import irlab
from irlab import te, viz
from irlab.instrument import module_counts
from irlab.tir import Schedule
from irlab.tir.transform.pipeline import lowering_passes
from irlab.transform import PassContext, Sequential
from irlab.viz.graph_diff import graph_diff
from irlab.viz.identity import NodeIds
from irlab.viz.tir_graph import build_tir_graph


def _matmul_relu():
    A = te.placeholder((16, 8), name="A")
    B = te.placeholder((8, 12), name="B")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((16, 12), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((16, 12), lambda i, j: te.max(C[i, j], 0.0), name="D")
    return te.create_prim_func([A, B, D])


def _by_title(g):
    return {d["title"]: n for n, d in g.nodes(data=True)}


def _lowered(func):
    with PassContext():
        return Sequential(lowering_passes(), name="tir.lower")(irlab.IRModule({"main": func}))


def test_blocks_buffers_edges_and_loop_clusters():
    g = build_tir_graph(_matmul_relu(), params=["B"])
    nodes = {d["title"]: d for _, d in g.nodes(data=True)}
    assert {t: d["kind"] for t, d in nodes.items()} == {
        "A": "input", "B": "param", "D": "input", "C": "buffer",
        "block C": "call", "block D": "call"}
    assert nodes["A"]["type"] == "float32[16, 8]" and nodes["block C"]["summary"] == "iters SSR"
    assert nodes["block C"]["attrs"]["reads"] == "A[v_i, v_k], B[v_k, v_j]"
    ids = _by_title(g)
    edges = set(g.edges)
    assert {(ids["A"], ids["block C"]), (ids["B"], ids["block C"]),
            (ids["block C"], ids["C"]), (ids["C"], ids["block D"]),
            (ids["block D"], ids["D"])} <= edges
    assert (ids["block D"], ids["C"]) not in edges
    clusters = g.graph["clusters"]
    chain, cid = [], nodes["block C"]["cluster"]
    while cid is not None:  # innermost loop first
        chain.append(clusters[cid]["label"])
        assert clusters[cid]["kind"] == "loop"
        cid = clusters[cid]["parent"]
    assert chain == ["for k in 0..8", "for j in 0..12", "for i in 0..16"]
    assert g.graph["outputs"] == {"main": ids["D"]}
    text = str(irlab.IRModule({"main": _matmul_relu()})).splitlines()
    assert 'T.block("C")' in text[nodes["block C"]["ir_line"] - 1]


def test_lowered_stores_keep_the_ids_of_their_blocks():
    func = _matmul_relu()
    ids = NodeIds()
    before = build_tir_graph(func, ids)
    after = build_tir_graph(_lowered(func), ids)
    b, a = _by_title(before), _by_title(after)
    # Buffers keep their ids; the blocks became stores (two for the reduction: init, update).
    assert all(b[t] == a[t] for t in ("A", "B", "C", "D"))
    stores = [n for n, d in after.nodes(data=True) if d["title"] == "store C"]
    assert len(stores) == 2 and b["block C"] in stores and a["store D"] == b["block D"]
    assert after.nodes[a["A"]]["attrs"]["views"] == "float32[128]"
    diff = graph_diff(before, after)
    assert diff[a["store D"]] == "changed" and "block C" not in _by_title(after)
    assert sorted(s for s in diff.values()) == ["added"] + ["changed"] * 6
    # The loop clusters survive lowering with their ids.
    assert set(before.graph["clusters"]) == set(after.graph["clusters"])


def test_parallel_loop_label_and_render():
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
    sch = Schedule(te.create_prim_func([A, B]))
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    mod = sch.mod
    g = build_tir_graph(mod)
    labels = [c["label"] for c in g.graph["clusters"].values()]
    assert labels == ["for i in 0..64 (parallel)"]
    svg = viz.render_svg(g)
    assert "<svg" in svg and "for i in 0..64 (parallel)" in svg


def test_relay_entry_point_and_counts_for_tir_modules():
    func = _matmul_relu()
    mod = irlab.IRModule({"main": func})
    g = viz.build_relay_graph(mod)
    assert "block C" in _by_title(g)
    nodes, ops = module_counts(mod)
    assert nodes > 20 and ops["loops"] == 5 and ops["stores"] == 3 and ops["blocks"] == 3
    nodes, ops = module_counts(_lowered(func))
    assert ops["blocks"] == 0 and ops["stores"] == 3 and ops["allocates"] == 1
