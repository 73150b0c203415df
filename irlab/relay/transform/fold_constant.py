"""Placeholder: being written (issue 3)."""


def FoldConstant(*args, **kwargs):
    raise NotImplementedError("FoldConstant is being written")

