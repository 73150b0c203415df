"""Placeholder: being written (issue 3)."""


def RemoveUnusedFunctions(*args, **kwargs):
    raise NotImplementedError("RemoveUnusedFunctions is being written")


def Inline(*args, **kwargs):
    raise NotImplementedError("Inline is being written")

