"""The compiled line features (``scrapy_detemplate.methods._density``) against the Python function.

``density._line_features_py`` is the reference: on hand-made edge cases and on
random pages the compiled function returns the same rows, every float bit for
bit; what it does not handle it hands back (``None``), and ``line_features``
then runs the Python function.  ``test_density.py`` runs its tests through both.
"""

from __future__ import annotations

import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from scrapy_detemplate import _compiled
from scrapy_detemplate._html import Line, find_body, parse_html, visible_lines
from scrapy_detemplate.methods import density

compiled = density._compiled
needs_compiled = pytest.mark.skipif(compiled is None, reason="the compiled line features are not built here")

STORY = " ".join(["A sentence of the story, with a comma, long enough to count."] * 4)


def test_the_compiled_line_features_are_built_and_loaded_where_a_c_compiler_is() -> None:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: the install skips the extension and the features are computed in Python")
    assert compiled is not None, _compiled.status().get("scrapy_detemplate.methods._density")


def bits(rows: list[list[float]]) -> list[list[str]]:
    return [[value.hex() for value in row] for row in rows]


def assert_same(root: etree._Element, lines: list[Line], title: str = "") -> list[list[float]]:
    """The compiled rows, which must be the Python rows, float for float and bit for bit."""
    assert compiled is not None
    fast = compiled.line_features(root, lines, title)
    slow = density._line_features_py(root, lines, title)
    assert fast is not None, "handed back to Python"
    assert all(type(value) is float for row in fast for value in row)
    assert fast == slow
    assert bits(fast) == bits(slow)
    assert bits(rows_into(root, lines, title)) == bits(slow)
    return fast  # type: ignore[no-any-return]


def rows_into(root: etree._Element, lines: list[Line], title: str, spare: int = 3) -> list[list[float]]:
    """The rows ``line_features_into`` writes into a C array of doubles (with ``spare`` columns it leaves)."""
    assert compiled is not None
    width = len(density.FEATURES) + spare
    if not lines:  # a memoryview cannot have 0 rows
        return []
    out = memoryview(bytearray(8 * len(lines) * width)).cast("d", (len(lines), width))
    for i in range(len(lines)):
        for j in range(width):
            out[i, j] = -7.0  # written over, but the spare columns
    assert compiled.line_features_into(root, lines, title, out) is True
    rows = [[out[i, j] for j in range(width)] for i in range(len(lines))]
    assert all(row[len(density.FEATURES) :] == [-7.0] * spare for row in rows)
    return [row[: len(density.FEATURES)] for row in rows]


def check_page(html: str, title: str | None = None) -> list[list[float]]:
    root = parse_html(html)
    assert root is not None
    lines = visible_lines(root)
    return assert_same(root, lines, root.findtext(".//title") or "" if title is None else title)


