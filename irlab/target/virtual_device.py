"""``tvm.target.VirtualDevice``: where a value lives at run time (device, target, memory scope),
a compile-time value that Relay attributes such as ``memory.alloc_storage``'s carry."""

from __future__ import annotations

from irlab.errors import IrlabError


class VirtualDevice:
    """A (device type, device id, target, memory scope) value; ``VirtualDevice()`` is the
    unconstrained one (type and id -1). Equal and hashed by value."""

    __slots__ = ("device_type_int", "virtual_device_id", "target", "memory_scope")

    def __init__(self, device=None, target=None, memory_scope=""):
        if device is None:
            device_type, device_id = -1, -1
        elif hasattr(device, "device_type") and hasattr(device, "device_id"):
            device_type, device_id = int(device.device_type), int(device.device_id)
        else:
            raise IrlabError(f"VirtualDevice takes a Device (tvm.cpu()), got {device!r}")
        object.__setattr__(self, "device_type_int", device_type)
        object.__setattr__(self, "virtual_device_id", device_id)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "memory_scope", str(memory_scope))

    def __setattr__(self, name, value):
        raise AttributeError("VirtualDevice is immutable")

    @property
    def device_type(self) -> int:
        return self.device_type_int

    def is_fully_unconstrained(self) -> bool:
        return self.device_type_int == -1 and self.target is None and not self.memory_scope

    def _key(self):
        return (self.device_type_int, self.virtual_device_id, str(self.target),
                self.memory_scope)

    def __eq__(self, other):
        return isinstance(other, VirtualDevice) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"VirtualDevice(device_type={self.device_type_int}, "
                f"virtual_device_id={self.virtual_device_id}, target={self.target}, "
                f"memory_scope={self.memory_scope!r})")
