"""Where per-site and per-directory state lives.

The engine talks to one small interface, :class:`StateStore`, in the manner of
Scrapy's ``FilesStoreProtocol``.  Keys are ``(namespace, key)`` strings, e.g.
``("sandwich", "example.com/news/")``; values are plain data (``bytes``,
``str``, numbers, lists and dicts of those), so a disk (JOBDIR) or Redis
implementation can hold them without pickle.  Every namespace has a bound on
its number of keys; when it is reached the least recently used key goes.
"""

from __future__ import annotations

import base64
import json
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeAlias, runtime_checkable

Value: TypeAlias = bytes | str | int | float | bool | list["Value"] | dict[str, "Value"] | None

#: Tags of the JSON form of a value (:func:`to_json`): ``{"$b": base64}`` is
#: bytes, ``{"$d": {...}}`` a dict whose own keys are taken literally.
_BYTES_TAG = "$b"
_DICT_TAG = "$d"


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


@runtime_checkable
class SiteLocking(Protocol):
    """A store shared by several processes: one page of a site at a time.

    The engine's runner reads, updates and writes a site's state in one
    ``run``; under a shared store that read-modify-write must not interleave
    with another process's, or updates are lost (segment counts) and two
    processes learn one site's template twice (rtdm).
    """

    def locked(self, site: str) -> AbstractContextManager[object]:
        """Hold the site's lock for the duration of the ``with`` block."""


def to_json(value: Value) -> Any:
    """``value`` as JSON-ready data: bytes become ``{"$b": base64}`` (iterative, any depth).

    Dicts that have a key spelled like a tag are wrapped as ``{"$d": {...}}``,
    so every value comes back equal from :func:`from_json`.  Tuples become lists.
    """
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, slot = stack.pop()
        if isinstance(item, bytes):
            parent[slot] = {_BYTES_TAG: base64.b64encode(item).decode("ascii")}
        elif isinstance(item, dict):
            out: dict[str, Any] = {}
            for key, child in item.items():
                if not isinstance(key, str):
                    raise TypeError(f"state dict keys must be str, got {type(key).__name__}")
                out[key] = None
                stack.append((child, out, key))
            parent[slot] = {_DICT_TAG: out} if _BYTES_TAG in out or _DICT_TAG in out else out
        elif isinstance(item, (list, tuple)):
            items: list[Any] = [None] * len(item)
            for index, child in enumerate(item):
                stack.append((child, items, index))
            parent[slot] = items
        elif item is None or isinstance(item, (str, bool, int, float)):
            parent[slot] = item
        else:
            raise TypeError(f"not plain state data: {type(item).__name__}")
    return root[0]


def from_json(data: Any) -> Value:
    """The value :func:`to_json` encoded (iterative, any depth); ``ValueError`` on a bad tag."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(data, root, 0)]
    while stack:
        item, parent, slot = stack.pop()
        if isinstance(item, dict):
            if len(item) == 1 and _BYTES_TAG in item:
                encoded = item[_BYTES_TAG]
                if not isinstance(encoded, str):
                    raise ValueError("bad bytes tag")
                parent[slot] = base64.b64decode(encoded.encode("ascii"), validate=True)
                continue
            if len(item) == 1 and _DICT_TAG in item and isinstance(item[_DICT_TAG], dict):
                item = item[_DICT_TAG]
            out: dict[str, Any] = {}
            for key, child in item.items():
                out[key] = None
                stack.append((child, out, key))
            parent[slot] = out
        elif isinstance(item, list):
            items: list[Any] = [None] * len(item)
            for index, child in enumerate(item):
                stack.append((child, items, index))
            parent[slot] = items
        else:
            parent[slot] = item
    value: Value = root[0]
    return value


def dumps(value: Value) -> bytes:
    """One value as compact JSON bytes (the Redis form)."""
    return json.dumps(to_json(value), separators=(",", ":")).encode("utf-8", "surrogatepass")


def loads(raw: bytes) -> Value:
    """The value :func:`dumps` wrote; ``ValueError`` when ``raw`` is not one."""
    return from_json(json.loads(raw.decode("utf-8", "surrogatepass")))


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

    def namespaces(self) -> list[str]:
        """The namespaces that hold keys."""
        return [name for name, table in self._data.items() if table]

    def items(self, namespace: str) -> Iterator[tuple[str, Value]]:
        """``(key, value)`` pairs, least recently used first; not a use of the keys."""
        yield from list(self._data.get(namespace, {}).items())

    def close(self) -> None:
        self._data.clear()