EDGE_CASES = {
    "story": f"""<html><head><title>Big story today</title></head><body>
        <ul class="nav"><li><a href="/">Home</a></li><li><a href="/n">News</a></li></ul>
        <div class="story"><h1>Big story today</h1><p>{STORY}</p><p>{STORY}</p></div>
        <div class="footer"><a href="/c">Contact</a></div></body></html>""",
    "comments and processing instructions": f"""<html><body><div id="content"><p>{STORY}<!-- a note -->after
        the comment<?php echo 1 ?>after the instruction</p><!-- c --><p>{STORY}</p></div></body></html>""",
    "invisible elements": f"""<html><body><div><p>{STORY}<script>var a = "no, no, no";</script>tail
        <style>p {{ color: red }}</style>more</p><noscript><p>{STORY}</p></noscript>
        <template><p>hidden</p></template></div></body></html>""",
    "unicode blanks and entities": f"""<html><body><p>a\xa0b\u2003c\u3000d\x85e&nbsp;f &amp; g&#8217;s
        &#x2028;h</p><div class="main">{STORY}\u2009{STORY}</div></body></html>""",
    "non-ascii text": f"""<html><head><title>Café İstanbul straße</title></head><body>
        <p>Café, naïve, İstanbul, STRASSE straße, ﬁne, K Kelvin, 中文内容, ΣΑΣ σας.</p>
        <p>{STORY} café</p><p>it’s “quoted” — fine… → © ¶ » «</p></body></html>""",
    "safe punctuation with title words": """<html><head><title>Story — The Site’s “news”</title></head><body>
        <p>The story’s site — news, news, NEWS… story</p><p>plain story site the the the</p></body></html>""",
    "class and id words": """<html><body>
        <div class="NAV"><p>one</p></div><div class="navbar"><p>two</p></div><div class="x ad"><p>three</p></div>
        <div class="bad"><p>four</p></div><div class="_ad"><p>five</p></div><div class="-ad"><p>six</p></div>
        <div id="ad-slot"><p>seven</p></div><div class="sidebar main-column"><p>eight</p></div>
        <div class="ſidebar"><p>nine</p></div><div class="sİdebar"><p>ten</p></div><div class="menü"><p>x</p></div>
        <div class="comment respond" id="comments"><ol class="comment-list"><li class="comment"><p>I
        disagree, strongly, with this.</p></li></ol></div><div class="story "><p>trailing</p></div>
        <div class=" hentry" id=" content "><p>leading</p></div><div class="" id=""><p>empty</p></div>
        <div class="ΣIDEBAR"><p>greek</p></div></body></html>""",
    "every candidate negative: the html element wins": f"""<html><body class="comment">
        <p>{STORY}</p></body></html>""",
    "ties between siblings and between cousins": f"""<html><body>
        <section><div><p>{STORY}</p></div><div><p>{STORY}</p></div></section>
        <section><div><p>{STORY}</p></div></section></body></html>""",
    "div paragraphs with and without blocks": f"""<html><body><div class="x"><div>{STORY}</div>
        <div>{STORY}<p>{STORY}</p></div><div>{STORY}<span>{STORY}</span></div></div></body></html>""",
    "tables and lists": f"""<html><body><table><tr><td>{STORY}</td><td><a href="#">link, link</a></td></tr>
        <tr><th>head</th><td>{STORY}</td></tr></table><ul><li>{STORY}</li><li><a href="/">a</a> b</li></ul>
        <dl><dt>term</dt><dd>{STORY}</dd></dl><pre>code, code</pre><blockquote>{STORY}</blockquote></body></html>""",
    "breaks and inline elements": f"""<html><body><p>one<br>two<br/>three <b>bold</b> <i>it</i> <em>em</em>
        <code>c</code><br></p><div><span>{STORY}</span><a href="/">{STORY}</a></div></body></html>""",
    "deep nesting": "<html><body>"
    + "<div><span>" * 120
    + f"<p>{STORY}</p>deep"
    + "</span>x</div>" * 120
    + "</body></html>",
    "many title words": "<html><head><title>" + " ".join(f"w{k}" for k in range(100)) + "</title></head>"
    "<body><p>" + " ".join(f"w{k}" for k in range(0, 200, 3)) + "</p></body></html>",
    "chinese and japanese text": """<html><head><title>今日的新闻 News</title></head><body>
        <ul><li><a href="/">首页</a></li><li><a href="/n">新闻中心</a></li></ul><div class="content">
        <h1>今日的新闻</h1><p>这是一篇很长的新闻报道，讲述了今天发生的事情、明天的计划和后天的安排。记者在现场采访了许多人。</p>
        <p>日本語の文章です。カタカナとひらがな、そして漢字が混ざっています！本当ですか？はい｡</p>
        <p>Mixed 中文 and English, 以及全角，逗号、顿号 text 123。</p></div>
        <div class="footer">版权所有 © 2026</div></body></html>""",
    "thai, lao, myanmar and khmer text": """<html><head><title>ข่าววันนี้ News</title></head><body>
        <ul><li><a href="/">หน้าแรก</a></li><li><a href="/n">ຂ່າວ</a></li></ul><div class="content">
        <h1>ข่าววันนี้</h1><p>วันนี้ฝนตกหนักมาก  ถนนหลายสายน้ำท่วม, ราคา 16GB ข่าว</p><p>ຂ່າວມື້ນີ້ ດີຫຼາຍ</p>
        <p>သတင်းကောင်း ဒီနေ့။ ព័ត៌មានថ្ងៃនេះ ល្អណាស់។</p><p>ข่<b>าว</b> วัน<i> นี้</i> ่ ๑๒๓ ฿ ๏</p></div>
        <div class="footer">สงวนลิขสิทธิ์ © 2026</div></body></html>""",
    "sentence ends": """<html><body><p>Ends.</p><p>Ends!</p><p>Ends?</p><p>"Ends"</p><p>'Ends'</p>
        <p>“Ends”</p><p>Does not end,</p><p>Ends…</p><p>终。</p><p>終！</p><p>終？</p><p>終｡</p><p>终，</p>
        </body></html>""",
    "a language picker on a page written with spaces": f"""<html><body><ul class="lang"><li>English</li>
        <li>日本語</li><li>简体中文，繁體中文</li></ul><p>{STORY}</p><p>终。</p></body></html>""",
    "forms and navigation": """<html><body><header><nav><form><label>Search</label><select><option>One
        </option><option>Two</option></select><button>Go</button></form></nav></header><main><article>
        <h2>Title</h2><p>Text, text. <time>Today</time> <small>small</small> <sup>1</sup> <cite>c</cite></p>
        </article></main><aside><figure><figcaption>Caption</figcaption></figure></aside>
        <footer><center><font>Footer</font></center></footer></body></html>""",
    "landmark roles": f"""<html><body><div role=" Navigation\t"><a href="/">Prev</a></div><div role="main">
        <p>{STORY}</p><div role="complementary">aside</div></div><div role="contentinfo">foot</div>
        <div role="banner">head</div><div role="menubar">menu</div><div role="navigation main">two</div>
        <div role="&#160;navigation">nbsp</div><div role="navİgation">dotted</div><div role="">none</div>
        <div role="{"navigation" * 3}">long</div></body></html>""",
    "repeated records": f"""<html><body><ul class="menu"><li><a href="/">One</a></li><li><a href="/2">Two</a></li>
        <!-- c --><li class=" item"><a href="/3">Three</a></li><li class="item	x">4</li><li class="item">5</li>
        <li class=" item">6</li><li class="Item">7</li></ul><div class="card">a <b>b</b><b>c</b><b>d</b></div>
        <div class="card x">{STORY}<div class="card"><p>p</p><p>q</p><p>r</p></div></div><div class="card">e</div>
        <div class="main"><p>{STORY}</p><p>{STORY}</p><p><a href="/">{STORY}</a></p></div>
        <table><tr><td>1</td><td>2</td><td>3</td></tr><tr><td>x</td></tr><tr><td></td></tr></table>
        <div class="ranking"><div class="row">1.</div><div class="row"><span>Name</span> 9.1</div>
        <div class="row"><a href="/c">Compare</a></div><section class="row">no</section></div></body></html>""",
}


