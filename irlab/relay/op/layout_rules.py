"""Layout inference rules (TVM's ``FInferCorrectLayout``): given the layouts an op's inputs
arrive in, the layouts it wants them in, the layouts of its outputs and its attrs adapted to
them. Each op's definition module sets its rule (``op.set_attr("FInferCorrectLayout", rule)``);
``AlterOpLayout`` and ``ConvertLayout`` read it from the op.
"""

from __future__ import annotations

import re

from irlab.errors import IrlabError

# ---------------------------------------------------------------------------------------------
# layouts as strings
_TOKEN = re.compile(r"\d*[A-Za-z]")


def layout_axes(layout: str) -> list:
    """``"NCHW16c"`` -> ``["N", "C", "H", "W", "16c"]``."""
    return _TOKEN.findall(layout)


def _letter(token: str) -> str:
    return token[-1]


def layout_index(layout: str, letter: str) -> int:
    """Position of axis ``letter`` (``"C"`` primal, ``"c"`` sub-axis) in ``layout``, or -1."""
    for i, token in enumerate(layout_axes(layout)):
        if _letter(token) == letter:
            return i
    return -1


def ndim_primal(layout: str) -> int:
    return sum(1 for t in layout_axes(layout) if _letter(t).isupper())


def sub_layout(layout: str, pos: int, length: int) -> str:
    return "".join(layout_axes(layout)[pos:pos + length])


def expand_primal(src: str, dst: str) -> str:
    """``src`` prefixed with the primal axes of ``dst`` it lacks (``C`` vs NCHW -> ``NHWC``)."""
    have = {_letter(t) for t in layout_axes(src)}
    missing = [_letter(t) for t in layout_axes(dst) if _letter(t).isupper()
               and _letter(t) not in have]
    return "".join(missing) + src


def adjust_subordinate_factors(src: str, old: str, old_shape) -> str:
    """``src`` with each sub-axis factor set to 1 where ``old_shape`` is 1 along (or lacks)
    that axis, so a small broadcast operand keeps broadcasting (NHW1 -> NCHW1c)."""
    out = []
    for token in layout_axes(src):
        letter = _letter(token)
        if letter.islower():
            index = layout_index(old, letter.upper())
            one = index == -1 or old_shape[index] == 1
            token = ("1" if one else token[:-1]) + letter
        out.append(token)
    return "".join(out)


def _ndim(layout) -> int:
    return len(layout_axes(layout))


# ---------------------------------------------------------------------------------------------
# the rules, one per op family
# rule(attrs, new_in, old_in, types) -> (input layouts, output layouts, attrs); ``new_in`` is
# None on the first call (the original op); a None layout anywhere means "cannot infer".
def elemwise_arbitrary_layout(attrs, new_in, old_in, types):
    """Any layout works: follow the (first known) input."""
    if new_in is not None:
        ret = new_in[0]
    else:
        ret = next((layout for layout in old_in if layout is not None), None)
    return [ret] * len(old_in), [ret], attrs


def binary_broadcast_layout(attrs, new_in, old_in, types):
    """Broadcasting binary ops: both operands in one layout; a lower-rank operand takes the
    matching trailing part of the other's layout."""
    shapes = [t.shape for t in types]
    layouts = list(new_in if new_in is not None else old_in)
    if layouts[0] is None and layouts[1] is None:
        return [None, None], [None], attrs
    if layouts[0] is None or layouts[1] is None:
        known = 0 if layouts[0] is not None else 1
        unknown = 1 - known
        if len(shapes[known]) < len(shapes[unknown]):
            return [None, None], [None], attrs
        start = len(shapes[known]) - len(shapes[unknown])
        layouts[unknown] = sub_layout(layouts[known], start, len(shapes[unknown]))
        return layouts, [layouts[known]], attrs
    if _ndim(layouts[0]) == 0 or _ndim(layouts[1]) == 0:
        scalar = 0 if _ndim(layouts[0]) == 0 else 1
        return layouts, [layouts[1 - scalar]], attrs
    large = 0 if ndim_primal(layouts[0]) >= ndim_primal(layouts[1]) else 1
    small = 1 - large
    ret = layouts[large]
    if old_in[0] is not None and old_in[0] == old_in[1]:
        layouts[small] = adjust_subordinate_factors(ret, old_in[small], shapes[small])
    else:
        # e.g. a (C,) bias against NHWC: expanded to the full rank, then transformed.
        layouts[small] = ret
    return layouts, [ret], attrs


def conv2d_layout(attrs, new_in, old_in, types):
    """Convolutions dictate layouts: whatever the inputs, use the attrs' layouts."""
    return ([attrs.data_layout, attrs.kernel_layout],
            [attrs.out_layout or attrs.data_layout], attrs)


def pool_layout(attrs, new_in, old_in, types):
    """Pooling works in any layout: adopt the input's unless ``out_layout`` pins it."""
    if attrs.out_layout:
        if attrs.out_layout != attrs.layout:
            raise IrlabError(f"pooling input/output layouts mismatch: {attrs.layout} vs "
                             f"{attrs.out_layout}")
    elif new_in is not None:
        attrs = attrs.with_fields(layout=new_in[0])
    return [attrs.layout], [attrs.layout], attrs


def concatenate_layout(attrs, new_in, old_in, types):
    """Follow the inputs when they all share one new layout, moving ``axis`` with it."""
    ndim = len(types[0].fields[0].shape)
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    if new_in is not None and all(layout == new_in[0] for layout in new_in) \
            and old_in[0] is not None:
        dim = _letter(layout_axes(old_in[0])[axis])
        ret = new_in[0]
        return [ret] * len(old_in), [ret], attrs.with_fields(axis=layout_index(ret, dim))
    ret = next((layout for layout in old_in if layout is not None), None)
    if ret is None or _ndim(ret) <= axis or not _letter(layout_axes(ret)[axis]).isupper():
        return [None], [None], attrs
    return [ret] * len(old_in), [ret], attrs


def channel_normalization_layout(num_params, num_outputs):
    """batch_norm / layer_norm / instance_norm: data in any layout (``axis`` follows its dim), the
    per-channel parameters and statistics in layout ``C``."""

    def rule(attrs, new_in, old_in, types):
        ndim = len(types[0].shape)
        axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
        ret = None
        if new_in is not None and old_in[0] is not None:
            dim = _letter(layout_axes(old_in[0])[axis])
            ret = new_in[0]
            attrs = attrs.with_fields(axis=layout_index(ret, dim))
        elif old_in[0] is not None:
            ret = old_in[0]
        return [ret] + ["C"] * num_params, [ret] + ["C"] * (num_outputs - 1), attrs

    return rule
