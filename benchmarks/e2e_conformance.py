"""The full tier of the end-to-end conformance check (issue 8): every model builder and every
ONNX test model through relay.build at opt levels 0-3, compared with the Relay interpreter
(builders) or onnxruntime (ONNX models) at 1e-4 relative error. The test suite runs a quick
subset (tests/relay/backend/test_models_end_to_end.py, test_onnx_end_to_end.py).

    python3 benchmarks/e2e_conformance.py [--models name,name] [--levels 0,1,2,3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "relay", "backend"))


def main():
    from tqdm import tqdm

    from test_models_end_to_end import check_model
    from test_onnx_end_to_end import MODELS as ONNX_MODELS, check_onnx_model
    from irlab.relay.frontend import onnx_models
    from irlab.relay.testing import SMALL_MODELS

    ONNX_MODELS["resnet18_224px"] = lambda: onnx_models.resnet18()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="")
    parser.add_argument("--levels", default="0,1,2,3")
    args = parser.parse_args()
    wanted = set(filter(None, args.models.split(",")))
    levels = [int(x) for x in args.levels.split(",")]
    cases = [("builder", n, lvl) for n in SMALL_MODELS for lvl in levels]
    cases += [("onnx", n, lvl) for n in ONNX_MODELS for lvl in levels]
    cases = [c for c in cases if not wanted or c[1] in wanted]
    failed = []
    for kind, name, level in tqdm(cases, desc="models x opt levels"):
        start = time.perf_counter()
        try:
            (check_model if kind == "builder" else check_onnx_model)(name, level)
            status = "ok"
        except Exception as err:  # noqa: BLE001 - report every case, then fail at the end
            status = f"FAIL {type(err).__name__}: {str(err).splitlines()[0][:100]}"
            failed.append((name, level, traceback.format_exc()))
        tqdm.write(f"{kind:8} {name:26} opt {level}  {time.perf_counter() - start:6.1f} s  "
                   f"{status}")
    print(f"{len(cases) - len(failed)} of {len(cases)} passed")
    for name, level, tb in failed:
        print(f"\n--- {name} opt {level}\n{tb}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
