"""image.resize2d: attrs, relation, pattern and references on cases with known answers."""

import numpy as np
import pytest

from irlab import relay
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType
from irlab.relay.op.image import Resize2DAttrs
from irlab.relay.type_relation import TypeRelationError, infer_call_type

OP = Op.get("image.resize2d")


def resize(x, size, **kwargs):
    v = relay.var("x", shape=x.shape, dtype=str(x.dtype))
    func = relay.Function([v], relay.image.resize2d(v, size, **kwargs))
    return relay.create_executor("debug", mod=func).evaluate()(x).numpy()


def test_attrs_fields_and_pattern():
    assert list(Resize2DAttrs._fields) == [
        "size", "roi", "layout", "method", "coordinate_transformation_mode", "rounding_method",
        "cubic_alpha", "cubic_exclude", "extrapolation_value", "out_dtype"]
    assert OP.pattern == OpPattern.INJECTIVE
    call = relay.image.resize2d(relay.var("x"), (4, 6))
    assert call.attrs.non_default_items() == [("size", (4, 6))]


def test_nearest_asymmetric_integer_upsampling_repeats():
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    out = resize(x, (6, 12), method="nearest_neighbor",
                 coordinate_transformation_mode="asymmetric", rounding_method="floor")
    np.testing.assert_array_equal(out, x.repeat(2, axis=2).repeat(3, axis=3))


def test_linear_align_corners_and_half_pixel():
    x = np.array([[[[0.0, 3.0]]]], dtype=np.float32)
    out = resize(x, (1, 4), coordinate_transformation_mode="align_corners")
    np.testing.assert_allclose(out[0, 0, 0], [0, 1, 2, 3], atol=1e-6)
    # half_pixel: output centers at (i + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (clamped)
    out = resize(x, (1, 4))
    np.testing.assert_allclose(out[0, 0, 0], [0, 0.75, 2.25, 3], atol=1e-6)


def test_cubic_keeps_constants_and_nhwc_layout():
    x = np.full((1, 5, 5, 2), 7.0, dtype=np.float32)
    out = resize(x, (8, 3), layout="NHWC", method="cubic", cubic_alpha=-0.75)
    assert out.shape == (1, 8, 3, 2)
    np.testing.assert_allclose(out, 7.0, rtol=1e-6)


def test_tf_crop_and_resize_extrapolates_outside_the_roi():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    out = resize(x, (2, 2), roi=(0.0, 0.0, 1.5, 1.0), method="linear",
                 coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1)
    # rows sample y = 0 and 4.5 (outside: -1); columns x = 0 and 3
    np.testing.assert_allclose(out[0, 0], [[0, 3], [-1, -1]], atol=1e-6)


def test_relation():
    data = TensorType((2, 3, 5, 7), "float32")
    attrs = relay.image.resize2d(relay.var("x"), (10, 14)).attrs
    assert infer_call_type(OP, [data], attrs) == TensorType((2, 3, 10, 14), "float32")
    bad = relay.image.resize2d(relay.var("x"), (10, 14), method="area").attrs
    with pytest.raises(TypeRelationError, match="method must be one of"):
        infer_call_type(OP, [data], bad)
    with pytest.raises(TypeRelationError, match="layout"):
        infer_call_type(OP, [TensorType((2, 3, 5), "float32")], attrs)
