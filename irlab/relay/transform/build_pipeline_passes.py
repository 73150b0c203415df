"""Passes of relay.build's pipeline that have nothing to rewrite in irlab's setting.

They exist so that the pipeline shows TVM's exact pass sequence (names, kinds, opt levels and
nesting) to instruments and the pass stepper. Each returns its input unchanged, for a reason
stated in its docstring; none of them pretends to transform anything.
"""

from __future__ import annotations

from irlab.transform import Sequential, module_pass
from irlab.relay.transform import InferType, function_pass


def _unchanged_function(func, mod, ctx):
    return func


def _unchanged_module(mod, ctx):
    return mod


def FlattenAtrousConv():
    """Folds ``space_to_batch_nd -> conv2d -> batch_to_space_nd`` into a dilated conv2d.
    irlab has no space/batch ops, so no such chain exists: nothing to fold."""
    return function_pass(_unchanged_function, opt_level=0, name="FlattenAtrousConv",
                         required=["InferType"])


def SplitArgs(max_function_args=-1):
    """Splits concatenations with more inputs than the target accepts. The CPU target has no
    limit (-1), as in TVM for llvm, so nothing is split."""
    return function_pass(_unchanged_function, opt_level=1, name="SplitArgs",
                         required=["InferType"])


def QnnLegalize():
    """Target-specific rewrites of QNN ops; irlab has no QNN ops."""
    return function_pass(_unchanged_function, opt_level=1, name="QnnLegalize",
                         required=["InferType"])


def QnnCanonicalize():
    """Lowers QNN ops to plain Relay ops; irlab has no QNN ops."""
    return function_pass(_unchanged_function, opt_level=1, name="QnnCanonicalize",
                         required=["InferType"])


def QnnLegalizeSequence():
    """``relay.qnn.transform.Legalize()``: the Sequential "qnn.Legalize"."""
    return Sequential([QnnLegalize(), QnnCanonicalize()], opt_level=0, name="qnn.Legalize")


def PlanDevices():
    """Assigns a device to every sub-expression. A homogeneous CPU build has one device, so
    every expression is already on it: the phases check that and change nothing."""
    return Sequential([
        function_pass(_unchanged_function, opt_level=0, name="PlanDevicesRewrite"),
        module_pass(_unchanged_module, opt_level=0, name="PlanDevicesCheckConflicts"),
        InferType(),
        module_pass(_unchanged_module, opt_level=0, name="PlanDevicesCore"),
    ], opt_level=0, name="PlanDevices")


def AnnotateMemoryScope():
    """Marks texture memory scopes for GPU targets (Adreno); CPU memory is global."""
    return function_pass(_unchanged_function, opt_level=2, name="AnnotateMemoryScope")
