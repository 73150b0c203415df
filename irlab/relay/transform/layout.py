"""Placeholder: being written (issue 3)."""


def ConvertLayout(*args, **kwargs):
    raise NotImplementedError("ConvertLayout is being written")


def AlterOpLayout(*args, **kwargs):
    raise NotImplementedError("AlterOpLayout is being written")


def Legalize(*args, **kwargs):
    raise NotImplementedError("Legalize is being written")