@needs_compiled
@pytest.mark.parametrize("html", EDGE_CASES.values(), ids=EDGE_CASES.keys())
def test_the_compiled_features_are_the_python_features(html: str) -> None:
    check_page(html)


@needs_compiled
@pytest.mark.parametrize(
    "title",
    ["", "Big story today", "story, STORY story", "Café story", "Story — the site’s news", "中文", "a " * 70],
)
def test_every_kind_of_title_gives_the_python_features(title: str) -> None:
    check_page(EDGE_CASES["story"], title)
    check_page(EDGE_CASES["safe punctuation with title words"], title)


@needs_compiled
def test_lines_without_slots_and_empty_lines_give_the_python_features() -> None:
    root = parse_html(EDGE_CASES["story"])
    assert root is not None
    lines = visible_lines(root)
    assert_same(root, [Line("orphan line.", "", []), *lines, Line("", "", [])], "story")
    assert_same(root, [], "story")
    assert_same(root, tuple(lines), "story")  # type: ignore[arg-type]


@needs_compiled
def test_a_body_at_the_root_and_a_body_inside_the_body_give_the_python_features() -> None:
    root = etree.Element("body")
    div = etree.SubElement(root, "div", {"class": "story"})
    for _ in range(3):
        etree.SubElement(div, "p").text = STORY
    inner = etree.SubElement(div, "body", {"class": "nav"})
    etree.SubElement(inner, "p").text = STORY
    etree.SubElement(etree.SubElement(inner, "div"), "a").text = "link"
    assert find_body(root) is root
    assert_same(root, visible_lines(root), "story")


@needs_compiled
def test_rows_into_an_array_of_another_shape_are_refused() -> None:
    assert compiled is not None
    root = parse_html(f"<html><body><p>{STORY}</p><p>two</p></body></html>")
    assert root is not None
    lines = visible_lines(root)
    width = len(density.FEATURES)
    for rows, columns in ((1, width), (2, width - 1)):
        out = memoryview(bytearray(8 * rows * columns)).cast("d", (rows, columns))
        with pytest.raises(ValueError):
            compiled.line_features_into(root, lines, "", out)


def handed_back(root: etree._Element, lines: list[Line], title: str = "") -> None:
    """The compiled function hands the page back; ``line_features`` gives the Python rows."""
    assert compiled is not None
    assert compiled.line_features(root, lines, title) is None
    width = len(density.FEATURES)
    out = memoryview(bytearray(8 * len(lines) * width)).cast("d", (len(lines), width))
    assert compiled.line_features_into(root, lines, title, out) is False
    assert bits(density.line_features(root, lines, title)) == bits(density._line_features_py(root, lines, title))


@needs_compiled
def test_what_the_compiled_function_does_not_handle_goes_to_python() -> None:
    # No body at all.
    root = etree.Element("html")
    etree.SubElement(etree.SubElement(root, "head"), "title").text = "T"
    handed_back(root, [Line("loose", "", [])])
    # A namespaced element, an entity reference.
    for extra in (etree.Element("{http://www.w3.org/2000/svg}svg"), etree.Entity("amp")):
        root = parse_html(f"<html><body><div><p>{STORY}</p></div></body></html>")
        assert root is not None
        body = find_body(root)
        assert body is not None
        body[0].append(extra)
        handed_back(root, visible_lines(root), "story")
    # A slot outside the body; a comment's own text as a slot.
    root = parse_html(f"<html><head><title>T</title></head><body><p>{STORY}</p><!--note--></body></html>")
    assert root is not None
    lines = visible_lines(root)
    title_el = root.find(".//title")
    handed_back(root, [*lines, Line("T", "", [(title_el, False)])])
    comment = next(el for el in root.iter() if el.tag is etree.Comment)
    handed_back(root, [*lines, Line("note", "", [(comment, False)])])


