"""The codes of the VM's shape builtins (TVM's ``relax.testing.runtime_builtin``), for tests
that write ``vm.builtin.match_shape`` / ``make_shape`` calls by hand."""

from irlab.runtime.relax_vm.builtin import MakeShapeCode, MatchShapeCode

__all__ = ["MakeShapeCode", "MatchShapeCode"]
