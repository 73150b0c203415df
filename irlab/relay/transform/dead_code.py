"""Placeholder: being written (issue 3)."""


def DeadCodeElimination(*args, **kwargs):
    raise NotImplementedError("DeadCodeElimination is being written")

