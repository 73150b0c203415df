"""Real-browser fixtures: one Voila server on 127.0.0.1 for the session, Debian's Chromium driven
by Playwright, a screenshot of every test's page under ``tests/browser/artifacts/``.

``scripts/run.sh test`` installs Chromium (``apt-get install chromium``); pip's playwright cannot
download browsers here. Without Chromium the tests skip, except in CI (``CI`` set), where a
missing browser is a broken set-up and fails.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from voila_support import ARTIFACTS, CHROMIUM_ARGS, chromium_path, free_port, write_notebooks

from irlab.widgets.assets import JUPYTER_DATA, VOILA_TEMPLATE

VOILA_START_TIMEOUT = 60.0
LOCAL = ("http://127.0.0.1:", "data:", "blob:", "about:")


@pytest.fixture(scope="session")
def chromium_executable():
    path = chromium_path()
    if path:
        return path
    reason = ("Chromium is not installed: `bash scripts/run.sh test` installs Debian's "
              "`chromium` (pip's playwright cannot download browsers here)")
    if os.environ.get("CI"):
        pytest.fail(reason + "; in CI the run script should have installed it", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def voila_url(chromium_executable, tmp_path_factory):
    """Base URL of a Voila server rendering the test notebooks (``{url}/voila/render/x.ipynb``)."""
    root = tmp_path_factory.mktemp("voila")
    write_notebooks(root)
    ARTIFACTS.mkdir(exist_ok=True)
    env = dict(os.environ)
    # The kernel imports irlab from this checkout even when it is not pip-installed.
    repo = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH")) if p)
    # irlab's Voila template (no CDN stylesheet): the pages load nothing from the network.
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(JUPYTER_DATA),
                                                      env.get("JUPYTER_PATH")) if p)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "voila", str(root), "--no-browser", "--Voila.ip=127.0.0.1",
         f"--port={port}", "--show_tracebacks=True", f"--template={VOILA_TEMPLATE}",
         # Each notebook is run in a spare kernel ahead of the next request: a page load
         # then costs no kernel start, no imports and no pipeline run.
         "--preheat_kernel=True", "--pool_size=1"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)  # its own process group: the kernels are stopped with it
    lines: list[str] = []
    ready = threading.Event()

    def pump():  # keep reading: Voila would block on a full pipe
        with open(ARTIFACTS / "voila.log", "w") as log:
            for line in proc.stdout:
                lines.append(line)
                log.write(line)
                log.flush()
                if "running at" in line.lower():
                    ready.set()

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + VOILA_START_TIMEOUT
    while not ready.wait(0.1):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("Voila did not start:\n" + "".join(lines[-30:]), pytrace=False)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(3)
        except subprocess.TimeoutExpired:
            pass
        try:  # Voila's kernels too, all in the group started above
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


@pytest.fixture(scope="session")
def browser(chromium_executable):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the pip package 'playwright' is missing (irlab's [test] extra has it)",
                    pytrace=False)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_executable, args=CHROMIUM_ARGS,
                                      headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


class PageLog:
    """What a page did besides rendering: dialogs it opened (an alert would be an injected
    script running) and uncaught errors."""

    def __init__(self):
        self.dialogs: list[str] = []
        self.page_errors: list[str] = []
        self.remote_requests: list[str] = []  # anything not from the local server


@pytest.fixture
def page(browser, request):
    """A fresh page whose dialogs are recorded and dismissed; screenshot saved at the end."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    log = PageLog()

    def on_dialog(dialog):
        log.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda err: log.page_errors.append(str(err)))
    page.on("request", lambda req: None if req.url.startswith(LOCAL) else
            log.remote_requests.append(req.url))
    page.log = log
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    try:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    finally:
        context.close()
