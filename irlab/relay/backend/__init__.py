"""Relay backend: LowerTE (fused functions -> PrimFuncs); memory planning, graph codegen and
the executor factory follow."""
