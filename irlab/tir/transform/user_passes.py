"""User-written TIR passes in the lowering: TVM's ``tir.add_lower_pass`` config and seed 000's
``add_custom_pass`` / ``ApplyCustomPass``, each checked where it hands its result back.

TVM's way -- a pass (``tir.transform.prim_func_pass``) inserted after a phase of
``irlab.lower`` (phase 0: before everything, on block-form TIR; 1: after blocks became flat
loops over 1-D buffers; 2: after vectorize/unroll; 3 and above: at the end)::

    @tvm.tir.transform.prim_func_pass(opt_level=0)
    def double_unroll(func, mod, ctx):
        return func
    with tvm.transform.PassContext(config={"tir.add_lower_pass": [(1, double_unroll)]}):
        lib = tvm.build(mod, target="llvm")        # relay.build too

The seed's way -- ``fn(stmt) -> stmt`` registered on the context, applied to every PrimFunc
body by ``ApplyCustomPass``::

    tir.transform.PassContext.current().add_custom_pass(fn, "tir.custom_pass")
    mod = tir.transform.ApplyCustomPass()(mod)

A user pass that returns something else than a PrimFunc (a Stmt for ``add_custom_pass``), or
a function that is no longer well formed (``tir.analysis.verify_well_formed``), is refused
right there, with the pass's name, before a later pass or the code generator trips on it.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.module import IRModule
from irlab.tir.function import PrimFunc
from irlab.tir.stmt import Stmt
from irlab.transform import Pass, PassInfo, register_config

register_config("tir.add_lower_pass", "Array")

NUM_PHASES = 4  # user passes go after phase 0, 1, 2 or 3 of the lowering pipeline


def user_lower_passes(ctx) -> list[list[Pass]]:
    """The ``tir.add_lower_pass`` passes of ``ctx``, one list per phase, each checked."""
    phases: list[list[Pass]] = [[] for _ in range(NUM_PHASES)]
    entries = ctx.config.get("tir.add_lower_pass") or []
    if not isinstance(entries, (list, tuple)):
        raise IrlabError(f"tir.add_lower_pass must be a list of (phase, pass), got "
                         f"{type(entries).__name__}")
    for entry in entries:
        phase, pass_ = _phase_and_pass(entry)
        phases[min(phase, NUM_PHASES - 1)].append(CheckedUserPass(pass_, f"phase {phase}"))
    return phases


def _phase_and_pass(entry) -> tuple[int, Pass]:
    if not isinstance(entry, (list, tuple)) or len(entry) != 2:
        raise IrlabError(f"tir.add_lower_pass: each entry is (phase, pass), got {entry!r}")
    phase, pass_ = entry
    if isinstance(phase, bool) or not isinstance(phase, int) or phase < 0:
        raise IrlabError(f"tir.add_lower_pass: the phase must be an integer >= 0 (0-3), got "
                         f"{phase!r} for {pass_!r}")
    if not isinstance(pass_, Pass):
        raise IrlabError(f"tir.add_lower_pass: phase {phase} is given "
                         f"{type(pass_).__name__} {pass_!r}, not a pass; make one with "
                         f"@tvm.tir.transform.prim_func_pass(opt_level=0)")
    return phase, pass_


class CheckedUserPass(Pass):
    """Runs a user's pass (seen by instruments under the pass's own name) and checks that
    every PrimFunc it changed is still well formed."""

    def __init__(self, inner: Pass, where: str):
        self.inner = inner
        self.where = where
        self.info = inner.info

    def transform_module(self, mod, ctx):
        result = self.inner.transform_module(mod, ctx)
        if not isinstance(result, IRModule):
            raise IrlabError(f"pass {self.info.name} ({self.where}) returned "
                             f"{type(result).__name__}, not an IRModule")
        if not _checks_itself(self.inner):
            check_changed_functions(mod, result, self.info.name)
        return result


def _checks_itself(pass_) -> bool:
    """A ``prim_func_pass`` (function or class form) verifies its own results."""
    from irlab.tir.transform import UserPrimFuncPass

    return isinstance(pass_, UserPrimFuncPass) or isinstance(
        getattr(pass_, "_inner", None), UserPrimFuncPass)


def check_changed_functions(before: IRModule, after: IRModule, pass_name: str):
    """Every PrimFunc of ``after`` that is not the one of ``before`` must be well formed."""
    for gvar, func in after.functions.items():
        if isinstance(func, PrimFunc) and func is not before.functions.get(gvar):
            check_well_formed(func, pass_name, gvar.name_hint)


def check_well_formed(func: PrimFunc, pass_name: str, func_name: str):
    """Raise ``WellFormedError`` naming ``pass_name`` when ``func`` is not well formed."""
    from irlab.tir.analysis import WellFormedError, verify_well_formed

    try:
        verify_well_formed(func)
    except WellFormedError as err:
        raise WellFormedError(f"pass {pass_name} left @{func_name} not well formed: {err}",
                              getattr(err, "node", None)) from err


class CustomStmtPass(Pass):
    """One ``add_custom_pass`` function, applied to the body of every PrimFunc."""

    def __init__(self, name: str, stmt_func):
        self.stmt_func = stmt_func
        self.info = PassInfo(0, name)

    def transform_module(self, mod, ctx):
        updates = {}
        for gvar, func in mod.functions.items():
            if not isinstance(func, PrimFunc):
                continue
            body = self.stmt_func(func.body)
            if not isinstance(body, Stmt):
                raise IrlabError(f"custom pass {self.info.name} returned "
                                 f"{type(body).__name__} for the body of @{gvar.name_hint}, "
                                 f"not a tir.Stmt")
            if body is not func.body:
                updates[gvar] = func.with_body(body)
                check_well_formed(updates[gvar], self.info.name, gvar.name_hint)
        if not updates:
            return mod
        out = mod.copy()
        for gvar, func in updates.items():
            out.update_func(gvar, func)
        return out


class _ApplyCustomPass(Pass):
    def __init__(self, names):
        self.names = None if names is None else list(names)
        self.info = PassInfo(0, "tir.ApplyCustomPass")

    def transform_module(self, mod, ctx):
        from irlab.transform import PassContext

        visible = PassContext.visible_custom_passes()
        names = list(visible) if self.names is None else self.names
        for name in names:
            if name not in visible:
                raise IrlabError(f"ApplyCustomPass: no custom pass named {name!r}; "
                                 f"registered: {', '.join(visible) or '(none)'}")
            mod = CustomStmtPass(name, visible[name])(mod)
        return mod


def ApplyCustomPass(names=None) -> Pass:  # noqa: N802 (the seed's name)
    """Apply the passes registered with ``PassContext.add_custom_pass`` (all of them, in the
    order registered, or those ``names``) to every PrimFunc body; each is a step of its own
    for the instruments. The passes are looked up when the pass runs."""
    return _ApplyCustomPass(names)


__all__ = ["user_lower_passes", "CheckedUserPass", "CustomStmtPass", "ApplyCustomPass",
           "check_well_formed", "check_changed_functions"]
