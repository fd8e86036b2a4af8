from __future__ import annotations

import lxml.html
import pytest
from scrapy.http import Headers, TextResponse

from scrapy_detemplate import PASSTHROUGH_REASONS, CleanResult, DetemplateConfig, Detemplater

SANDWICH = DetemplateConfig(method="sandwich", html=True)


def run(engine: Detemplater, url: str, html: str, **kw) -> CleanResult:
    return engine.process(url, html.encode("utf-8"), headers={"Content-Type": "text/html; charset=utf-8"}, **kw)


def test_first_page_of_a_directory_has_no_peer_and_says_so(page):
    result = run(Detemplater(SANDWICH), "http://ex.com/news/1", page.format(title="One", body="First"))
    assert (result.status, result.reason, result.chars_removed) == ("unchanged", "no_peer", 0)
    assert "Copyright Example" in result.text


def test_sandwich_removes_lines_shared_with_the_peer(page):
    engine = Detemplater(SANDWICH)
    run(engine, "http://ex.com/news/1", page.format(title="One", body="First story"))
    result = run(engine, "http://ex.com/news/2", page.format(title="Two", body="Second story"))
    assert result.status == "cleaned"
    assert result.method == "sandwich"
    assert result.text == "Two\nSecond story"
    assert set(result.template_lines) == {"Example Site News", "Alpha", "Beta", "Copyright Example"}
    assert "<nav" not in result.html and "<footer" not in result.html
    assert "<main><h1>Two</h1><p>Second story</p></main>" in result.html
    assert result.chars_removed == sum(len(t) for t in result.template_lines)
    assert result.bytes_removed > 0


def test_peers_are_per_directory(page):
    engine = Detemplater(SANDWICH)
    run(engine, "http://ex.com/news/1", page.format(title="One", body="First"))
    assert run(engine, "http://ex.com/sport/1", page.format(title="S", body="x")).reason == "no_peer"
    assert run(engine, "http://other.com/news/1", page.format(title="O", body="y")).reason == "no_peer"


def test_a_recrawled_url_is_not_its_own_peer(page):
    engine = Detemplater(SANDWICH)
    run(engine, "http://ex.com/news/1", page.format(title="One", body="First"))
    assert run(engine, "http://ex.com/news/1", page.format(title="One", body="First")).reason == "no_peer"


def test_a_duplicate_page_is_kept_whole(page):
    engine = Detemplater(SANDWICH)
    html = page.format(title="One", body="First")
    run(engine, "http://ex.com/news/1", html)
    result = run(engine, "http://ex.com/news/1-copy", html)
    assert (result.status, result.reason) == ("unchanged", "duplicate")
    assert "First" in result.text


def test_closest_name_peer(page):
    engine = Detemplater(DetemplateConfig(method="sandwich", sandwich_peer="closest"))
    run(engine, "http://ex.com/d/story-1.html", page.format(title="One", body="First"))
    run(engine, "http://ex.com/d/index.html", "<html><body><p>Copyright Example</p><p>x</p></body></html>")
    result = run(engine, "http://ex.com/d/story-2.html", page.format(title="Two", body="Second"))
    assert result.text == "Two\nSecond"  # the story page, not the most recent index page, was the peer


def test_source_line_unit_is_the_papers_variant(page):
    engine = Detemplater(DetemplateConfig(method="sandwich", sandwich_unit="source"))
    lines = page.replace("><", ">\n<")
    run(engine, "http://ex.com/news/1", lines.format(title="One", body="First"))
    result = run(engine, "http://ex.com/news/2", lines.format(title="Two", body="Second"))
    assert result.status == "cleaned"
    assert "Second" in result.text and "Alpha" not in result.text


def test_a_given_tree_is_never_modified(page):
    engine = Detemplater(SANDWICH)
    run(engine, "http://ex.com/news/1", page.format(title="One", body="First"))
    tree = lxml.html.document_fromstring(page.format(title="Two", body="Second"))
    before = lxml.html.tostring(tree)
    result = engine.process("http://ex.com/news/2", tree=tree)
    assert lxml.html.tostring(tree) == before
    assert (result.status, result.text) == ("cleaned", "Two\nSecond")


