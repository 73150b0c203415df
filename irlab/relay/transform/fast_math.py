"""Placeholder: being written (issue 3)."""


def FastMath(*args, **kwargs):
    raise NotImplementedError("FastMath is being written")

