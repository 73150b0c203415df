"""The pass stepper at the TIR level: lowering's passes listed by name, changes marked, a
TVMScript diff and a graph of buffers/blocks/stores for each step."""

from irlab import te
from irlab.tir.transform.pipeline import lowering_passes
from irlab.widgets import PassStepper


def _matmul_relu():
    A = te.placeholder((16, 8), name="A")
    B = te.placeholder((8, 12), name="B")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((16, 12), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((16, 12), lambda i, j: te.max(C[i, j], 0.0), name="D")
    return te.create_prim_func([A, B, D])


def test_stepper_over_the_lowering_passes():
    st = PassStepper(_matmul_relu(), passes=lowering_passes())
    assert st.error == ""
    rows = {r["name"]: r for r in st.steps}
    assert [r["name"] for r in st.steps][:8] == [
        "input", "tir.LowerInitBlock", "tir.PlanAndUpdateBufferAllocationLocation",
        "tir.ConvertBlocksToOpaque",
        "tir.CompactBufferAllocation", "tir.Simplify", "tir.LowerOpaqueBlock",
        "tir.FlattenBuffer"]
    assert rows["tir.FlattenBuffer"]["changed"] and rows["tir.LowerOpaqueBlock"]["changed"]
    assert not rows["tir.CompactBufferAllocation"]["changed"]
    assert rows["input"]["nodes"] > 0 and rows["input"]["ops"] > 0
    # The first step that changed the program is shown first, graph included.
    assert st.current["title"] == "tir.LowerInitBlock"
    assert any(n["title"] == "block C" for n in st.current["graph"]["nodes"])

    st.step = rows["tir.FlattenBuffer"]["i"]
    cur = st.current
    assert "T.prim_func" in cur["text_b"] and "T.Buffer((128,)" in cur["text_b"]
    assert "T.Buffer((128,)" not in cur["text_a"]
    assert any(r[0] != "e" for r in cur["rows"]) and not cur["same"]
    nodes = {n["title"]: n for n in cur["graph"]["nodes"]}
    assert {"A", "B", "C", "D", "store C", "store D"} <= set(nodes)
    assert nodes["store D"]["state"] == "changed" and nodes["store D"]["kind"] == "call"
    assert any(c["label"] == "for k in 0..8" for c in cur["graph"]["clusters"])
    assert cur["graph"]["edges"]

    st.step = rows["tir.CompactBufferAllocation"]["i"]
    assert st.current["same"]
