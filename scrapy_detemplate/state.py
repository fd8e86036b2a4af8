"""The state store of a crawl: chosen from the settings, loaded and saved with the spider.

* Default: a bounded in-process :class:`~scrapy_detemplate.store.MemoryStore`
  (``DETEMPLATE_MAX_DIRECTORIES`` keys per directory-keyed namespace,
  ``DETEMPLATE_MAX_SITES`` per site-keyed one; the least recently used go).
* With ``JOBDIR``: the same, loaded from ``JOBDIR/detemplate-state.json`` when
  the crawler is built and saved there when the spider closes
  (:mod:`scrapy_detemplate.jobdir`); ``DETEMPLATE_STATE_FRESH`` ignores the file.
* With ``DETEMPLATE_REDIS_URL``: a :class:`~scrapy_detemplate.redis_store.RedisStore`
  shared by every process of the spider, each page run under its site's lock.

Stats, under ``detemplate/state/``: ``loaded_keys``, ``load_error``, ``invalid_entries``,
``saved_keys``, ``save_error``, ``evictions``, ``redis_error``, ``lock_timeout``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy_detemplate.config import DetemplateConfig, InvalidSetting
from scrapy_detemplate.jobdir import load_state, save_state, state_path
from scrapy_detemplate.runners.base import ParsedPage, Runner, Verdict
from scrapy_detemplate.store import MemoryStore, SiteLocking, StateStore

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger("scrapy_detemplate")

#: Namespaces keyed by site (bounded by ``max_sites``); the others are keyed by directory.
SITE_NAMESPACES = ("segments", "rtdm", "combined")


def memory_store(config: DetemplateConfig) -> MemoryStore:
    """The bounded in-process store the settings ask for."""
    return MemoryStore(max_keys=config.max_directories, limits=dict.fromkeys(SITE_NAMESPACES, config.max_sites))


class LockedRunner:
    """Runs each page under its site's lock in a shared store (see :class:`SiteLocking`)."""

    def __init__(self, runner: Runner, store: SiteLocking) -> None:
        self.inner = runner
        self.name = runner.name
        self._store = store

    def run(self, page: ParsedPage) -> Verdict:
        with self._store.locked(page.site):
            return self.inner.run(page)

    def __getattr__(self, name: str) -> Any:  # e.g. rtdm's ``counts``
        return getattr(self.inner, name)


def lock_runner(runner: Runner, store: StateStore) -> Runner:
    """``runner`` under per-site locks when ``store`` is shared, else ``runner`` itself."""
    if isinstance(store, SiteLocking) and not isinstance(runner, LockedRunner):
        return LockedRunner(runner, store)
    return runner


class CrawlState:
    """Owns a crawler's store: opens it, saves it at close, reports to stats."""

    def __init__(self, crawler: Crawler, config: DetemplateConfig) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.method = config.method
        self.jobdir: str = crawler.settings.get("JOBDIR") or ""
        self.store: StateStore
        self._closed = False
        if config.redis_url:
            try:
                from scrapy_detemplate.redis_store import RedisStore
            except ImportError as exc:  # the extra is missing: say so at start-up, do not crawl without it
                expected = "the redis extra installed (pip install 'scrapy-detemplate[redis]')"
                raise InvalidSetting("DETEMPLATE_REDIS_URL", config.redis_url, expected) from exc

            spider = getattr(crawler.spidercls, "name", None) or "spider"
            prefix = config.redis_key % {"spider": spider}
            self.store = RedisStore.from_url(
                config.redis_url, prefix, ttl=config.redis_ttl, fallback=memory_store(config),
                lock_wait=config.redis_lock_wait,
            )  # fmt: skip
            logger.info("detemplate: state in Redis under %s:*", prefix)
            return
        store = memory_store(config)
        self.store = store
        if not self.jobdir:
            return
        path = state_path(self.jobdir)
        if config.state_fresh:
            logger.info("detemplate: DETEMPLATE_STATE_FRESH is on; not loading %s", path)
            self._inc("detemplate/state/fresh")
            return
        from scrapy_detemplate.runners import valid_state

        result = load_state(store, path, valid_state)
        if result.error:
            logger.warning("detemplate: could not load the state in %s (%s); starting cold", path, result.error)
            self._inc("detemplate/state/load_error")
            store.close()
            return
        if result.invalid:
            logger.warning(
                "detemplate: left out %d invalid state entries of %s (first: %s); their sites and directories "
                "start cold (stats detemplate/state/invalid_entries)",
                result.invalid, path, result.first_invalid,
            )  # fmt: skip
            self._inc("detemplate/state/invalid_entries", result.invalid)
        if not result.missing:
            logger.info("detemplate: loaded %d state keys from %s", result.keys, path)
            self._inc("detemplate/state/loaded_keys", result.keys)

    def spider_closed(self, spider: Any = None) -> None:
        if self._closed:
            return
        self._closed = True
        store = self.store
        if isinstance(store, MemoryStore):
            self._inc("detemplate/state/evictions", store.evictions)
            if self.jobdir:
                path = state_path(self.jobdir)
                try:
                    saved = save_state(store, path, self.method)
                except (OSError, TypeError, ValueError) as exc:
                    logger.error("detemplate: could not save the state to %s: %s", path, exc)
                    self._inc("detemplate/state/save_error")
                else:
                    logger.info("detemplate: saved %d state keys to %s", saved, path)
                    self._inc("detemplate/state/saved_keys", saved)
        counters = getattr(store, "counters", None)
        if isinstance(counters, dict):
            for name in ("redis_error", "lock_timeout"):
                if counters.get(name):
                    self._inc(f"detemplate/state/{name}", counters[name])
        store.close()

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None and count:
            self.stats.inc_value(key, count)


_STATES: WeakKeyDictionary[Crawler, CrawlState] = WeakKeyDictionary()


def open_state(crawler: Crawler, config: DetemplateConfig) -> StateStore:
    """The crawler's store, opened once; saved and closed when the spider closes."""
    state = _STATES.get(crawler)
    if state is None:
        from scrapy import signals

        state = CrawlState(crawler, config)
        _STATES[crawler] = state
        crawler.signals.connect(state.spider_closed, signal=signals.spider_closed)
    return state.store
