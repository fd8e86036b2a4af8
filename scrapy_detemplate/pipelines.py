"""Item pipeline: cleans raw HTML that items carry themselves."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future

from scrapy_detemplate._crawler import engine_for, logger, record
from scrapy_detemplate._firstpages import FirstPages, first_pages_for
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.middlewares import ItemFiller

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred


class DetemplatePipeline:
    """For spiders that yield raw pages as items (``{"url": ..., "html": ...}``).

    With ``DETEMPLATE_SOURCE_FIELD`` set (e.g. ``"html"``), an item holding raw
    HTML in that field, and whose text field is still empty, goes through the
    same engine as responses do; its URL comes from ``DETEMPLATE_URL_FIELD``.
    Items already filled by the spider middleware are left alone, so no page is
    fed to the engine twice.  Items are never dropped.

    It is also where the items of a site's first page wait for the site's next
    pages, to be filled again with the first page cleaned beside them
    (``DETEMPLATE_FIRST_PAGE_WAIT``, ``_firstpages.py``): without this pipeline
    they go on with the first cleaning.
    """

    def __init__(
        self,
        engine: Detemplater,
        filler: ItemFiller,
        stats: StatsCollector | None = None,
        first_pages: FirstPages | None = None,
    ) -> None:
        self.engine = engine
        self.filler = filler
        self.stats = stats
        self.first_pages = first_pages
        if first_pages is not None:
            first_pages.awaited = True
        config = engine.config
        self.source_field = config.source_field
        self.url_field = config.url_field
        self.text_field = config.text_field

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DetemplatePipeline:
        if not crawler.settings.getbool("DETEMPLATE_ENABLED", True):
            raise NotConfigured("DETEMPLATE_ENABLED is off")
        engine = engine_for(crawler)
        return cls(engine, ItemFiller(engine.config, crawler.stats), crawler.stats, first_pages_for(crawler))

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if self.first_pages is not None:
            done = self.first_pages.waiter(item)
            if done is not None:
                return _after(done, item)
        if not self.source_field:
            return item
        try:
            adapter = ItemAdapter(item)
            source = adapter.get(self.source_field)
            if not source or (self.text_field and adapter.get(self.text_field)):
                return item
            url = str(adapter.get(self.url_field) or "")
            result = self.engine.process(url, source)  # not bytes or text: a counted passthrough (bad_type)
            record(self.stats, result)
            self.filler.fill(item, result)
        except Exception:
            logger.error("detemplate: could not clean an item's %r field", self.source_field, exc_info=True)
            if self.stats is not None:
                self.stats.inc_value("detemplate/error")
        return item


async def _after(done: Deferred[None], item: Any) -> Any:
    """``item``, once its first page's second cleaning has filled it (or its wait has ended)."""
    await maybe_deferred_to_future(done)
    return item
