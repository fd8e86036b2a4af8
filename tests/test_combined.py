from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_detemplate import DetemplateConfig, Detemplater, InvalidSetting
from scrapy_detemplate._html import parse_html, visible_lines
from scrapy_detemplate.methods import density
from scrapy_detemplate.methods.kinds import declared_names
from scrapy_detemplate.runners.combined import (
    CODE_SITE,
    FEATURES,
    KEEP_WEIGHT,
    PRODUCT_KEEP_WEIGHT,
    decide,
    drop_copies,
    expected_f1_cut,
    keep_table_rows_whole,
    keep_weight,
    load_forest,
    load_forests,
    table_rows,
)
from scrapy_detemplate.train_combined import line_labels

STORY = " ".join(["The council met on Tuesday, and the vote on the bridge passed, after a long debate."] * 3)
PAGE = """<html><head><title>{title} | Example</title></head><body>
<div id="nav"><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li></ul></div>
<div class="article"><h1>{title}</h1><p>{story}</p><p>{story}</p></div>
<div id="footer"><a href="/about">About us</a> | <a href="/terms">Terms of use</a></div>
</body></html>"""  # noqa: E501


def test_shipped_model_matches_the_features_this_version_computes():
    assert load_forest().features == FEATURES
    forest, first = load_forests()  # and it has first-page trees, averaged with the others on a first page
    assert first is not forest and len(first.trees) == len(forest.trees) + len(_shipped_model()["first_pages"]["trees"])


def test_the_first_page_of_a_site_is_already_cleaned():
    result = Detemplater().process("http://ex.com/a/1", PAGE.format(title="Bridge vote passes", story=STORY).encode())
    assert result.method == "combined" and result.status == "cleaned"
    assert "Bridge vote passes" in result.text and STORY in result.text
    assert "Terms of use" not in result.text and "Sport" not in result.text


def test_a_model_for_other_features_is_refused(tmp_path):
    model = tmp_path / "m.json"
    model.write_text(json.dumps({"features": ["x"], "base": 0, "rate": 1, "trees": []}))
    with pytest.raises(ValueError, match="other features"):
        Detemplater(DetemplateConfig(combined_model=str(model)))


def test_threshold_must_be_a_probability():
    with pytest.raises(InvalidSetting, match="DETEMPLATE_COMBINED_THRESHOLD"):
        DetemplateConfig(combined_threshold=1.5)


def test_labels_follow_the_gold_text():
    lines = visible_lines(parse_html("<body><p>Home</p><p>the vote on the bridge passed today</p><p>Bridge</p></body>"))
    assert line_labels(lines, "After debate the vote on the bridge passed today. Bridge") == [0, 1, 1]


def test_a_gold_word_labels_one_line_only():
    # The headline repeated in a breadcrumb, and a menu entry whose one word the story also holds:
    # each gold word is claimed once, in order, so only one copy is content.
    html = (
        "<body><ul><li>News</li><li>Bridge vote passes</li></ul><h1>Bridge vote passes</h1>"
        "<p>the council voted for the new bridge and the news spread</p></body>"
    )
    gold = "Bridge vote passes. The council voted for the new bridge and the news spread"
    assert line_labels(visible_lines(parse_html(html)), gold) == [0, 0, 1, 1]


def test_a_line_on_nearly_every_earlier_page_of_the_site_is_template():
    notice = "This story was produced with support from our readers, and we thank every one of them, always."
    engine = Detemplater()
    for n in range(7):
        story = STORY.replace("Tuesday", f"day {n}")
        html = PAGE.format(title=f"Vote number {n}", story=story).replace("</p></div>", f"</p><p>{notice}</p></div>")
        result = engine.process(f"http://ex.com/a/{n}", html.encode())
    assert story in result.text
    assert notice not in result.text


def test_decisive_evidence_overrides_the_trees():
    known = math.log1p(5) / 4  # five earlier pages of the site
    rows = [
        _row(site_df_when_warm=0.95, log_words=3.0),  # on nearly every earlier page of the site
        _row(site_df_when_warm=0.5, log_words=3.0),
        # a one-word link outside the container, on most earlier pages of the site: a menu entry
        _row(link_density=1.0, log_words=1.0, site_df=0.8, log_pages_seen=known),
        _row(link_density=1.0, log_words=1.0, in_container=1.0, site_df=0.8, log_pages_seen=known),
        _row(link_density=1.0, log_words=2.5, site_df=0.8, log_pages_seen=known),  # eleven words: the trees decide
    ]
    rows = _sized(rows, [100] * 5)
    content = _every(0.9)  # the trees call every line content
    assert decide(rows, content, 0.5, 0.9) == {0, 2}
    assert decide(rows, content, 0.5, 2.0) == {2}  # the site override off
    # The trees are asked about rows 1, 3 and 4 (0 and 2 are decided outright), then also row 0.
    assert decide(rows, _scores([0.1, 0.1, 0.9]), 0.5, 0.9) == {0, 1, 2, 3}
    assert decide(rows, _scores([0.9, 0.1, 0.1, 0.9]), 0.5, 2.0) == {1, 2, 3}


def _every(p: float) -> Callable[[list[list[float]]], list[float]]:
    """A scorer giving every row probability ``p``."""
    return lambda rows: [p] * len(rows)


def _row(**values: float) -> list[float]:
    out = [0.0] * len(FEATURES)
    for name, value in values.items():
        out[FEATURES.index(name)] = value
    return out


def test_new_text_on_a_known_site_needs_stronger_page_evidence_to_go():
    known = math.log1p(5) / 4  # five earlier pages of the site
    story = _row(log_pages_seen=known, log_words=3.0, in_container=1.0)
    new_text = _row(log_pages_seen=known, log_words=3.0)  # on no earlier page, not in the LCS, no links
    repeated = _row(log_pages_seen=known, log_words=3.0, site_df=0.5)
    links = _row(log_pages_seen=known, log_words=3.0, link_density=0.8)
    first_page = _row(log_words=3.0)
    rows = [story, story, story, new_text, repeated, links, first_page]
    sizes = [100, 100, 100, 25, 25, 25, 25]
    # The page is cut at 0.45 (the third story line): 0.38 is just below it, 0.3 well below.
    assert expected_f1_cut([0.9, 0.9, 0.45, 0.38, 0.38, 0.38, 0.38], sizes) == 0.45
    weak = _scores([0.9, 0.9, 0.45, 0.38, 0.38, 0.38, 0.38])
    assert decide(_sized(rows, sizes), weak, 0.5, 0.9) == {4, 5, 6}  # weak page evidence: the new text stays
    strong = _scores([0.9, 0.9, 0.45, 0.3, 0.3, 0.3, 0.3])
    assert decide(_sized(rows, sizes), strong, 0.5, 0.9) == {3, 4, 5, 6}  # strong page evidence: it goes too
    # On a page that declares a product (a shop's later page), new text stays whatever the trees say:
    # what is new there is the product; the shop's furniture repeats (and goes as before).
    shop = [[*row[: FEATURES.index("kind_product")], 1.0, *row[FEATURES.index("kind_product") + 1 :]] for row in rows]
    assert decide(_sized(shop, sizes), strong, 0.5, 0.9) == {4, 5, 6}
    assert decide(_sized(shop, sizes), _scores([0.9, 0.9, 0.45, 0.0, 0.0, 0.0, 0.0]), 0.5, 0.9) == {4, 5, 6}
    # So on a site whose earlier pages hold code (a documentation site): its new text is an API entry.
    code = FEATURES.index("site_code_share")
    for share, cut in ((CODE_SITE, {4, 5, 6}), (0.3, {4, 5, 6}), (0.019, {3, 4, 5, 6}), (-1.0, {3, 4, 5, 6})):
        docs = [[*row[:code], share, *row[code + 1 :]] for row in rows]
        assert decide(_sized(docs, sizes), strong, 0.5, 0.9) == cut, share
    # But not in page furniture there: a section's own sidebar entries are new on each page, and template.
    for furniture in ("under_nav", "under_aside", "unlikely"):
        docs = [[*row[:code], 0.3, *row[code + 1 :]] for row in rows]
        docs[3][FEATURES.index(furniture)] = 1.0
        assert decide(_sized(docs, sizes), strong, 0.5, 0.9) == {3, 4, 5, 6}, furniture