def test_a_page_served_in_noscript_keeps_its_content_and_a_given_tree_stays_as_it_was():
    posts = "".join(f"<p>Reply {i} of the thread, a member's long answer about routers.</p>" for i in range(8))
    html = f"<html><body><div id='shell'></div><noscript><h1>Routers</h1>{posts}</noscript></body></html>"
    for method in ("none", "combined"):
        result = run(Detemplater(DetemplateConfig(method=method, markdown=True)), "http://forum.ex.com/t/1", html)
        assert result.status != "passthrough", result.reason
        assert "Reply 7 of the thread" in result.text and "Reply 7 of the thread" in result.markdown
    tree = lxml.html.document_fromstring(html)
    before = lxml.html.tostring(tree)
    result = Detemplater(DetemplateConfig(method="none")).process("http://forum.ex.com/t/1", tree=tree)
    assert "Reply 0 of the thread" in result.text
    assert lxml.html.tostring(tree) == before


def test_kept_text_inside_removed_block_keeps_its_ancestors():
    engine = Detemplater(SANDWICH)
    html = "<html><body><div id=x><p>shared</p><p>{}</p></div><p>footer</p></body></html>"
    run(engine, "http://ex.com/a/1", html.format("one"))
    result = run(engine, "http://ex.com/a/2", html.format("two"))
    assert result.text == "two"
    assert '<div id="x"><p>two</p></div>' in result.html


def test_text_after_early_end_tags_is_cleaned_and_kept(page):
    engine = Detemplater(SANDWICH)
    late = page.replace("</body></html>", "</body></html><p>{late}</p>")
    run(engine, "http://ex.com/a/1", late.format(title="One", body="First", late="late one"))
    result = run(engine, "http://ex.com/a/2", late.format(title="Two", body="Second", late="late two"))
    assert result.text == "Two\nSecond\nlate two"


# -- bad input: passed through, counted by reason, never raised -------------------------


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
        ("application/json", b'{"a": 1}'),
        ("application/pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3"),
    ],
)
def test_non_html_content_types_pass_through(content_type, body):
    result = Detemplater(SANDWICH).process("http://ex.com/x", body, headers={"Content-Type": content_type})
    assert (result.status, result.reason, result.text, result.html) == ("passthrough", "non_html", "", "")
    assert result.bytes_in == len(body)


@pytest.mark.parametrize("body", [b"", b"   \n\t", None])
def test_empty_bodies_pass_through(body):
    result = Detemplater(SANDWICH).process("http://ex.com/x", body, headers={"Content-Type": "text/html"})
    assert (result.status, result.reason) == ("passthrough", "empty")


def test_bytes_that_do_not_decode_pass_through():
    noise = bytes(range(128, 256)) * 40
    result = Detemplater(SANDWICH).process(
        "http://ex.com/x", noise, headers={"Content-Type": "text/html; charset=utf-8"}
    )
    assert (result.status, result.reason) == ("passthrough", "undecodable")
    binary = b"<html>\x00\x01\x02" + noise
    assert Detemplater(SANDWICH).process("http://ex.com/x", binary).reason == "undecodable"


def test_nesting_ten_thousand_deep_passes_through():
    html = "<html><body>" + "<div>" * 10_000 + "deep" + "</div>" * 10_000 + "</body></html>"
    result = Detemplater(SANDWICH).process("http://ex.com/x", html.encode())
    assert (result.status, result.reason) == ("passthrough", "too_deep")


def test_a_page_without_body_passes_through():
    html = b"<html><head><title>only a head</title></head></html>"
    result = Detemplater(SANDWICH).process("http://ex.com/x", html)
    assert (result.status, result.reason) == ("passthrough", "no_body")
    assert result.html


