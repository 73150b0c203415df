"""Layer wrappers that create their own (unannotated) weight variables, as TVM's
``relay.testing.layers``. Shapes of the created variables are left to type inference."""

from __future__ import annotations

from irlab import relay


def _pop_name(kwargs) -> str:
    name = kwargs.pop("name", None)
    if not name:
        raise ValueError("layer wrappers need a name= to name the weights they create")
    return name


def batch_norm_infer(data, gamma=None, beta=None, moving_mean=None, moving_var=None, **kwargs):
    """``nn.batch_norm(...)[0]`` with ``<name>_gamma/_beta/_moving_mean/_moving_var`` created
    when not given."""
    name = _pop_name(kwargs)
    gamma = gamma if gamma is not None else relay.var(name + "_gamma")
    beta = beta if beta is not None else relay.var(name + "_beta")
    moving_mean = moving_mean if moving_mean is not None else relay.var(name + "_moving_mean")
    moving_var = moving_var if moving_var is not None else relay.var(name + "_moving_var")
    return relay.nn.batch_norm(data, gamma=gamma, beta=beta, moving_mean=moving_mean,
                         moving_var=moving_var, **kwargs)[0]


def conv2d(data, weight=None, **kwargs):
    """``nn.conv2d`` with ``<name>_weight`` created when not given."""
    name = _pop_name(kwargs)
    weight = weight if weight is not None else relay.var(name + "_weight")
    return relay.nn.conv2d(data, weight, **kwargs)


def dense_add_bias(data, weight=None, bias=None, units=None, **kwargs):
    """``nn.bias_add(nn.dense(...))`` with ``<name>_weight`` and ``<name>_bias`` created when
    not given."""
    name = _pop_name(kwargs)
    weight = weight if weight is not None else relay.var(name + "_weight")
    bias = bias if bias is not None else relay.var(name + "_bias")
    out = relay.nn.dense(data, weight, units, **kwargs)
    return relay.nn.bias_add(out, bias, axis=-1)


def layer_norm(data, gamma=None, beta=None, **kwargs):
    """``nn.layer_norm`` with ``<name>_gamma`` and ``<name>_beta`` created when not given."""
    name = _pop_name(kwargs)
    gamma = gamma if gamma is not None else relay.var(name + "_gamma")
    beta = beta if beta is not None else relay.var(name + "_beta")
    return relay.nn.layer_norm(data, gamma, beta, **kwargs)


def conv_kernel_layout(data_layout: str, is_depthwise: bool = False) -> str:
    """The kernel layout used with ``data_layout`` (``OIHW`` for ``NCHW``)."""
    mapping = ({"NCHW": "OIHW", "NHWC": "HWOI"} if is_depthwise
               else {"NCHW": "OIHW", "NHWC": "HWIO"})
    if data_layout not in mapping:
        raise ValueError(f"unknown data layout {data_layout!r}")
    return mapping[data_layout]
