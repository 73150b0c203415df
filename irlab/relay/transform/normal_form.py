"""Placeholder: being written (issue 3)."""


def ToANormalForm(*args, **kwargs):
    raise NotImplementedError("ToANormalForm is being written")


def ToGraphNormalForm(*args, **kwargs):
    raise NotImplementedError("ToGraphNormalForm is being written")


def ToBasicBlockNormalForm(*args, **kwargs):
    raise NotImplementedError("ToBasicBlockNormalForm is being written")