@pytest.mark.parametrize("seen_before", [math.log1p(5) / 4, 0.0], ids=["known site", "first page"])
def test_a_short_link_new_on_the_site_is_left_to_the_trees_unless_in_furniture(seen_before):
    story = _row(log_pages_seen=seen_before, log_words=3.0, in_container=1.0)
    new = _row(log_pages_seen=seen_before, link_density=1.0, log_words=1.0)  # an item of a missed container
    in_nav = _row(log_pages_seen=seen_before, link_density=1.0, log_words=1.0, under_nav=1.0)
    in_sidebar = _row(log_pages_seen=seen_before, link_density=1.0, log_words=1.0, unlikely=1.0)
    in_aside = _row(log_pages_seen=seen_before, link_density=1.0, log_words=1.0, under_aside=1.0)
    rows = [story, new, in_nav, in_sidebar, in_aside]
    rows = _sized(rows, [400, 10, 10, 10, 10])
    assert decide(rows, _every(0.9), 0.5, 0.9) == {2, 3, 4}
    assert decide(rows, _scores([0.9, 0.1]), 0.5, 0.9) == {1, 2, 3, 4}  # the trees may still remove it
    if seen_before:  # shown on most of the site's earlier pages: a menu entry wherever it sits
        seen = _row(log_pages_seen=seen_before, link_density=1.0, log_words=1.0, site_df=0.8)
        assert decide(_sized([story, seen], [400, 10]), _every(0.9), 0.5, 0.9) == {1}


def test_a_page_the_trees_are_unsure_of_is_cut_lower():
    known = math.log1p(5) / 4  # a page of a site seen for five pages: no lean toward keeping
    rows = [_row(log_words=3.0, log_pages_seen=known, site_df=0.5) for _ in range(4)]
    sizes = [100, 100, 100, 100]
    assert decide(_sized(rows, sizes), _scores([0.3, 0.3, 0.9, 0.9]), 0.5, 0.9) == {0, 1}
    # Two lines the trees half believe, next to two they are sure of: keeping them is worth more.
    assert expected_f1_cut([0.4, 0.4, 0.9, 0.9], sizes) == 0.4
    assert decide(_sized(rows, sizes), _scores([0.4, 0.4, 0.9, 0.9]), 0.5, 0.9) == set()
    # The same two lines beside a long confident story go: they would cost more precision than they bring.
    assert decide(_sized(rows, [100, 100, 2000, 2000]), _scores([0.4, 0.4, 0.9, 0.9]), 0.5, 0.9) == {0, 1}
    # DETEMPLATE_COMBINED_THRESHOLD bounds the cut: nothing at or above it goes.
    assert decide(_sized(rows, sizes), _scores([0.3, 0.3, 0.9, 0.9]), 0.3, 0.9) == set()


def test_a_sites_first_page_keeps_a_block_the_trees_doubt():
    rows = [_row(log_words=3.0) for _ in range(4)]  # no page of the site seen before
    sizes = [100, 100, 100, 100]
    # The expected F1 alone would cut the two doubted lines (0.82 against 0.75 for keeping them);
    # with the share kept weighing KEEP_WEIGHT, keeping them is worth more on a first page.
    assert expected_f1_cut([0.3, 0.3, 0.9, 0.9], sizes) == 0.9
    assert expected_f1_cut([0.3, 0.3, 0.9, 0.9], sizes, KEEP_WEIGHT) == 0.3
    assert decide(_sized(rows, sizes), _scores([0.3, 0.3, 0.9, 0.9]), 0.5, 0.9) == set()
    # Lines the trees are sure are template still go.
    assert decide(_sized(rows, sizes), _scores([0.05, 0.05, 0.9, 0.9]), 0.5, 0.9) == {0, 1}
    # Nothing in the share kept: the plain expected F1.
    assert expected_f1_cut([0.3, 0.9], [0, 0], KEEP_WEIGHT) == 0.9


def test_the_expected_f1_cut():
    assert expected_f1_cut([], []) == 1.0  # no lines: nothing to remove
    assert expected_f1_cut([0.2], [5]) == 0.2  # one line: kept
    assert expected_f1_cut([0.9, 0.1], [100, 100]) == 0.9
    assert expected_f1_cut([0.0, 0.0], [10, 10]) == 0.0  # nothing believed: nothing removed
    # Lines of equal probability are kept or removed together, whatever their order.
    assert expected_f1_cut([0.9, 0.3, 0.3], [100, 1, 400]) == expected_f1_cut([0.9, 0.3, 0.3], [100, 400, 1])


def _sized(rows: list[list[float]], sizes: list[int]) -> list[list[float]]:
    """Copies of ``rows`` for lines of these lengths (the cut reads a line's size from its ``log_chars``)."""
    out = []
    for row, size in zip(rows, sizes, strict=True):
        out.append(list(row))
        out[-1][FEATURES.index("log_chars")] = math.log1p(size)
    return out


def _scores(values: list[float]) -> Callable[[list[list[float]]], list[float]]:
    """A scorer giving the rows of a page these probabilities (in order; rows decided outright are not asked)."""
    return lambda rows: values[: len(rows)]


def test_a_comment_thread_stays_when_it_is_all_the_page_has():
    thread = 2 / 3  # two ancestors whose class or id names a comment thread
    title = _row(log_words=2.5)
    reply = _row(log_words=3.0, comment_words=thread, ends_sentence=1.0)
    buttons = _row(log_words=1.0, comment_words=thread, link_density=1.0)
    rows = _sized([title, reply, reply, buttons], [80, 200, 200, 10])
    trees = _scores([0.9, 0.05, 0.05, 0.05])  # news-trained: a thread is not content
    assert decide(rows, trees, 0.5, 0.9) == {3}  # a link aggregator's thread page: the replies stay
    story = _sized([title, reply, reply, buttons], [400, 200, 200, 10])
    assert decide(story, trees, 0.5, 0.9) == {1, 2, 3}  # under a story, the thread goes
    once = _row(log_words=3.0, comment_words=1 / 3, ends_sentence=1.0)
    one_level = _sized([title, once, once, buttons], [80, 200, 200, 10])
    assert decide(one_level, trees, 0.5, 0.9) == {1, 2, 3}  # one "reply" class above: not enough to call it a thread
    short = _sized([title, reply, reply, buttons], [140, 60, 60, 10])
    assert decide(short, trees, 0.5, 0.9) == {1, 2, 3}  # a thread shorter than twice the rest goes


