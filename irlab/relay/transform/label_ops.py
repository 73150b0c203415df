"""Placeholder: being written (issue 3)."""


def LabelOps(*args, **kwargs):
    raise NotImplementedError("LabelOps is being written")

