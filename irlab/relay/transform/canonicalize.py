"""Placeholder: being written (issue 3)."""


def CanonicalizeOps(*args, **kwargs):
    raise NotImplementedError("CanonicalizeOps is being written")


def CanonicalizeCast(*args, **kwargs):
    raise NotImplementedError("CanonicalizeCast is being written")