def test_pages_over_the_byte_node_and_line_bounds_pass_through():
    html = "<html><body>" + "<p>line of text</p>\n" * 50 + "</body></html>"
    small = DetemplateConfig(max_bytes=100)
    assert Detemplater(small).process("http://ex.com/x", html.encode()).reason == "too_large"
    assert Detemplater(DetemplateConfig(max_nodes=20)).process("http://ex.com/x", html.encode()).reason == "too_large"
    lines = Detemplater(DetemplateConfig(max_lines=10)).process("http://ex.com/x", html.encode())
    assert (lines.reason, lines.text.count("\n")) == ("too_large", 49)  # visible text still given


def test_a_five_megabyte_page_is_cleaned_within_the_default_bounds(page):
    engine = Detemplater(SANDWICH)
    filler = "<p>" + "words of a long article " * 40 + "</p>\n"
    big = page.format(title="{title}", body=filler * 5200)
    assert len(big) > 5_000_000
    run(engine, "http://ex.com/big/1", big.format(title="One"))
    result = run(engine, "http://ex.com/big/2", big.format(title="Two"))
    assert result.status == "cleaned"
    assert "Alpha" not in result.text and "Two" in result.text


def hundred_thousand_lines(page: str, title: str, extra: str = "") -> str:
    return page.format(title=title, body="<br>\n".join(f"line {i}" for i in range(100_000)) + extra)


def test_a_page_of_100000_lines_passes_through_the_default_node_bound(page):
    # Real pages stay under 8,000 nodes (shared corpus); this one has 100,000 <br>.
    result = Detemplater(SANDWICH).process("http://ex.com/long/1", hundred_thousand_lines(page, "One").encode())
    assert (result.status, result.reason) == ("passthrough", "too_large")


def test_a_page_of_100000_lines_is_cleaned_when_the_bounds_allow_it(page):
    engine = Detemplater(DetemplateConfig(method="sandwich", max_nodes=500_000, max_lines=500_000))
    run(engine, "http://ex.com/long/1", hundred_thousand_lines(page, "One"))
    result = run(engine, "http://ex.com/long/2", hundred_thousand_lines(page, "Two", "<br>new line"))
    assert result.status == "cleaned"
    assert result.text == "Two\nnew line"


def test_a_method_failure_is_a_passthrough_not_an_exception(page, caplog):
    engine = Detemplater(SANDWICH)

    class Broken:
        name = "broken"

        def run(self, page):
            raise RuntimeError("boom")

    engine.runner = Broken()
    first = run(engine, "http://ex.com/a/1", page.format(title="x", body="y"))
    second = run(engine, "http://ex.com/a/2", page.format(title="x", body="y"))
    assert (first.status, first.reason, second.reason) == ("passthrough", "error", "error")
    assert sum("boom" in r.exc_text for r in caplog.records if r.exc_text) == 1  # logged once


def test_the_result_names_the_method_that_decided(page):
    engine = Detemplater(DetemplateConfig(method="segments"))
    first = run(engine, "http://ex.com/a/1", page.format(title="One", body="First"))
    assert (first.method, first.reason) == ("sandwich", "no_peer")  # segments still warming up
    second = run(engine, "http://ex.com/a/2", page.format(title="Two", body="Second"))
    assert (second.status, second.method) == ("cleaned", "sandwich")


def test_the_default_store_is_bounded_like_a_crawls(page):
    engine = Detemplater(DetemplateConfig(method="segments", max_sites=2, max_directories=2))
    for host in ("a.com", "b.com", "c.com"):
        run(engine, f"http://{host}/x/1", page.format(title="t", body="b"))
    assert engine.store.size("segments") == 2  # the least recently used site went
    assert engine.store.size("sandwich") == 2


# -- marking what was removed (for reports) ------------------------------------


def _unmarked_lines(marked_html: str) -> list[str]:
    """The visible lines of a marked page once its marked parts are taken out."""
    from scrapy_detemplate._html import parse_html, visible_lines
    from scrapy_detemplate.report import _drop

    root = parse_html(marked_html)
    for el in [e for e in root.iter() if isinstance(e.tag, str) and e.get("data-detemplate")]:
        _drop(el)
    return [line.text for line in visible_lines(root)]


