"""Follows every link of one site and yields an item per page.

The spider sees whole pages (navigation included) and follows their links as
usual; scrapy-detemplate fills each item's ``content`` with the page's
template-free text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, start_url: str = "http://127.0.0.1:8000/", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start_url]
        self.allowed_domains = [urlsplit(start_url).hostname or "127.0.0.1"]

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        yield {"url": response.url, "title": response.css("title::text").get(default="").strip()}
        # Links in the navigation and footer are followed too: the spider sees the whole page.
        yield from response.follow_all(css="a::attr(href)", callback=self.parse)
