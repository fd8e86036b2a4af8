"""Where per-site and per-directory state lives.

The engine talks to one small interface, :class:`StateStore`, in the manner of
Scrapy's ``FilesStoreProtocol``.  Keys are ``(namespace, key)`` strings, e.g.
``("sandwich", "example.com/news/")``; values are plain data (``bytes``,
``str``, numbers, lists and dicts of those), so a disk (JOBDIR) or Redis
implementation can hold them without pickle.  Every namespace has a bound on
its number of keys; when it is reached the least recently used key goes.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol, TypeAlias, runtime_checkable

Value: TypeAlias = bytes | str | int | float | bool | list["Value"] | dict[str, "Value"] | None


@runtime_checkable
class StateStore(Protocol):
    """Key-value state by namespace, bounded per namespace (LRU)."""

    def get(self, namespace: str, key: str) -> Value:
        """The value, or ``None`` when absent; counts as a use of the key."""

    def set(self, namespace: str, key: str, value: Value) -> None:
        """Store ``value``, evicting the least recently used key if the bound is hit."""

    def delete(self, namespace: str, key: str) -> None:
        """Forget the key (no error when absent)."""

    def size(self, namespace: str) -> int:
        """Number of keys held in ``namespace``."""

    def close(self) -> None:
        """Release resources (flush, disconnect)."""


class MemoryStore:
    """An in-process :class:`StateStore`: one LRU-ordered dict per namespace.

    ``max_keys`` bounds every namespace; ``limits`` overrides it per namespace.
    ``evictions`` counts keys dropped to stay within the bounds.
    """

    def __init__(self, max_keys: int = 10_000, limits: dict[str, int] | None = None) -> None:
        if max_keys < 1:
            raise ValueError(f"max_keys must be positive, got {max_keys!r}")
        self._max_keys = max_keys
        self._limits = dict(limits or {})
        self._data: dict[str, OrderedDict[str, Value]] = {}
        self.evictions = 0

    def get(self, namespace: str, key: str) -> Value:
        table = self._data.get(namespace)
        if table is None or key not in table:
            return None
        table.move_to_end(key)
        return table[key]

    def set(self, namespace: str, key: str, value: Value) -> None:
        table = self._data.setdefault(namespace, OrderedDict())
        table[key] = value
        table.move_to_end(key)
        limit = self._limits.get(namespace, self._max_keys)
        while len(table) > limit:
            table.popitem(last=False)
            self.evictions += 1

    def delete(self, namespace: str, key: str) -> None:
        table = self._data.get(namespace)
        if table is not None:
            table.pop(key, None)

    def size(self, namespace: str) -> int:
        return len(self._data.get(namespace, ()))

    def close(self) -> None:
        self._data.clear()
