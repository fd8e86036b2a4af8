from __future__ import annotations

import pytest
import scrapy
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from scrapy_detemplate.config import InvalidSetting
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


def test_pipeline_never_cleans_the_repr_of_a_field_that_is_not_html():
    crawler = crawler_with(DETEMPLATE_SOURCE_FIELD="html")
    pipeline = DetemplatePipeline.from_crawler(crawler)
    item = {"url": "http://ex.com/a/1", "html": ["<p>one</p>", "<p>two</p>"]}
    assert pipeline.process_item(dict(item)) == item  # a list is not a page: nothing filled, nothing lost
    assert crawler.stats.get_value("detemplate/passed_through/bad_type") == 1
    as_bytes = pipeline.process_item({"url": "http://ex.com/a/2", "html": PAGE.format("two").encode()})
    assert "two" in as_bytes["content"] and "b'" not in as_bytes["content"]


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


def test_downloader_middleware_writes_a_report_marking_only_its_samples(tmp_path):
    report = tmp_path / "report"
    crawler = crawler_with(DETEMPLATE_REPORT_DIR=str(report), DETEMPLATE_REPORT_PAGES=2)
    downloader = DetemplateDownloaderMiddleware.from_crawler(crawler)
    assert downloader.report is not None
    marked = []
    for n in range(1, 5):
        resp = response(f"http://ex.com/a/{n}", PAGE.format(f"story {n}"))
        marked.append(downloader._sample(resp.url))
        resp = downloader.process_response(resp.request, resp)
        assert resp.meta["detemplate"].marked_html == ""  # items and meta never carry the marked page
    assert marked == [True, False, True, False]  # the site's pages 1 and 3
    (site_dir,) = (report / "sites").iterdir()
    assert sorted(p.name for p in site_dir.glob("sample-?.html")) == ["sample-1.html", "sample-2.html"]
    assert not (report / "index.html").exists()
    downloader.spider_closed()
    assert "ex.com" in (report / "index.html").read_text()


def test_an_unwritable_report_dir_is_named_at_start_up(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(InvalidSetting, match="DETEMPLATE_REPORT_DIR"):
        DetemplateDownloaderMiddleware.from_crawler(crawler_with(DETEMPLATE_REPORT_DIR=str(blocker / "report")))


def test_a_result_fills_only_items_of_the_response_it_was_computed_for():
    """A response whose meta holds another page's result (copied, and the downloader
    middleware did not see it, e.g. it was switched off for that request) fills nothing."""
    crawler = crawler_with()
    downloader = DetemplateDownloaderMiddleware.from_crawler(crawler)
    spider_mw = DetemplateSpiderMiddleware.from_crawler(crawler)
    first = response("http://ex.com/a/1", PAGE.format("one"))
    first = downloader.process_response(first.request, first)
    copied = Request("http://ex.com/b/1", meta=dict(first.meta))
    other = HtmlResponse(copied.url, body=PAGE.format("two").encode(), encoding="utf-8", request=copied)
    (item,) = spider_mw.process_spider_output(other, [{"url": other.url}])
    assert item == {"url": "http://ex.com/b/1"}


def test_the_downloader_middleware_drops_a_copied_result_it_does_not_replace():
    crawler = crawler_with(DETEMPLATE_REPLACE_BODY=True)
    downloader = DetemplateDownloaderMiddleware.from_crawler(crawler)
    for n in (1, 2):  # the second page is cleaned, so its original body is kept too
        first = response(f"http://ex.com/a/{n}", PAGE.format(f"page {n}"))
        first = downloader.process_response(first.request, first)
    assert {"detemplate", "detemplate_original_body"} <= set(first.meta)
    for extra, status in (({"dont_detemplate": True}, 200), ({"handle_httpstatus_all": True}, 404)):
        request = Request("http://ex.com/b/1", meta={**first.meta, **extra})
        resp = HtmlResponse(request.url, status=status, body=b"<p>x</p>", encoding="utf-8", request=request)
        out = downloader.process_response(request, resp)
        assert not {"detemplate", "detemplate_original_body"} & set(out.meta), extra


# -- partial configurations (issue 16: the add-on line that silently did nothing) ------


def by_hand(**settings):
    """A crawler configured without the add-on."""
    crawler = get_crawler(settings_dict={"DETEMPLATE_METHOD": "sandwich", **settings})
    crawler._apply_settings()
    return crawler


DL = {"DOWNLOADER_MIDDLEWARES": {"scrapy_detemplate.middlewares.DetemplateDownloaderMiddleware": 540}}
SP = {"SPIDER_MIDDLEWARES": {DetemplateSpiderMiddleware: 550}}
PIPE = {"ITEM_PIPELINES": {DetemplatePipeline: 100}}


def warnings_building(crawler, *components, caplog) -> str:
    import logging

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="scrapy_detemplate"):
        for component in components:
            component.from_crawler(crawler)
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


