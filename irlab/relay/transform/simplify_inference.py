"""Placeholder: being written (issue 3)."""


def SimplifyInference(*args, **kwargs):
    raise NotImplementedError("SimplifyInference is being written")

