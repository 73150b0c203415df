"""Dump what relay.build produces, per model, to a folder: graph JSON, the kernels' TIR
(as built, and lowered), raw LLVM IR and the optimized Relay (its random ``hash`` attrs
masked). Two dumps diffed (``diff -r``) check that a compiler-speed change altered nothing.

Run: python benchmarks/dump_build.py OUT_DIR [resnet18,mobilenet_v2,mlp,bert,simplenet]
(each model in its own process as well, to check a cold build: one model per call).
"""

from __future__ import annotations

import os
import re
import sys


def main():
    os.environ["IRLAB_CACHE"] = "0"
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    import irlab as tvm
    from irlab import relay
    from irlab.relay.testing import MODELS

    out = sys.argv[1]
    names = (sys.argv[2] if len(sys.argv) > 2 else "resnet18,mobilenet_v2,mlp,bert,simplenet")
    os.makedirs(out, exist_ok=True)
    for name in names.split(","):
        mod, params = MODELS[name]()
        with tvm.transform.PassContext(opt_level=3):
            factory = relay.build(mod, "llvm", params=params)
        lib = factory.get_lib()
        kernels = "".join(f"## {lf.name}\n{lf.prim_func.script()}\n" for lf in factory.lowered)
        relay_text = re.sub(r'hash="[0-9a-f]+"', "hash=H", str(factory.ir_mod))
        for suffix, text in (("graph.json", factory.get_graph_json()),
                             ("tir", lib.get_source("tir")), ("ll", lib.get_source("ll-raw")),
                             ("kernels.tir", kernels), ("relay", relay_text)):
            with open(os.path.join(out, f"{name}.{suffix}"), "w") as fh:
                fh.write(text)
        print(name, "dumped")


if __name__ == "__main__":
    main()
