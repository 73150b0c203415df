"""Placeholder: being written (issue 3)."""


def FuseOps(*args, **kwargs):
    raise NotImplementedError("FuseOps is being written")


def DefuseOps(*args, **kwargs):
    raise NotImplementedError("DefuseOps is being written")

