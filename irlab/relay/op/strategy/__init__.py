"""Strategies of the Relay ops: ``generic`` (any target) and ``x86`` (targets with key "cpu").

``injective_strategy`` serves every elementwise/broadcast/layout op: its registered
``FTVMCompute`` and the CPU ``schedule_injective``.
"""

from irlab.relay.op.strategy.generic import (injective_strategy, register_injective,
                                             wrap_topi_schedule)

__all__ = ["injective_strategy", "register_injective", "wrap_topi_schedule"]
