from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from scrapy_detemplate._html import parse_html, visible_lines
from scrapy_detemplate.methods import density
from scrapy_detemplate.methods.density import FEATURES, container_scores, line_features


@pytest.fixture(autouse=True, scope="module", params=["compiled", "python"])
def features_by(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test here runs with the compiled line features (``_density``, when built) and the Python ones."""
    saved = density._compiled
    if request.param == "python":
        density._compiled = None
    elif saved is None:
        pytest.skip("the compiled line features are not built here (test_density_compiled.py says why)")
    yield request.param
    density._compiled = saved


ARTICLE = " ".join(["A sentence of the story, with a comma, long enough to count."] * 4)
PAGE = f"""<html><head><title>Big story today</title></head><body>
<ul class="nav"><li><a href="/">Home</a></li><li><a href="/n">News</a></li></ul>
<div class="story"><h1>Big story today</h1><p>{ARTICLE}</p><p>{ARTICLE}</p></div>
<div class="footer"><a href="/c">Contact</a></div></body></html>"""


def test_the_paragraphs_parent_is_the_chosen_container():
    root = parse_html(PAGE)
    scores, chosen = container_scores(root)
    assert [el.get("class") for el in chosen] == ["story"]
    assert max(scores, key=scores.__getitem__).get("class") == "story"


def test_one_feature_vector_per_line_with_container_and_link_evidence():
    root = parse_html(PAGE)
    lines = visible_lines(root)
    rows = line_features(root, lines, "Big story today")
    assert len(rows) == len(lines) and all(len(r) == len(FEATURES) for r in rows)
    named = [dict(zip(FEATURES, r, strict=True)) for r in rows]
    by_text = {line.text: f for line, f in zip(lines, named, strict=True)}
    assert by_text["Home"]["link_density"] == 1.0 and by_text["Home"]["in_container"] == 0.0
    assert by_text[ARTICLE]["in_container"] == 1.0 and by_text[ARTICLE]["link_density"] == 0.0
    assert by_text["Big story today"]["title_cover"] == 1.0


def test_a_page_without_paragraphs_has_no_container():
    root = parse_html("<html><body><p>short</p></body></html>")
    assert container_scores(root) == ({}, set())
    assert line_features(root, visible_lines(root))[0][FEATURES.index("in_container")] == 0.0


def test_comment_threads_and_unlikely_candidates_are_marked():
    root = parse_html(
        f"""<html><body><div class="story"><p>{ARTICLE}</p><p>{ARTICLE}</p></div>
        <div id="comments"><ol class="comment-list"><li class="comment"><p>I disagree, strongly.</p></li></ol></div>
        <div id="sidebar"><p>Popular posts</p></div>
        <div class="sidebar main-column"><p>Kept column</p></div></body></html>"""
    )
    lines = visible_lines(root)
    by_text = {
        line.text: dict(zip(FEATURES, row, strict=True))
        for line, row in zip(lines, line_features(root, lines), strict=True)
    }
    assert by_text["I disagree, strongly."]["comment_words"] == 1.0  # three comment-worded ancestors, capped
    assert by_text[ARTICLE]["comment_words"] == 0.0 and by_text[ARTICLE]["unlikely"] == 0.0
    assert by_text["Popular posts"]["unlikely"] == 1.0 and by_text["Popular posts"]["comment_words"] == 0.0
    assert by_text["Kept column"]["unlikely"] == 0.0  # "main"/"column" rescue it, as in readability


def test_a_landmark_role_reads_as_the_tag_it_stands_for():
    # Sphinx's prev/next bar is <div class="related" role="navigation">: a nav in all but its tag.
    html = f"""<html><body><div class="related" role="navigation"><a href="/p">Prev</a></div>
        <div role=" Main "><p>{ARTICLE}</p></div><div role="contentinfo">Site footer</div>
        <div role="complementary">Aside</div><div role="banner">Banner</div>
        <div role="navigation main">Two roles</div></body></html>"""
    root = parse_html(html)
    lines = visible_lines(root)
    rows = {line.text: row for line, row in zip(lines, line_features(root, lines), strict=True)}
    under = {tag: density.FEATURES.index(f"under_{tag}") for tag in ("nav", "main", "footer", "aside", "header")}
    assert [tag for tag, i in under.items() if rows["Prev"][i]] == ["nav"]
    assert [tag for tag, i in under.items() if rows[ARTICLE][i]] == ["main"]
    assert [tag for tag, i in under.items() if rows["Site footer"][i]] == ["footer"]
    assert [tag for tag, i in under.items() if rows["Aside"][i]] == ["aside"]
    assert [tag for tag, i in under.items() if rows["Banner"][i]] == ["header"]
    assert [tag for tag, i in under.items() if rows["Two roles"][i]] == []  # a list of roles is not compared


def test_a_line_knows_the_repeated_records_it_stands_in():
    items = "".join(
        f'<div class="item"><h3><a href="/{k}">Product {k}</a></h3><p>Price {k}.99, in stock</p></div>'
        for k in range(8)
    )
    root = parse_html(
        f"""<html><body><ul class="nav"><li><a href="/">Home</a></li><li><a href="/a">About</a></li>
        <li><a href="/b">Blog</a></li></ul><div class="list">{items}</div><div class="story"><p>{ARTICLE}</p>
        <p>{ARTICLE}</p><p>{ARTICLE}</p></div><div class="foot"><p>Contact us</p></div></body></html>"""
    )
    lines = visible_lines(root)
    rows = line_features(root, lines)
    named = {line.text: dict(zip(FEATURES, row, strict=True)) for line, row in zip(lines, rows, strict=True)}
    page = sum(len(line.text) for line in lines)
    menu, product, price = named["Home"], named["Product 3"], named["Price 3.99, in stock"]
    # The menu: three <li> (the <a> owning the line is inline, so the record is one level up), all links.
    assert menu["record_count"] == math.log1p(3) and menu["record_up"] == 0.1
    assert menu["record_link_density"] == 1.0 and menu["record_share"] == len("HomeAboutBlog") / page
    # A listing's item: its title two levels below the record, its price one; the same group.
    assert product["record_count"] == price["record_count"] == math.log1p(8)
    assert (product["record_up"], price["record_up"]) == (0.2, 0.1)
    item_chars = sum(len(f"Product {k}") + len(f"Price {k}.99, in stock") for k in range(8))
    assert price["record_share"] == item_chars / page and price["record_in_container"] == 0.0
    assert price["record_link_density"] == sum(len(f"Product {k}") for k in range(8)) / item_chars
    assert price["record_log_chars"] == math.log1p(item_chars / 8)
    assert price["big_record_share"] == price["record_share"] and price["big_record_count"] == math.log1p(8)
    # The story's paragraphs are a group inside the main container; a line in no group has zeros.
    assert named[ARTICLE]["record_in_container"] == 1.0 and named[ARTICLE]["record_count"] == math.log1p(3)
    assert all(named["Contact us"][name] == 0.0 for name in density.RECORD_FEATURES)


def test_chinese_and_japanese_text_is_measured_in_words_not_in_runs():
    # Written without spaces, a CJK sentence is one \w+ run: counted as such it would read as one long word.
    assert density.tokens("今天的新闻很重要", cjk=True) == ["今天", "的新", "闻很", "重要"]
    assert density.tokens("mixed 中文内容x and 日本語", cjk=True) == ["mixed", "中文", "内容", "x", "and", "日本", "語"]
    assert density.tokens("plain words, 123", cjk=True) == ["plain", "words", "123"]
    assert density.text_size("新闻 ab", cjk=True) == 3 * 2 + 3 and density.text_size("plain", cjk=True) == 5
    assert density.commas("一，二、三, four", cjk=True) == 3
    # On a page of another language, as before: a language picker's "日本語" is one word of three characters.
    assert density.tokens("日本語", cjk=False) == ["日本語"] and density.text_size("日本語") == 3
    assert density.commas("一，二、三, four") == 1


#: Scripts with stops and commas of their own: (full stop, comma, question mark) as each writes them.
SCRIPT_MARKS = {
    "danda (Hindi, Marathi, Nepali, Bengali)": ("\u0964", ",", "?"),
    "double danda": ("\u0965", ",", "?"),
    "Arabic, Persian, Urdu": ("\u06d4", "\u060c", "\u061f"),
    "Ethiopic (Amharic)": ("\u1362", "\u1363", "?"),
    "Armenian": ("\u0589", ",", "?"),
    "Myanmar": ("\u104b", ",", "?"),
    "Khmer": ("\u17d4", ",", "?"),
}


@pytest.mark.parametrize("script", SCRIPT_MARKS)
def test_a_page_with_another_scripts_stops_and_commas_is_measured_as_with_latin_ones(script: str) -> None:
    stop, comma, question = SCRIPT_MARKS[script]
    page = PAGE.replace("count.", "count? And more.")
    other = page.replace(".", stop).replace(",", comma).replace("?", question)
    assert other != page
    rows = {}
    for name, html in (("latin", page), (script, other)):
        root = parse_html(html)
        lines = visible_lines(root)
        rows[name] = line_features(root, lines, "Big story today")
    assert rows[script] == rows["latin"]  # every feature of every line, the article's sentence ends and commas too
    article = next(row for row in rows[script] if row[FEATURES.index("log_chars")] > 5)
    assert article[FEATURES.index("ends_sentence")] == 1.0 and article[FEATURES.index("commas_per_word")] > 0


def test_a_page_is_written_without_spaces_when_a_tenth_of_its_characters_are_cjk():
    root = parse_html(
        "<html><body><p>English | 日本語 | 简体中文 | 繁體中文 | Español</p><p>" + "x" * 120 + "</p></body></html>"
    )
    assert not density.written_without_spaces([line.text for line in visible_lines(root)])  # 11 of 157 characters
    root = parse_html("<html><body><p>日本語のページです。</p><p>" + "x" * 60 + "</p></body></html>")
    assert density.written_without_spaces([line.text for line in visible_lines(root)])  # 9 of 70


def test_a_page_in_thai_lao_myanmar_or_khmer_is_written_without_spaces():
    picker = "<p>English | ภาษาไทย | ລາວ | မြန်မာ | ខ្មែរ | Español</p>"
    root = parse_html(f"<html><body>{picker}<p>" + "x" * 200 + "</p></body></html>")
    assert not density.written_without_spaces([line.text for line in visible_lines(root)])  # 20 of 250 characters
    root = parse_html("<html><body><p>ข่าววันนี้ดีมาก</p><p>" + "x" * 60 + "</p></body></html>")
    assert density.written_without_spaces([line.text for line in visible_lines(root)])  # 15 of 76
    # Their vowel and tone marks are not ``\w``: ``\w+`` cuts a Thai word into pieces, a page written
    # without spaces does not.
    assert density._TOKEN.findall("ข่าว") == ["ข", "าว"]
    assert density.tokens("ข่าววันนี้ดีมาก", cjk=True) == ["ข่าว", "วันน", "ี้ดี", "มาก"]
    assert density.tokens("ราคา 16GB ข่าว", cjk=True) == ["ราคา", "16GB", "ข่าว"]
    assert density.tokens("ข่าววันนี้ดีมาก") == density._TOKEN.findall("ข่าววันนี้ดีมาก")  # any other page as before


#: A Thai sentence of two clauses of 17 characters each (a space between them, where English puts a comma).
THAI = "วันนี้ฝนตกหนักมาก ถนนหลายสายน้ำท่วม"


def test_a_thai_line_reads_like_a_line_written_with_spaces():
    paragraph = " ".join([THAI] * 4)
    root = parse_html(
        f"""<html><head><title>ข่าววันนี้</title></head><body><ul class="nav"><li><a href="/">หน้าแรก</a></li>
        <li><a href="/n">ข่าว</a></li></ul><div class="story"><h1>ข่าววันนี้</h1><p>{paragraph}</p>
        <p>{THAI}</p></div></body></html>"""
    )
    lines = visible_lines(root)
    named = {
        line.text: dict(zip(FEATURES, row, strict=True))
        for line, row in zip(lines, line_features(root, lines, "ข่าววันนี้"), strict=True)
    }
    story = named[paragraph]
    assert story["in_container"] == 1.0
    assert density.sea_chars(paragraph) == 4 * 34
    assert story["log_chars"] == math.log1p(len(paragraph) + 4 * 34 // 2)  # each Thai character 1.5
    assert story["log_words"] == math.log1p(len(density.tokens(paragraph, cjk=True))) == math.log1p(4 * 10)
    assert story["commas_per_word"] == 7 / 40  # the seven spaces between clauses; five words a clause
    assert named["ข่าววันนี้"]["title_cover"] == 1.0
    assert named["หน้าแรก"]["link_density"] == 1.0 and named["หน้าแรก"]["in_container"] == 0.0


def test_a_chinese_line_reads_like_a_line_written_with_spaces():
    sentence = "这是一篇很长的新闻报道，讲述了今天发生的事情、明天的计划和后天的安排。"
    root = parse_html(
        f"""<html><head><title>今天的新闻</title></head><body><ul class="nav"><li><a href="/">首页</a></li>
        <li><a href="/n">新闻</a></li></ul><div class="story"><h1>今天的新闻</h1><p>{sentence * 3}</p>
        <p>{sentence * 2}</p></div></body></html>"""
    )
    lines = visible_lines(root)
    named = {
        line.text: dict(zip(FEATURES, row, strict=True))
        for line, row in zip(lines, line_features(root, lines, "今天的新闻"), strict=True)
    }
    story = named[sentence * 3]
    assert story["in_container"] == 1.0 and story["ends_sentence"] == 1.0
    assert story["log_words"] == math.log1p(len(density.tokens(sentence * 3, cjk=True)))  # 48, not 6 clauses
    assert story["log_chars"] == math.log1p(3 * (32 * 3 + 3))  # 32 ideographs at 3 and 3 marks at 1, thrice
    assert story["commas_per_word"] == 6 / len(density.tokens(sentence * 3, cjk=True))
    assert named["今天的新闻"]["title_cover"] == 1.0
    assert named["首页"]["link_density"] == 1.0 and named["首页"]["in_container"] == 0.0
