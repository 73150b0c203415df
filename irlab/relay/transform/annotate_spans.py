"""AnnotateSpans and InferTypeLocal: TVM's text-source pass and its one-expression type check.

AnnotateSpans re-parses each Relay function from its own printed text, as TVM does so that later
errors can point into a source. irlab's parser attaches no spans, so the result is the same
program (structurally equal); the pass exists so TVM pass pipelines and instruments naming it run.
"""

from __future__ import annotations

from irlab.relay.expr_functor import post_order
from irlab.transform import module_pass


def _reparse(mod, ctx):
    """``mod`` printed and parsed back (every node rebuilt from the text form)."""
    from irlab.relay.parser import parse

    return parse(mod.astext(show_meta_data=True))


def AnnotateSpans():  # noqa: N802 -- TVM's name
    """The AnnotateSpans pass (module pass, opt level 0)."""
    return module_pass(_reparse, opt_level=0, name="AnnotateSpans")


def InferTypeLocal(expr):  # noqa: N802 -- TVM's name
    """Type-check ``expr`` alone and fill ``checked_type`` on it and its sub-expressions in place
    (TVM's InferTypeLocal); returns the type of ``expr``."""
    from irlab.relay.ty_infer import infer_expr

    typed = infer_expr(expr)
    before, after = list(post_order(expr)), list(post_order(typed))
    if len(before) == len(after):
        for old, new in zip(before, after):
            ty = getattr(new, "_checked_type", None)
            if ty is not None and old is not new:
                old._set_checked_type(ty)
    expr._set_checked_type(typed.checked_type)
    return typed.checked_type
