"""Builder interface (TVM's ``ms.builder``): ``BuilderInput`` in, ``BuilderResult`` out."""

from __future__ import annotations


class BuilderInput:
    """A scheduled module to compile for ``target`` (``params`` are accepted for TVM's
    signature; PrimFunc workloads have none)."""

    def __init__(self, mod, target, params=None):
        self.mod = mod
        self.target = target
        self.params = params

    def __repr__(self):
        return f"BuilderInput(target={self.target})"


class BuilderResult:
    """The compiled artifact's path, or ``error_msg`` when the build failed."""

    def __init__(self, artifact_path, error_msg):
        self.artifact_path = artifact_path
        self.error_msg = error_msg

    def __repr__(self):
        if self.error_msg is not None:
            return f"BuilderResult(error: {self.error_msg.splitlines()[0][:100]})"
        return f"BuilderResult({self.artifact_path!r})"


class Builder:
    """Compiles candidates: ``build(inputs) -> [BuilderResult]``, one per input, in order."""

    def build(self, builder_inputs) -> list:
        raise NotImplementedError
