"""Real crawls: a site's first page, cleaned again once its site's next page has come."""

from __future__ import annotations

import demosite
import pytest

from scrapy_detemplate.engine import Detemplater

from .conftest import run_crawl
from .test_crawl import ADDON, by_path

pytestmark = pytest.mark.integration

FIRST, NEXT = "/news/story-2.html", "/news/"
HTML = {"Content-Type": "text/html"}


def _cleanings(base: str) -> tuple[str, str]:
    """The first page's text cleaned alone, and cleaned beside the next page."""
    pages = demosite.build_site()
    first, peer = pages[FIRST].body, pages[NEXT].body
    alone = Detemplater().process(base + FIRST, first, headers=HTML).text
    again = Detemplater().clean_with_peers(base + FIRST, first, [(base + NEXT, peer, HTML)], headers=HTML)
    assert again is not None
    return alone, again.text


@pytest.mark.parametrize(("peers", "report"), [(1, False), (3, False), (1, True)])
def test_the_first_pages_item_waits_and_is_filled_again_with_the_next_page_beside_it(site, tmp_path, peers, report):
    _, base = site
    alone, again = _cleanings(base)
    assert alone != again  # else this test could not fail
    # The start page's callback yields its item, then the request for the next page: the item
    # waits in the pipeline while the spider goes on.  With one peer wanted, it is filled again
    # when that page comes; with three, when the crawl has nothing else to do (one page came).
    settings = {**ADDON, "DETEMPLATE_FIRST_PAGE_PEERS": peers}
    if report:  # the report keeps the first page as a sample: what the item is filled from is a copy
        settings["DETEMPLATE_REPORT_DIR"] = str(tmp_path / "report")
    crawl = run_crawl(tmp_path, follow={"start": base + FIRST, "links": [[NEXT, {}]]}, settings=settings)
    assert (tmp_path / "report" / "index.html").exists() == report
    items = by_path(crawl.items)
    assert set(items) == {FIRST, NEXT}
    assert items[FIRST]["content"] == again
    assert crawl.stats["detemplate/first_page/waiting"] == 1
    assert crawl.stats["detemplate/first_page/revisited"] == 1
    assert crawl.stats.get("detemplate/first_page/early/idle", 0) == (peers == 3)
    assert crawl.stats["detemplate/first_page/items_filled_again"] == 1
    assert crawl.stats["detemplate/pages"] == 2  # counted once each
    assert "detemplate/error" not in crawl.stats


def test_off_the_first_page_keeps_its_first_cleaning(site, tmp_path):
    _, base = site
    alone, _ = _cleanings(base)
    settings = {**ADDON, "DETEMPLATE_FIRST_PAGE_WAIT": 0}
    crawl = run_crawl(tmp_path, follow={"start": base + FIRST, "links": [[NEXT, {}]]}, settings=settings)
    assert by_path(crawl.items)[FIRST]["content"] == alone
    assert not [key for key in crawl.stats if key.startswith("detemplate/first_page/")]


