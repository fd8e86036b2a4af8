"""Scrapy middlewares: clean every HTML response, put the result into items."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter, is_item
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse

from scrapy_detemplate._crawler import (
    META_KEY,
    ORIGINAL_BODY_META_KEY,
    SKIP_META_KEY,
    engine_for,
    logger,
    record,
    summary,
)
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import CleanResult, Detemplater

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector


class DetemplateDownloaderMiddleware:
    """Feeds every 2xx response to the engine and attaches the result.

    The result is ``response.meta["detemplate"]`` (a :class:`CleanResult`); the
    response itself is returned unchanged, so the spider still follows links in
    the template.  With ``DETEMPLATE_REPLACE_BODY`` the body is replaced by the
    template-free HTML and the original bytes are kept in
    ``response.meta["detemplate_original_body"]``.
    """

    def __init__(self, engine: Detemplater, stats: StatsCollector | None = None, replace_body: bool = False) -> None:
        self.engine = engine
        self.stats = stats
        self.replace_body = replace_body

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DetemplateDownloaderMiddleware:
        if not crawler.settings.getbool("DETEMPLATE_ENABLED", True):
            raise NotConfigured("DETEMPLATE_ENABLED is off")
        engine = engine_for(crawler)
        mw = cls(engine, crawler.stats, engine.config.replace_body)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_closed(self, spider: Spider | None = None) -> None:
        line = summary(self.stats)
        if line:
            logger.info(line)

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        if request.meta.get(SKIP_META_KEY):
            self._inc("detemplate/skipped")
            return response
        if not 200 <= response.status < 300:
            self._inc("detemplate/skipped")
            return response
        try:
            result = self.engine.process(response.url, response.body, headers=_headers(response))
            record(self.stats, result)
            request.meta[META_KEY] = result
            if self.replace_body and result.status == "cleaned" and isinstance(response, TextResponse):
                request.meta[ORIGINAL_BODY_META_KEY] = response.body
                return response.replace(body=result.html.encode("utf-8"), encoding="utf-8")
        except Exception:  # a failure here must never lose the response
            logger.error("detemplate: failed on %s; response passed on unchanged", response.url, exc_info=True)
            self._inc("detemplate/error")
        return response

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)


def _headers(response: Response) -> dict[str, str]:
    content_type = response.headers.get(b"Content-Type")
    if content_type:
        return {"Content-Type": content_type.decode("latin-1")}
    if not isinstance(response, TextResponse):
        # No header and Scrapy did not see text: not something to clean.
        return {"Content-Type": "application/octet-stream"}
    return {}


class ItemFiller:
    """Writes a result's fields into an item (shared by the spider middleware and the pipeline)."""

    def __init__(self, config: DetemplateConfig, stats: StatsCollector | None = None) -> None:
        self.fields = [(config.text_field, "text"), (config.html_field, "html"), (config.method_field, "method")]
        self.overwrite = config.overwrite_fields
        self.stats = stats
        self._warned = False

    def fill(self, item: Any, result: CleanResult) -> None:
        if result.status == "passthrough" and not result.text:
            return  # nothing to say (non-HTML, empty, too large): the item stays as it is
        adapter = ItemAdapter(item)
        for field, attr in self.fields:
            if not field:
                continue
            if not self.overwrite and adapter.get(field) not in (None, ""):
                continue
            try:
                adapter[field] = getattr(result, attr)
            except KeyError:  # an Item class that does not declare the field
                if self.stats is not None:
                    self.stats.inc_value("detemplate/item_field_missing")
                if not self._warned:
                    self._warned = True
                    logger.warning(
                        "detemplate: %s has no field %r; declare it or set DETEMPLATE_*_FIELD (logged once)",
                        type(item).__name__, field,
                    )  # fmt: skip
                continue
        if self.stats is not None:
            self.stats.inc_value("detemplate/items_filled")


class DetemplateSpiderMiddleware:
    """Puts the template-free content of a response into the items its callback yields."""

    def __init__(self, filler: ItemFiller) -> None:
        self.filler = filler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DetemplateSpiderMiddleware:
        if not crawler.settings.getbool("DETEMPLATE_ENABLED", True):
            raise NotConfigured("DETEMPLATE_ENABLED is off")
        return cls(ItemFiller(engine_for(crawler).config, crawler.stats))

    def _fill(self, response: Response, element: Any) -> Any:
        if is_item(element):
            result = response.meta.get(META_KEY) if response.request is not None else None
            if isinstance(result, CleanResult):
                try:
                    self.filler.fill(element, result)
                except Exception:
                    logger.error("detemplate: could not fill an item from %s", response.url, exc_info=True)
        return element

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        for element in result:
            yield self._fill(response, element)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        async for element in result:
            yield self._fill(response, element)
