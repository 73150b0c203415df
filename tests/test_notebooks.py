"""Every notebook in notebooks/ runs top to bottom without an error, is committed without
outputs, and its self-checking exercises really check: unsolved they print ✗, and with the
solutions kept in their cell metadata they print ✓. The CPU-dependent ones also run as if on
an AVX2 host. Rendered statically, every widget output shows a picture, and the exported page
loads nothing from the network."""

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
WITH_EXERCISES = [p for p in NOTEBOOKS
                  if any("exercise" in c.metadata.get("tags", [])
                         for c in nbformat.read(p, as_version=4).cells)]


def _tagged(nb, tag):
    return [c for c in nb.cells if tag in c.metadata.get("tags", [])]


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream")


_EXECUTED = {}  # path -> the notebook as executed (each notebook runs once per process)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _executed(path):
    if path not in _EXECUTED:
        _EXECUTED[path] = _execute(path, nbformat.read(path, as_version=4))
    return _EXECUTED[path]


def _execute(path, nb):
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for cell in nb.cells
              for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    return nb


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    nb = _executed(path)
    for check in _tagged(nb, "check"):  # the placeholders are wrong answers: caught, not fatal
        assert "✗" in _text(check) and "✓" not in _text(check), check.source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_widget_output_has_a_static_picture(path):
    # nbconvert, GitHub and a mailed HTML file cannot run the widget: they show text/html.
    for cell in _executed(path).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                picture = data.get("text/html", "")
                assert re.search(r"<svg|<table|<pre", picture), (
                    f"a widget output without a static picture: {cell.source[:120]!r}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_exported_notebook_loads_nothing_from_the_network(path):
    pytest.importorskip("nbconvert")
    from irlab.widgets.notebook_export import export_notebook

    page = export_notebook(_executed(path))
    # what a browser would fetch (scripts, stylesheets, fonts, images), not links to click
    remote = re.findall(r"""<(?:script|link|img|iframe|source|embed)\b[^>]*\b(?:src|href)\s*=\s*"""
                        r"""["']?(?:https?:)?//[^"'\s>]+"""
                        r"""|url\(\s*["']?(?:https?:)?//[^)]+\)|@import\s+["']https?:[^"']+""",
                        page)
    assert not remote, remote[:5]
    # nbconvert's widget loader builds its <script> in JavaScript, from a CDN address
    cdn = re.findall(r"https?://[^\s\"'<>]*(?:cdn|unpkg|jsdelivr|googleapis)[^\s\"'<>]*", page)
    assert not cdn, cdn[:5]
    pictures = [o["data"]["text/html"] for cell in _executed(path).cells
                for o in cell.get("outputs", []) if WIDGET_VIEW in o.get("data", {})
                and "text/html" in o["data"]]
    # (nbconvert re-serializes the HTML: count the pictures rather than compare their text)
    for tag in ("<svg", "<table", "<pre"):
        assert page.count(tag) >= sum(p.count(tag) for p in pictures), f"{tag} missing"


# The notebooks whose text depends on the CPU (vector width, layouts, tiles) run once more, in
# a kernel told that the host is an AVX2 Haswell: their computed claims and asserts must hold on
# either ISA, whichever this machine has (Haswell code runs on any AVX2 or AVX-512 CPU).
AS_AVX2_HOST = """
import irlab.target
import irlab.target.target as _target
from irlab.target.cpu_info import named_cpu_info as _named
_triple = _target.host_cpu()[2]
_haswell = ("haswell", tuple("+" + f for f in sorted(_named("haswell").features)), _triple)
_target.host_cpu = irlab.target.host_cpu = lambda: _haswell
assert _target.Target("llvm").vector_bits == 256
"""
CPU_DEPENDENT = [p for p in NOTEBOOKS if p.name in ("05_codegen.ipynb", "06_end_to_end.ipynb")]


@pytest.mark.parametrize("path", CPU_DEPENDENT, ids=[p.name for p in CPU_DEPENDENT])
def test_cpu_dependent_claims_hold_on_an_avx2_host(path):
    from irlab.target import Target

    if not Target("llvm").has_feature("avx2"):
        pytest.skip("this CPU cannot run AVX2 code")
    nb = nbformat.read(path, as_version=4)
    for cell in _tagged(nb, "exercise"):
        cell.source = cell.metadata["irlab"]["solution"]
    nb.cells.insert(0, nbformat.v4.new_code_cell(AS_AVX2_HOST))
    _execute(path, nb)
    for check in _tagged(nb, "check"):
        assert "✓" in _text(check) and "✗" not in _text(check), _text(check)


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=[p.name for p in WITH_EXERCISES])
def test_exercise_solutions_pass(path):
    nb = nbformat.read(path, as_version=4)
    exercises = _tagged(nb, "exercise")
    assert len(exercises) == len(_tagged(nb, "check"))
    for cell in exercises:
        cell.source = cell.metadata["irlab"]["solution"]
    _execute(path, nb)
    for check in _tagged(nb, "check"):
        assert "✓" in _text(check) and "✗" not in _text(check), _text(check)
        if "display(" in check.source:  # a solved exercise shows its picture
            assert any(o.get("output_type") == "display_data" for o in check.outputs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    # Outputs (widget states, memory addresses) make noisy diffs and go stale.
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, cell.source[:80]


def test_there_are_notebooks():
    names = {p.name for p in NOTEBOOKS}
    assert {"00_map.ipynb", "01_relay_ir.ipynb", "02_passes.ipynb", "07_patterns.ipynb",
            "08_auto_scheduling.ipynb", "09_byoc_and_custom_codegen.ipynb",
            "explorer.ipynb"} <= names
