"""Bad responses in a real crawl: passed through unchanged, counted, no item lost."""

from __future__ import annotations

import hashlib

import demosite
import pytest

from .conftest import run_crawl

pytestmark = pytest.mark.integration

TEMPLATE = demosite.build_site()["/news/story-1.html"].body.decode()


def bad_pages() -> dict[str, demosite.Page]:
    def page(path: str, body: bytes, content_type: str = "text/html; charset=utf-8") -> demosite.Page:
        return demosite.Page(path, path, body, content_type)

    deep = "<html><body>" + "<div>" * 10_000 + "deep" + "</div>" * 10_000 + "</body></html>"
    late = TEMPLATE.replace("</html>", "</html>\n<p>LATE</p>")
    big = TEMPLATE.replace("<article>", "<article>" + "<p>" + "long text " * 100 + "</p>\n" * 5_500)
    lines = TEMPLATE.replace("<article>", "<article>" + "<br>\n".join(f"line {i}" for i in range(100_000)))
    return {
        p.path: p
        for p in [
            page("/bad/image.png", b"\x89PNG\r\n\x1a\n" + bytes(200), "image/png"),
            page("/bad/data.json", b'{"not": "html"}', "application/json"),
            page("/bad/doc.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "application/pdf"),
            page("/bad/empty.html", b""),
            page("/bad/undecodable.html", bytes(range(128, 256)) * 50),
            page("/bad/deep.html", deep.encode()),
            page("/bad/nobody.html", b"<html><head><title>head only</title></head></html>"),
            page("/late/1.html", late.replace("LATE", "after the end one").encode()),
            page("/late/2.html", late.replace("LATE", "after the end two").encode()),
            page("/bad/big.html", big.encode()),
            page("/bad/lines.html", lines.encode()),
        ]
    }


@pytest.fixture(scope="module")
def bad_site():
    pages = bad_pages()
    server, base = demosite.serve(pages)
    yield pages, base
    server.shutdown()


def test_bad_responses_pass_through_unchanged_and_counted(bad_site, tmp_path):
    pages, base = bad_site
    urls = [[base + path, {}] for path in pages]
    # Sandwich: whether the late text survives is then a matter of parsing, not of a model's judgement.
    settings = {"ADDONS": {"scrapy_detemplate.Addon": 0}, "CONCURRENT_REQUESTS": 1, "DETEMPLATE_METHOD": "sandwich"}
    crawl = run_crawl(tmp_path, urls=urls, settings=settings)
    items = {item["url"].removeprefix(base): item for item in crawl.items}
    assert set(items) == set(pages)  # no item lost
    for path, page in pages.items():
        # The spider saw exactly the bytes the server sent.
        assert items[path]["sha256"] == hashlib.sha256(page.body).hexdigest(), path
    reasons = {path: items[path]["result_reason"] for path in pages if items[path]["result_status"] == "passthrough"}
    assert reasons == {
        "/bad/image.png": "non_html",
        "/bad/data.json": "non_html",
        "/bad/doc.pdf": "non_html",
        "/bad/empty.html": "empty",
        "/bad/undecodable.html": "undecodable",
        "/bad/deep.html": "too_deep",
        "/bad/nobody.html": "no_body",
        "/bad/lines.html": "too_large",
    }
    assert "after the end two" in items["/late/2.html"]["content"]
    assert "Copyright" not in items["/late/2.html"]["content"]
    assert items["/bad/big.html"]["result_status"] in ("cleaned", "unchanged")
    stats = crawl.stats
    assert stats["detemplate/passed_through"] == len(reasons)
    assert stats["detemplate/passed_through/non_html"] == 3
    assert "detemplate/error" not in stats
    assert "log_count/ERROR" not in stats
    # Logged once per reason, not once per page.
    assert crawl.log.count("(non_html)") == 1
