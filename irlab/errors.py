"""The irlab exception hierarchy: every error a user can trigger is one of these."""


class IrlabError(Exception):
    """Base class of all irlab errors (TVM's ``TVMError``)."""


# TVM code catches ``tvm.TVMError``; keep that spelling working under ``import irlab as tvm``.
TVMError = IrlabError


class DiagnosticError(IrlabError):
    """An error about a piece of IR; ``node`` is the offending node when known."""

    def __init__(self, message, node=None):
        super().__init__(message)
        self.node = node


class RelayTypeError(DiagnosticError):
    """Type inference rejected a program (shape or dtype mismatch, bad attributes...)."""


class ParseError(DiagnosticError):
    """The text given to a parser is not valid; the message shows line:column and a caret.
    A diagnostic (``DiagnosticError``), as TVM's parser reports its errors."""

    def __init__(self, message, line=None, column=None):
        super().__init__(message)
        self.line = line
        self.column = column


class OpNotRegisteredError(IrlabError, KeyError):
    """``Op.get`` was asked for an operator name that is not registered."""

    def __str__(self):  # KeyError would print the message with quotes around it
        return self.args[0] if self.args else ""


class InterpreterError(DiagnosticError):
    """The reference interpreter cannot evaluate a node (unbound variable, bad input...)."""


class StructuralMismatchError(IrlabError, AssertionError):
    """``assert_structural_equal`` failed; the message holds a text diff of both sides."""


class FrontendError(IrlabError):
    """A model cannot be imported: unsupported operators, or a malformed or inconsistent model."""


class TIRError(DiagnosticError):
    """A TIR program or expression is malformed, or TIR execution failed (bounds, dtypes...)."""


class CodegenError(DiagnosticError):
    """A code generator met IR it cannot translate (``node`` is the construct at fault)."""


class ArgumentError(IrlabError, ValueError):
    """A compiled function was called with an argument that does not fit its signature."""


class CompileError(IrlabError):
    """An external tool (the C compiler or linker) failed or is missing."""


class VMError(IrlabError, RuntimeError):
    """The Relax virtual machine rejected a program or an input at run time (a failed shape or
    struct-info check names the value and dimension at fault). Also a ``RuntimeError``, as
    TVM's VM raises."""


class VMTypeError(VMError, TypeError):
    """A run-time check of the Relax VM found a value of the wrong kind (a tuple where a
    tensor was declared...). Also a ``TypeError``, as TVM raises."""


class VMValueError(VMError, ValueError):
    """A run-time check of the Relax VM found a value of the right kind but the wrong ndim,
    dtype or size. Also a ``ValueError``, as TVM raises."""