def test_the_cut_never_takes_code():
    """A ``<pre>``'s lines, not mostly links, stay whatever the trees say (a blog's code sample, a
    documentation page's example, scored low by trees trained on news); a ``<pre>`` of links, and code
    that the site shows on nearly every page outside the main container, are left to the other rules."""
    story = _row(in_container=1.0, log_words=4.0, ends_sentence=1.0)
    code = _row(in_container=1.0, log_words=3.0, under_pre=1.0)
    linked = _row(in_container=1.0, log_words=3.0, under_pre=1.0, link_density=0.8)
    banner = _row(site_df_when_warm=1.0, log_words=3.0, under_pre=1.0)  # on every page, outside the container
    rows = _sized([story, code, linked, banner], [400, 300, 100, 50])
    trees = _scores([0.95, 0.05, 0.05, 0.05])
    assert decide(rows, trees, 0.5, 0.9) == {2, 3}
    assert decide(rows, trees, 0.5, 2.0) == {2}  # the site override off: the banner is code, and stays
    assert decide(_sized([story, _row(in_container=1.0, log_words=3.0)], [400, 300]), trees, 0.5, 0.9) == {1}


def test_text_repeated_inside_the_main_container_is_left_to_the_trees():
    """A line on nearly every earlier page, inside the main container: text stays with the trees
    (a documentation page's ``Parameters``); links, a ``<nav>`` or a ``<button>`` row, and a
    sentence of ten words or more go."""
    label = _row(site_df_when_warm=1.0, in_container=1.0, log_words=1.0)  # "Parameters", on every page
    share_bar = _row(site_df_when_warm=1.0, in_container=1.0, link_density=1.0, log_words=2.0)
    story = _row(in_container=1.0, log_words=4.0)
    in_nav = _row(site_df_when_warm=0.95, log_words=1.5, in_container=1.0, under_nav=1.0)
    button = _row(site_df_when_warm=0.95, log_words=1.0, in_container=1.0, under_button=1.0)
    rows = [label, share_bar, story, in_nav, button]
    rows = _sized(rows, [10, 20, 400, 20, 5])
    assert decide(rows, _every(0.9), 0.5, 0.9) == {1, 3, 4}
    assert decide(rows, _scores([0.1, 0.9]), 0.5, 0.9) == {0, 1, 3, 4}
    assert decide(rows, _every(0.9), 0.5, 2.0) == frozenset()  # the site override off
    # A sentence of ten words or more on every page (a plea under every story) goes too; a long line
    # that does not end like one (a signature, an API entry's heading) stays with the trees.
    plea = _row(site_df_when_warm=1.0, in_container=1.0, log_words=math.log1p(17), ends_sentence=1.0)
    heading = _row(site_df_when_warm=1.0, in_container=1.0, log_words=math.log1p(12))
    rows = _sized([plea, heading, story], [95, 70, 400])
    assert decide(rows, _every(0.9), 0.5, 0.9) == {0}
    assert decide(rows, _every(0.9), 0.5, 2.0) == frozenset()


def test_a_data_row_keeps_all_its_cells_or_none():
    html = (
        "<body><table><tr><td>Option</td><td>Type</td></tr><tr><td>timeout_ms</td><td>int</td></tr></table>"
        "<table><tr><td><p>nav</p><table><tr><td>inner</td></tr></table></td><td>story</td></tr></table></body>"
    )
    lines = visible_lines(parse_html(html))
    texts = [line.text for line in lines]
    index = {t: i for i, t in enumerate(texts)}
    template = frozenset({index["int"], index["Option"], index["Type"], index["nav"]})
    kept = keep_table_rows_whole(lines, template)
    assert index["int"] not in kept  # its row keeps "timeout_ms"
    assert {index["Option"], index["Type"]} <= kept  # a row wholly template stays template
    assert index["nav"] in kept  # a row holding a table is layout, not data


def test_measuring_keeps_a_data_row_whole_as_the_crawl_does():
    """``train-combined``'s figures are the crawl's: its ``clean_text`` keeps a data row whole too."""
    from scrapy_detemplate.train_combined import PageLines, clean_text

    html = f"<body><p>Options</p><table><tr><td>timeout_ms</td><td>int</td></tr></table><p>{STORY}</p></body>"
    lines = visible_lines(parse_html(html))
    texts = [line.text for line in lines]
    assert texts == ["Options", "timeout_ms", "int", STORY]
    sizes = [8, 10, 3, len(STORY)]
    rows = _sized([_row(log_words=1.0, in_container=1.0) for _ in texts], sizes)
    chance = {math.log1p(8): 0.02, math.log1p(10): 0.9, math.log1p(3): 0.02, math.log1p(len(STORY)): 0.95}

    def scorer(asked: list[list[float]]) -> list[float]:
        return [chance[row[FEATURES.index("log_chars")]] for row in asked]

    page = PageLines("c", "s", rows, [0, 1, 1, 1], [1.0] * 4, texts, "\n".join(texts[1:]), "\n".join(texts))
    page.rows_whole = table_rows(lines)
    assert page.rows_whole == [[1, 2]]
    kept = clean_text(page, (scorer, scorer, {}), DetemplateConfig()).split("\n")
    assert kept == ["timeout_ms", "int", STORY]  # "int" stays with its row, "Options" goes
    page.rows_whole = []
    assert clean_text(page, (scorer, scorer, {}), DetemplateConfig()).split("\n") == ["timeout_ms", STORY]


def test_measuring_removes_a_page_s_dialogs_as_the_crawl_does():
    """``train-combined``'s figures are the crawl's: ``page_lines`` finds the dialog's lines when it reads the
    page, and ``clean_text`` removes them whatever the trees say."""
    from scrapy_detemplate.evaluation import CorpusPage
    from scrapy_detemplate.train_combined import clean_text, page_lines

    html = _page_with_dialogs("<div role='dialog'>", "</div>")
    (page,) = page_lines([CorpusPage("kettles.example", "https://kettles.example/travel", html.encode(), "")], "c")
    assert sorted(page.texts[i] for i in page.furniture) == sorted([*_DIALOG_TEXT, "Continue", "Continue", "Continue"])

    def sure(rows: list[list[float]]) -> list[float]:
        return [0.9] * len(rows)  # every line content, as far as the trees can tell

    kept = clean_text(page, (sure, sure, {}), DetemplateConfig())
    assert "plug adapter" in kept and not any(text in kept for text in _DIALOG_TEXT)
    page.furniture = []
    assert all(text in clean_text(page, (sure, sure, {}), DetemplateConfig()) for text in _DIALOG_TEXT)


def _never(i: int) -> bool:
    return False


PARAGRAPHS = [f"Paragraph {n} of the story says something new about the bridge and the vote." for n in range(4)]


