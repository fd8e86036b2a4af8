"""A :class:`~scrapy_detemplate.store.StateStore` in Redis, shared by crawler processes.

Needs the ``redis`` extra (``pip install scrapy-detemplate[redis]``).  Every
``(namespace, key)`` is one Redis string ``<prefix>:<namespace>:<key>`` holding
the value as versioned JSON (:func:`~scrapy_detemplate.store.dumps`); the
prefix follows scrapy-redis' habit, ``<spider>:detemplate`` by default.
``get`` returns a fresh copy: a runner that updates a value in place stores
it again with ``set``, as the store contract asks.

Concurrency: a runner reads, updates and writes a site's state within one
page.  :meth:`RedisStore.locked` is a per-site lock (``SET NX PX`` with a
random token, released by a compare-and-delete script), which the Scrapy
integration holds around each page (:func:`scrapy_detemplate.state.lock_runner`).
So segment-table counts are never lost to interleaved writes, and one
process at a time learns a site's template (rtdm) while the others read the
published template from the same key.  A lock whose holder died expires
after ``lock_lease`` seconds; a page that waits longer than ``lock_wait`` is
processed without it (counted as ``lock_timeouts``).

Failures: any Redis or network error switches the store to a local
:class:`~scrapy_detemplate.store.MemoryStore` (logged once, counted in
``errors``); the crawl goes on with what it learns locally.  After
``retry_after`` seconds Redis is tried again.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import redis

from scrapy_detemplate.store import MemoryStore, Value, dumps, loads

logger = logging.getLogger("scrapy_detemplate")

_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


class RedisStore:
    """State in Redis; a local :class:`MemoryStore` when Redis fails.

    ``client`` is a ``redis.Redis``; :meth:`from_url` builds one with short
    timeouts.  ``ttl`` (seconds, 0: none) expires keys not written for that
    long; the memory bound in Redis is the server's ``maxmemory`` with
    ``maxmemory-policy allkeys-lru``.
    """

    def __init__(
        self,
        client: Any,
        prefix: str = "detemplate",
        *,
        ttl: int = 0,
        fallback: MemoryStore | None = None,
        lock_lease: float = 30.0,
        lock_wait: float = 10.0,
        retry_after: float = 30.0,
    ) -> None:
        self._redis = client
        self._errors_caught = (redis.RedisError, OSError)
        self._prefix = prefix
        self._ttl = ttl
        self._local = fallback if fallback is not None else MemoryStore()
        self._lock_lease_ms = max(1, int(lock_lease * 1000))
        self._lock_wait = lock_wait
        self._retry_after = retry_after
        self._down_since: float | None = None
        self._release = client.register_script(_RELEASE)
        self.counters = {"redis_error": 0, "lock_timeout": 0, "lock_waits": 0, "fallback_ops": 0}

    @classmethod
    def from_url(cls, url: str, prefix: str = "detemplate", **kwargs: Any) -> RedisStore:
        """A store on the server at ``url`` (``redis://host:port/db``), 2 s socket timeouts."""
        client = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
        return cls(client, prefix, **kwargs)

    # -- StateStore ----------------------------------------------------------

    def get(self, namespace: str, key: str) -> Value:
        if self._use_local():
            return self._local.get(namespace, key)
        try:
            raw = self._redis.get(self._key(namespace, key))
        except self._errors_caught as exc:
            self._failed(exc)
            return self._local.get(namespace, key)
        if raw is None:
            return None
        try:
            return loads(raw)
        except ValueError:  # not ours or damaged: as if absent
            return None

    def set(self, namespace: str, key: str, value: Value) -> None:
        if self._use_local():
            self._local.set(namespace, key, value)
            return
        raw = dumps(value)
        try:
            self._redis.set(self._key(namespace, key), raw, ex=self._ttl or None)
        except self._errors_caught as exc:
            self._failed(exc)
            self._local.set(namespace, key, value)

    def delete(self, namespace: str, key: str) -> None:
        if self._use_local():
            self._local.delete(namespace, key)
            return
        try:
            self._redis.delete(self._key(namespace, key))
        except self._errors_caught as exc:
            self._failed(exc)
            self._local.delete(namespace, key)

    def size(self, namespace: str) -> int:
        if self._use_local():
            return self._local.size(namespace)
        pattern = self._key(namespace, "").replace("\\", "\\\\")
        for char in "*?[]":
            pattern = pattern.replace(char, "\\" + char)
        try:
            return sum(1 for _ in self._redis.scan_iter(match=pattern + "*", count=1000))
        except self._errors_caught as exc:
            self._failed(exc)
            return self._local.size(namespace)

    def close(self) -> None:
        self._local.close()
        with suppress(*self._errors_caught):
            self._redis.close()

    # -- SiteLocking ---------------------------------------------------------

    @contextmanager
    def locked(self, site: str) -> Iterator[bool]:
        """Hold ``site``'s lock; yields whether it is held (False: Redis down or timed out)."""
        if self._use_local():
            yield False
            return
        name = self._key("lock", site)
        token = secrets.token_hex(8)
        deadline = time.monotonic() + self._lock_wait
        delay = 0.001
        held = False
        try:
            while True:
                if self._redis.set(name, token, nx=True, px=self._lock_lease_ms):
                    held = True
                    break
                if time.monotonic() >= deadline:
                    self.counters["lock_timeout"] += 1
                    logger.warning("detemplate: waited %.1fs for the lock of %s; going on without it",
                                   self._lock_wait, site)  # fmt: skip
                    break
                self.counters["lock_waits"] += 1
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        except self._errors_caught as exc:
            self._failed(exc)
        try:
            yield held
        finally:
            if held:
                try:
                    self._release(keys=[name], args=[token])
                except self._errors_caught as exc:
                    self._failed(exc)

    # -- failures ------------------------------------------------------------

    @property
    def degraded(self) -> bool:
        """Whether the store is working on local state (Redis failed)."""
        return self._down_since is not None

    def _use_local(self) -> bool:
        if self._down_since is None:
            return False
        if time.monotonic() - self._down_since < self._retry_after:
            self.counters["fallback_ops"] += 1
            return True
        self._down_since = None  # try Redis again
        logger.info("detemplate: trying the Redis state store again")
        return False

    def _failed(self, exc: BaseException) -> None:
        self.counters["redis_error"] += 1
        self.counters["fallback_ops"] += 1
        if self._down_since is None:
            logger.error(
                "detemplate: Redis state store failed (%s); using local state for %.0fs, the crawl goes on "
                "(stats detemplate/state/redis_error)",
                exc, self._retry_after,
            )  # fmt: skip
        self._down_since = time.monotonic()

    def _key(self, namespace: str, key: str) -> str:
        return f"{self._prefix}:{namespace}:{key}"
