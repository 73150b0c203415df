"""Placeholder: being written (issue 3)."""


def FoldScaleAxis(*args, **kwargs):
    raise NotImplementedError("FoldScaleAxis is being written")


def BackwardFoldScaleAxis(*args, **kwargs):
    raise NotImplementedError("BackwardFoldScaleAxis is being written")


def ForwardFoldScaleAxis(*args, **kwargs):
    raise NotImplementedError("ForwardFoldScaleAxis is being written")