@pytest.mark.parametrize(
    "config",
    [
        DetemplateConfig(method="sandwich"),
        DetemplateConfig(method="segments", segments_df_threshold=2),
        DetemplateConfig(method="rtdm", rtdm_max_pages=2),
        DetemplateConfig(method="combined"),
        DetemplateConfig(method="tps"),
        DetemplateConfig(method="isotonic"),
    ],
    ids=lambda c: c.method,
)
def test_marked_page_without_its_marks_is_the_clean_page(config):
    from demosite import build_site

    engine = Detemplater(config)
    cleaned = 0
    for path, demo in list(build_site().items())[:12]:
        result = engine.process(f"http://demo{path}", demo.body, headers={"Content-Type": demo.content_type}, mark=True)
        assert result.marked_html, path
        assert _unmarked_lines(result.marked_html) == result.text.splitlines(), (config.method, path)
        if result.status == "cleaned":
            cleaned += 1
            assert 'data-detemplate="removed' in result.marked_html
    assert cleaned


def test_marking_wraps_removed_text_of_a_kept_element_and_keeps_the_rest():
    engine = Detemplater(SANDWICH)
    page = "<html><body><div>Shared intro<p>{}</p><br>Shared outro</div></body></html>"
    run(engine, "http://ex.com/a/1", page.format("First story"))
    result = run(engine, "http://ex.com/a/2", page.format("Second story"), mark=True)
    assert result.text == "Second story"
    assert '<div><span data-detemplate="removed-text">Shared intro</span><p>Second story</p>' in result.marked_html
    assert '<br><span data-detemplate="removed-text">Shared outro</span></div>' in result.marked_html


def test_marking_source_lines_marks_the_lines_that_did_not_survive(page):
    engine = Detemplater(DetemplateConfig(method="sandwich", sandwich_unit="source"))
    source = page.replace("><", ">\n<")
    run(engine, "http://ex.com/news/1", source.format(title="One", body="First story"))
    result = run(engine, "http://ex.com/news/2", source.format(title="Two", body="Second story"), mark=True)
    assert result.status == "cleaned"
    assert _unmarked_lines(result.marked_html) == result.text.splitlines()


def test_results_are_the_same_with_and_without_marking(page):
    from dataclasses import replace

    plain, marking = Detemplater(SANDWICH), Detemplater(SANDWICH)
    for n in range(3):
        html = page.format(title=f"T{n}", body=f"Story number {n}")
        a = run(plain, f"http://ex.com/news/{n}", html)
        b = run(marking, f"http://ex.com/news/{n}", html, mark=True)
        assert a.marked_html == ""
        assert b.marked_html
        assert a == replace(b, marked_html="")


def test_marking_keeps_going_on_removed_text_with_control_characters():
    engine = Detemplater(SANDWICH)
    html = "<html><body><p>Shared\x1f line<br>{}</p></body></html>"  # the removed text's element stays
    run(engine, "http://ex.com/a/1", html.format("one"))
    result = run(engine, "http://ex.com/a/2", html.format("two"), mark=True)
    assert (result.status, result.text) == ("cleaned", "two")
    assert '<span data-detemplate="removed-text">Shared line</span><br>two' in result.marked_html


def test_the_clean_html_is_rendered_only_when_asked_for(page):
    asked = [DetemplateConfig(method="sandwich", **kw) for kw in ({"html": True}, {"html_field": "h"},
                                                                 {"replace_body": True})]  # fmt: skip
    for config in [DetemplateConfig(method="sandwich"), *asked]:
        engine = Detemplater(config)
        first = run(engine, "http://ex.com/news/1", page.format(title="One", body="First story"))
        second = run(engine, "http://ex.com/news/2", page.format(title="Two", body="Second story"))
        assert (first.status, second.status) == ("unchanged", "cleaned")
        assert second.text == "Two\nSecond story"  # the text never depends on it
        if config.renders_html:
            assert "<p>Second story</p>" in second.html and "<nav" not in second.html
            assert second.bytes_removed > 0 and "<p>First story</p>" in first.html
        else:
            assert (first.html, second.html, second.bytes_removed) == ("", "", 0)
            marked = run(engine, "http://ex.com/news/3", page.format(title="Three", body="Third story"), mark=True)
            assert "<p>Third story</p>" in marked.html  # a report's sample asks for it