def test_a_run_the_page_already_showed_is_a_copy_and_goes_once_the_first_stays():
    texts = ["Menu", *PARAGRAPHS, "Share", *PARAGRAPHS, "Footer"]
    copy = frozenset(range(6, 10))
    assert drop_copies(texts, frozenset({0}), _never, _never) == {0} | copy
    assert drop_copies(texts, frozenset(), lambda i: i < 5, _never) == copy  # the copy outside the container
    # the first run not kept (one of its lines is template): the copy is the text that stays
    assert drop_copies(texts, frozenset({2}), _never, _never) == {2}
    # two lines, or fewer than 30 words, are not a run
    assert drop_copies([*PARAGRAPHS[:2], "x", *PARAGRAPHS[:2]], frozenset(), _never, _never) == frozenset()
    short = ["Parameters:", "x - the value", "Returns:", "the value"]
    assert drop_copies([*short, *short], frozenset(), _never, _never) == frozenset()
    # code shown twice (the copy stands in a <pre>) stays
    assert drop_copies(texts, frozenset(), _never, lambda i: i >= 6) == frozenset()


#: Three paragraphs of a story in Chinese: no spaces, so ``split`` finds one word a line; 39 words when a
#: pair of CJK characters is one, as the line measures count them.
CHINESE = [
    "大桥工程今天通过了市议会的投票，新桥将连接河的两岸。",
    "市长表示新桥将在明年春天开工建设，预计三年后完工通车。",
    "居民们对这项决定普遍表示欢迎，认为它会缩短上班的时间。",
]


