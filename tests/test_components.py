from __future__ import annotations

import scrapy
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from scrapy_detemplate.middlewares import DetemplateDownloaderMiddleware, DetemplateSpiderMiddleware
from scrapy_detemplate.pipelines import DetemplatePipeline

PAGE = "<html><body><nav>Home | News</nav><p>{}</p><footer>(c) Example</footer></body></html>"


class Article(scrapy.Item):
    url = scrapy.Field()


def crawler_with(**settings):
    settings = {"DETEMPLATE_METHOD": "sandwich", **settings}
    crawler = get_crawler(settings_dict={"ADDONS": {"scrapy_detemplate.Addon": 0}, **settings})
    crawler._apply_settings()
    return crawler


def response(url: str, text: str) -> HtmlResponse:
    return HtmlResponse(url, body=text.encode(), encoding="utf-8", request=Request(url))


def test_pipeline_cleans_raw_html_items_in_order_and_drops_nothing():
    crawler = crawler_with(DETEMPLATE_SOURCE_FIELD="html")
    pipeline = DetemplatePipeline.from_crawler(crawler)
    first = pipeline.process_item({"url": "http://ex.com/a/1", "html": PAGE.format("one")})
    second = pipeline.process_item({"url": "http://ex.com/a/2", "html": PAGE.format("two")})
    already = pipeline.process_item({"url": "http://ex.com/a/3", "html": PAGE.format("x"), "content": "mine"})
    no_html = pipeline.process_item({"url": "http://ex.com/a/4"})
    assert "Home" in first["content"]  # no peer yet: kept whole
    assert second["content"] == "two"
    assert already["content"] == "mine"
    assert no_html == {"url": "http://ex.com/a/4"}
    assert crawler.stats.get_value("detemplate/pages") == 2


def test_pipeline_is_inert_without_a_source_field():
    pipeline = DetemplatePipeline.from_crawler(crawler_with())
    item = {"url": "http://ex.com/a/1", "html": PAGE.format("one")}
    assert pipeline.process_item(dict(item)) == item


def test_spider_middleware_fills_items_and_leaves_requests_alone():
    crawler = crawler_with(DETEMPLATE_HTML_FIELD="clean_html", DETEMPLATE_METHOD_FIELD="method")
    downloader = DetemplateDownloaderMiddleware.from_crawler(crawler)
    spider_mw = DetemplateSpiderMiddleware.from_crawler(crawler)
    for n, word in enumerate(("one", "two")):
        resp = response(f"http://ex.com/a/{n}", PAGE.format(word))
        resp = downloader.process_response(resp.request, resp)
        request = Request("http://ex.com/next")
        out = list(spider_mw.process_spider_output(resp, [{"url": resp.url}, request, Article(url=resp.url)]))
    item, passed_request, declared = out
    assert item["content"] == "two" and item["method"] == "sandwich" and "<p>two</p>" in item["clean_html"]
    assert passed_request is request
    assert dict(declared) == {"url": "http://ex.com/a/1"}  # an Item without the fields is left as it was
    assert crawler.stats.get_value("detemplate/item_field_missing") >= 1


def test_the_engine_is_shared_by_all_components():
    crawler = crawler_with(DETEMPLATE_SOURCE_FIELD="html")
    downloader = DetemplateDownloaderMiddleware.from_crawler(crawler)
    pipeline = DetemplatePipeline.from_crawler(crawler)
    assert downloader.engine is pipeline.engine


def test_disabled_components_are_not_configured():
    import pytest
    from scrapy.exceptions import NotConfigured

    crawler = crawler_with(DETEMPLATE_ENABLED=False)
    for component in (DetemplateDownloaderMiddleware, DetemplateSpiderMiddleware, DetemplatePipeline):
        with pytest.raises(NotConfigured):
            component.from_crawler(crawler)


def test_stats_count_status_reason_and_method():
    crawler = crawler_with()
    downloader = DetemplateDownloaderMiddleware.from_crawler(crawler)
    for n, word in enumerate(("one", "two")):
        resp = response(f"http://ex.com/a/{n}", PAGE.format(word))
        downloader.process_response(resp.request, resp)
    get = crawler.stats.get_value
    assert (get("detemplate/unchanged/no_peer"), get("detemplate/cleaned"), get("detemplate/method/sandwich")) == (
        1,
        1,
        2,
    )


def test_markdown_field_is_filled_by_the_spider_middleware_and_the_pipeline():
    crawler = crawler_with(DETEMPLATE_MARKDOWN_FIELD="markdown", DETEMPLATE_SOURCE_FIELD="html")
    downloader = DetemplateDownloaderMiddleware.from_crawler(crawler)
    spider_mw = DetemplateSpiderMiddleware.from_crawler(crawler)
    pipeline = DetemplatePipeline.from_crawler(crawler)
    page = "<html><body><nav>Home | News</nav><h2>{0}</h2><ul><li>{0} one</li></ul><footer>(c) Ex</footer></body>"
    for n, word in enumerate(("one", "two")):
        resp = response(f"http://ex.com/a/{n}", page.format(word))
        resp = downloader.process_response(resp.request, resp)
        (item,) = spider_mw.process_spider_output(resp, [{"url": resp.url}])
    assert item["markdown"] == "## two\n\n- two one" and item["content"] == "two\ntwo one"
    for n, word in enumerate(("three", "four")):
        piped = pipeline.process_item({"url": f"http://ex.com/b/{n}", "html": page.format(word)})
    assert piped["markdown"] == "## four\n\n- four one"
    resp = response("http://ex.com/", page)
    DetemplateDownloaderMiddleware.from_crawler(crawler_with()).process_response(resp.request, resp)
    assert resp.meta["detemplate"].markdown == "" and resp.meta["detemplate"].text  # not asked for: not rendered
