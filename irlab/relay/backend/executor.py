"""``relay.backend.Executor`` / ``Runtime``: the named executor and runtime configurations a
module or ``relay.build`` may carry (TVM's ``Executor("aot", {"link-params": True})``).

irlab builds with the graph executor and its C++-style runtime; the other kinds are accepted as
configuration values (a module attribute, a ``build`` argument) so TVM code naming them runs.
"""

from __future__ import annotations

from irlab.errors import IrlabError

# kind -> {option: type}; the options TVM v0.13 registers for each.
_EXECUTORS = {
    "graph": {"link-params": bool},
    "aot": {"link-params": bool, "unpacked-api": bool, "interface-api": str,
            "workspace-byte-alignment": int, "constant-byte-alignment": int},
}
_RUNTIMES = {"cpp": {"system-lib": bool}, "crt": {"system-lib": bool}}


class _Config:
    """A registered kind plus checked options; equal by value, prints as the kind's name."""

    registry: dict = {}
    flag_registry_name = ""

    def __init__(self, name, options=None):
        kinds = self.registry
        if name not in kinds:
            raise IrlabError(f"{type(self).__name__} {name!r} is not registered; known: "
                             f"{sorted(kinds)}")
        options = dict(options or {})
        for key, value in options.items():
            expected = kinds[name].get(key)
            if expected is None:
                raise IrlabError(f"{type(self).__name__} {name!r} has no option {key!r}; "
                                 f"options: {sorted(kinds[name])}")
            if not isinstance(value, expected):
                raise IrlabError(f"{type(self).__name__} {name!r} option {key!r} takes "
                                 f"{expected.__name__}, got {value!r}")
        self.name = name
        self._attrs = options

    def __contains__(self, key):
        return key in self._attrs

    def __getitem__(self, key):
        return self._attrs[key]

    def __eq__(self, other):
        return (type(other) is type(self) and other.name == self.name
                and other._attrs == self._attrs)

    def __hash__(self):
        return hash((self.name, tuple(sorted(self._attrs.items()))))

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, {self._attrs!r})"

    @classmethod
    def list_registered(cls):
        """The names of the registered kinds."""
        return list(cls.registry)

    @classmethod
    def list_registered_options(cls, name):
        """``{option: type name}`` of one kind."""
        return {k: t.__name__ for k, t in cls.registry[str(name)].items()}


class Executor(_Config):
    """Executor configuration: ``"graph"`` (what irlab builds) or ``"aot"``."""

    registry = _EXECUTORS
    flag_registry_name = "executor"


class Runtime(_Config):
    """Runtime configuration: ``"cpp"`` (what irlab builds) or ``"crt"``."""

    registry = _RUNTIMES
    flag_registry_name = "runtime"
