"""Relay backend: LowerTE (fused functions -> PrimFuncs); memory planning, graph codegen and
the executor factory follow."""

from irlab.relay.backend.executor import Executor, Runtime  # noqa: E402,F401
