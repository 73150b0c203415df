"""Apache TVM's own test files, unchanged, run against irlab (``tvm`` is irlab) -- issue 18's
measure of how far ``import irlab as tvm`` carries TVM code.

    python benchmarks/tvm_suite.py --tvm-src /work/.mirror/apache+tvm/repo [--tag refs/tags/v0.13.0]
                                   [files under tests/python/ ...]

``--tvm-src`` is a checkout of apache/tvm or a bare mirror (the search tool's ``fetch
github:apache/tvm``); the files are read from it at ``--tag`` at run time, into a temporary
directory, and never committed. Each file runs in its own pytest subprocess whose ``tvm`` and
``tvm.X.Y`` modules are irlab's (a meta-path alias installed by a generated conftest), and the
table prints per file what pytest collected, passed, failed, errored and skipped (a file
that fails to import counts each of its ``def test_`` functions as an error). Tests TVM
itself skips on a CPU-only machine count as skipped, outside the pass rate.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FILES = [
    "relay/test_pass_fold_constant.py", "relay/test_pass_fuse_ops.py",
    "relay/test_pass_dead_code_elimination.py", "relay/test_pass_eliminate_common_subexpr.py",
    "relay/test_ir_parser.py", "relay/test_type_infer.py", "relay/test_dataflow_pattern.py",
    "relay/test_pass_instrument.py", "unittest/test_tir_schedule_split_fuse.py",
    "unittest/test_tir_schedule_compute_at.py", "unittest/test_tir_schedule_cache_read_write.py",
    "unittest/test_te_create_primfunc.py", "unittest/test_tvmscript_roundtrip.py",
]

# The conftest each run gets: ``tvm`` and every ``tvm.X.Y`` resolve to irlab's modules.
ALIAS = '''
import importlib, importlib.abc, importlib.util, sys
sys.path.insert(0, {root!r})
import irlab


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "tvm" or name.startswith("tvm."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("irlab" + spec.name[3:])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Alias())
pytest_plugins = ["tvm.testing.plugin"]
'''


def _git_show(src, tag, path):
    git_dir = ["--git-dir", src] if not os.path.isdir(os.path.join(src, ".git")) else \
        ["-C", src]
    return subprocess.run(["git", *git_dir, "show", f"{tag}:tests/python/{path}"],
                          capture_output=True, check=True).stdout


def _run_file(src, tag, path, workdir, timeout):
    """(collected, passed, failed, errors, skipped, note) of one TVM test file."""
    folder = os.path.join(workdir, os.path.dirname(path))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "conftest.py"), "w") as f:
        f.write(ALIAS.format(root=ROOT))
    target = os.path.join(workdir, path)
    with open(target, "wb") as f:
        f.write(_git_show(src, tag, path))
    report = target + ".xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", folder,
           f"--junitxml={report}", target]
    try:
        proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 0, 0, 0, 0, 0, f"timed out after {timeout} s"
    if not os.path.exists(report):
        return 0, 0, 0, 1, 0, proc.stdout[-300:] + proc.stderr[-300:]
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total, failed, errors, skipped = (int(suite.get(k, 0)) for k in
                                      ("tests", "failures", "errors", "skipped"))
    note = ""
    if total == 0 or errors:
        match = re.search(r"^E\s+(.*)$", proc.stdout, re.M)
        note = match.group(1)[:120] if match else ""
    if errors and total <= 1:
        # The file did not import: count its test functions (parametrized cases once each) as
        # errors, so a file that fails to load weighs what it holds, not one test.
        with open(target, encoding="utf-8") as f:
            total = errors = max(1, len(re.findall(r"^def test_", f.read(), re.M)))
    return total, total - failed - errors - skipped, failed, errors, skipped, note


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tvm-src", required=True, help="apache/tvm checkout or bare mirror")
    parser.add_argument("--tag", default="refs/tags/v0.13.0")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per file")
    parser.add_argument("files", nargs="*", help=f"paths under tests/python/ (default: the "
                                                 f"{len(FILES)} of issue 18)")
    args = parser.parse_args(argv)
    files = args.files or FILES
    try:
        from tqdm import tqdm
    except ImportError:
        def tqdm(x, **_):
            return x
    rows = []
    with tempfile.TemporaryDirectory(prefix="tvm-suite-") as workdir:
        for path in tqdm(files, desc="TVM test files", unit="file"):
            rows.append((path, *_run_file(args.tvm_src, args.tag, path, workdir, args.timeout)))
    print(f"TVM {args.tag} test files, run unchanged with tvm = irlab")
    print(f"{'file':52} {'tests':>6} {'pass':>6} {'fail':>6} {'error':>6} {'skip':>6} {'pass %':>7}")
    totals = [0] * 5
    for path, total, passed, failed, errors, skipped, note in rows:
        counted = total - skipped
        pct = f"{100 * passed / counted:.1f}" if counted else "-"
        print(f"{path:52} {total:>6} {passed:>6} {failed:>6} {errors:>6} {skipped:>6} {pct:>7}"
              + (f"  {note}" if note else ""))
        totals = [a + b for a, b in zip(totals, (total, passed, failed, errors, skipped))]
    counted = totals[0] - totals[4]
    pct = f"{100 * totals[1] / counted:.1f}" if counted else "-"
    print(f"{'total':52} {totals[0]:>6} {totals[1]:>6} {totals[2]:>6} {totals[3]:>6} "
          f"{totals[4]:>6} {pct:>7}")


if __name__ == "__main__":
    main()
