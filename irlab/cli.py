"""The ``irlab`` console command.

``irlab report MODEL_OR_SCRIPT -o out.html`` runs a model through relay.optimize's pipeline
and writes one self-contained HTML report (pass list, diffs, graphs; no network, no kernel).
MODEL_OR_SCRIPT is a model name from ``irlab.relay.testing.MODELS`` (``irlab models`` lists
them), an ``.onnx`` file, or a Python script that defines ``mod`` (and optionally ``params``).
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path


def load_model(spec: str):
    """``(mod, params)`` for a model name, an ONNX file or a Python script."""
    from irlab.relay.testing import MODELS

    if spec in MODELS:
        return MODELS[spec]()
    path = Path(spec)
    if path.suffix == ".onnx":
        if not path.is_file():
            raise SystemExit(f"irlab: no such file: {spec}")
        try:
            from irlab.relay.frontend import from_onnx
        except ImportError:
            raise SystemExit("irlab: this irlab has no ONNX frontend") from None
        return from_onnx(str(path))
    if path.suffix == ".py":
        if not path.is_file():
            raise SystemExit(f"irlab: no such file: {spec}")
        namespace = runpy.run_path(str(path), run_name="__irlab_report__")
        if "mod" not in namespace:
            raise SystemExit(f"irlab: {spec} defines no 'mod'")
        return namespace["mod"], namespace.get("params")
    known = ", ".join(sorted(MODELS))
    raise SystemExit(f"irlab: {spec!r} is not a model name ({known}), an .onnx file or a "
                     f".py script")


def _passes(names):
    if not names:
        return None
    from irlab.transform import get_pass

    return [get_pass(name.strip()) for name in names.split(",") if name.strip()]


def report(args) -> int:
    from irlab.widgets.export import export_html

    mod, params = load_model(args.model)
    out = Path(args.output or f"{Path(args.model).stem}_report.html")
    path = export_html(mod, out, title=args.title or f"irlab report: {Path(args.model).name}",
                       passes=_passes(args.passes), params=params, opt_level=args.opt_level,
                       numerics=args.numerics, timeout=args.timeout)
    size = path.stat().st_size
    print(f"wrote {path} ({size / 1024:.0f} KiB)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="irlab", description="irlab command line tools")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="write a self-contained HTML report of the pass "
                                        "pipeline of a model")
    rep.add_argument("model", metavar="MODEL_OR_SCRIPT",
                     help="a model name (see 'irlab models'), an .onnx file or a .py script "
                          "defining 'mod' (and 'params')")
    rep.add_argument("-o", "--output", help="the HTML file to write (default: "
                                            "<model>_report.html)")
    rep.add_argument("--passes", help="comma-separated pass names to run instead of "
                                      "relay.optimize's pipeline")
    rep.add_argument("--opt-level", type=int, default=3)
    rep.add_argument("--numerics", action="store_true",
                     help="run the interpreter after every step and mark the first step "
                          "whose results differ")
    rep.add_argument("--title")
    rep.add_argument("--timeout", type=float, default=20.0,
                     help="seconds Graphviz may spend on one layout")
    rep.set_defaults(run=report)
    models = sub.add_parser("models", help="list the model names 'report' accepts")
    models.set_defaults(run=lambda a: print("\n".join(sorted(_model_names()))) or 0)
    args = parser.parse_args(argv)
    return args.run(args)


def _model_names():
    from irlab.relay.testing import MODELS

    return MODELS


if __name__ == "__main__":
    sys.exit(main())
