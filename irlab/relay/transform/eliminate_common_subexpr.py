"""Placeholder: being written (issue 3)."""


def EliminateCommonSubexpr(*args, **kwargs):
    raise NotImplementedError("EliminateCommonSubexpr is being written")