def test_on_a_page_written_without_spaces_a_run_counts_its_cjk_words():
    assert sum(len(text.split()) for text in CHINESE) < 30 <= sum(density.cjk_chars(text) // 2 for text in CHINESE)
    texts = ["菜单", *CHINESE, "分享", *CHINESE, "页脚"]
    assert drop_copies(texts, frozenset(), _never, _never) == frozenset(range(5, 8))
    # The same run on a page that is not written without spaces (a tenth of its characters or more
    # CJK ones): words by spaces, and three are not a run.
    english = [f"Line {n} of an English page about the bridge and the vote." for n in range(40)]
    spaced = [*english, *CHINESE, "Share", *CHINESE]
    assert not density.written_without_spaces(spaced)
    assert drop_copies(spaced, frozenset(), lambda i: i < 40, _never) == frozenset()
    # Short runs stay short: two CJK lines of a few characters each are not a run on any page.
    assert drop_copies(["首页", "新闻", "体育", "首页", "新闻", "体育"], frozenset(), _never, _never) == frozenset()


#: The same story in Thai: a space between clauses only, so ``split`` finds two words a line; 34 when four
#: Thai characters are one, as the line measures count them.
THAI = [
    "สะพานใหม่ผ่านการลงมติของสภาเมืองวันนี้ สะพานจะเชื่อมสองฝั่งแม่น้ำ",
    "นายกเทศมนตรีกล่าวว่าจะเริ่มก่อสร้างในฤดูใบไม้ผลิหน้า คาดว่าจะเสร็จในสามปี",
    "ชาวบ้านส่วนใหญ่ยินดีกับการตัดสินใจนี้ เพราะจะช่วยลดเวลาการเดินทาง",
]


def test_on_a_page_in_thai_a_run_counts_its_words_by_four_characters():
    assert sum(len(text.split()) for text in THAI) < 30 <= density.unspaced_words(THAI)
    texts = ["เมนู", *THAI, "แชร์", *THAI, "ท้ายหน้า"]
    assert density.written_without_spaces(texts)
    assert drop_copies(texts, frozenset(), _never, _never) == frozenset(range(5, 8))
    english = [f"Line {n} of an English page about the bridge and the vote." for n in range(80)]
    spaced = [*english, *THAI, "Share", *THAI]
    assert not density.written_without_spaces(spaced)
    assert drop_copies(spaced, frozenset(), lambda i: i < 80, _never) == frozenset()


def test_a_documentation_page_repeating_itself_inside_its_container_keeps_both():
    member = ["Parameters:", *PARAGRAPHS[:2], "Returns:", PARAGRAPHS[2]]
    texts = ["Index", *member, "Another member", "Its own text, new.", *member]
    inside = lambda i: i > 0  # noqa: E731
    assert drop_copies(texts, frozenset({0}), inside, _never) == {0}  # other lines between: the page's own
    back_to_back = ["Index", *member, *member]
    assert drop_copies(back_to_back, frozenset(), inside, _never) == frozenset(range(6, 11))  # printed twice


def test_a_story_printed_twice_is_cleaned_to_one_copy():
    story = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    html = PAGE.replace("<p>{story}</p><p>{story}</p>", story + "</div><div class='print'>" + story)
    result = Detemplater().process("http://ex.com/a/1", html.format(title="Bridge vote passes").encode())
    assert result.status == "cleaned"
    assert all(result.text.count(p) == 1 for p in PARAGRAPHS), result.text


def test_exported_trees_give_the_classifiers_own_probabilities():
    np = pytest.importorskip("numpy")  # in the test and train extras
    pytest.importorskip("sklearn")
    from scrapy_detemplate.methods.forest import Forest
    from scrapy_detemplate.train_combined import MAX_FEATURES, fit

    rng = np.random.default_rng(0)
    # Two decimals: scikit-learn (1.9) bins weighted rows of 400 distinct values a column slowly (40 s);
    # 100 distinct values bin at once and the trees split the same way.
    xs = rng.integers(0, 100, (400, len(FEATURES))) / 100
    ys = [int(row[0] + row[3] * row[5] > 0.8) for row in xs]
    model = fit(xs.tolist(), ys, [1.0 + row[1] for row in xs], trees=12, leaves=7, min_leaf=20)
    forest = Forest(model)
    probability = forest.compiled()
    assert len(forest.trees) == 12 * len(MAX_FEATURES) and forest.features == FEATURES
    low, high = [0.95] + [0.0] * (len(FEATURES) - 1), [0.0] * len(FEATURES)
    assert probability(low) > 0.5 > probability(high)
    assert all(abs(probability(list(row)) - forest.probability(list(row))) < 1e-12 for row in xs[:50])
    rows = [list(map(float, row)) for row in xs[:50]]
    assert forest.scorer()(rows) == [forest.probability(row) for row in rows]  # bit-identical


def test_cross_validation_scores_every_corpus_on_sites_left_out_of_training():
    pytest.importorskip("sklearn")
    from scrapy_detemplate.train_combined import PageLines, cross_validate

    story = "the council met on tuesday and the vote on the bridge passed after a long debate"
    menu = ["home", "news", "sport", "weather"]

    def page(corpus: str, site: str, n: int) -> PageLines:
        texts = [*menu, f"{story} number {n}"]
        rows = []
        for text in texts:
            row = [0.0] * len(FEATURES)
            row[FEATURES.index("log_words")] = float(len(text.split()))
            row[FEATURES.index("in_container")] = 1.0 if text not in menu else 0.0
            rows.append(row)
        return PageLines(corpus, site, rows, [0, 0, 0, 0, 1], [1.0] * 4 + [17.0], texts, texts[-1], "\n".join(texts))

    pages = [page(c, f"{c}-site{s}", n) for c in ("a", "b") for s in range(4) for n in range(10)]  # leaves need 20 rows
    scores = cross_validate(pages, folds=2, trees=40, leaves=3, min_leaf=5)
    assert set(scores) == {"a", "b"}
    for summary in scores.values():
        macro = summary.macro()
        assert macro["f1"] == 1.0 and macro["removal"] == 1.0
    # Leave one corpus out: "a" is scored by a model that saw only "b", and the other way round.
    kinds: dict[str, list[float]] = {}
    for page_lines in pages:
        page_lines.kind = page_lines.corpus.upper()
    scores = cross_validate(pages, trees=40, leaves=3, min_leaf=5, by_corpus=True, per_kind=kinds)
    assert set(scores) == {"a", "b"} and all(s.macro()["f1"] == 1.0 for s in scores.values())
    assert {k: len(v) for k, v in kinds.items()} == {"A": 40, "B": 40}


@pytest.mark.parametrize(
    ("method", "setting"), [("combined", "DETEMPLATE_COMBINED_MODEL"), ("isotonic", "DETEMPLATE_ISOTONIC_MODEL")]
)
@pytest.mark.parametrize("content", [None, b"not json {", b'{"json": "but not a model"}', b"\xff\xfe\x00"])
def test_an_unusable_model_file_fails_at_start_up_naming_the_setting_and_path(
    tmp_path: Path, method: str, setting: str, content: bytes | None
) -> None:
    """Issue 16: a missing or non-JSON model file gave a bare traceback."""
    path = tmp_path / "model.json"
    if content is not None:
        path.write_bytes(content)
    config = DetemplateConfig.from_settings({"DETEMPLATE_METHOD": method, setting: str(path)})
    with pytest.raises(InvalidSetting) as error:
        Detemplater(config)
    assert error.value.name == setting
    assert f"{setting}='{path}'" in str(error.value)


def test_a_page_decided_while_the_kept_rows_are_taken_makes_its_own() -> None:
    pages = [
        f"<html><body><nav><a href=/>Home</a> <a href=/n>News</a></nav><p>Story {n}, {'words ' * n}</p>"
        f"<footer>(c) Example</footer></body></html>"
        for n in range(6)
    ]
    alone, taken = Detemplater(DetemplateConfig()), Detemplater(DetemplateConfig())
    runner: Any = taken.runner
    for n, html in enumerate(pages):
        url = f"http://example.com/a/{n}.html"
        if n % 2 and runner._scorer is not None:
            assert runner._rows_free.acquire(blocking=False)  # as if another thread were deciding
            try:
                got = taken.process(url, html.encode())
            finally:
                runner._rows_free.release()
        else:
            got = taken.process(url, html.encode())
        want = alone.process(url, html.encode())
        assert (got.status, got.text, got.template_lines) == (want.status, want.text, want.template_lines)


CODE_PAGE = """<html><head><title>{title} | Docs</title></head><body>
<nav><a href="/">Home</a> <a href="/api">API</a></nav>
<main><h1>{title}</h1><p>Call it with the handle the session gave you, and check the result.</p>
<pre><code>result = {title}(handle, retries=3)
assert result.ok</code></pre></main>
</body></html>"""


def _genre(evidence: Any, url: str, html: str) -> list[float]:
    from scrapy_detemplate.runners import ParsedPage
    from scrapy_detemplate.runners.combined import GENRE_FEATURES

    config = DetemplateConfig()
    rows = evidence.features(ParsedPage.of(url, html, parse_html(html), config))
    at = FEATURES.index(GENRE_FEATURES[0])
    columns = {tuple(row[at : at + len(GENRE_FEATURES)]) for row in rows}
    assert len(columns) == 1  # the same on every line of the page
    return list(columns.pop())


def test_the_genre_columns_are_the_mean_shares_of_the_sites_earlier_pages() -> None:
    from scrapy_detemplate.runners.combined import DF_WINDOW, NAMESPACE, CombinedEvidence, page_shares
    from scrapy_detemplate.state import memory_store

    store = memory_store(DetemplateConfig())
    evidence = CombinedEvidence(DetemplateConfig(), store)
    first = CODE_PAGE.format(title="connect")
    assert _genre(evidence, "https://docs.example.com/connect.html", first) == [-1.0] * 5  # nothing seen yet
    shares = store.get(NAMESPACE, "docs.example.com")
    assert isinstance(shares, list) and len(shares) == 1
    code, table, links, inside, new = shares[0]
    assert 0.3 < code < 0.7 and table == 0.0 and 0.0 < links < 0.3 and inside > 0.5 and new == 1.0
    # The next page reads the first one's shares; a page of another site reads nothing.
    assert _genre(evidence, "https://docs.example.com/close.html", CODE_PAGE.format(title="close")) == shares[0]
    assert _genre(evidence, "https://news.example.org/a.html", PAGE.format(title="A", story=STORY)) == [-1.0] * 5
    # The third page of the docs site reads the mean of the first two (the second one's lines stood on
    # the first page partly: less of it is new).
    second = store.get(NAMESPACE, "docs.example.com")[1]  # type: ignore[index]
    mean = [(a + b) / 2 for a, b in zip(shares[0], second, strict=True)]
    assert _genre(evidence, "https://docs.example.com/open.html", CODE_PAGE.format(title="open")) == mean
    assert second[4] < shares[0][4]
    # At most DF_WINDOW pages are kept, the latest.
    for n in range(DF_WINDOW + 5):
        _genre(evidence, f"https://docs.example.com/p{n}.html", CODE_PAGE.format(title=f"p{n}"))
    assert len(store.get(NAMESPACE, "docs.example.com")) == DF_WINDOW  # type: ignore[arg-type]
    assert page_shares([]) is None  # a page without words adds nothing


@pytest.mark.parametrize(
    "stored",
    [
        "garbage",
        [[0.1] * 4],
        [[0.1, 0.2, 0.3, 0.4, float("nan")]],
        [["a"] * 5],
        [[0.1] * 5] * 21,
        {"x": 1},
        [[10**400] * 5],
        [[None] * 5],
        [[[0.1]] * 5],
    ],
)
def test_a_bad_stored_genre_state_is_a_cold_start(stored: Any) -> None:
    from scrapy_detemplate.runners import valid_state
    from scrapy_detemplate.runners.combined import NAMESPACE, CombinedEvidence
    from scrapy_detemplate.state import memory_store

    assert not valid_state(NAMESPACE, stored)
    assert valid_state(NAMESPACE, [[0.1, 0.2, 0.3, 0.4, 1]])
    store = memory_store(DetemplateConfig())
    store.set(NAMESPACE, "docs.example.com", stored)
    evidence = CombinedEvidence(DetemplateConfig(), store)
    assert _genre(evidence, "https://docs.example.com/a.html", CODE_PAGE.format(title="a")) == [-1.0] * 5
    assert len(store.get(NAMESPACE, "docs.example.com")) == 1  # type: ignore[arg-type]


def _shipped_model() -> dict[str, Any]:
    from importlib import resources

    data: dict[str, Any] = json.loads(
        resources.files("scrapy_detemplate.data").joinpath("combined_model.json").read_text()
    )
    return data


@pytest.mark.parametrize("compiled", [True, False])
def test_a_sites_first_page_is_scored_with_the_first_page_trees_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    """A model's ``first_pages`` forest joins the scoring of a site's first page only: here one
    sure that every line is content (a base of +100 in log-odds), so the first page keeps every
    line the trees weigh, while the site's later pages are cleaned as without it."""
    import scrapy_detemplate.runners.combined as combined

    if not compiled:
        monkeypatch.setattr(combined, "_compiled", None)
    data = {k: v for k, v in _shipped_model().items() if k != "first_pages"}
    plain, sure = tmp_path / "plain.json", tmp_path / "sure.json"
    plain.write_text(json.dumps(data))
    sure.write_text(json.dumps({**data, "first_pages": {"features": list(FEATURES), "base": 100.0, "rate": 1.0,
                                                        "trees": []}}))  # fmt: skip
    pages = [(f"http://ex.com/a/{n}", PAGE.format(title=f"Vote number {n}", story=STORY).encode()) for n in range(3)]
    without = Detemplater(DetemplateConfig(combined_model=str(plain)))
    with_first = Detemplater(DetemplateConfig(combined_model=str(sure)))
    results = [(without.process(url, body), with_first.process(url, body)) for url, body in pages]
    first, later = results[0], results[1:]
    assert "Terms of use" not in first[0].text  # the trees alone take the footer's text
    assert "Terms of use" in first[1].text and first[1].chars_removed < first[0].chars_removed
    assert all(a.text == b.text for a, b in later)


@pytest.mark.parametrize("first_pages", [{"bad": 1}, {"features": ["x"], "base": 0, "rate": 1, "trees": []}, []])
def test_a_model_with_unusable_first_page_trees_fails_at_start_up(tmp_path: Path, first_pages: Any) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({**_shipped_model(), "first_pages": first_pages}))
    with pytest.raises(InvalidSetting) as error:
        Detemplater(DetemplateConfig.from_settings({"DETEMPLATE_COMBINED_MODEL": str(path)}))
    assert error.value.name == "DETEMPLATE_COMBINED_MODEL"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(first_pages=_JSON | st.fixed_dictionaries({"features": st.just(list(FEATURES)), "base": _JSON, "rate": _JSON,
                                                  "trees": _JSON}))  # fmt: skip
