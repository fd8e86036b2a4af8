"""Real Scrapy crawls of the demo site on 127.0.0.1, through the add-on."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import demosite
import pytest

from .conftest import run_crawl

pytestmark = pytest.mark.integration

ADDON = {"ADDONS": {"scrapy_detemplate.Addon": 0}}
EXAMPLE = Path(__file__).resolve().parents[2] / "example_project"


def by_path(items):
    return {urlsplit(item["url"]).path: item for item in items}


def test_crawl_exports_article_text_without_template(site, tmp_path):
    pages, base = site
    crawl = run_crawl(tmp_path, start_url=base + "/", settings=ADDON)
    items = by_path(crawl.items)
    assert set(items) == set(pages)  # every page reached: links in the template were followed
    articles = [p for p in pages.values() if p.article]
    for page in articles:
        content = items[page.path]["content"]
        assert all(line in content for line in page.article), page.path
        assert not [line for line in demosite.TEMPLATE_LINES if line in content], page.path
    assert crawl.stats["detemplate/pages"] == len(crawl.items)
    assert crawl.stats["detemplate/cleaned"] >= len(articles)
    assert crawl.stats["detemplate/template_chars_removed"] > 0
    # Nothing asks for the clean HTML (no HTML field, body not replaced): it is not rendered.
    assert crawl.stats.get("detemplate/template_bytes_removed", 0) == 0
    assert "detemplate/error" not in crawl.stats
    assert "% of visible text removed as template" in crawl.log


def test_dont_detemplate_and_replace_body(site, tmp_path):
    _, base = site
    urls = [
        [f"{base}/news/", {}],
        [f"{base}/news/story-1.html", {}],
        [f"{base}/news/story-2.html", {"dont_detemplate": True}],
    ]
    crawl = run_crawl(
        tmp_path, urls=urls, settings={**ADDON, "CONCURRENT_REQUESTS": 1, "DETEMPLATE_REPLACE_BODY": True}
    )
    items = by_path(crawl.items)
    cleaned = items["/news/story-1.html"]
    assert cleaned["result_status"] == "cleaned"
    original = demosite.build_site()["/news/story-1.html"].body
    assert cleaned["length"] < len(original)  # the spider saw the clean body
    assert "Copyright" not in cleaned["content"]
    skipped = items["/news/story-2.html"]
    assert skipped["result_status"] is None and "content" not in skipped
    assert crawl.stats["detemplate/skipped"] == 1
    assert crawl.stats["detemplate/template_bytes_removed"] > 0  # the replaced body is the clean HTML


def test_a_copied_meta_never_fills_another_pages_items(site, tmp_path):
    """Issue 16: ``meta={**response.meta, ...}`` carries the start page's result into
    requests that are opted out, not 2xx, or replaced by their own."""
    pages, base = site
    start = "/news/story-1.html"
    links = [
        ["/news/story-2.html", {"dont_detemplate": True}],
        ["/missing", {"handle_httpstatus_all": True}],
        ["/news/story-3.html", {}],
    ]
    crawl = run_crawl(
        tmp_path, follow={"start": base + start, "links": links},
        settings={**ADDON, "CONCURRENT_REQUESTS": 1, "DETEMPLATE_REPLACE_BODY": True},
    )  # fmt: skip
    items = by_path(crawl.items)
    assert set(items) == {start, "/news/story-2.html", "/missing", "/news/story-3.html"}
    assert all(line in items[start]["content"] for line in pages[start].article)
    assert "content" not in items["/news/story-2.html"]  # opted out
    assert (items["/missing"]["status"], "content" in items["/missing"]) == (404, False)
    own = items["/news/story-3.html"]["content"]
    assert all(line in own for line in pages["/news/story-3.html"].article)
    assert not any(line in own for line in pages[start].article)
    assert crawl.stats["detemplate/skipped"] == 2


def test_invalid_setting_stops_the_crawl_at_start_up():
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "site", "-s", "DETEMPLATE_METHOD=bogus", "-a", "start_url=http://127.0.0.1:9/"],
        cwd=EXAMPLE, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "DETEMPLATE_METHOD='bogus'" in proc.stderr
    assert "downloader/request_count" not in proc.stderr  # nothing was crawled


def test_crawl_fills_the_markdown_field(site, tmp_path):
    pages, base = site
    settings = {**ADDON, "DETEMPLATE_MARKDOWN_FIELD": "markdown", "DETEMPLATE_MARKDOWN_LINKS": True}
    crawl = run_crawl(tmp_path, start_url=base + "/", settings=settings)
    items = by_path(crawl.items)
    articles = [p for p in pages.values() if p.article]
    for page in articles:
        markdown = items[page.path]["markdown"]
        assert markdown.startswith(f"# {page.article[0]}\n\n"), page.path  # the title as a heading
        assert all(paragraph in markdown for paragraph in page.article[2:]), page.path
        assert not [line for line in demosite.TEMPLATE_LINES if line in markdown], page.path
        # the same words as the text field, in the same order
        assert re.findall(r"\w+", items[page.path]["content"]) == [
            w for w in re.findall(r"\w+", re.sub(r"\]\([^)]*\)", "]", markdown))
        ], page.path
    assert "detemplate/error" not in crawl.stats