def test_the_spider_middleware_without_the_downloader_middleware_warns(caplog):
    text = warnings_building(by_hand(**SP, **PIPE), DetemplateSpiderMiddleware, DetemplatePipeline, caplog=caplog)
    assert "DetemplateDownloaderMiddleware is not enabled" in text and "ADDONS" in text
    assert text.count("\n") == 0  # said once per crawl, not per component


def test_the_pipeline_alone_warns_unless_it_has_a_source_field(caplog):
    assert "fills no item" in warnings_building(by_hand(**PIPE), DetemplatePipeline, caplog=caplog)
    raw = by_hand(**PIPE, DETEMPLATE_SOURCE_FIELD="html")
    assert warnings_building(raw, DetemplatePipeline, caplog=caplog) == ""


def test_the_downloader_middleware_alone_warns_unless_item_fields_are_off(caplog):
    text = warnings_building(by_hand(**DL), DetemplateDownloaderMiddleware, caplog=caplog)
    assert "DetemplateSpiderMiddleware is not enabled" in text and "DETEMPLATE_TEXT_FIELD" in text
    meta_only = by_hand(**DL, DETEMPLATE_TEXT_FIELD="")
    assert warnings_building(meta_only, DetemplateDownloaderMiddleware, caplog=caplog) == ""


def test_the_addon_or_every_component_by_hand_does_not_warn(caplog):
    components = (DetemplateDownloaderMiddleware, DetemplateSpiderMiddleware, DetemplatePipeline)
    assert warnings_building(crawler_with(), *components, caplog=caplog) == ""
    assert warnings_building(by_hand(**DL, **SP, **PIPE), *components, caplog=caplog) == ""


# -- whether rtdm's compiled walk is in use (issue 16: it was invisible) -----------------


def test_the_compiled_walk_is_logged_once_and_counted_when_rtdm_runs(caplog):
    import logging

    from scrapy_detemplate.methods import rtdm

    with caplog.at_level(logging.INFO, logger="scrapy_detemplate"):
        crawler = crawler_with(DETEMPLATE_METHOD="rtdm")
        for component in (DetemplateDownloaderMiddleware, DetemplateSpiderMiddleware, DetemplatePipeline):
            component.from_crawler(crawler)
    in_use = rtdm._compiled_walk is not None
    assert crawler.stats.get_value("detemplate/rtdm/compiled_walk") == int(in_use)
    said = [r.getMessage() for r in caplog.records if "walk" in r.getMessage()]
    assert len(said) == 1 and ("compiled walk" in said[0] if in_use else "Python walk" in said[0])


def test_a_python_walk_says_why(caplog, monkeypatch):
    from scrapy_detemplate.methods import rtdm

    monkeypatch.setattr(rtdm, "_compiled_walk", None)  # as where it could not be built
    crawler = crawler_with(DETEMPLATE_METHOD="rtdm")
    DetemplateDownloaderMiddleware.from_crawler(crawler)
    assert crawler.stats.get_value("detemplate/rtdm/compiled_walk") == 0
    assert "Python walk" in caplog.text and "about twice the time" in caplog.text


def test_other_methods_do_not_report_the_walk():
    crawler = crawler_with(DETEMPLATE_METHOD="sandwich")
    DetemplateDownloaderMiddleware.from_crawler(crawler)
    assert crawler.stats.get_value("detemplate/rtdm/compiled_walk") is None


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


# -- whether the default's compiled modules are in use (issue 15) -----------------


def test_the_compiled_modules_are_logged_and_counted(caplog):
    import logging

    from scrapy_detemplate import _compiled

    with caplog.at_level(logging.INFO, logger="scrapy_detemplate"):
        crawler = crawler_with()
        DetemplateDownloaderMiddleware.from_crawler(crawler)
    in_use = not any(_compiled.status().values())
    assert crawler.stats.get_value("detemplate/compiled") == int(in_use)
    assert ("compiled modules in use" if in_use else "running the Python functions") in caplog.text
    assert "scrapy_detemplate._markdown" in _compiled.status() and "scrapy_detemplate._markdown" in caplog.text


def test_a_missing_compiled_module_is_named_with_why(caplog, monkeypatch):
    from scrapy_detemplate import _compiled

    monkeypatch.setitem(_compiled._STATUS, "scrapy_detemplate._tree", "scrapy_detemplate._tree is not built (test)")
    crawler = crawler_with()
    DetemplateDownloaderMiddleware.from_crawler(crawler)
    assert crawler.stats.get_value("detemplate/compiled") == 0
    assert "running the Python functions instead of scrapy_detemplate._tree" in caplog.text
    assert "is not built (test)" in caplog.text