# -- random pages ------------------------------------------------------------------------

TAGS = (
    "a", "p", "div", "li", "ul", "ol", "td", "tr", "table", "span", "nav", "section", "article", "main", "h1",
    "h3", "em", "b", "footer", "header", "aside", "pre", "blockquote", "dd", "dt", "form", "label", "time",
    "font", "code", "th", "option", "select", "figure", "small", "script", "style", "noscript",
)  # fmt: skip
WORDS = (
    "nav", "NAV", "menu", "story", "content", "article", "comment", "respond", "sidebar", "main", "column",
    "x ad", "bad", "ad-slot", "ſidebar", "menü", "post", "footer", "widget", "entry ", " hentry", "pager",
    "text", "related share", "byline date", "ΣIDEBAR", "com-x", "tags",
)  # fmt: skip
TEXTS = (
    "Hello", " world, ", STORY, "it’s “quoted” — fine… ", "Café naïve ", "İstanbul", " Straße ", "K Kelvin",
    "中文内容", "新闻，今天、明天。", "カタカナのテキスト！", "漢字？", "𠀀𠀁", "ｶﾀｶﾅ", "｡", "\xa0", "\u2003",
    "\u3000", "\x85", "&amp;", "&nbsp;", "&#8217;", "\t\n", ",,, ", "x" * 120,
    "!", "?", "”", "_under_score ", "123", ". ", "Big story today ", "ΣΑΣ", "ﬁne",
    "आज की खबर।", "॥", "خبر، امروز؟", "خبر۔", "ዜና፣ ዛሬ።", "Լուր։", "သတင်း။", "ព័ត៌មាន។", "ֈ", "؋",
    "ข่าววันนี้ ดีมาก", " ่", "ຂ່າວ ", "๑๒", "฿",
)  # fmt: skip


ROLES = (
    "navigation", " Navigation\t", "NAVIGATION", "menubar", "complementary", "contentinfo", "banner", "main",
    "navigation main", "nav", "navigationx", "", "\xa0navigation", "navİgation", "mainſ", "x" * 40,
)  # fmt: skip


def element(tag: str, cls: str, ident: str, role: str, children: list[str]) -> str:
    attrs = (f' class="{cls}"' if cls else "") + (f' id="{ident}"' if ident else "")
    attrs += f' role="{role}"' if role else ""
    return f"<{tag}{attrs}>{''.join(children)}</{tag}>"


texts = st.lists(st.sampled_from(TEXTS), min_size=1, max_size=3).map("".join)
leaves = texts | st.sampled_from(["<!-- c -->", "<?pi x?>", "<br>", "<br/>", "<hr>"])
nodes = st.recursive(
    leaves,
    lambda children: st.builds(
        element,
        st.sampled_from(TAGS),
        st.sampled_from(("", *WORDS)),
        st.sampled_from(("", *WORDS)),
        st.sampled_from(("", "", "", *ROLES)),
        st.lists(children, max_size=4),
    ),
    max_leaves=40,
)
pages = st.builds(
    lambda title, cls, content: f"<html><head><title>{title}</title></head><body{cls}>{''.join(content)}</body></html>",
    texts,
    st.sampled_from(("", ' class="comment"', ' class="story"')),
    st.lists(nodes, min_size=1, max_size=5),
)


@needs_compiled
@settings(derandomize=True, max_examples=400, deadline=None)
@given(pages, texts)
def test_random_pages_give_the_python_features(html: str, title: str) -> None:
    check_page(html)
    check_page(html, title)


@needs_compiled
def test_the_c_cjk_test_is_the_python_pattern_on_every_code_point() -> None:
    assert compiled is not None
    is_cjk = compiled._is_cjk
    assert [cp for cp in range(0x110000) if is_cjk(cp) != bool(density._CJK.fullmatch(chr(cp)))] == []


@needs_compiled
def test_the_c_thai_lao_myanmar_khmer_test_is_the_python_pattern_on_every_code_point() -> None:
    assert compiled is not None
    is_sea = compiled._is_sea
    assert [cp for cp in range(0x110000) if is_sea(cp) != bool(density._SEA.fullmatch(chr(cp)))] == []


@needs_compiled
def test_the_c_blank_test_is_str_isspace_on_every_code_point() -> None:
    assert compiled is not None
    is_space = compiled._is_space
    assert [cp for cp in range(0x110000) if is_space(cp) != chr(cp).isspace()] == []
