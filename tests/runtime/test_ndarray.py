"""NDArray: aligned storage, copies, DLPack sharing both ways, devices and printing."""

import numpy as np
import pytest

import irlab
from irlab import nd
from irlab.errors import IrlabError

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
SHAPES = [(), (0,), (1,), (3,), (7, 5), (2, 3, 5), (1, 1, 13), (4, 0, 2)]


def sample(shape, dtype):
    rng = np.random.default_rng(sum(shape) + len(dtype))
    return (rng.uniform(-50, 50, shape) if dtype.startswith("float") or dtype == "bool"
            else rng.integers(0, 100, shape)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_and_empty_are_aligned_contiguous_copies(dtype):
    for shape in SHAPES:
        src = sample(shape, dtype)
        a = nd.array(src)
        e = nd.empty(shape, dtype)
        for arr in (a, e):
            assert arr.data_ptr % 64 == 0 and arr.is_aligned
            assert arr._data.flags.c_contiguous
            assert arr.shape == shape and arr.dtype == dtype and arr.ndim == len(shape)
        assert a.data_ptr == a._data.ctypes.data
        np.testing.assert_array_equal(a.numpy(), src)
        if src.size:  # nd.array copies: the source is not aliased
            src.reshape(-1)[0] = src.reshape(-1)[-1] + 1 if dtype != "bool" else ~src.reshape(-1)[0]
            assert not np.array_equal(a.numpy(), src)


def test_array_from_lists_scalars_and_ndarrays():
    assert nd.array([[1, 2], [3, 4]]).dtype == "int64"
    assert nd.array(2.5).shape == () and nd.array(2.5).numpy() == 2.5
    a = nd.array(np.arange(4, dtype="float32"))
    b = nd.array(a)
    assert b.data_ptr != a.data_ptr and b.is_aligned
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    assert nd.empty(5).shape == (5,) and nd.empty(5).dtype == "float32"


def test_numpy_returns_a_copy():
    a = nd.array(np.zeros(3, "float32"))
    out = a.numpy()
    out[0] = 9
    assert a.numpy()[0] == 0
    np.testing.assert_array_equal(a.asnumpy(), a.numpy())


def test_copyfrom_copyto_and_setitem():
    a = nd.empty((2, 3), "float32")
    src = np.arange(6, dtype="float32").reshape(2, 3)
    assert a.copyfrom(src) is a
    np.testing.assert_array_equal(a.numpy(), src)
    a[:] = src * 2
    np.testing.assert_array_equal(a.numpy(), src * 2)
    a[:] = (src + 1).astype("float64")  # numpy sources are cast within their kind, as TVM does
    assert a.dtype == "float32"
    np.testing.assert_array_equal(a.numpy(), src + 1)

    b = nd.empty((2, 3), "float32")
    assert a.copyto(b) is b
    np.testing.assert_array_equal(b.numpy(), src + 1)
    c = a.copyto(irlab.cpu(0))
    assert isinstance(c, nd.NDArray) and c.is_aligned and c.data_ptr != a.data_ptr
    np.testing.assert_array_equal(c.numpy(), src + 1)
    b[:] = nd.array(np.zeros((2, 3), "float32"))
    assert not b.numpy().any()


def test_copy_errors_name_expected_and_actual():
    a = nd.empty((2, 3), "float32")
    with pytest.raises(IrlabError, match=r"expected \(2, 3\), got \(3, 2\)"):
        a.copyfrom(np.zeros((3, 2), "float32"))
    with pytest.raises(IrlabError, match="expected float32, got int32"):
        a.copyfrom(nd.array(np.zeros((2, 3), "int32")))
    with pytest.raises(IrlabError, match="expected int32, got float64"):
        nd.empty((2,), "int32").copyfrom(np.zeros(2))
    with pytest.raises(IrlabError, match=r"expected \(4,\), got \(2, 3\)"):
        a.copyto(nd.empty((4,), "float32"))
    with pytest.raises(IrlabError, match="NDArray or a Device"):
        a.copyto("cpu")
    with pytest.raises(IrlabError, match="whole assignment"):
        a[0] = 1


def test_numpy_reads_memory_through_dlpack_without_copy():
    a = nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    view = np.from_dlpack(a)
    assert view.ctypes.data == a.data_ptr and view.dtype == np.float32 and view.shape == (2, 3)
    view[1, 2] = 100
    assert a.numpy()[1, 2] == 100
    assert a.__dlpack_device__() == (1, 0)
    shared = np.asarray(a)  # __array__ shares too
    shared[0, 0] = -1
    assert a.numpy()[0, 0] == -1
    assert np.asarray(a, dtype="float64").dtype == np.float64


def test_from_dlpack_of_numpy_is_zero_copy_both_ways():
    x = np.arange(8, dtype="int32")
    a = nd.from_dlpack(x)
    assert a.data_ptr == x.ctypes.data and a.dtype == "int32" and a.device == irlab.cpu(0)
    a[:] = np.full(8, 5, "int32")
    assert (x == 5).all()
    x[3] = 7
    assert a.numpy()[3] == 7


def test_capsule_round_trip_and_single_use():
    a = nd.array(np.ones((4, 4), "float64"))
    cap = a.to_dlpack()
    assert type(cap).__name__ == "PyCapsule"
    b = nd.from_dlpack(cap)
    assert b.data_ptr == a.data_ptr and b.shape == (4, 4)
    b[:] = np.zeros((4, 4))  # the imported array is writable and shares memory
    assert not a.numpy().any()
    with pytest.raises(IrlabError, match="only once"):
        nd.from_dlpack(cap)


def test_from_dlpack_keeps_the_producer_alive():
    import gc

    a = nd.from_dlpack(np.arange(1000, dtype="float64"))
    gc.collect()
    np.testing.assert_array_equal(a.numpy(), np.arange(1000))


def test_from_dlpack_may_be_unaligned_but_must_be_contiguous():
    raw = np.arange(17, dtype="float32")
    a = nd.from_dlpack(raw[1:])  # offset by 4 bytes from an aligned-or-not start
    assert a.data_ptr == raw[1:].ctypes.data
    assert a.is_aligned == (a.data_ptr % 64 == 0)
    with pytest.raises(IrlabError, match="C-contiguous"):
        nd.from_dlpack(np.arange(10.0)[::2])


def test_from_dlpack_rejects_other_devices_and_non_producers():
    class OnCuda:
        def __dlpack__(self, **kw):
            raise AssertionError("must not be asked to export")

        def __dlpack_device__(self):
            return (2, 1)

    with pytest.raises(IrlabError, match=r"cuda\(1\).*cpu only"):
        nd.from_dlpack(OnCuda())
    with pytest.raises(IrlabError, match="__dlpack__"):
        nd.from_dlpack([1, 2, 3])
    readonly = np.arange(3.0)
    readonly.flags.writeable = False
    with pytest.raises(IrlabError, match="refused"):
        nd.from_dlpack(readonly)


def test_repr_and_str_follow_tvm():
    a = nd.array(np.arange(8, dtype="float32"))
    assert repr(a) == "<irlab.nd.NDArray shape=(8,), cpu(0)>\n" + repr(np.arange(8, dtype="float32"))
    assert str(a) == str(np.arange(8, dtype="float32"))


def test_devices():
    dev = irlab.cpu(0)
    assert repr(dev) == "cpu(0)" and dev.device_type == 1 and dev.device_id == 0
    assert dev.exist and dev.sync() is None
    assert irlab.device("cpu", 0) == dev == irlab.device("llvm") == irlab.device("llvm -mcpu=x")
    assert irlab.device("cpu", 1) != dev and repr(irlab.cpu(1)) == "cpu(1)"
    assert nd.empty((1,)).device == dev
    with pytest.raises(IrlabError, match="cpu only"):
        irlab.device("cuda", 0)
    with pytest.raises(IrlabError, match="cpu only"):
        irlab.Device(2, 0)
