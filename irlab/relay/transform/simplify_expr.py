"""Placeholder: being written (issue 3)."""


def SimplifyExpr(*args, **kwargs):
    raise NotImplementedError("SimplifyExpr is being written")


def SimplifyExprPostAlterOp(*args, **kwargs):
    raise NotImplementedError("SimplifyExprPostAlterOp is being written")

