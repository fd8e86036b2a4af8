from __future__ import annotations

from w3lib.encoding import html_to_unicode

from scrapy_detemplate._html import (
    NOSCRIPT_MIN_CHARS,
    _auto_detect,
    _decoder,
    decode_html,
    parse_html,
    reveal_noscript,
    visible_lines,
    visible_text,
)


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


def test_a_w3lib_without_auto_detect_fun_still_decodes():
    """w3lib 2.6 deprecates ``html_to_unicode``'s ``auto_detect_fun``; a w3lib that drops it must not
    turn every page into an error: the call goes without it, and w3lib detects the encoding itself."""
    calls: list[tuple[object, ...]] = []

    def html_to_unicode_without_detection(content_type_header, html_body_str):  # the signature after removal
        calls.append((content_type_header, html_body_str))
        return html_to_unicode(content_type_header, html_body_str)

    decode = _decoder(html_to_unicode_without_detection)
    body = "<meta charset='cp1251'><p>Привет</p>".encode("cp1251")
    assert "Привет" in decode(body, None)[1]
    assert decode("é".encode("latin-1"), "text/html; charset=latin-1")[1] == "é"
    assert len(calls) == 2
    # The w3lib installed here takes it, and is called as Scrapy's TextResponse calls it.
    given: list[object] = []

    def html_to_unicode_with_detection(content_type_header, html_body_str, auto_detect_fun=None):
        given.append(auto_detect_fun)
        return html_to_unicode(content_type_header, html_body_str, auto_detect_fun=auto_detect_fun)

    assert _decoder(html_to_unicode_with_detection)(body, None) == decode_html(body)
    assert given == [_auto_detect]


#: A forum as Discourse serves it to a client without JavaScript: an empty application shell and
#: the whole thread in <noscript>.
SHELL = (
    "<html><body><section id='splash'><style>p{{}}</style></section>"
    "<noscript data-path='/t/1'><header><a href='/'>Forum</a></header><div id='main-outlet'>"
    "<h1>Which router should I buy?</h1>{posts}</div><style>x{{}}</style></noscript>"
    "<script>app()</script></body></html>"
)
POSTS = "".join(
    f"<div class='post'><p>Reply {i}: the long answer of a member about routers.</p></div>" for i in range(6)
)


def test_a_page_that_lives_in_noscript_is_shown_as_a_crawler_is_served_it():
    root = parse_html(SHELL.format(posts=POSTS))
    assert visible_text(root) == ""
    assert reveal_noscript(root) == 1
    shown = visible_text(root)
    assert shown.startswith("Forum\nWhich router should I buy?\nReply 0:")
    assert "Reply 5: the long answer" in shown and "x{}" not in shown


def test_the_usual_noscript_stays_hidden():
    banner = "<noscript><p>Please enable JavaScript to view the comments.</p><img src='pixel.gif'></noscript>"
    article = "<article>" + "<p>A paragraph of the article itself, long enough to count.</p>" * 8 + "</article>"
    root = parse_html(f"<html><body>{banner}{article}</body></html>")
    assert reveal_noscript(root) == 0
    assert "enable JavaScript" not in visible_text(root)
    # Long, but not the page: captions of a gallery about as long as the article around them.
    gallery = "<noscript>" + "<p>A caption of one picture of the gallery, in words.</p>" * 8 + "</noscript>"
    root = parse_html(f"<html><body>{article}{gallery}</body></html>")
    assert reveal_noscript(root) == 0
    # Short: an application shell's one line is not a page.
    root = parse_html(
        "<html><body><noscript><p>You need to enable JavaScript to run this app.</p></noscript></body></html>"
    )
    assert len("You need to enable JavaScript to run this app.") < NOSCRIPT_MIN_CHARS
    assert reveal_noscript(root) == 0
