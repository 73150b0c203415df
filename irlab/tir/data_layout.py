"""Data layout strings (TVM's ``tir.Layout``): ``NCHW``, ``NCHW16c``, ``OIHW64o`` -- primal axes
in upper case, sub-axes as a factor and a lower-case letter. Plain string functions used by the
TOPI computes and the Relay ops alike."""

from __future__ import annotations

import re

from irlab.errors import IrlabError

_LAYOUT_TOKEN = re.compile(r"(\d*)([A-Za-z])")


def parse_layout(name: str):
    """A layout string (``NCHW``, ``NCHW16c``) as a list of ``(axis letter, factor)``;
    primal axes are upper case with factor None, sub-axes lower case with their factor."""
    if not isinstance(name, str) or not name:
        raise IrlabError(f"invalid layout {name!r}: expected a non-empty string like 'NCHW16c'")
    pos, axes = 0, []
    for m in _LAYOUT_TOKEN.finditer(name):
        if m.start() != pos:
            break
        pos = m.end()
        digits, letter = m.groups()
        if letter.isupper():
            if digits:
                raise IrlabError(f"invalid layout {name!r}: primal axis {letter} cannot have "
                                 f"a factor ({digits})")
            axes.append((letter, None))
        else:
            if not digits or int(digits) <= 0:
                raise IrlabError(f"invalid layout {name!r}: sub-axis {letter} needs a positive "
                                 f"factor, e.g. 16{letter}")
            axes.append((letter, int(digits)))
    if pos != len(name):
        raise IrlabError(f"invalid layout {name!r}: cannot parse {name[pos:]!r}")
    letters = [a for a, _ in axes]
    for a in letters:
        if letters.count(a) > 1:
            raise IrlabError(f"invalid layout {name!r}: duplicate axis {a}")
        if a.islower() and a.upper() not in letters:
            raise IrlabError(f"invalid layout {name!r}: sub-axis {a} without primal axis "
                             f"{a.upper()}")
    return axes


def split_kernel_layout(layout: str) -> tuple:
    """``(primal, block)`` of a conv2d kernel layout: a permutation of OIHW, optionally with the
    output channels split by a trailing ``{block}o`` (``"OIHW64o"`` -> ``("OIHW", 64)``: weight
    shape ``(O // 64, I, KH, KW, 64)``); ``block`` is None when unsplit. The primal letters keep
    their positions, so ``layout.index("H")`` is the H axis either way. Other splits raise."""
    if not isinstance(layout, str):
        raise IrlabError(f"kernel_layout must be a string, got {layout!r}")
    primal = layout.rstrip("0123456789o") if layout.endswith("o") else layout
    suffix = layout[len(primal):]
    if sorted(primal) != sorted("OIHW"):
        raise IrlabError(f"kernel_layout {layout!r} is not supported: expected a permutation "
                         f"of 'OIHW', optionally followed by an output-channel block such as "
                         f"'16o' (e.g. 'OIHW16o')")
    if not suffix:
        return primal, None
    digits = suffix[:-1]
    if not digits.isdigit() or int(digits) <= 0:
        raise IrlabError(f"kernel_layout {layout!r} is not supported: the output-channel block "
                         f"must be a positive number followed by 'o' (e.g. 'OIHW16o')")
    return primal, int(digits)


def spatial_axes_of(layout: str) -> tuple:
    """(H axis, W axis) of an already type-checked layout (for the references)."""
    dims = [c for c in layout if c.isalpha()]
    return dims.index("H"), dims.index("W")


__all__ = ["parse_layout", "split_kernel_layout", "spatial_axes_of"]
