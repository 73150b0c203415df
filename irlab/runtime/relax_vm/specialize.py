"""What the VM may know about a builtin when it resolves an instruction once: a faster form
for the instruction's constant arguments (``fast_path``), and whether it only allocates
(``reusable_allocation``: its result may be kept across calls, see ``resolve``).

A fast form must behave exactly as the builtin: it checks the common case cheaply and calls
the builtin itself otherwise, so a failing check raises the builtin's own error.
"""

from __future__ import annotations

_FAST_PATHS: dict = {}  # builtin name -> (the builtin, maker)
_ALLOCATIONS: dict = {}  # builtin name -> the builtin


def fast_path(name, builtin):
    """Register ``maker(values, dynamic, exclusive)`` as the fast-form maker of ``builtin``
    (the function registered as ``name``). ``values`` holds the instruction's arguments, None
    at the ``dynamic`` positions (known only at run time); the maker returns a callable taking
    the dynamic arguments in order, or None when it has no fast form for them. With
    ``exclusive`` the form serves one call at a time (a frame's), so it may keep state from
    one call to the next."""
    def register(maker):
        _FAST_PATHS[name] = (builtin, maker)
        return maker
    return register


def reusable_allocation(name, builtin):
    """Mark ``builtin`` (registered as ``name``) as a pure allocation: called with constant
    arguments it makes a fresh buffer, and a buffer nothing holds any longer may serve the
    next call instead (TVM's pooled allocator does the same)."""
    _ALLOCATIONS[name] = builtin


def fast_form(name, callee, values, dynamic, exclusive=False):
    """The fast form of ``callee`` (found under ``name``) for these arguments, or None. A
    function registered over a builtin's name gets none."""
    entry = _FAST_PATHS.get(name)
    if entry is None or entry[0] is not callee:
        return None
    return entry[1](values, tuple(dynamic), exclusive)


def is_reusable_allocation(name, callee) -> bool:
    return _ALLOCATIONS.get(name) is callee and callee is not None


__all__ = ["fast_path", "reusable_allocation", "fast_form", "is_reusable_allocation"]
