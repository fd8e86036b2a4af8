from __future__ import annotations

from scrapy_detemplate._html import decode_html, parse_html, visible_lines, visible_text


def text(html: str) -> str:
    return visible_text(parse_html(html))


def test_blocks_and_br_break_lines_inline_elements_do_not_split_words():
    assert text("<body><p>one<b>two</b> three</p><div>four<br>five</div></body>") == "onetwo three\nfour\nfive"


def test_invisible_content_is_skipped_but_tails_are_kept():
    html = "<body><p>a<script>x()</script>b<!-- c -->d<style>p{}</style>e</p><noscript>n</noscript></body>"
    assert text(html) == "abde"


def test_content_after_early_body_and_html_end_is_kept():
    assert text("<html><body><p>in</p></body></html><p>after</p>") == "in\nafter"


def test_empty_and_blank_documents_have_no_tree():
    assert parse_html("") is None
    assert parse_html("   \n") is None


def test_xml_declaration_is_accepted():
    assert text('<?xml version="1.0" encoding="utf-8"?><html><body><p>x</p></body></html>') == "x"


def test_lines_know_their_path_and_slots():
    lines = visible_lines(parse_html("<body><div><p>a <i>b</i></p></div>tail</body>"))
    assert [(line.text, line.path) for line in lines] == [("a b", "body/div/p"), ("tail", "body")]
    assert len(lines[0].slots) == 2


def test_deep_nesting_does_not_recurse():
    html = "<body>" + "<div>" * 5000 + "deep" + "</div>" * 5000 + "</body>"
    tree = parse_html(html)
    assert tree is not None
    visible_text(tree)  # must not raise RecursionError


def test_decoding_follows_header_then_meta():
    body = "<meta charset='cp1251'><p>Привет</p>".encode("cp1251")
    assert "Привет" in decode_html(body)[1]
    assert decode_html("é".encode("latin-1"), "text/html; charset=latin-1")[1] == "é"
