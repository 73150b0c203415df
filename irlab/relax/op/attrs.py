"""Typed attrs of Relax operators (``relax.attrs.*``), compared by value."""

from __future__ import annotations

from irlab.ir.attrs import Attrs


class AstypeAttrs(Attrs):
    _type_key = "relax.attrs.AstypeAttrs"
    dtype: str = "float32"


class MatmulAttrs(Attrs):
    _type_key = "relax.attrs.MatmulAttrs"
    out_dtype: str = ""


class SoftmaxAttrs(Attrs):
    _type_key = "relax.attrs.SoftmaxAttrs"
    axis: int = -1


class DropoutAttrs(Attrs):
    _type_key = "relax.attrs.DropoutAttrs"
    rate: float = 0.5


class Conv2DAttrs(Attrs):
    _type_key = "relax.attrs.Conv2DAttrs"
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = "NCHW"
    out_dtype: str = ""


class Pool2DAttrs(Attrs):
    _type_key = "relax.attrs.Pool2DAttrs"
    pool_size: tuple = (1, 1)
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    ceil_mode: bool = False
    count_include_pad: bool = False
    layout: str = "NCHW"
    out_layout: str = "NCHW"


class AdaptivePool2DAttrs(Attrs):
    _type_key = "relax.attrs.AdaptivePool2DAttrs"
    output_size: object = None
    layout: str = "NCHW"
    out_layout: str = "NCHW"


class BatchNormAttrs(Attrs):
    _type_key = "relax.attrs.BatchNormAttrs"
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True
    momentum: float = 0.1


class LayerNormAttrs(Attrs):
    _type_key = "relax.attrs.LayerNormAttrs"
    axes: tuple = (-1,)
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


class PermuteDimsAttrs(Attrs):
    _type_key = "relax.attrs.PermuteDimsAttrs"
    axes: object = None


class ConcatAttrs(Attrs):
    _type_key = "relax.attrs.ConcatAttrs"
    axis: object = 0


class SplitAttrs(Attrs):
    _type_key = "relax.attrs.SplitAttrs"
    indices_or_sections: object = 1
    axis: int = 0


class SqueezeAttrs(Attrs):
    _type_key = "relax.attrs.SqueezeAttrs"
    axis: object = None


class ExpandDimsAttrs(Attrs):
    _type_key = "relax.attrs.ExpandDimsAttrs"
    axis: tuple = (0,)


class FlattenAttrs(Attrs):
    _type_key = "relax.attrs.FlattenAttrs"


class StridedSliceAttrs(Attrs):
    _type_key = "relax.attrs.StridedSliceAttrs"
    axes: tuple = ()
    begin: tuple = ()
    end: tuple = ()
    strides: object = None


class TakeAttrs(Attrs):
    _type_key = "relax.attrs.TakeAttrs"
    axis: object = None


class StatisticalAttrs(Attrs):
    _type_key = "relax.attrs.StatisticalAttrs"
    axis: object = None
    keepdims: bool = False


class InitAttrs(Attrs):
    _type_key = "relax.attrs.InitAttrs"
    dtype: str = "float32"


class ArgReduceAttrs(Attrs):
    _type_key = "relax.attrs.ArgReduceAttrs"
    axis: object = None
    keepdims: bool = False


class ClipAttrs(Attrs):
    _type_key = "relax.attrs.ClipAttrs"
    min: float = 0.0
    max: float = 0.0


class LeakyReluAttrs(Attrs):
    _type_key = "relax.attrs.LeakyReluAttrs"
    alpha: float = 0.01


class PadAttrs(Attrs):
    _type_key = "relax.attrs.PadAttrs"
    pad_width: tuple = ()
    pad_value: float = 0.0
    pad_mode: str = "constant"


class TileAttrs(Attrs):
    _type_key = "relax.attrs.TileAttrs"
    repeats: tuple = ()


class RepeatAttrs(Attrs):
    _type_key = "relax.attrs.RepeatAttrs"
    repeats: int = 1
    axis: object = None


class TriluAttrs(Attrs):
    _type_key = "relax.attrs.TriluAttrs"
    k: int = 0
    upper: bool = True


class ArangeAttrs(Attrs):
    _type_key = "relax.attrs.ArangeAttrs"
    start: float = 0.0
    end: float = 0.0
    step: float = 1.0
    dtype: str = "int64"


class Conv2DTransposeAttrs(Attrs):
    _type_key = "relax.attrs.Conv2DTransposeAttrs"
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    output_padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "IOHW"
    out_layout: str = "NCHW"
    out_dtype: str = ""


class Resize2DAttrs(Attrs):
    _type_key = "relax.attrs.Resize2DAttrs"
    roi: tuple = (0.0, 0.0, 0.0, 0.0)
    layout: str = "NCHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = "round"
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""


class OneHotAttrs(Attrs):
    _type_key = "relax.attrs.OneHotAttrs"
    depth: int = 1
    axis: int = -1


class ScanopAttrs(Attrs):
    _type_key = "relax.attrs.ScanopAttrs"
    axis: object = None
    dtype: str = ""
    exclusive: bool = False