def test_a_waiting_item_never_stalls_the_crawl_on_the_scrapers_active_size(site, tmp_path):
    # A waiting item keeps its response in Scrapy's scraper; past SCRAPER_SLOT_MAX_ACTIVE_SIZE the
    # engine downloads nothing more, so the next page could never come and the wait would end
    # only at its timeout.  The first pages' responses are kept under half of that size.
    _, base = site
    alone, _ = _cleanings(base)
    assert len(demosite.build_site()[FIRST].body) > 1000
    settings = {**ADDON, "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 2000, "DETEMPLATE_FIRST_PAGE_WAIT": 5}
    crawl = run_crawl(tmp_path, follow={"start": base + FIRST, "links": [[NEXT, {}]]}, settings=settings)
    items = by_path(crawl.items)
    assert set(items) == {FIRST, NEXT} and items[FIRST]["content"] == alone
    assert crawl.stats["detemplate/first_page/kept/full"] == 1  # let go at once: no peer can come
    assert not [key for key in crawl.stats if key.endswith("/timeout")]


def test_a_site_of_one_page_lets_its_item_go_when_the_crawl_has_nothing_else_to_do(site, tmp_path):
    _, base = site
    alone, _ = _cleanings(base)
    crawl = run_crawl(tmp_path, urls=[[base + FIRST, {}]], settings={**ADDON, "DETEMPLATE_FIRST_PAGE_WAIT": 3600})
    items = by_path(crawl.items)
    assert list(items) == [FIRST] and items[FIRST]["content"] == alone
    assert crawl.stats["detemplate/first_page/kept/idle"] == 1  # not a timeout: the crawl was idle
    assert "detemplate/first_page/items_filled_again" not in crawl.stats


def test_without_the_pipeline_items_go_on_with_the_first_cleaning(site, tmp_path):
    _, base = site
    alone, _ = _cleanings(base)
    settings = {
        "DOWNLOADER_MIDDLEWARES": {"scrapy_detemplate.middlewares.DetemplateDownloaderMiddleware": 540},
        "SPIDER_MIDDLEWARES": {"scrapy_detemplate.middlewares.DetemplateSpiderMiddleware": 550},
        "DETEMPLATE_FIRST_PAGE_PEERS": 1,
    }
    crawl = run_crawl(tmp_path, follow={"start": base + FIRST, "links": [[NEXT, {}]]}, settings=settings)
    assert by_path(crawl.items)[FIRST]["content"] == alone
    assert crawl.stats["detemplate/first_page/revisited"] == 1  # cleaned again, but no item waited
    assert "detemplate/first_page/items_filled_again" not in crawl.stats


SITES, PAGES_A_SITE, SCRIPT = 16, 4, 300_000  # 16 first pages of 300 kB: twice what Scrapy's 5 MB leaves them


def _big_sites() -> dict[str, demosite.Page]:
    """Sites of pages weighing what a shop's or a news site's do today (most of it script)."""
    pages = {}
    for s in range(SITES):
        nav = "".join(f'<li><a href="/s{s}/p{j}.html">Section {j} of site {s}</a></li>' for j in range(8))
        for p in range(PAGES_A_SITE):
            story = "".join(
                f"<p>Story {p} of site {s}, paragraph {k}: the council met on the {k + p}th and agreed "
                f"on the budget for the {s + k} schools of the district after a long debate.</p>"
                for k in range(12)
            )
            html = (
                f"<html><head><title>Site {s} page {p}</title><script>var data = '{'x' * SCRIPT}';</script></head>"
                f"<body><header><nav><ul>{nav}</ul></nav></header><main><h1>Page {p} of site {s}</h1>{story}</main>"
                f"<footer><p>Copyright site {s}. All rights reserved. Contact us.</p></footer></body></html>"
            )
            path = f"/s{s}/p{p}.html"
            pages[path] = demosite.Page(path, f"Site {s} page {p}", html.encode())
    return pages


def test_the_addon_makes_room_for_the_first_pages_of_many_sites_of_large_pages(tmp_path):
    # A waiting item keeps its response in Scrapy's scraper.  With Scrapy's 5 MB the first pages'
    # responses may weigh 2.5 MB, so the first pages of more than 8 sites of 300 kB pages could not
    # all wait for their next pages; the add-on adds room for them (ACTIVE_ROOM).  Every site's
    # first page comes first (start URLs in that order), then each site's next pages in turn.
    server, base = demosite.serve(_big_sites())
    try:
        urls = [[f"{base}/s{s}/p{p}.html", {}] for p in range(PAGES_A_SITE) for s in range(SITES)]
        settings = {**ADDON, "DETEMPLATE_SITE_KEY": "crawl_runner.site_of_path"}
        crawl = run_crawl(tmp_path, urls=urls, settings=settings)
        by_hand = {**settings, "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 5_000_000}  # the project's own: left as it is
        kept = run_crawl(tmp_path / "by_hand", urls=urls, settings=by_hand)
    finally:
        server.shutdown()
    assert len(crawl.items) == len(kept.items) == SITES * PAGES_A_SITE
    assert crawl.stats["detemplate/first_page/waiting"] == SITES
    assert crawl.stats["detemplate/first_page/revisited"] == SITES
    assert crawl.stats["detemplate/first_page/items_filled_again"] == SITES
    assert not [key for key in crawl.stats if "/early/" in key or "/kept/" in key]
    # With Scrapy's 5 MB, first pages are let go before a next page of their site came.  How many
    # depends on how Scrapy interleaves the sites' first and next pages (once 3 of the 16, else 4 or more): one
    # is enough to show that the room the add-on adds is what keeps them all waiting.
    assert kept.stats.get("detemplate/first_page/kept/full", 0) >= 1


def _small_site(name: str, pages: int) -> dict[str, demosite.Page]:
    out = {}
    nav = "".join(f'<li><a href="/{name}/p{j}.html">Part {j} of {name}</a></li>' for j in range(6))
    for p in range(pages):
        story = "".join(f"<p>{name} page {p}, paragraph {k}: the committee reported on item {k * 7 + p}.</p>"
                        for k in range(6))  # fmt: skip
        html = (f"<html><head><title>{name} {p}</title></head><body><nav><ul>{nav}</ul></nav>"
                f"<main><h1>{name} page {p}</h1>{story}</main><footer>Copyright {name}.</footer>"
                "</body></html>")  # fmt: skip
        path = f"/{name}/p{p}.html"
        out[path] = demosite.Page(path, f"{name} {p}", html.encode())
    return out


def test_when_too_many_first_pages_wait_those_whose_next_pages_are_on_their_way_wait_longest(tmp_path):
    # A site of four pages, then 40 sites of one page, then the site's next pages (its first page links
    # to all, its own pages behind the others in Scrapy's scheduler, as in a crawl of many sites): more than the
    # 32 sites that may wait come between its first page and its next ones.  The sites of one page
    # have no request left in the scheduler once fetched: they go first, and the site of four pages
    # is cleaned again beside its next pages (before, the oldest went first: it).
    pages = _small_site("big", 4)
    for n in range(40):
        pages.update(_small_site(f"one{n}", 1))
    server, base = demosite.serve(pages)
    try:
        links = [[f"{base}/one{n}/p0.html", 0] for n in range(40)] + [[f"{base}/big/p{p}.html", -1] for p in (1, 2, 3)]
        urls = [[f"{base}/big/p0.html", {"then": links}]]
        settings = {**ADDON, "DETEMPLATE_SITE_KEY": "crawl_runner.site_of_path"}
        crawl = run_crawl(tmp_path, urls=urls, settings=settings)
    finally:
        server.shutdown()
    assert len(crawl.items) == 44
    assert crawl.stats["detemplate/first_page/waiting"] == 41
    assert crawl.stats["detemplate/first_page/revisited"] == 1  # the site of four pages, beside its three
    assert crawl.stats["detemplate/first_page/items_filled_again"] == 1
    assert crawl.stats["detemplate/first_page/kept/full"] + crawl.stats.get("detemplate/first_page/kept/idle", 0) == 40
