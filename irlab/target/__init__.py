"""Targets and code generators: ``Target``, LLVM codegen (llvmlite) and C codegen."""

from irlab.target.target import (Target, as_target, host_cpu, default_num_threads,
                                 register_target_kind)

__all__ = ["Target", "as_target", "host_cpu", "default_num_threads", "register_target_kind"]