def test_a_markdown_failure_keeps_the_text_and_html(monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RecursionError("renderer bug")

    monkeypatch.setattr("scrapy_detemplate.engine.to_markdown", broken)
    engine = Detemplater(DetemplateConfig(method="none", markdown=True))
    for _ in range(2):
        result = engine.process("http://ex.com/a", "<p>kept words</p>")
    assert result.status == "unchanged" and result.text == "kept words" and result.markdown == ""
    assert sum("could not render" in r.getMessage() for r in caplog.records) == 1  # logged once


# -- what Scrapy and library users hand process(): it never raises ------------------------------


@pytest.mark.parametrize("wrap", [bytearray, memoryview])
def test_bytes_like_bodies_are_cleaned_as_bytes(page, wrap):
    engine = Detemplater(SANDWICH)
    engine.process("http://ex.com/a/1", wrap(page.format(title="One", body="First").encode()))
    result = engine.process("http://ex.com/a/2", wrap(page.format(title="Two", body="Second").encode()))
    assert (result.status, result.text) == ("cleaned", "Two\nSecond")


@pytest.mark.parametrize("body", [12345, ["<p>x</p>"], {"html": "<p>x</p>"}, 1.5])
def test_a_body_of_another_type_is_a_counted_passthrough_not_an_exception(body):
    result = Detemplater(SANDWICH).process("http://ex.com/a/1", body)
    assert (result.status, result.reason, result.bytes_in) == ("passthrough", "bad_type", 0)
    assert "bad_type" in PASSTHROUGH_REASONS


def test_headers_of_another_type_are_a_passthrough_not_an_exception():
    result = Detemplater(SANDWICH).process("http://ex.com/a/1", b"<p>x</p>", headers=42)  # type: ignore[arg-type]
    assert (result.status, result.reason) == ("passthrough", "bad_type")


def test_scrapy_headers_mark_non_html_as_such():
    headers = Headers({"Content-Type": "image/png"})
    result = Detemplater(SANDWICH).process(
        "http://ex.com/x.png", b"<html><body><p>x</p></body></html>", headers=headers
    )
    assert (result.status, result.reason) == ("passthrough", "non_html")


def test_scrapy_headers_charset_is_used(page):
    body = page.format(title="Привет", body="мир").encode("cp1251")
    result = Detemplater(SANDWICH).process(
        "http://ex.com/a/1", body, headers=Headers({"Content-Type": "text/html; charset=windows-1251"})
    )
    assert "Привет\nмир" in result.text


def test_the_last_of_several_content_types_counts_as_in_scrapy():
    headers = Headers({"Content-Type": ["image/png", "text/html; charset=utf-8"]})
    assert TextResponse("http://ex.com/", headers=headers).headers.get(b"Content-Type") == b"text/html; charset=utf-8"
    result = Detemplater(SANDWICH).process("http://ex.com/a/1", "<p>é</p>".encode(), headers=headers)
    assert (result.status, result.text) == ("unchanged", "é")


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": b"text/html; charset=utf-8"},
        {b"content-type": b"text/html; charset=utf-8"},
        [("Content-Type", "text/html")],
    ],
)
def test_bytes_header_names_and_values_are_read(headers):
    result = Detemplater(SANDWICH).process("http://ex.com/a/1", "<p>é</p>".encode(), headers=headers)
    assert (result.status, result.text) == ("unchanged", "é")


