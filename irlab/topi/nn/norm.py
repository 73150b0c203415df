"""Normalizations in TE: ``layer_norm`` and ``instance_norm`` (mean and variance stages, two
passes, then the normalizing output), ``batch_norm`` in inference form (the moving statistics:
elementwise, plus copies of the moving mean and variance as its 2nd and 3rd outputs)."""

from __future__ import annotations

from irlab import te
from irlab.tir import op as O
from irlab.topi.utils import dims


def _stats(x, axes, name):
    """(mean, var) stages of ``x`` over ``axes``, keeping the other axes (in order)."""
    shape = dims(x)
    keep = [d for d in range(len(shape)) if d not in axes]
    count = 1
    for a in axes:
        count *= shape[a]
    inv = O.const(1.0 / count, x.dtype)

    def full(i, ks):
        idx = [None] * len(shape)
        for d, v in zip(keep, i):
            idx[d] = v
        for d, v in zip(axes, ks):
            idx[d] = v
        return idx

    ks = [te.reduce_axis((0, shape[a]), name=f"k{n}") for n, a in enumerate(axes)]
    mean = te.compute(tuple(shape[d] for d in keep),
                      lambda *i: te.sum(x(*full(i, ks)) * inv, axis=ks),
                      name=f"{name}_mean", tag=f"{name}_mean")
    ks2 = [te.reduce_axis((0, shape[a]), name=f"k{n}") for n, a in enumerate(axes)]

    def var_body(*i):
        diff = x(*full(i, ks2)) - mean(*i)
        return te.sum(diff * diff * inv, axis=ks2)

    var = te.compute(tuple(shape[d] for d in keep), var_body, name=f"{name}_var",
                     tag=f"{name}_var")
    return mean, var, keep


def _normalize(x, mean, var, keep, gamma, beta, axis, epsilon, center, scale, name, tag):
    eps = O.const(epsilon, x.dtype)

    def body(*i):
        r = tuple(i[d] for d in keep)
        out = (x(*i) - mean(*r)) * O.rsqrt(var(*r) + eps)
        at = [i[a] for a in axis] if isinstance(axis, (list, tuple)) else [i[axis]]
        if scale:
            out = out * gamma(*at)
        if center:
            out = out + beta(*at)
        return out

    return te.compute(x.shape, body, name=name, tag=tag, attrs={"axis": axis})


def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    """Normalized over ``axis`` (an int, or a list of axes: ``gamma``/``beta`` then have the
    shape of those axes)."""
    ndim = len(data.shape)
    if isinstance(axis, (list, tuple)):
        axis = sorted(a % ndim for a in axis)
        axes = axis
    else:
        axis = axis % ndim
        axes = [axis]
    mean, var, keep = _stats(data, axes, "T_layer_norm")
    return _normalize(data, mean, var, keep, gamma, beta, axis, epsilon, center, scale,
                      "T_layer_norm", "layer_norm_output")


def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True):
    ndim = len(data.shape)
    axis = axis % ndim
    axes = [d for d in range(1, ndim) if d != axis]
    mean, var, keep = _stats(data, axes, "T_instance_norm")
    return _normalize(data, mean, var, keep, gamma, beta, axis, epsilon, center, scale,
                      "T_instance_norm", "instance_norm_output")


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True,
               scale=True):
    """Inference batch norm: (out, moving_mean, moving_var)."""
    ndim = len(data.shape)
    axis = axis % ndim
    eps = O.const(epsilon, data.dtype)

    def body(*i):
        c = i[axis]
        out = (data(*i) - moving_mean(c)) * O.rsqrt(moving_var(c) + eps)
        if scale:
            out = out * gamma(c)
        if center:
            out = out + beta(c)
        return out

    out = te.compute(data.shape, body, name="T_batch_norm", tag="batch_norm_output")
    mean = te.compute(moving_mean.shape, lambda c: moving_mean(c), name="T_batch_norm_mean",
                      tag="batch_norm_output")
    var = te.compute(moving_var.shape, lambda c: moving_var(c), name="T_batch_norm_var",
                     tag="batch_norm_output")
    return [out, mean, var]


__all__ = ["layer_norm", "instance_norm", "batch_norm"]