def test_any_first_page_trees_read_or_refused_with_a_value_error(first_pages: Any) -> None:
    """Whatever a model file holds under ``first_pages``, reading it gives two forests or a
    ``ValueError`` (the start-up error naming the setting), never another exception."""
    from scrapy_detemplate.runners.combined import model_forests

    data = {"features": list(FEATURES), "base": 0.0, "rate": 1.0, "trees": [], "first_pages": first_pages}
    try:
        forest, first = model_forests(data, "m.json")
    except ValueError:
        return
    assert forest.features == first.features == FEATURES
    assert len(first.scorer()([[0.0] * len(FEATURES)])) == 1  # and it scores, as the runner builds it


@pytest.mark.parametrize(
    "tree",
    [
        {"feature": [0], "threshold": [0.0], "left": [1], "right": [2], "value": [0.0]},  # children past the end
        {"feature": [0, -2, -2], "threshold": [0, 0, 0], "left": [0, -1, -1], "right": [2, -1, -1], "value": [0, 0, 0]},
        {"feature": [0, 0, -2, -2], "threshold": [0] * 4, "left": [1, 2, -1, -1], "right": [2, 3, -1, -1],
         "value": [0] * 4},  # a node reached twice
        {"feature": [999, -2, -2], "threshold": [0, 0, 0], "left": [1, -1, -1], "right": [2, -1, -1], "value": [0] * 3},
    ],
)  # fmt: skip
def test_a_model_whose_trees_cannot_be_walked_fails_at_start_up(tmp_path: Path, tree: dict[str, Any]) -> None:
    """A hand-edited or corrupt tree (a child pointing back: a walk that never ends) is refused when
    the model is read, naming the setting, not an IndexError or a hang when the scorer is built."""
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"features": list(FEATURES), "base": 0.0, "rate": 1.0, "trees": [tree]}))
    with pytest.raises(InvalidSetting) as error:
        Detemplater(DetemplateConfig.from_settings({"DETEMPLATE_COMBINED_MODEL": str(path)}))
    assert error.value.name == "DETEMPLATE_COMBINED_MODEL" and "tree 0" in str(error.value)


_REVIEWS = (
    "I use this kettle every morning and it boils a full jug in under three minutes without any noise.",
    "The handle stays cool and the lid opens with one finger, which my father finds very easy to use.",
    "Third one I have bought for the family: they last for years and descale easily with a little vinegar.",
)


def _shop_page(kind: str) -> str:
    authors = ("Ann", "Bob", "Cy")
    declared = {
        "@context": "https://schema.org",
        "@type": kind,
        "name": "Quiet kettle",
        "review": [
            {"@type": "Review", "author": {"name": a}, "reviewBody": r} for a, r in zip(authors, _REVIEWS, strict=True)
        ],
    }
    items = "".join(
        f'<li class="review"><h4>Lovely kettle</h4><p>{a}</p><p>{r}</p></li>'
        for a, r in zip(authors, _REVIEWS, strict=True)
    )
    return f"""<html><head><title>Quiet kettle | Shop</title>
<script type="application/ld+json">{json.dumps(declared)}</script></head><body>
<nav><a href="/">Home</a> <a href="/kitchen">Kitchen</a> <a href="/cart">Cart</a></nav>
<main><h1>Quiet kettle</h1><p class="price">$39.00</p>
<p>A 1.7 litre stainless steel kettle with a concealed element, a boil-dry cut-out and a limescale filter that lifts out.</p>
<p>Its double wall keeps the outside cool to the touch and holds the water hot for longer after it boils.</p>
<h2>Customer reviews</h2><ul>{items}</ul></main>
<footer><a href="/terms">Terms</a> <a href="/privacy">Privacy</a></footer></body></html>"""  # noqa: E501


def test_a_product_page_s_declared_customer_reviews_go():
    # A shop declares its customers' reviews (JSON-LD reviewBody) beside its product: they are not the
    # product's content, and go; the product's own description stays.
    result = Detemplater().process("https://shop.example/kettle", _shop_page("Product").encode())
    assert result.status == "cleaned" and "limescale filter" in result.text and "double wall" in result.text
    assert not any(review in result.text for review in _REVIEWS)
    # A page that declares no product (an organisation's testimonials) is left to the trees: they keep them.
    result = Detemplater().process("https://shop.example/kettle", _shop_page("Organization").encode())
    assert all(review in result.text for review in _REVIEWS)


_QUESTIONS = (
    ("How long does delivery take?", "Two to three working days in the country, a week abroad."),
    ("Can I return an opened kettle?", "Yes, within thirty days, in its box, for a full refund."),
    ("Does it work on 110 volts?", "No: the element is made for 230 volts only."),
)


def _service_page(declare: bool) -> str:
    declared = {
        "@context": "https://schema.org",
        "@type": "FAQPage",
        "mainEntity": [
            {"@type": "Question", "name": q, "acceptedAnswer": {"@type": "Answer", "text": f"<p>{a}</p>"}}
            for q, a in _QUESTIONS
        ],
    }
    script = f'<script type="application/ld+json">{json.dumps(declared)}</script>' if declare else ""
    faq = "".join(
        f'<div class="faq-item"><a href="#q{i}">{q}</a><div class="faq-answer"><span>{a}</span></div></div>'
        for i, (q, a) in enumerate(_QUESTIONS)
    )
    return f"""<html><head><title>Kettle repairs | Fixit</title>{script}</head><body>
<nav><a href="/">Home</a> <a href="/services">Services</a> <a href="/contact">Contact</a></nav>
<main><h1>Kettle repairs</h1>
<p>We repair every make of electric kettle in our workshop, replacing elements, switches and seals with original parts,
and test each one before it goes back.</p>
<p>Most repairs cost less than half the price of a new kettle and take under a week from the day your kettle
reaches us.</p>
</main><aside class="sidebar"><h3>Questions</h3>{faq}</aside>
<footer><a href="/terms">Terms</a> <a href="/privacy">Privacy</a> Copyright 2024 Fixit Ltd.</footer></body></html>"""