@pytest.mark.parametrize(
    ("prefix", "codec", "content_type"),
    [
        ("\ufeff", "utf-16-le", None),  # BOM
        ("\ufeff", "utf-16-be", "text/html; charset=utf-8"),  # the BOM wins over the header, as in Scrapy
        ("", "utf-16-le", "text/html; charset=utf-16le"),
        ("<meta charset='utf-16'>", "utf-16-le", None),  # meta only
        ("<meta charset='utf-16'>", "utf-16-be", "text/html"),
    ],
)
def test_utf16_pages_are_decoded(page, prefix, codec, content_type):
    body = (prefix + page.format(title="Заголовок", body="Текст")).encode(codec)
    headers = {"Content-Type": content_type} if content_type else None
    result = Detemplater(SANDWICH).process("http://ex.com/a/1", body, headers=headers)
    assert (result.status, result.reason) == ("unchanged", "no_peer")
    assert "Заголовок\nТекст" in result.text


@pytest.mark.parametrize("codec", ["utf-16-be", "utf-16-le"])
def test_a_utf16_page_without_a_bom_under_the_plain_utf16_label_is_read_as_scrapy_reads_it(page, codec):
    # "charset=utf-16" without a BOM names no byte order: w3lib 2.5 read it big-endian (RFC 2781), w3lib
    # 2.6 little-endian (the WHATWG Encoding standard's label).  The engine reads a page as the spider's
    # response does, whichever w3lib is installed.
    from scrapy.http import HtmlResponse

    from scrapy_detemplate._html import decode_html

    body = page.format(title="Заголовок", body="Текст").encode(codec)
    content_type = "text/html; charset=utf-16"
    response = HtmlResponse("http://ex.com/a/1", body=body, headers={"Content-Type": content_type})
    assert decode_html(body, content_type)[1] == response.text


@pytest.mark.parametrize("where", [10, 5000])
def test_one_nul_byte_in_a_utf8_page_does_not_make_it_undecodable(page, where):
    filler = "<p>" + "long enough text " * 400 + "</p>"
    html = page.format(title="Title", body=filler).encode()
    body = html[:where] + b"\x00" + html[where:]
    result = Detemplater(SANDWICH).process(
        "http://ex.com/a/1", body, headers={"Content-Type": "text/html; charset=utf-8"}
    )
    assert result.status == "unchanged" and "Title" in result.text


def test_a_lone_surrogate_in_str_input_does_not_cut_the_page(page):
    result = Detemplater(SANDWICH).process("http://ex.com/a/1", page.format(title="One\ud800", body="after it"))
    assert result.status == "unchanged"
    assert "One\ufffd\nafter it" in result.text
    result.text.encode("utf-8")  # no surrogate left in the output


@pytest.mark.parametrize("control", ["\x1f", "\x0c", "\x01"])
def test_a_control_character_after_removed_template_does_not_break_removal(control):
    engine = Detemplater(SANDWICH)
    html = "<html><body><div><b>x</b><p>menu</p>" + control + "{}</div></body></html>"  # the tail is content
    run(engine, "http://ex.com/a/1", html.format("one"))
    result = run(engine, "http://ex.com/a/2", html.format("two"))
    assert (result.status, result.reason) == ("cleaned", "")
    assert "menu" not in result.text and "two" in result.text


def test_the_cyclic_collector_is_off_during_a_call_and_left_as_it_was_found(page):
    import gc

    seen: list[bool] = []
    engine = Detemplater(DetemplateConfig(method="none"))
    original = engine._process
    engine._process = lambda *a: seen.append(gc.isenabled()) or original(*a)  # type: ignore[method-assign]
    assert gc.isenabled()
    run(engine, "http://ex.com/a/1", page.format(title="One", body="First"))
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        run(engine, "http://ex.com/a/2", page.format(title="Two", body="Second"))
        assert not gc.isenabled()  # a caller's gc.disable() stands
    finally:
        gc.enable()


def test_the_default_leaves_no_reference_cycle_for_the_collector(page):
    # Why the collector may be off during a call: what a call makes is freed by reference counting.
    import gc

    engine = Detemplater(DetemplateConfig(markdown=True, html=True))
    gc.collect()
    gc.disable()
    try:
        for i in range(12):
            run(engine, f"http://ex.com/news/{i}", page.format(title=f"Title {i}", body=f"Story number {i} " * 20))
        assert gc.collect() == 0
    finally:
        gc.enable()
