"""Helpers of the real-browser tests: where Chromium is, the small notebooks Voila serves, and how
a test opens one. (A module of its own: the name ``conftest`` is shared with tests/conftest.py.)"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
XSS_NAME = "<img src=x onerror=alert(1)>"

# Voila runs these on page load and shows their widget outputs. A variable is named like an
# HTML payload in both: every place that shows a name must show it as text.
_GRAPH = [
    "import ipywidgets as widgets\nimport irlab as tvm\nfrom irlab import relay\n"
    "from irlab.widgets import GraphView",
    f"x = relay.var({XSS_NAME!r}, shape=(1, 3, 8, 8))\n"
    "w = relay.var('weight', shape=(4, 3, 3, 3))\n"
    "conv = relay.nn.conv2d(x, w, padding=(1, 1), channels=4, kernel_size=(3, 3))\n"
    "func = relay.Function([x, w], relay.nn.relu(conv))\n"
    "view = GraphView(tvm.IRModule.from_expr(func), params=['weight'])",
    # Echo the Python side of a click, so the test sees it crossed the kernel.
    "echo = widgets.Label('python: nothing selected')\necho.add_class('py-echo')\n"
    "def on_inspector(change):\n"
    "    echo.value = f\"python: {view.selected} {view.inspector.get('op', '')}\"\n"
    "view.observe(on_inspector, names='inspector')\n"
    "widgets.VBox([view, echo])",
]
_STEPPER = [
    "from irlab import relay\nfrom irlab.relay.testing import simplenet\n"
    "from irlab.widgets import PassStepper",
    f"data = relay.var({XSS_NAME!r}, shape=(1, 3, 32, 32))\n"
    "act = simplenet.simplenet(data, 'graph', 32, strides=(2, 2))\n"
    "_, params = simplenet.get_workload(image_shape=(3, 32, 32))\n"
    "func = relay.Function(relay.analysis.free_vars(act), act)\n"
    "PassStepper(func, params=params)",
]
# dense + bias_add + relu (one kernel) then softmax (a second one), built with relay.build.
_SMALL_MLP = (
    "import numpy as np\nimport irlab as tvm\nfrom irlab import relay\n"
    f"x = relay.var({XSS_NAME!r}, shape=(1, 16))\n"
    "w = relay.var('weight', shape=(8, 16))\nb = relay.var('bias', shape=(8,))\n"
    "y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b))\n"
    "func = relay.Function([x, w, b], relay.nn.softmax(y))\n"
    "rng = np.random.default_rng(0)\n"
    "params = {'weight': rng.uniform(-1, 1, (8, 16)).astype('float32'),\n"
    "          'bias': rng.uniform(-1, 1, (8,)).astype('float32')}")
_LOWERING = [
    _SMALL_MLP,
    "import ipywidgets as widgets\nfrom irlab.widgets import LoweringExplorer, RunPanel\n"
    "lib = relay.build(tvm.IRModule.from_expr(func), target='llvm', params=params)\n"
    "widgets.VBox([LoweringExplorer(lib), RunPanel(lib)])",
]
_EXPLORE = [_SMALL_MLP, "tvm.explore(func, params=params)"]
# BYOC: add+relu and multiply offloaded to ccompiler (C source), exp native.
_BYOC = [
    "import ipywidgets as widgets\nimport irlab as tvm\nfrom irlab import relay\n"
    "from irlab.relay.op.contrib import partition_for_ccompiler\n"
    "from irlab.widgets import GraphView, LoweringExplorer, RunPanel",
    f"x = relay.var({XSS_NAME!r}, shape=(4, 5))\ny = relay.var('y', shape=(4, 5))\n"
    "out = relay.exp(relay.multiply(relay.nn.relu(relay.add(x, y)), y))\n"
    "mod = partition_for_ccompiler(tvm.IRModule.from_expr(relay.Function([x, y], out)))\n"
    "lib = relay.build(mod, target='llvm')\n"
    "widgets.VBox([GraphView(mod), LoweringExplorer(lib), RunPanel(lib)])",
]
# ResNet-18 (88 nodes) as a "big" graph: its stages and units start collapsed.
_LAYERS = ["from irlab.relay.testing import MODELS\nfrom irlab.widgets import GraphView\n"
           "mod, params = MODELS['resnet18']()\nGraphView(mod, params=params, big=50)"]
# A Relax MLP with a symbolic batch (issue 16): one parameter named like the payload.
_EXPLORE_RELAX = [
    "import irlab as tvm\nfrom irlab import relax\nfrom irlab.script import relax as R\n"
    "bb = relax.BlockBuilder()\n"
    f"x = relax.Var({XSS_NAME!r}, R.Tensor(('n', 16), 'float32'))\n"
    "w = relax.Var('w', R.Tensor((16, 8), 'float32'))\n"
    "with bb.function('main', [x, w]):\n"
    "    with bb.dataflow():\n"
    "        lv0 = bb.emit(relax.op.matmul(x, w))\n"
    "        out = bb.emit_output(relax.op.nn.relu(lv0))\n"
    "    bb.emit_func_output(out)\n"
    "relax_mod = bb.get()",
    "tvm.explore(relax_mod)",
]
# A TuningMonitor fed two rounds by hand (a task named like the payload); a button feeds a
# third round from the kernel, as a tuning run does while the cell runs.
_TUNING = [
    "import math\nimport ipywidgets as widgets\nfrom irlab.widgets import TuningMonitor\n"
    "from irlab.meta_schedule.tuning_observer import TaskSummary, TuningEvent\n"
    f"NAMES = ('dense', {XSS_NAME!r})\n"
    "def tasks(best, trials):\n"
    "    return tuple(TaskSummary(i, n, 1.0, 2e9, trials[i], best[i])\n"
    "                 for i, n in enumerate(NAMES))\n"
    "mon = TuningMonitor('demo', max_trials=12)\n"
    "mon.on_tuning_start(tasks([math.inf, math.inf], [0, 0]))\n"
    "mon.on_batch(TuningEvent(0, 0, 4, (2.0, 1.0, None, 0.5), (1, 2, 3, 4), "
    "tasks([0.5, math.inf], [4, 0])))\n"
    "mon.on_batch(TuningEvent(1, 0, 8, (1.0, 2.0, 4.0, 8.0), (1, 2, 3, 4), "
    "tasks([0.5, 1.0], [4, 4]), 2.5))\n"
    "more = widgets.Button(description='one more round')\nmore.add_class('more-round')\n"
    "more.on_click(lambda _: mon.on_batch(TuningEvent(0, 1, 12, (0.25, 0.3, 0.4, 0.5), "
    "(4, 3, 2, 1), tasks([0.25, 1.0], [8, 4]), 2.25)))\n"
    "widgets.VBox([mon, more])",
]
NOTEBOOKS = {"graph": _GRAPH, "stepper": _STEPPER, "lowering": _LOWERING,
             "explore_small": _EXPLORE, "byoc": _BYOC, "layers": _LAYERS,
             "explore_relax": _EXPLORE_RELAX, "tuning": _TUNING}
# The Binder dashboard itself, served as it is in the repository.
DASHBOARD = Path(__file__).resolve().parents[2] / "notebooks" / "explorer.ipynb"


def chromium_path() -> str | None:
    """Debian's Chromium (``IRLAB_CHROMIUM`` overrides), or None."""
    for candidate in (os.environ.get("IRLAB_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_notebooks(root: Path):
    (root / DASHBOARD.name).write_bytes(DASHBOARD.read_bytes())
    for name, sources in NOTEBOOKS.items():
        nb = new_notebook(cells=[new_code_cell(src) for src in sources])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, root / f"{name}.ipynb")


def open_notebook(page, voila_url: str, name: str, ready_selector: str, timeout=60_000):
    """Load a test notebook in Voila and wait until ``ready_selector`` is visible."""
    page.goto(f"{voila_url}/voila/render/{name}.ipynb", wait_until="domcontentloaded")
    page.locator(ready_selector).first.wait_for(state="visible", timeout=timeout)
    return page
