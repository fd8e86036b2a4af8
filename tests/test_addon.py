from __future__ import annotations

from scrapy.utils.test import get_crawler

from scrapy_detemplate import DEFAULT_SETTINGS, Addon
from scrapy_detemplate.middlewares import DetemplateDownloaderMiddleware, DetemplateSpiderMiddleware
from scrapy_detemplate.pipelines import DetemplatePipeline


def components(settings: dict) -> dict:
    crawler = get_crawler(settings_dict=settings)
    crawler._apply_settings()
    keys = ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES", *DEFAULT_SETTINGS)
    return {
        key: crawler.settings.get(key) if key.startswith("DETEMPLATE") else crawler.settings.getdict(key)
        for key in keys
    }


def test_the_addon_equals_configuring_everything_by_hand():
    by_hand = {
        "DOWNLOADER_MIDDLEWARES": {DetemplateDownloaderMiddleware: 540},
        "SPIDER_MIDDLEWARES": {DetemplateSpiderMiddleware: 550},
        "ITEM_PIPELINES": {DetemplatePipeline: 100},
        **DEFAULT_SETTINGS,
    }
    assert components({"ADDONS": {Addon: 0}}) == components(by_hand)


def test_the_addon_keeps_user_settings_and_priorities():
    settings = components(
        {"ADDONS": {Addon: 0}, "DETEMPLATE_TEXT_FIELD": "body_text", "ITEM_PIPELINES": {DetemplatePipeline: 900}}
    )
    assert settings["DETEMPLATE_TEXT_FIELD"] == "body_text"
    assert settings["ITEM_PIPELINES"] == {DetemplatePipeline: 900}
