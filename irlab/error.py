"""``tvm.error``: TVM's module of exception classes, spelled as TVM code catches them."""

from irlab.errors import (  # noqa: F401
    IrlabError, TVMError, DiagnosticError, OpNotRegisteredError)


class InternalError(TVMError):
    """An invariant of the compiler itself broke (TVM's ``InternalError``)."""


class OpError(TVMError):
    """Base class of the errors about an operator a frontend or pass cannot handle."""


class OpNotImplemented(OpError, NotImplementedError):
    """An operator is not supported."""


class OpAttributeRequired(OpError, AttributeError):
    """An operator is missing a required attribute."""


class OpAttributeInvalid(OpError, AttributeError):
    """An operator attribute has a value that is not accepted."""


class OpAttributeUnImplemented(OpError, NotImplementedError):
    """An operator attribute is recognised but not supported."""
