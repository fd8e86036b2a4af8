from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from demosite import NAV, build_site
from lxml import etree

from scrapy_detemplate import DetemplateConfig, Detemplater
from scrapy_detemplate._html import parse_html, visible_lines
from scrapy_detemplate.cli import main
from scrapy_detemplate.engine import CleanResult
from scrapy_detemplate.report import PAGE_CSP, ReportWriter, safe_page

HTML = {"Content-Type": "text/html; charset=utf-8"}


def lines(document: str) -> list[str]:
    return [line.text for line in visible_lines(parse_html(document))]


def demo_report(tmp_path: Path, pages: int = 3, count: int = 12, **kw) -> tuple[ReportWriter, list[CleanResult]]:
    writer = ReportWriter(tmp_path, pages, **kw)
    engine = Detemplater(DetemplateConfig(method="sandwich"))
    results = []
    for path, demo in list(build_site().items())[:count]:
        url = f"http://demo{path}"
        result = engine.process(url, demo.body, headers=HTML, mark=writer.wants_sample("demo"))
        writer.add("demo", result)
        results.append(result)
    return writer, results


def test_safe_page_strips_what_runs_or_loads_and_puts_a_csp_first():
    page = """<html><head><title>T</title><base href="http://evil/"><link rel="stylesheet" href="http://evil/a.css">
    <meta http-equiv="refresh" content="0;url=http://evil/"><script src="http://evil/a.js"></script></head>
    <body onload="steal()"><a href="javascript:steal()" ping="http://evil/p">x</a><iframe src="http://evil/"></iframe>
    <img src="http://evil/i.png" srcset="http://evil/j.png 2x" onerror="steal()"><noscript>Enable JS</noscript>
    <p>Kept <b>text</b></p><object data="http://evil/o"></object><embed src="http://evil/e"></body></html>"""
    out = safe_page(page, marks=False)
    root = parse_html(out)
    head = root.find("head")
    assert head[0].get("charset") == "utf-8"
    assert (head[1].get("http-equiv"), head[1].get("content")) == ("Content-Security-Policy", PAGE_CSP)
    assert "default-src 'none'" in PAGE_CSP
    for tag in ("script", "base", "link", "iframe", "object", "embed", "noscript"):
        assert root.find(f".//{tag}") is None, tag
    assert not [m for m in root.iter("meta") if m.get("http-equiv") == "refresh"]
    assert not re.search(r"\son\w+=|javascript:|ping=|srcset=", out)
    assert lines(out) == ["x", "Kept text"]


def test_safe_page_without_marks_gives_the_page_as_it_was():
    engine = Detemplater(DetemplateConfig(method="sandwich"))
    page = "<html><body><div>Shared intro<p>{}</p><br>Shared outro</div><footer>(c) Ex</footer></body></html>"
    engine.process("http://ex.com/a/1", page.format("First"), headers=HTML)
    result = engine.process("http://ex.com/a/2", page.format("Second"), headers=HTML, mark=True)
    marked, original = safe_page(result.marked_html, marks=True), safe_page(result.marked_html, marks=False)
    assert "data-detemplate" in marked and "<style>[data-detemplate]" in marked
    assert "data-detemplate" not in original
    assert lines(original) == lines(page.format("Second"))
    assert "<div>Shared intro<p>Second</p><br>Shared outro</div>" in original


def test_samples_are_pages_1_3_9_of_a_site_written_as_they_come(tmp_path):
    writer = ReportWriter(tmp_path, 3)
    engine = Detemplater(DetemplateConfig(method="sandwich"))
    marked_at = []
    site_dir = None
    for number, (path, demo) in enumerate(list(build_site().items())[:12], 1):
        mark = writer.wants_sample("demo")
        if mark:
            marked_at.append(number)
        writer.add("demo", engine.process(f"http://demo{path}", demo.body, headers=HTML, mark=mark))
        (site_dir,) = (tmp_path / "sites").iterdir()
        # Written at once, before the report is closed.
        assert len(list(site_dir.glob("sample-?.html"))) == len(marked_at)
    assert marked_at == [1, 3, 9]
    assert not (tmp_path / "index.html").exists()
    index = writer.close()
    assert index == tmp_path / "index.html" and index.exists()
    assert site_dir is not None
    for n in (1, 2, 3):
        for view in ("original", "marked", "clean"):
            assert (site_dir / f"sample-{n}-{view}.html").exists()


def test_a_passed_through_page_is_counted_with_its_reason_and_the_next_page_is_the_sample(tmp_path):
    writer = ReportWriter(tmp_path, 2)
    engine = Detemplater()
    demo = build_site()
    assert writer.wants_sample("s")
    writer.add("s", engine.process("http://s/logo.png", b"\x89PNG", headers={"Content-Type": "image/png"}, mark=True))
    assert writer.wants_sample("s")  # the first sample is still to come
    writer.add("s", engine.process("http://s/news/", demo["/news/"].body, headers=HTML, mark=True))
    entry = writer.sites["s"]
    assert (entry.pages, len(entry.samples), entry.reasons["passthrough: non_html"]) == (2, 1, 1)
    writer.close()
    index = (tmp_path / "index.html").read_text()
    assert "passthrough: non_html 1" in index


