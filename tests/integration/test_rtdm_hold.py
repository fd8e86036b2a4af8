"""Real Scrapy crawls of the demo site with rtdm holding the pages of the learning site."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import demosite
import pytest

from .conftest import Crawl, run_crawl

pytestmark = pytest.mark.integration

RUNNER = Path(__file__).with_name("hold_runner.py")
# A generous HOLD_SECONDS: pages go when the site learns or the crawl closes, never by the clock.
HOLD = {
    "DETEMPLATE_METHOD": "rtdm",
    "DETEMPLATE_RTDM_MEANWHILE": "none",  # a page not cleaned by a template would keep its template lines
    "DETEMPLATE_RTDM_HOLD": 6,
    "DETEMPLATE_RTDM_HOLD_SECONDS": 600,
    "CONCURRENT_REQUESTS": 8,
}


def run(tmp_path: Path, **job: Any) -> Crawl:
    job["out"] = str(tmp_path)
    proc = subprocess.run([sys.executable, str(RUNNER), json.dumps(job)], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    feed = tmp_path / "items.jsonl"
    items = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
    return Crawl(items, json.loads((tmp_path / "stats.json").read_text()), proc.stderr)


def released(stats: dict[str, Any]) -> dict[str, int]:
    prefix = "detemplate/rtdm/released/"
    return {k[len(prefix) :]: v for k, v in stats.items() if k.startswith(prefix)}


def assert_cleaned_by_template(items: list[dict[str, Any]], pages: dict[str, demosite.Page]) -> None:
    for item in items:
        page = pages[urlsplit(item["url"]).path]
        assert item["result_reason"] == "applied", item["url"]
        assert not set(demosite.TEMPLATE_LINES) & set(item["content"].splitlines()), item["url"]
        assert all(line in item["content"] for line in page.article), item["url"]


def test_held_pages_arrive_cleaned_with_the_learned_template(site, tmp_path):
    pages, base = site
    urls = [base + path for path in pages]
    crawl = run(tmp_path, urls=urls, settings={**HOLD, "DETEMPLATE_RTDM_MAX_PAGES": 4})
    assert sorted(item["url"] for item in crawl.items) == sorted(urls)
    assert_cleaned_by_template(crawl.items, pages)
    held = crawl.stats["detemplate/rtdm/held"]
    assert held == 3  # the first three samples; the fourth completes the template
    assert released(crawl.stats) == {"learned": held}
    assert crawl.stats["detemplate/pages"] == crawl.stats["detemplate/cleaned/applied"] == len(urls)
    assert "rtdm learned a template of 127.0.0.1 from 4 pages" in crawl.log
    assert "detemplate/error" not in crawl.stats


def test_a_crawl_stopped_early_loses_no_held_page(site, tmp_path):
    pages, base = site
    articles = [path for path, page in pages.items() if page.article][:5]
    crawl = run(
        tmp_path,
        urls=[base + path for path in articles],
        stop_url=base + "/about.html",
        wait_held=len(articles),
        settings={**HOLD, "DETEMPLATE_RTDM_MAX_PAGES": 20, "CLOSESPIDER_PAGECOUNT": 1},
    )
    assert crawl.stats["finish_reason"] == "closespider_pagecount"
    assert crawl.stats["detemplate/rtdm/held"] == len(articles)
    assert released(crawl.stats) == {"closed": len(articles)}  # learned from the five samples at close
    by_url = {urlsplit(item["url"]).path: item for item in crawl.items}
    assert set(by_url) == {*articles, "/about.html"}  # every held page became an item
    assert_cleaned_by_template([by_url[path] for path in articles], pages)
    assert crawl.stats["item_scraped_count"] == len(articles) + 1


def test_a_link_following_crawl_with_held_pages_reaches_every_page(site, tmp_path):
    """The example spider finds links only in pages it has seen: while every page it could
    follow is held, the crawl is idle and the held pages go (``idle``), so it never stalls."""
    pages, base = site
    settings = {"ADDONS": {"scrapy_detemplate.Addon": 0}, **HOLD, "DETEMPLATE_RTDM_MAX_PAGES": 4}
    crawl = run_crawl(tmp_path, start_url=base + "/", settings=settings)
    assert {urlsplit(item["url"]).path for item in crawl.items} == set(pages)
    assert crawl.stats["detemplate/pages"] == len(crawl.items)
    assert sum(released(crawl.stats).values()) == crawl.stats["detemplate/rtdm/held"] > 0
    assert "detemplate/error" not in crawl.stats
