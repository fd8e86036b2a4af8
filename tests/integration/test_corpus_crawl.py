"""A real crawl of real corpus pages gets the content the evaluation harness measures (issue 14's user).

Runs when ``../shared/corpus`` is present (CI has it): ``bench/crawl_corpus.py`` serves two
documentation sites and 40 first pages of WCXB sites on 127.0.0.1, a ``CrawlSpider`` with the
add-on and nothing else crawls them in a fresh process, and each item's ``content`` is scored
against the gold next to the harness's engine (manifest order) and keeping every line.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.evaluation import below_keep_all, first_sites, read_manifest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT / "bench"))

import crawl_corpus  # noqa: E402

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")


def test_a_crawl_of_corpus_pages_gets_what_the_harness_measures():
    by_corpus = {name: first_sites(read_manifest(CORPUS / f"{name}.manifest.jsonl"), count)
                 for name, count in (("docs", 2), ("wcxb-dev", 40))}  # fmt: skip
    items, log, _ = crawl_corpus.crawl_pages(by_corpus)
    assert "detemplate: method 'combined' enabled" in log
    contents = {crawl_corpus.key(item["url"]): item.get("content", "") for item in items}
    for name, pages in by_corpus.items():
        got = crawl_corpus.figures(pages, contents, DetemplateConfig())
        assert got.crawl.pages == len(pages), name  # every page, the unreachable ones as start URLs
        # A site of one page has no order to differ in: the same bytes give the same text.
        assert got.differ_alone == 0, name
        crawl, harness, keep = got.crawl.macro(), got.harness.macro(), got.keep_all.macro()
        assert crawl["f1"] >= harness["f1"] - 0.01, (name, crawl, harness)
        assert crawl["f1"] > keep["f1"], (name, crawl, keep)
        assert below_keep_all(got.crawl, got.keep_all) == [], name
    # First pages were cleaned again beside their next pages (the two docs sites' at least).
    revisited = re.search(r"revisited (\d+)", crawl_corpus.first_page_stats(log))
    assert revisited is not None and int(revisited.group(1)) >= 2, crawl_corpus.first_page_stats(log)
    # Links were followed too: the docs sites' pages link to pages the corpus lacks (404s).
    assert "downloader/response_status_count/404" in log