def test_index_and_site_page_say_what_was_removed(tmp_path):
    writer, results = demo_report(tmp_path)
    writer.close()
    index = parse_html((tmp_path / "index.html").read_text())
    (row,) = index.xpath("//table[@id='sites']/tbody/tr")
    cells = [c.xpath("string()") for c in row.xpath("td")]
    removed = sum(r.chars_removed for r in results) / sum(r.chars_total for r in results)
    assert cells[:3] == ["demo", "12", f"{100 * removed:.1f}%"]
    assert cells[3] == "sandwich 12"
    (site_page,) = (tmp_path / "sites").glob("*/index.html")
    table = parse_html(site_page.read_text()).xpath("//table[@id='learned']/tbody/tr")
    learned = [(int(tr.xpath("string(td[1])")), tr.xpath("string(td[3])")) for tr in table]
    counts = dict((line, n) for n, line in learned)
    expected = {}
    for result in results:
        for line in set(result.template_lines):
            expected[line] = expected.get(line, 0) + 1
    assert counts == {line: n for line, n in expected.items() if n > 1}
    # In page order: the menu comes before the copyright line.
    order = [line for _, line in learned]
    assert max(order.index(n) for n in NAV) < order.index("Copyright 2026 The Daily Example Ltd. All rights reserved.")


def test_sample_page_frames_the_views_sandboxed_beside_the_clean_text(tmp_path):
    _, results = demo_report(tmp_path, pages=1, count=3)
    (sample,) = (tmp_path / "sites").glob("*/sample-1.html")
    root = parse_html(sample.read_text())
    frames = root.xpath("//iframe")
    assert [f.get("src") for f in frames] == ["sample-1-original.html", "sample-1-marked.html", "sample-1-clean.html"]
    assert all(f.get("sandbox") == "" for f in frames)
    assert [i.get("id") for i in root.xpath("//input[@type='radio']")] == ["v-original", "v-marked", "v-clean"]
    assert root.xpath("//input[@id='v-marked']/@checked")
    assert root.xpath("//div[@id='clean-text']/p/text()") == results[0].text.splitlines()
    assert not root.xpath("//script")
    csp = root.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")[0]
    assert "default-src 'none'" in csp


def test_bounds_other_sites_are_only_counted_and_lines_are_pruned(tmp_path):
    writer = ReportWriter(tmp_path, 1, max_sites=2, max_lines=3)
    for n in range(4):
        site = f"site{n}"
        mark = writer.wants_sample(site)
        assert mark == (n < 2)
        lines_ = tuple(f"line {n} {k}" for k in range(10))
        writer.add(site, CleanResult(f"http://{site}/", "cleaned", "x", template_lines=lines_, chars_total=10))
    assert set(writer.sites) == {"site0", "site1"}
    assert writer.other.pages == 2
    assert len(writer.sites["site0"].lines) == 3 and writer.sites["site0"].lines_dropped
    writer.close()
    assert "only counted" in (tmp_path / "index.html").read_text()


def test_no_samples_with_zero_pages_and_bad_pages_value_is_named(tmp_path):
    demo_report(tmp_path, pages=0, count=4)
    assert not list((tmp_path / "sites").glob("*/sample-*"))
    with pytest.raises(ValueError, match="pages=-1"):
        ReportWriter(tmp_path, -1)


def test_escaping_keeps_page_text_out_of_the_report_markup(tmp_path):
    writer = ReportWriter(tmp_path, 1)
    evil = "<script>alert(1)</script>"
    page = f"<html><body><p>{evil.replace('<', '&lt;')}</p></body></html>"
    writer.add(evil, Detemplater().process(f"http://x/{evil}", page, headers=HTML, mark=True))
    writer.close()
    for path in tmp_path.rglob("*.html"):
        tree = etree.fromstring(path.read_text(), etree.HTMLParser())
        assert not tree.xpath("//script"), path


def test_cli_report_writes_a_report_from_jsonl_pages(tmp_path, capsys):
    source = tmp_path / "pages.jsonl"
    with source.open("w", encoding="utf-8") as f:
        for path, demo in list(build_site().items())[:5]:
            f.write(json.dumps({"url": f"http://demo{path}", "html": demo.body.decode("utf-8")}) + "\n")
        f.write("not json\n")
    out = tmp_path / "report"
    assert main(["report", "-i", str(source), "-o", str(out), "--pages", "2", "--method", "sandwich"]) == 0
    assert f"report written to {out / 'index.html'}" in capsys.readouterr().out
    (site_dir,) = (out / "sites").iterdir()
    assert sorted(p.name for p in site_dir.glob("sample-?.html")) == ["sample-1.html", "sample-2.html"]
    assert "5</td>" in (out / "index.html").read_text()
