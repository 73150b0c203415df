"""Fuzz compiled functions with bad calls; run as a script (``test_safe_calls.py`` does).

Builds a few functions (static shapes, symbolic shapes shared across arguments, a scalar
parameter used as a dimension, explicit strides, scalar parameters of several dtypes) and makes
thousands of seeded random bad calls. Every bad call must raise an ``IrlabError`` whose message
names the argument at fault; valid calls interleaved (unaligned, read-only, zero-size, NDArray
and numpy mixes...) must give correct results. Integer division by a zero scalar and a failing
assert inside a parallel loop must raise too. A crash kills this process: the caller sees a
non-zero exit code. On success the last line printed is a JSON object with the counts.

Usage: python fuzz_calls.py [--bad N] [--seed S] [--target llvm|c]
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import irlab  # noqa: E402
from irlab.errors import IrlabError  # noqa: E402
from irlab.runtime.ndarray import NDArray, Device  # noqa: E402
from irlab.script import tir as T  # noqa: E402


# -- the programs ------------------------------------------------------------------------
@T.prim_func
def static_add(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
               C: T.Buffer((4, 8), "float32")):
    T.func_attr({"global_symbol": "static_add", "tir.noalias": True})
    for i, j in T.grid(4, 8):
        C[i, j] = A[i, j] + B[i, j]


@T.prim_func
def matvec(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"global_symbol": "matvec", "tir.noalias": True})
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (m,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        C[i] = T.float32(0)
        for k in range(m):
            C[i] = C[i] + A[i, k] * B[k]


@T.prim_func
def strided_copy(a: T.handle, b: T.handle):
    T.func_attr({"global_symbol": "strided_copy", "tir.noalias": True})
    s0 = T.int32()
    s1 = T.int32()
    A = T.match_buffer(a, (6, 5), "int32", strides=(s0, s1))
    B = T.match_buffer(b, (6, 5), "int32")
    for i, j in T.grid(6, 5):
        B[i, j] = A[i, j] * 2


@T.prim_func
def scalars(A: T.Buffer((16,), "int64"), x: T.int32, y: T.float32, flag: T.bool, z: T.int64):
    T.func_attr({"global_symbol": "scalars", "tir.noalias": True})
    for i in range(16):
        A[i] = T.Select(flag, T.Cast("int64", x) + z + T.Cast("int64", y), T.int64(-1))


@T.prim_func
def scale_n(a: T.handle, n: T.int32):
    T.func_attr({"global_symbol": "scale_n", "tir.noalias": True})
    A = T.match_buffer(a, (n,), "float64")
    for i in range(n):
        A[i] = A[i] * T.float64(3)


@T.prim_func
def divide(A: T.Buffer((8,), "int32"), d: T.int32):
    T.func_attr({"global_symbol": "divide", "tir.noalias": True})
    for i in range(8):
        A[i] = A[i] // d


@T.prim_func
def par_assert(A: T.Buffer((64,), "int32"), lim: T.int32):
    T.func_attr({"global_symbol": "par_assert", "tir.noalias": True})
    for i in T.parallel(64):
        assert A[i] < lim, "value too large"
        A[i] = A[i] + 1


# -- array makers ------------------------------------------------------------------------
def unaligned(a, shift=None):
    """A copy of ``a`` whose data is not 64-byte aligned (by ``shift`` bytes)."""
    a = np.asarray(a)
    shift = a.itemsize if shift is None else shift
    raw = np.empty(a.nbytes + 128, dtype=np.uint8)
    start = (-raw.ctypes.data % 64) + shift
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape) if shift % a.itemsize == 0 \
        else np.ndarray(a.shape, a.dtype, buffer=raw, offset=start)
    out[...] = a
    assert out.ctypes.data % 64 != 0 or not a.size
    return out


def readonly(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


class Fuzzer:
    def __init__(self, seed, target="llvm"):
        self.target = target
        self.rng = np.random.default_rng(seed)
        self.bad = 0
        self.valid = 0
        self.by_kind: dict = {}
        self.failures: list = []

    # bookkeeping
    def expect_error(self, kind, func, args, names=(), kwargs=None):
        """``func(*args)`` must raise an IrlabError mentioning every string in ``names``."""
        self.bad += 1
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        try:
            func(*args, **(kwargs or {}))
        except IrlabError as err:
            msg = str(err)
            missing = [n for n in names if n not in msg]
            if missing:
                self.failures.append(f"{kind}: message lacks {missing}: {msg}")
        except Exception as err:  # noqa: BLE001
            self.failures.append(f"{kind}: raised {type(err).__name__} (not IrlabError): {err}")
        else:
            self.failures.append(f"{kind}: {func.name} accepted a bad call")

    def ok(self, kind, cond, detail=""):
        self.valid += 1
        if not cond:
            self.failures.append(f"valid call {kind} gave a wrong result {detail}")

    def choice(self, items):
        return items[int(self.rng.integers(len(items)))]

    def rand(self, shape, dtype="float32"):
        if np.dtype(dtype).kind == "f":
            return self.rng.standard_normal(shape).astype(dtype)
        return self.rng.integers(-100, 100, size=shape).astype(dtype)

    def wrap(self, a, allow_readonly=False):
        """The same values in one of several valid containers."""
        kinds = ["numpy", "nd", "unaligned", "nd_unaligned", "dlpack"]
        if allow_readonly:
            kinds.append("readonly")
        kind = self.choice(kinds)
        if kind == "numpy":
            return a
        if kind == "nd":
            return irlab.nd.array(a)
        if kind == "unaligned":
            return unaligned(a)
        if kind == "nd_unaligned":
            return NDArray(unaligned(a))
        if kind == "dlpack":
            return irlab.nd.from_dlpack(np.array(a))
        return readonly(a)

    @staticmethod
    def value(x):
        return x.numpy() if isinstance(x, NDArray) else np.asarray(x)

    # generic bad values for a buffer parameter
    def bad_buffer(self, good, strided=False):
        """(kind, bad value) for a buffer argument whose valid value is ``good``."""
        kinds = ["none", "str", "list", "int", "float", "dict", "dtype", "byteswap", "ndim_more",
                 "ndim_less", "zero_d", "shape", "nd_dtype", "nd_shape", "device", "object"]
        if not strided:
            kinds += ["slice_view", "transpose", "negative", "fortran"]
        else:
            kinds += ["bad_stride_bytes"]
        kind = self.choice(kinds)
        dt = good.dtype
        if kind == "none":
            return kind, None
        if kind == "str":
            return kind, "array"
        if kind == "list":
            return kind, good.tolist()
        if kind == "int":
            return kind, int(self.rng.integers(0, 1 << 40))
        if kind == "float":
            return kind, 1.5
        if kind == "dict":
            return kind, {"data": good}
        if kind == "object":
            return kind, np.empty(good.shape, dtype=object)
        if kind == "dtype":
            other = self.choice([d for d in ("float32", "float64", "float16", "int32", "int64",
                                             "int8", "uint32", "bool", "complex64")
                                 if np.dtype(d) != dt])
            return kind, good.astype(other)
        if kind == "byteswap":
            return kind, good.astype(dt.newbyteorder())
        if kind == "ndim_more":
            return kind, good.reshape(good.shape + (1,))
        if kind == "ndim_less":
            return kind, good.reshape(-1)[:1].reshape(()) if good.ndim == 1 else good[0]
        if kind == "zero_d":
            return kind, np.zeros((), dt)
        if kind == "shape":
            shape = list(good.shape)
            axis = int(self.rng.integers(len(shape)))
            shape[axis] += int(self.choice([1, 2, 7]))
            return kind, np.zeros(shape, dt)
        if kind == "nd_dtype":
            return kind, irlab.nd.array(good.astype("int16"))
        if kind == "nd_shape":
            return kind, irlab.nd.array(np.zeros(tuple(s + 1 for s in good.shape), dt))
        if kind == "device":
            gpu = Device.__new__(Device)  # only cpu devices can be made: forge one
            gpu.device_type, gpu.device_id = 2, 0
            return kind, NDArray(good.copy(), gpu)
        if kind == "slice_view":
            big = np.zeros(good.shape[:-1] + (good.shape[-1] * 2,), dt)
            return kind, big[..., ::2]
        if kind == "transpose":
            return kind, np.zeros(good.shape[::-1], dt).T if good.ndim > 1 else \
                np.zeros(good.shape * 2, dt)[::2]
        if kind == "negative":
            return kind, np.zeros(good.shape, dt)[::-1]
        if kind == "fortran":
            if good.ndim == 1:
                return kind, np.zeros(good.shape[0] * 3, dt)[::3]
            return kind, np.asfortranarray(np.zeros(good.shape, dt))
        if kind == "bad_stride_bytes":  # strides not a multiple of the element size
            packed = np.zeros(good.shape, dtype=np.dtype([("v", dt), ("pad", "i1")]))
            return kind, packed["v"]
        raise AssertionError(kind)

    def bad_int(self, dtype):
        bits = np.dtype(dtype).itemsize * 8 if dtype != "bool" else 1
        kinds = ["none", "str", "float", "nan", "inf", "list", "array", "complex", "np_float",
                 "too_big", "too_small"]
        kind = self.choice(kinds)
        if kind == "none":
            return kind, None
        if kind == "str":
            return kind, "3"
        if kind == "float":
            return kind, 2.5
        if kind == "nan":
            return kind, float("nan")
        if kind == "inf":
            return kind, float("inf")
        if kind == "list":
            return kind, [1]
        if kind == "array":
            return kind, np.array([1], dtype="int64")
        if kind == "complex":
            return kind, 1 + 2j
        if kind == "np_float":
            return kind, np.float64(1.0)
        if dtype == "bool":
            return kind, 2 if kind == "too_big" else -1
        if kind == "too_big":
            return kind, self.choice([2 ** 40, 2 ** (bits - 1), 2 ** 64, 2 ** 100]) \
                if bits < 64 else self.choice([2 ** 63, 2 ** 64, 2 ** 100])
        return kind, -(2 ** (bits - 1)) - int(self.rng.integers(1, 1000))

    def bad_float(self):
        kind = self.choice(["none", "str", "list", "array", "complex", "bool", "np_bool", "bytes"])
        return kind, {"none": None, "str": "1.0", "list": [1.0], "array": np.ones(2),
                      "complex": 1j, "bool": True, "np_bool": np.bool_(True),
                      "bytes": b"1"}[kind]

    # -- one valid call + bad variations per function -------------------------------------
    def case_static_add(self, f):
        a, b = self.rand((4, 8)), self.rand((4, 8))
        args = [a, b, np.zeros((4, 8), "float32")]
        return args, [False, False, False], ["A", "B", "C"]

    def valid_static_add(self, f):
        a, b = self.rand((4, 8)), self.rand((4, 8))
        c = self.wrap(np.zeros((4, 8), "float32"))
        f(self.wrap(a, True), self.wrap(b, True), c)
        self.ok("static_add", np.allclose(self.value(c), a + b))

    def case_matvec(self, f):
        # at least 2: numpy calls views with only one element per axis contiguous
        n, m = int(self.rng.integers(2, 9)), int(self.rng.integers(2, 9))
        args = [self.rand((n, m)), self.rand((m,)), np.zeros((n,), "float32")]
        return args, [False, False, False], ["A", "B", "C"]

    def valid_matvec(self, f):
        n, m = int(self.rng.integers(0, 9)), int(self.rng.integers(0, 9))  # zero-size too
        a, b = self.rand((n, m)), self.rand((m,))
        c = self.wrap(np.full((n,), 7, "float32"))
        f(self.wrap(a, True), self.wrap(b, True), c)
        self.ok("matvec", np.allclose(self.value(c), a @ b, atol=1e-5), (n, m))

    def inconsistent_matvec(self, f):
        """Symbolic dimensions that disagree across arguments."""
        n, m = 3, 4
        a, b, c = self.rand((n, m)), self.rand((m,)), np.zeros((n,), "float32")
        which = int(self.rng.integers(3))
        if which == 0:
            b = self.rand((m + 1,))  # m disagrees with A
            self.expect_error("symbolic_m", f, [a, b, c], ["argument 1 (B)", "m"])
        elif which == 1:
            c = np.zeros((n + 2,), "float32")  # n disagrees with A
            self.expect_error("symbolic_n", f, [a, b, c], ["argument 2 (C)", "n"])
        else:
            a = self.rand((n, m + 3))  # A binds m first: B is then at fault
            self.expect_error("symbolic_m_first", f, [a, b, c], ["argument 1 (B)",
                                                                 "argument 0 (A)"])

    def case_strided_copy(self, f):
        big = self.rand((6, 10), "int32")
        args = [big[:, ::2], np.zeros((6, 5), "int32")]
        return args, [True, False], ["A", "B"]

    def valid_strided_copy(self, f):
        big = self.rand((12, 10), "int32")
        view = self.choice([lambda x: x[:6, :5], lambda x: x[::2, ::2], lambda x: x[::-2, 1::2],
                            lambda x: x[6:, :5].copy(), lambda x: readonly(x)[1:7, 5:],
                            lambda x: np.asfortranarray(x[:6, :5]),
                            lambda x: x[:6, :5][::-1, ::-1], lambda x: x[:5, :6].T,
                            lambda x: np.broadcast_to(x[0, :5], (6, 5))])(big)
        b = self.wrap(np.zeros((6, 5), "int32"))
        f(view, b)
        self.ok("strided_copy", np.array_equal(self.value(b), np.asarray(view) * 2))

    def case_scalars(self, f):
        args = [np.zeros(16, "int64"), 3, 2.0, True, 5]
        return args, [False, "int32", "float32", "bool", "int64"], ["A", "x", "y", "flag", "z"]

    def valid_scalars(self, f):
        x = int(self.rng.integers(-2 ** 31, 2 ** 31))
        z = int(self.rng.integers(-2 ** 40, 2 ** 40))
        y = float(self.rng.integers(-1000, 1000))
        flag = bool(self.rng.integers(2))
        conv = self.choice([lambda v: v, np.int32, np.int64])
        a = self.wrap(np.zeros(16, "int64"))
        f(a, conv(x) if abs(x) < 2 ** 31 else x, np.float32(y), np.bool_(flag), np.int64(z))
        want = x + z + int(y) if flag else -1
        self.ok("scalars", (self.value(a) == want).all(), (x, y, flag, z))
        a = np.zeros(16, "int64")
        f(a, 2 ** 31 - 1, -0.5, 1, -2 ** 63)  # extremes are fine
        self.ok("scalars_extreme", (a == 2 ** 31 - 1 - 2 ** 63).all())

    def case_scale_n(self, f):
        n = int(self.rng.integers(2, 9))
        return [self.rand((n,), "float64"), n], [False, "int32"], ["A", "n"]

    def valid_scale_n(self, f):
        n = int(self.rng.integers(0, 9))
        a = self.rand((n,), "float64")
        w = self.wrap(a.copy())
        f(w, n)
        self.ok("scale_n", np.allclose(self.value(w), a * 3))

    def scalar_dim_scale_n(self, f):
        n = int(self.rng.integers(1, 9))
        wrong = n + int(self.choice([-1, 1, 100, 2 ** 20]))
        self.expect_error("scalar_dim", f, [self.rand((n,), "float64"), wrong],
                          ["argument 1 (n)"])

    # -- the driver ------------------------------------------------------------------------
    def mutate(self, f, args, kinds, names):
        """One random bad call derived from the valid ``args``."""
        fname = f.name
        r = self.rng.random()
        if r < 0.06:  # too few
            k = int(self.rng.integers(0, len(args)))
            self.expect_error("too_few", f, args[:k], [f"takes {len(args)} arguments"])
            return
        if r < 0.12:  # too many
            extra = [self.choice([None, 1, args[0]]) for _ in range(int(self.rng.integers(1, 3)))]
            self.expect_error("too_many", f, args + extra, [f"takes {len(args)} arguments"])
            return
        if r < 0.14:
            self.expect_error("kwargs", f, args[:-1], [fname], kwargs={names[-1]: args[-1]})
            return
        i = int(self.rng.integers(len(args)))
        kind = kinds[i]
        bad = list(args)
        if kind is False or kind is True:
            label, bad[i] = self.bad_buffer(np.asarray(args[i]), strided=kind)
        elif kind == "float32":
            label, bad[i] = self.bad_float()
        else:
            label, bad[i] = self.bad_int(kind)
        self.expect_error(f"{label}", f, bad, [f"argument {i} ({names[i]})"])

    def run(self, n_bad):
        mod = irlab.build(irlab.IRModule({"static_add": static_add, "matvec": matvec,
                                          "strided_copy": strided_copy, "scalars": scalars,
                                          "scale_n": scale_n}), target=self.target)
        funcs = {name: mod[name] for name in mod.get_func_names()}
        names = list(funcs)
        specials = {"matvec": self.inconsistent_matvec, "scale_n": self.scalar_dim_scale_n}
        while self.bad < n_bad:
            name = self.choice(names)
            f = funcs[name]
            if name in specials and self.rng.random() < 0.2:
                specials[name](f)
            else:
                args, kinds, pnames = getattr(self, "case_" + name)(f)
                self.mutate(f, args, kinds, pnames)
            if self.rng.random() < 0.25:
                getattr(self, "valid_" + name)(f)
        self.runtime_failures()

    def runtime_failures(self):
        """Errors detected inside compiled code: division by zero, a failing assert."""
        div = irlab.build(divide, target=self.target)["divide"]
        par = irlab.build(par_assert, target=self.target)["par_assert"]
        for _ in range(50):
            a = self.rand((8,), "int32")
            a[0] = -2 ** 31 + 1  # the smallest value whose quotient by -1 is defined
            d = int(self.choice([1, 2, 3, -1, -2, -7, 5]))
            want = a // d
            div(a, d)
            self.ok("divide", np.array_equal(a, want), d)
            self.expect_error("div_by_zero", div, [a, 0], ["division by zero"])
            values = self.rng.integers(0, 100, size=64).astype("int32")
            lim = int(self.rng.integers(50, 120))
            a = values.copy()
            if (values < lim).all():
                par(a, lim)
                self.ok("par_assert", np.array_equal(a, values + 1))
            else:
                self.expect_error("parallel_assert", par, [a, lim], ["value too large"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bad", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", default="llvm")
    opts = parser.parse_args()
    start = time.perf_counter()
    fuzz = Fuzzer(opts.seed, opts.target)
    fuzz.run(opts.bad)
    for line in fuzz.failures[:30]:
        print("FAIL", line)
    print(json.dumps({"bad": fuzz.bad, "valid": fuzz.valid, "failures": len(fuzz.failures),
                      "kinds": dict(sorted(fuzz.by_kind.items())),
                      "seconds": round(time.perf_counter() - start, 2)}))
    return 1 if fuzz.failures else 0


if __name__ == "__main__":
    sys.exit(main())