def test_a_page_s_declared_questions_and_answers_stay():
    # A service page's FAQ in a sidebar of links and short lines: the trees cut it, but the page declares it
    # (JSON-LD FAQPage) as its own text, and it stays; the menus still go.
    kept = Detemplater().process("https://fixit.example/kettles", _service_page(True).encode())
    assert all(q in kept.text and a in kept.text for q, a in _QUESTIONS)
    assert "Privacy" not in kept.text and "Services" not in kept.text
    cut = Detemplater().process("https://fixit.example/kettles", _service_page(False).encode())
    assert not any(q in cut.text for q, _ in _QUESTIONS)  # undeclared, as the trees have it


def test_a_sites_first_page_is_scored_tempered() -> None:
    """The shipped model's first-page scorer gives ``FIRST_PAGE_SCALE`` times the mean of both forests'
    log-odds plus ``FIRST_PAGE_SHIFT``; a known site's pages, the known-site forest's own."""
    import random

    from scrapy_detemplate.methods.forest import Forest
    from scrapy_detemplate.runners import combined as runner

    data = runner.read_model()
    known, first = runner.model_forests(data)
    plain, first_only = Forest(data), Forest(data["first_pages"])
    assert runner.FIRST_PAGE_SCALE < 1.0  # flatter than the trees: keeps what they are unsure of
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    rng = random.Random(7)
    for _ in range(50):
        row = [rng.choice((0.0, 1.0, -1.0, rng.random(), rng.uniform(0, 8))) for _ in runner.FEATURES]
        mean = (logit(plain.probability(row)) + logit(first_only.probability(row))) / 2
        tempered = runner.FIRST_PAGE_SCALE * mean + runner.FIRST_PAGE_SHIFT
        assert logit(first.probability(row)) == pytest.approx(tempered, abs=1e-9)
        assert known.probability(row) == plain.probability(row)


_DIALOG_TEXT = (
    "Your cart is empty! Don't miss out on the latest products and savings this week.",
    "Sign in or create an account to save your cart and check out faster next time.",
    "We've noticed that you've entered a different store. Do you want to add the items to this one?",
)


_LINKS = '<a href="/terms">Terms</a> <a href="/privacy">Privacy</a>'


def _kettle_page(before: str = "", inside: str = "", footer: str = f"<footer>{_LINKS}</footer>") -> str:
    """A shop's first page: its header, ``before`` its main container, the product's three paragraphs and
    ``inside`` in it, then ``footer``."""
    return f"""<html><head><title>Travel kettle | Kettles</title></head><body>
<header><a href="/">Kettles</a> <a href="/cart">Cart</a></header>{before}
<main><h1>Travel kettle</h1>
<p>A folding kettle of food-grade silicone that packs flat into a bag and boils half a litre in four minutes.</p>
<p>Its base is steel, its handle stays cool, and it switches itself off when the water boils or runs dry.</p>
<p>It works on 110 and 230 volts, so it travels from one continent to the next with only a plug adapter.</p>
{inside}</main>{footer}</body></html>"""


def _page_with_dialogs(opener: str, closer: str) -> str:
    return _kettle_page(before="".join(f"{opener}<p>{t}</p><button>Continue</button>{closer}" for t in _DIALOG_TEXT))


@pytest.mark.parametrize(
    ("opener", "closer"),
    [("<div role='dialog' aria-modal='true'>", "</div>"), ("<dialog open>", "</dialog>"),
     ("<section role='alertdialog'>", "</section>")],
)  # fmt: skip
def test_a_page_s_dialogs_go_and_its_content_stays(opener: str, closer: str) -> None:
    # A cart, a sign-in prompt and a store picker in dialogs (WAI-ARIA's "window over the page"): their
    # lines go, on a site's first page too; the page's own text stays.
    result = Detemplater().process("https://kettles.example/travel", _page_with_dialogs(opener, closer).encode())
    assert result.status == "cleaned"
    assert "folding kettle" in result.text and "plug adapter" in result.text
    assert not any(text in result.text for text in _DIALOG_TEXT)
    # The same text in plain <div>s is left to the trees, which keep it: the dialog is what removes it.
    plain = Detemplater().process("https://kettles.example/travel", _page_with_dialogs("<div>", "</div>").encode())
    assert all(text in plain.text for text in _DIALOG_TEXT)


_FOOTER_TEXT = (
    "Kettles is a family shop in Leeds that has sold travel gear since 1998 and ships to forty countries.",
    "Questions about an order? Write to us and a member of our small team will answer within a day.",
    "Company number 0123456 registered in England and Wales, VAT number GB 123 4567 89.",
)


def _page_with_footer(opener: str, closer: str) -> str:
    return _kettle_page(footer=opener + "".join(f"<p>{text}</p>" for text in _FOOTER_TEXT) + _LINKS + closer)


@pytest.mark.parametrize("opener", ["<div role='contentinfo'>", "<div class='site-info' role=' ContentInfo'>"])
def test_a_page_s_footer_landmark_goes_and_its_content_stays(opener: str) -> None:
    # The page's footer landmark (WAI-ARIA's contentinfo: who runs the site, its company number, its
    # terms) in a <div>, on a site's first page: its sentence-like lines go with it, the page's own
    # text stays.
    url = "https://kettles.example/travel"
    result = Detemplater().process(url, _page_with_footer(opener, "</div>").encode())
    assert result.status == "cleaned"
    assert "folding kettle" in result.text and "handle stays cool" in result.text
    assert not any(text in result.text for text in _FOOTER_TEXT)
    # The same text in a plain <div> is left to the trees, which keep it: the landmark is what removes it.
    plain = Detemplater().process(url, _page_with_footer("<div>", "</div>").encode())
    assert all(text in plain.text for text in _FOOTER_TEXT)


_WIDGET_TEXT = {
    "<div data-nosnippet>": "Free delivery on every order over fifty pounds, and free returns within thirty days.",
    "<div role='tooltip'>": "Our kettles are tested by a lab in Leeds for a thousand boils before they are sold.",
    "<div role='status'>": "The travel kettle was added to your cart, and your cart now holds two items for checkout.",
    "<ul role='menu'><li role='menuitem'>": "Kettles, cups and flasks for the road, the trail and the office desk.",
    "<div role='option'>": "Deliver the kettle to a store near you and collect it on the day that suits you.",
}


def _page_with_widgets(marked: bool) -> str:
    closers = {"<ul role='menu'><li role='menuitem'>": "</li></ul>"}
    return _kettle_page(
        inside="".join(
            f"{opener}<p>{text}</p>{closers.get(opener, '</div>')}" if marked else f"<div><p>{text}</p></div>"
            for opener, text in _WIDGET_TEXT.items()
        )
    )


