"""A tutorial notebook in JupyterLab itself (not Voila), in headless Chromium: JupyterLab serves
``notebooks/01_relay_ir.ipynb`` on 127.0.0.1, the test runs all its cells from JupyterLab's own
command and waits until the GraphView widget is drawn in the output (anywidget's and
ipywidgets' lab extensions, the widget's ES module from the kernel), then clicks a node and sees
the inspector filled. Screenshot: ``tests/browser/artifacts/test_tutorial_widget_renders_in_
jupyterlab.png``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from voila_support import ARTIFACTS, free_port

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "notebooks" / "01_relay_ir.ipynb"
RELAX = REPO / "notebooks" / "10_relax.ipynb"  # issue 16: the Relax chapter in JupyterLab
START_TIMEOUT = 90.0
WIDGET = ".jp-OutputArea [data-testid=graph-view] [data-testid=graph-node]"


def _wait_until_up(url, proc, log):
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail("JupyterLab did not start:\n" + log.read_text()[-3000:], pytrace=False)


@pytest.fixture(scope="module")
def lab_url(chromium_executable, tmp_path_factory):
    """A JupyterLab server on a copy of the tutorial notebook (no token, 127.0.0.1 only)."""
    pytest.importorskip("jupyterlab", reason="JupyterLab (irlab's [test] extra) is missing")
    root = tmp_path_factory.mktemp("lab")
    for notebook in (TUTORIAL, RELAX):
        shutil.copy(notebook, root / notebook.name)
    home = tmp_path_factory.mktemp("lab-home")  # settings and workspaces of this run only
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / "jupyterlab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={port}", "--IdentityProvider.token=", "--ServerApp.password=",
             "--ServerApp.allow_root=True", f"--ServerApp.root_dir={root}",
             f"--LabApp.workspaces_dir={home / 'workspaces'}",
             "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)  # its own process group: its kernels stop with it
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _run_all(page, lab_url, notebook, workspace=""):
    """Open ``notebook`` in JupyterLab (in workspace ``workspace``: a fresh one holds only
    this notebook) and run all its cells with JupyterLab's command."""
    where = f"workspaces/{workspace}/" if workspace else ""
    page.goto(f"{lab_url}/lab/{where}tree/{notebook.name}", wait_until="domcontentloaded")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    # this notebook is the current one and its kernel is up before the cells are run
    page.wait_for_function("(name) => { const w = window.jupyterapp && "
                           "window.jupyterapp.shell.currentWidget; return w && w.context && "
                           "w.context.path.endsWith(name) && w.sessionContext.session && "
                           "w.sessionContext.session.kernel; }", arg=notebook.name,
                           timeout=60_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def test_tutorial_widget_renders_in_jupyterlab(page, lab_url):
    _run_all(page, lab_url, TUTORIAL)
    nodes = page.locator(WIDGET)
    nodes.first.wait_for(state="visible", timeout=120_000)
    view = page.locator(".jp-OutputArea [data-testid=graph-view]").first
    assert view.locator("[data-testid=graph-node]").count() >= 3
    box = nodes.first.bounding_box()
    assert box and box["width"] > 10 and box["height"] > 5  # laid out and visible
    conv = view.locator("[data-testid=graph-node]").filter(
        has=page.locator("tspan.irlab-label-title", has_text="nn.conv2d")).first
    conv.scroll_into_view_if_needed()
    conv.click()
    view.get_by_test_id("inspector").filter(has_text="nn.conv2d").wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_tutorial_widget_in_jupyterlab.png"))
    assert page.log.page_errors == []


def test_relax_notebook_in_jupyterlab(page, lab_url):
    """Notebook 10 runs in JupyterLab: the seed module's graph (a call_tir fed by its PrimFunc,
    drawn with its TIR) answers a click, and the explorer of the MLP renders its tabs."""
    _run_all(page, lab_url, RELAX, workspace="relax")
    # the notebook in view (the tutorial may be open in a hidden tab of the same workspace)
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    # JupyterLab skips drawing cells out of view: scroll the first graph into view first
    view = notebook.locator(".jp-OutputArea [data-testid=graph-view]").first
    view.locator("[data-testid=graph-node]").first.wait_for(state="attached", timeout=120_000)
    view.scroll_into_view_if_needed(timeout=60_000)
    call = view.locator("[data-testid=graph-node]").filter(
        has=page.locator("tspan.irlab-label-title", has_text="call_tir tir_exp_func")).first
    call.wait_for(state="visible", timeout=60_000)
    assert "(n * m,) float32" in call.text_content()
    assert view.locator("[data-testid=graph-cluster]").count() >= 3  # dataflow, PrimFunc, loop
    call.scroll_into_view_if_needed()
    call.click()
    view.get_by_test_id("inspector").filter(has_text="relax.call_tir").wait_for()
    # the explorer (section 4) is drawn further down, with its four tabs
    explorer = notebook.locator(".jp-OutputArea .irlab-explorer").first
    explorer.wait_for(state="attached", timeout=120_000)
    explorer.scroll_into_view_if_needed(timeout=60_000)
    explorer.wait_for(state="visible", timeout=60_000)
    for name in ("Graph", "Passes", "Lowering", "Run"):  # the tab bar may draw after the box
        explorer.get_by_text(name, exact=True).first.wait_for(timeout=60_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_relax_notebook_in_jupyterlab.png"))
    assert page.log.page_errors == []
