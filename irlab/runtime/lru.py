"""A small least-recently-used map: the build caches keep their newest entries only, so a
long notebook session does not hold every module it ever compiled."""

from __future__ import annotations

from collections import OrderedDict


class LRUCache(OrderedDict):
    def __init__(self, capacity: int = 64):
        super().__init__()
        self.capacity = capacity

    def get(self, key, default=None):
        if key in self:
            self.move_to_end(key)
            return self[key]
        return default

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.capacity:
            self.popitem(last=False)
