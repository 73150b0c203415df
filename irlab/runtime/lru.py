"""A small least-recently-used map: the build caches keep their newest entries only, so a
long notebook session does not hold every module it ever compiled."""

from __future__ import annotations

import threading
from collections import OrderedDict


class LRUCache:
    """A map of at most ``capacity`` entries that drops the least recently used one first.

    Safe to share between threads (``relay.build`` / ``irlab.build`` from several threads at
    once): a lookup moves its entry to the end while another thread may evict, so every
    operation holds the cache's lock."""

    def __init__(self, capacity: int = 64):
        self.capacity = capacity
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            value = self._entries.get(key, _MISSING)
            if value is _MISSING:
                return default
            self._entries.move_to_end(key)
            return value

    def __getitem__(self, key):
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __setitem__(self, key, value):
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def __contains__(self, key):
        with self._lock:
            return key in self._entries

    def __len__(self):
        with self._lock:
            return len(self._entries)

    def clear(self):
        with self._lock:
            self._entries.clear()

    def keys(self):
        """The keys, oldest first (a snapshot)."""
        with self._lock:
            return list(self._entries)

    def __iter__(self):
        """The keys, oldest first (a snapshot: other threads may change the cache meanwhile)."""
        return iter(self.keys())


_MISSING = object()
