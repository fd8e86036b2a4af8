"""Check the compiled Markdown walk (``scrapy_detemplate/_markdown.pyx``) against the Python renderer on every page.

For every page of the corpora, through the engine (the default method, ``DETEMPLATE_MARKDOWN`` on, pages in
crawl order): the tree the engine renders as Markdown (the page with its template removed, or the whole page
when nothing is removed) is rendered by :func:`~scrapy_detemplate.markdown.to_markdown` (the compiled walk)
and by ``_to_markdown_py`` (the Python renderer alone), with links as text and with ``links=True``; the two
strings must be identical.  Prints pages checked, pages the compiled walk rendered itself (the others hold
what only the Python renderer reads: namespaced elements, entity references), and mismatches.

Usage: ``nice .venv/bin/python bench/check_compiled_markdown.py [corpus ...]`` (corpora default to c2f
dragnet10 docs wcxb-dev, in ``../shared/corpus`` beside the checkout).  Exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter

from _results import CORPUS  # bench/, the script's folder
from check_compiled_tree import check_corpora  # the same report, corpus by corpus
from lxml import etree

from scrapy_detemplate import markdown
from scrapy_detemplate._html import find_body
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import read_manifest

HEADERS = {"Content-Type": "text/html"}


class CheckingDetemplater(Detemplater):
    """The engine, comparing the compiled and the Python Markdown of every tree it renders."""

    def __init__(self, config: DetemplateConfig, checked: Counter, bad: Counter) -> None:
        super().__init__(config)
        self.checked, self.bad = checked, bad

    def _markdown(self, root: etree._Element, url: str) -> str:
        assert markdown._walk is not None
        body = find_body(root)
        self.checked["compiled_walk"] += markdown._walk.plain(root if body is None else body)
        for links in (False, True):
            fast = markdown.to_markdown(root, base_url=url, links=links)
            slow = markdown._to_markdown_py(root, base_url=url, links=links)
            self.checked["renders"] += 1
            if fast != slow:
                self.bad["links" if links else "text_links"] += 1
                print(f"MISMATCH links={links} {url}", flush=True)
        return super()._markdown(root, url)


def check_corpus(name: str, checked: Counter, bad: Counter) -> None:
    engine = CheckingDetemplater(DetemplateConfig(markdown=True), checked, bad)
    for page in read_manifest(CORPUS / f"{name}.manifest.jsonl"):
        checked["pages"] += 1
        result = engine.process(page.url, page.body, headers=HEADERS)
        checked["markdown_pages"] += bool(result.markdown)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpora", nargs="*", default=["c2f", "dragnet10", "docs", "wcxb-dev"])
    args = parser.parse_args()
    if markdown._walk is None or markdown._compiled_renderer is None:
        print("the compiled module scrapy_detemplate._markdown is not loaded", file=sys.stderr)
        return 2
    logging.getLogger("scrapy_detemplate").setLevel(logging.ERROR)
    return check_corpora(args.corpora, check_corpus)


if __name__ == "__main__":
    sys.exit(main())
