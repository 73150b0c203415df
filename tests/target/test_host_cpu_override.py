"""``IRLAB_HOST_CPU``: the host pretends to be a named CPU it can run code for, so the whole
suite can be run as on an AVX2 machine from an AVX-512 one (tests/README.md)."""

import json
import os
import subprocess
import sys

import pytest

from irlab.errors import IrlabError
from irlab.target.target import _pretended_features

PROBE = r"""
import json
import numpy as np
import irlab
from irlab import te
from irlab.target import Target
from irlab.topi.x86.dense import dense_tile

t = Target("llvm")
A = te.placeholder((64,), name="A")
B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
s = irlab.tir.Schedule(te.create_prim_func([A, B]))
f = irlab.build(s.mod, target="llvm")
a = np.arange(64, dtype="float32")
b = irlab.nd.empty((64,), "float32")
f(irlab.nd.array(a), b)
print(json.dumps({"mcpu": t.mcpu, "lanes": t.vector_width("float32"),
                  "registers": t.num_vector_registers, "avx512": t.has_feature("avx512f"),
                  "tile": dense_tile(1024, 1024, t), "ok": bool((b.numpy() == 2 * a).all())}))
"""


def _host_has(feature):
    from irlab.target import host_cpu

    return f"+{feature}" in host_cpu()[1]


def _probe(cpu):
    env = dict(os.environ, IRLAB_HOST_CPU=cpu)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not os.path.exists("/proc/cpuinfo") or not _host_has("avx2"),
                    reason="the host has no AVX2: it cannot pretend to be an AVX2 CPU")
def test_pretending_to_be_an_avx2_cpu_sizes_and_runs_for_it():
    got = _probe("znver3")
    assert got["mcpu"] == "znver3" and not got["avx512"]
    assert (got["lanes"], got["registers"]) == (8, 16)
    assert got["tile"][1] % 8 == 0 and got["tile"][1] <= 32  # ymm-sized, not 4 x zmm
    assert got["ok"]  # code built for the pretended CPU ran here and was right


def test_a_cpu_with_features_the_host_lacks_is_refused_by_name():
    with pytest.raises(IrlabError, match="lacks avx512.*znver4"):
        _pretended_features("znver4", ("+sse2", "+avx", "+avx2", "+fma"))


def test_an_unknown_cpu_is_refused_listing_the_known_ones():
    with pytest.raises(IrlabError, match="not a CPU irlab knows.*haswell"):
        _pretended_features("pentium-pro-9000", ("+sse2",))
