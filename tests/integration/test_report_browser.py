"""The report of a real crawl, opened in a real headless Chromium (skipped without one)."""

from __future__ import annotations

import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import demosite
import pytest
from lxml import etree

from scrapy_detemplate._html import parse_html, visible_lines
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.report import ReportWriter

from .chromium import Chromium, find_chromium
from .conftest import run_crawl

pytestmark = pytest.mark.integration

ADDON = {"ADDONS": {"scrapy_detemplate.Addon": 0}}
TINT, OUTLINE = "rgba(208, 49, 45, 0.18)", "rgb(208, 49, 45)"


@pytest.fixture
def browser():
    find_chromium()
    chromium = Chromium()
    yield chromium
    chromium.close()


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def lines_of(document: str, drop_marked: bool = False) -> list[str]:
    root = parse_html(document)
    assert root is not None
    if drop_marked:
        for el in list(root.iter()):
            if isinstance(el.tag, str) and el.get("data-detemplate"):
                parent = el.getparent()
                assert parent is not None
                if el.tail:  # the tail is not part of the element
                    prev = el.getprevious()
                    if prev is not None:
                        prev.tail = (prev.tail or "") + el.tail
                    else:
                        parent.text = (parent.text or "") + el.tail
                parent.remove(el)
    return [line.text for line in visible_lines(root)]


def test_report_of_a_crawl_marks_exactly_what_was_removed_in_chromium(site, tmp_path, browser):
    pages, base = site
    # One page at a time, in this order: the samples are pages 1, 3 and 9 of the site.
    urls = [[f"{base}/news/", {}]] + [[f"{base}/news/story-{n}.html", {}] for n in range(1, 9)]
    report = tmp_path / "report"
    settings = {**ADDON, "CONCURRENT_REQUESTS": 1, "DETEMPLATE_REPORT_DIR": str(report), "DETEMPLATE_REPORT_PAGES": 3}
    crawl = run_crawl(tmp_path, urls=urls, settings=settings)
    assert "detemplate: report written to" in crawl.log
    (site_dir,) = (report / "sites").iterdir()
    assert sorted(p.name for p in site_dir.glob("sample-?.html")) == ["sample-1.html", "sample-2.html", "sample-3.html"]
    content = {urlsplit(item["url"]).path: item["content"] for item in crawl.items}

    browser.open((site_dir / "sample-2.html").as_uri())
    png = browser.screenshot()
    (tmp_path / "sample-2.png").write_bytes(png)
    assert png_size(png) == (1280, 900) and len(png) > 20_000  # a rendered page, not a blank one

    url = etree.fromstring(browser.html(browser.select("h1.url")[0])).text or ""
    path = urlsplit(url).path
    assert path == "/news/story-2.html"  # page 3 of the site
    demo = pages[path]
    iframes = [browser.html(node) for node in browser.select("iframe")]
    assert len(iframes) == 3 and all('sandbox=""' in frame for frame in iframes)
    frames = browser.frames()
    marked = frames[(site_dir / "sample-2-marked.html").as_uri()]
    original = frames[(site_dir / "sample-2-original.html").as_uri()]
    clean = frames[(site_dir / "sample-2-clean.html").as_uri()]
    for session in (marked, original, clean):
        assert browser.select("script", session) == []
    assert browser.select("[data-detemplate]", original) == []
    assert browser.select("[data-detemplate]", clean) == []

    # The DOM Chromium built for the marked page: marked parts out, what is left is the item's content...
    document = browser.html(browser.document(marked)["children"][-1]["nodeId"], marked)
    assert lines_of(document, drop_marked=True) == content[path].splitlines()
    # ... and the marked parts hold the menu and the footer, no article line, and each related link
    # exactly when the item lost it (new on every page; the default now removes nearly all: README).
    nodes = browser.select("[data-detemplate]", marked)
    marked_lines = [line for node in nodes for line in lines_of(browser.html(node, marked))]
    for line in (*demosite.NAV, *demosite.FOOTER):
        assert any(line in m for m in marked_lines), line
    kept = set(content[path].splitlines())
    for line in demo.related:
        assert any(line in m for m in marked_lines) == (line not in kept), line
    assert not [line for line in demo.article if any(line in m for m in marked_lines)]
    # Every marked element is drawn outlined and tinted; the article is not.
    for node in nodes:
        style = browser.style(node, marked)
        assert (style["outline-style"], style["outline-color"]) == ("solid", OUTLINE)
        assert style["background-color"] in (TINT, "rgba(0, 0, 0, 0)")  # nested marks are not tinted twice
    assert any(browser.style(node, marked)["background-color"] == TINT for node in nodes)
    article = browser.select("article", marked)[0]
    assert browser.style(article, marked)["outline-style"] == "none"

    # The toggle (plain CSS radio buttons): marked shown first, a click on "clean" shows the clean page.
    def shown() -> list[str]:
        return [browser.style(node)["display"] for node in browser.select("iframe")]

    assert shown() == ["none", "block", "none"]
    browser.click("label[for=v-clean]")
    assert shown() == ["none", "none", "block"]
    browser.click("label[for=v-original]")
    assert shown() == ["block", "none", "none"]

    browser.open((report / "index.html").as_uri())
    assert len(browser.select("#sites tbody tr")) == 1
    browser.open((site_dir / "index.html").as_uri())
    learned = [etree.fromstring(browser.html(n)).xpath("string(td[3])") for n in browser.select("#learned tbody tr")]

    def where(line: str) -> int:
        return next(i for i, text in enumerate(learned) if line in text)

    # What was removed on several pages, in page order: the menu before the footer.
    assert max(map(where, demosite.NAV)) < min(map(where, demosite.FOOTER))


class _Counting(BaseHTTPRequestHandler):
    requests: list[str]

    def do_GET(self) -> None:
        self.requests.append(self.path)
        body = b"body{background:red}" if self.path.endswith(".css") else b"x"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_report_loads_nothing_from_the_network(tmp_path, browser):
    requests: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (_Counting,), {"requests": requests}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    there = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        page = f"""<html><head><link rel="stylesheet" href="{there}/a.css"><link rel="dns-prefetch" href="{there}">
<script src="{there}/a.js"></script><style>@import url("{there}/b.css");</style>
<meta http-equiv="refresh" content="0; url={there}/refresh"><base href="{there}/"></head>
<body><nav><a href="/x" ping="{there}/ping">Home</a></nav>
<p style="background:url({there}/c.png)">A paragraph long enough to be content, not template.</p>
<img src="{there}/d.png" srcset="{there}/e.png 2x" onerror="fetch('{there}/f')"><iframe src="{there}/g"></iframe>
<object data="{there}/h"></object><video src="{there}/i.mp4" poster="{there}/j.png"></video>
<script>fetch("{there}/k")</script></body></html>"""
        writer = ReportWriter(tmp_path / "report", 1)
        writer.add("ex", Detemplater().process("http://ex/1", page, mark=True))
        writer.close()
        samples = sorted((tmp_path / "report" / "sites").glob("*/sample-1*.html"))
        assert len(samples) == 4
        for sample in samples:
            browser.open(sample.as_uri())
        browser.open((tmp_path / "report" / "index.html").as_uri())
        time.sleep(1)  # a refresh or a late load would come by now
        assert requests == []
        raw = tmp_path / "raw.html"
        raw.write_text(page, encoding="utf-8")
        browser.open(raw.as_uri())
        assert requests, "the page as it was loads from the server (else this test proves nothing)"
    finally:
        server.shutdown()