def test_a_page_s_widgets_and_what_it_keeps_from_snippets_go_and_its_content_stays() -> None:
    # A promotion kept out of search snippets (data-nosnippet), a tooltip, a status message, a menu and a
    # drop-down's option, in the main container of a site's first page: they go, the page's own text stays.
    url = "https://kettles.example/travel"
    result = Detemplater().process(url, _page_with_widgets(marked=True).encode())
    assert result.status == "cleaned"
    assert "folding kettle" in result.text and "handle stays cool" in result.text
    assert not any(text in result.text for text in _WIDGET_TEXT.values())
    # The same text in plain <div>s is left to the trees, which keep it: the marks are what remove it.
    plain = Detemplater().process(url, _page_with_widgets(marked=False).encode())
    assert all(text in plain.text for text in _WIDGET_TEXT.values())


#: A shop's product page declares its product for search engines; a category page, one per item.
_ONE_PRODUCT = (
    '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product",'
    ' "name": "Travel kettle", "offers": {"@type": "Offer", "price": "39.00"}}</script>'
)
_TWO_PRODUCTS = _ONE_PRODUCT + (
    '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product",'
    ' "name": "Kettle bag"}</script>'
)
#: A product sold in two colours: a group, each variant a product of its own.
_ONE_PRODUCT_IN_VARIANTS = (
    '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "ProductGroup",'
    ' "name": "Travel kettle", "hasVariant": [{"@type": "Product", "color": "red"},'
    ' {"@type": "Product", "color": "blue"}]}</script>'
)
_PRODUCT_AND_LIST = _ONE_PRODUCT + (
    '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "ItemList",'
    ' "itemListElement": []}</script>'
)
_PITCH = (
    "Our kettle experts are a team of travellers who test every kettle we sell on the road before it reaches our "
    "shelves.",
    "Every order ships free within two days, and if the kettle does not suit you, send it back within sixty days for "
    "a refund.",
    "Join our club and collect points on every purchase, which you can spend on kettles, mugs and travel bags later.",
    "Extended warranty: three more years of cover for parts and labour, with a replacement shipped before you return "
    "yours.",
)


def _kettle_shop_page(declared: str) -> bytes:
    """:func:`_kettle_page` with the shop's pitch under it and ``declared`` in its head."""
    pitch = "<div class='promo'>" + "".join(f"<div><h3>Why buy here</h3><p>{t}</p></div>" for t in _PITCH) + "</div>"
    footer = pitch + "<footer><a href='/a'>About</a> <a href='/b'>Contact</a></footer>"
    return _kettle_page(footer=footer).replace("</head>", declared + "</head>").encode()


@pytest.mark.parametrize("compiled", [True, False])
def test_a_first_page_that_declares_one_product_is_cut_with_the_product_page_s_lean(
    monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    """On a site's first page that declares exactly one product the cut leans toward keeping by
    PRODUCT_KEEP_WEIGHT, elsewhere by KEEP_WEIGHT: here the weight moved to its ends (0: the plain
    expected F1, which takes the warranty's pitch; 1: the share kept, which keeps the header and footer
    too) changes that page's cut and no other."""
    import scrapy_detemplate.runners.combined as combined

    if not compiled:
        monkeypatch.setattr(combined, "_compiled", None)

    def texts(declared: str, weight: float) -> str:
        monkeypatch.setattr(combined, "PRODUCT_KEEP_WEIGHT", weight)
        return Detemplater().process("https://kettles.example/travel", _kettle_shop_page(declared)).text

    plain, keeping = texts(_ONE_PRODUCT, 0.0), texts(_ONE_PRODUCT, 1.0)
    assert "folding kettle" in plain and "plug adapter" in plain  # the product stays either way
    assert "Extended warranty" not in plain and "Extended warranty" in keeping
    assert "About" in keeping and "About" not in plain
    # A product sold in variants (a ProductGroup, each variant a Product) is one product too.
    assert "Extended warranty" not in texts(_ONE_PRODUCT_IN_VARIANTS, 0.0)
    assert "Extended warranty" in texts(_ONE_PRODUCT_IN_VARIANTS, 1.0)
    # Two products declared (a category page), one with a list of items, or none: the page's lean is
    # KEEP_WEIGHT, whatever the other.
    for declared in (_TWO_PRODUCTS, _PRODUCT_AND_LIST, ""):
        assert texts(declared, 0.0) == texts(declared, 1.0) == texts(declared, combined.PRODUCT_KEEP_WEIGHT)


def test_only_a_site_s_first_pages_that_declare_one_product_lean_less() -> None:
    one = declared_names(f"<html><head>{_ONE_PRODUCT}</head><body></body></html>")
    assert one == ["product", "offer"]
    assert keep_weight(one) == PRODUCT_KEEP_WEIGHT < KEEP_WEIGHT
    assert keep_weight(declared_names(_ONE_PRODUCT_IN_VARIANTS)) == PRODUCT_KEEP_WEIGHT
    assert keep_weight(declared_names(_TWO_PRODUCTS)) == KEEP_WEIGHT
    assert keep_weight(declared_names(_PRODUCT_AND_LIST)) == KEEP_WEIGHT
    assert keep_weight([]) == KEEP_WEIGHT
    # The lean counts on a site's first pages only: three lines of equal size the trees give 0.9, 0.5 and
    # 0.2, whose last the product page's lean takes and the others' keeps, while a known site's cut (three
    # pages of the site seen) does not lean at all.
    rows = [[0.0] * len(FEATURES) for _ in range(3)]
    for row in rows:
        row[FEATURES.index("log_chars")] = math.log1p(100)
        row[FEATURES.index("site_df")] = row[FEATURES.index("in_sandwich_lcs")] = 1.0  # not new on a known site

    given_to = {id(row): p for row, p in zip(rows, (0.9, 0.5, 0.2), strict=True)}

    def scores(given: list[list[float]]) -> list[float]:
        return [given_to[id(row)] for row in given]

    for seen, leans in ((0, True), (1, True), (2, True), (3, False)):
        for row in rows:
            row[FEATURES.index("log_pages_seen")] = math.log1p(seen) / 4
        product, other = (decide(rows, scores, 0.5, 0.9, lean) for lean in (PRODUCT_KEEP_WEIGHT, KEEP_WEIGHT))
        assert (product != other) is leans
        assert product == frozenset({2})  # the product page's cut, and a known site's
    assert not decide([], scores, 0.5, 0.9, PRODUCT_KEEP_WEIGHT)


def test_measuring_leans_on_a_product_page_as_the_crawl_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """``train-combined``'s figures are the crawl's: ``page_lines`` reads a first page's lean from its source,
    and ``clean_text`` cuts with it, as the engine does with the shipped trees."""
    import scrapy_detemplate.runners.combined as combined
    from scrapy_detemplate.evaluation import CorpusPage
    from scrapy_detemplate.train_combined import clean_text, model_scoring, page_lines

    monkeypatch.setattr(combined, "PRODUCT_KEEP_WEIGHT", 0.0)  # a lean that moves this page's cut
    url = "https://kettles.example/travel"
    for declared, weight in ((_ONE_PRODUCT, 0.0), (_TWO_PRODUCTS, KEEP_WEIGHT)):
        (page,) = page_lines([CorpusPage("kettles.example", url, _kettle_shop_page(declared), "")], "c")
        assert page.keep_weight == weight
        kept = clean_text(page, model_scoring(_shipped_model()), DetemplateConfig())
        assert kept == Detemplater().process(url, _kettle_shop_page(declared)).text
        assert ("Extended warranty" in kept) is (weight == KEEP_WEIGHT)
