"""The kinds a page declares (schema.org types, ``og:type``): the ``combined`` method's page-kind flags."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_detemplate._html import parse_html
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods.kinds import (
    KIND_FEATURES,
    MAX_ANSWERS,
    MAX_REVIEW_CHARS,
    MAX_REVIEWS,
    _declared_kinds_by_needle,
    _declared_products_by_needle,
    about_one_product,
    answer_lines,
    declared_answers,
    declared_kinds,
    declared_names,
    declared_products,
    declared_reviews,
    page_kinds,
    review_lines,
)
from scrapy_detemplate.runners.base import ParsedPage
from scrapy_detemplate.runners.combined import FEATURES, CombinedEvidence
from scrapy_detemplate.store import MemoryStore


@pytest.mark.parametrize(
    ("head", "flags"),
    [
        ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product"}</script>',
         [1.0, 0.0, 0.0, 0.0]),
        ('<script type="application/ld+json">{"@type" : [ "DiscussionForumPosting", "Thing" ]}</script>',
         [0.0, 1.0, 0.0, 0.0]),
        ('<meta property="og:type" content="article">', [0.0, 0.0, 1.0, 0.0]),
        ("<meta content='product.group' property='og:type'>", [0.0, 0.0, 0.0, 1.0]),  # attributes either way
        ('<div itemscope itemtype="https://schema.org/NewsArticle"></div>', [0.0, 0.0, 1.0, 0.0]),
        ('<script type="application/ld+json">{"@type": "ItemList", "itemListElement": [{"@type": "Offer"}]}'
         "</script>", [1.0, 0.0, 0.0, 1.0]),
        ('<meta property="og:type" content="website"><script>var t = {"@type": "WebPage"};</script>',
         [0.0, 0.0, 0.0, 0.0]),  # declared, but none of the four kinds
        ("", [0.0, 0.0, 0.0, 0.0]),
    ],
)  # fmt: skip
def test_a_page_flags_the_kinds_it_declares(head: str, flags: list[float]) -> None:
    assert page_kinds(f"<html><head>{head}</head><body><p>Text.</p></body></html>") == flags


def test_declared_names_are_lowercased_and_open_graph_is_prefixed() -> None:
    html = '<meta property="og:type" content="Video.Movie"><p itemtype="http://schema.org/Recipe">x</p>'
    assert declared_kinds(html) == {"og:video.movie", "recipe"}


def test_every_line_of_a_page_carries_its_kinds_in_their_columns() -> None:
    html = (
        '<html><head><script type="application/ld+json">{"@type": "Product"}</script></head>'
        "<body><nav><a href='/'>Home</a></nav><p>A kettle that boils water in a minute, quietly.</p></body></html>"
    )
    config = DetemplateConfig()
    page = ParsedPage.of("https://shop.example/kettle", html, parse_html(html), config)
    rows = CombinedEvidence(config, MemoryStore()).features(page)
    at = FEATURES.index(KIND_FEATURES[0])
    assert FEATURES[at : at + len(KIND_FEATURES)] == KIND_FEATURES
    assert rows and all(row[at : at + len(KIND_FEATURES)] == [1.0, 0.0, 0.0, 0.0] for row in rows)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text())
def test_any_text_gives_four_flags(text: str) -> None:
    flags = page_kinds(text)
    assert len(flags) == len(KIND_FEATURES) and set(flags) <= {0.0, 1.0}


@pytest.mark.parametrize(
    ("html", "count"),
    [
        ('<script type="application/ld+json">{"@type": "Product", "name": "Kettle"}</script>', 1),
        ('{"@type" : ["Product", "Thing"], "name": "Kettle"}', 1),  # the first type of a list
        ('{"@type": "https://schema.org/Product"} {"@type": "http://www.schema.org/Product"}', 2),
        ('<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Kettle</span></div>', 1),
        ('{"@type": "Product"}' * 3 + '<li itemtype="http://schema.org/Product">', 4),  # a category page
        ('{"@type": "ProductGroup"} {"@type": "Offer"} {"@type": "ItemList"}', 0),  # product kinds, no product
        ('<meta property="og:type" content="product">', 0),  # a kind, not an item
        ('{"@type": "Thing", "category": "Product"}', 0),
        ("", 0),
    ],
)
def test_a_page_declares_how_many_products(html: str, count: int) -> None:
    assert declared_products(declared_names(html)) == _declared_products_by_needle(html) == count


_VARIANTS = '"hasVariant": [{"@type": "Product", "color": "red"}, {"@type": "Product", "color": "blue"}]'


@pytest.mark.parametrize(
    ("html", "one"),
    [
        ('{"@type": "Product", "offers": {"@type": "Offer"}}', True),
        ('{"@type": "Product"} {"@type": "Product"}', False),  # a category page, a comparison
        ("{" + f'"@type": "ProductGroup", {_VARIANTS}' + "}", True),  # one product in variants
        ('{"@type": "https://schema.org/ProductGroup"}', True),
        ('<div itemscope itemtype="https://schema.org/ProductGroup">', True),
        ('{"@type": "ProductGroup"} {"@type": "ProductGroup"}', False),
        ("{" + f'"@type": "ProductGroup", {_VARIANTS}' + '} {"@type": "ItemList"}', False),  # and a list of items
        ('{"@type": "Product"} <div itemtype="http://schema.org/OfferCatalog">', False),
        ('{"@type": "Product"} {"@type": "https://schema.org/ItemList"}', False),
        ('<meta property="og:type" content="product">', False),  # a kind, not an item
        ('{"@type": "Offer"}', False),
        ("", False),
    ],
)
def test_a_page_says_it_is_about_one_product(html: str, one: bool) -> None:
    assert about_one_product(declared_names(html)) is one


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text())
def test_any_text_declares_a_count_of_products(text: str) -> None:
    names = declared_names(text)
    assert 0 <= declared_products(names) <= text.count("type")
    assert about_one_product(names) in (True, False)


def test_an_og_type_is_read_inside_one_tag_only() -> None:
    # A match that could run past a ``<`` made a page of unclosed ``<meta`` cost quadratic time.
    assert declared_kinds('<meta property="og:type" <p content="article">') == set()
    assert declared_kinds("<meta" * 50_000 + '<meta property="og:type" content="article">') == {"og:article"}


@pytest.mark.parametrize(
    "html",
    ["og:type" * 50_000, '"@type"' * 50_000, "itemtype=" * 50_000, '<meta property="og:type"' * 20_000],
)
def test_a_page_of_needles_is_read_once_each(html: str) -> None:
    # Each needle is matched from its own tag, not searched back to the start of the page.
    assert declared_kinds(html) == set()


def test_two_og_types_in_one_tag_read_once() -> None:
    html = '<meta property="og:type" content="og:type article"><meta content="product" property="og:type">'
    assert declared_kinds(html) == {"og:og:type article", "og:product"}


def _reviews(html: str) -> list[str]:
    return declared_reviews(html, parse_html(html))


def test_a_page_declares_its_reviews_in_json_ld_and_microdata():
    html = (
        '<html><head><script type="application/ld+json">{"@type": "Product", "review": ['
        '{"@type": "Review", "reviewBody": "Caf\\u00e9 \\"mug\\" keeps my coffee hot for hours"},'
        '{"reviewBody" : "Too short"},'  # under four words: a line of another review could be it
        '{"reviewBody": "Caf\\u00e9 \\"mug\\" keeps my coffee hot for hours"}]}</script></head><body>'
        '<div itemprop="review"><p itemprop="reviewBody description">Solid handle and a <b>lovely</b> glaze</p></div>'
        "</body></html>"
    )
    # Escapes read, words lowercased, each review once, the microdata element's whole text.
    assert _reviews(html) == ["café mug keeps my coffee hot for hours", "solid handle and a lovely glaze"]
    assert _reviews(html.replace("reviewBody", "description")) == []  # nothing read without ``reviewBody``
    assert _reviews('<p>"reviewBody": "not a closed string</p>') == []


def test_a_review_is_matched_on_one_line_two_lines_or_run_together_with_its_title():
    reviews = [
        "i love this shelf it is sturdy and easy to build",
        "the colour faded after a month of sun by the window",
    ]
    texts = [
        "KALLAX shelf unit",
        "A shelf unit for books, records and boxes.",
        "Great shelf!DaphneI love this shelf, it is sturdy and easy to build.5",  # title, author, review, stars
        "The colour faded after a month",  # a review printed over two lines
        "of sun by the window.",
        "Sturdy and easy to build",  # five words of a review: the shop's own words are longer lines
        "Easy to build",  # fewer than five words: never matched
    ]
    assert review_lines(texts, reviews) == {2, 3, 4, 5}
    assert review_lines(texts[:5] + texts[6:], reviews) == {2, 3, 4}
    assert review_lines(texts, []) == frozenset()


def test_a_review_printed_paragraph_by_paragraph_is_the_page_and_stays():
    # An editor's review of a car, declared whole as one reviewBody and printed as the page's paragraphs.
    paragraphs = [
        "The new model is quicker than the last one.",
        "Its cabin is quiet at any speed.",
        "We liked it a lot.",
    ]
    review = " ".join(paragraphs).lower().replace(".", "")
    assert review_lines(paragraphs, [review]) == frozenset()
    assert review_lines(paragraphs[:2], [review]) == {0, 1}  # two lines: a customer's review over two lines


_PIECES = ['"reviewBody"', ":", '"', "\\", "\\u00e9", 'itemprop="reviewBody"', "<p>", "</p>", " ", "a b c d"]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES)).map("".join) | st.text())
def test_any_source_gives_bounded_reviews(html: str) -> None:
    reviews = _reviews(html) if html.strip() else declared_reviews(html, None)
    assert len(reviews) <= MAX_REVIEWS and sum(map(len, reviews)) <= MAX_REVIEW_CHARS
    assert all(isinstance(r, str) and len(r.split()) >= 4 for r in reviews)


def test_a_page_of_reviews_is_read_in_bounded_size():
    many = '"reviewBody": "' + "word " * 200 + '%d", '
    html = "".join(many % i for i in range(MAX_REVIEWS * 5))
    reviews = declared_reviews(html, None)
    assert len(reviews) <= MAX_REVIEWS and sum(map(len, reviews)) <= MAX_REVIEW_CHARS
    assert declared_reviews('"reviewBody"' * 50_000, None) == []


def _answers(html: str) -> list[str]:
    return declared_answers(html, parse_html(html))


def _ld(data: object) -> str:
    return (
        f'<html><head><script type="application/ld+json">{json.dumps(data)}</script></head><body><p>x</p></body></html>'
    )


def test_a_page_declares_its_questions_and_answers_in_json_ld():
    faq = {
        "@context": "https://schema.org",
        "@type": "FAQPage",
        "mainEntity": [
            {
                "@type": "Question",
                "name": "How long does delivery take?",
                "acceptedAnswer": {
                    "@type": "Answer",
                    "text": "<p>Two to three days.</p><p>Longer &amp; slower abroad.</p>",
                },
            },
            {
                "@type": ["Question", "Thing"],
                "name": "Is it safe?",
                "suggestedAnswer": [{"text": "Yes it is quite safe"}],
            },
            {"@type": "Question", "name": "Ok?", "acceptedAnswer": {"text": 42}},  # too short; not a string
        ],
    }
    # Markup out (a space for each tag), entities read, words lowercased; each text once.
    assert _answers(_ld(faq)) == [
        "how long does delivery take",
        "two to three days longer slower abroad",
        "is it safe",
        "yes it is quite safe",
    ]
    assert _answers(_ld(faq).replace('"Question"', '"Query"')) == []  # nothing read without a Question
    broken = _ld(faq).replace('"mainEntity": [', '"mainEntity": [[')  # JSON that does not parse: skipped
    assert _answers(broken) == []
    assert declared_answers(_ld(faq), None) == []


def test_declared_answers_are_matched_on_any_number_of_lines():
    answers = ["how long does delivery take", "two to three working days in the country a week abroad"]
    texts = ["How long does delivery take?", "Two to three working days", "in the country,", "a week abroad.", "Days"]
    assert answer_lines(texts, answers) == {0, 1, 2, 3}  # lines of three words or more, as many as the answer has


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=30),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(["@type", "name", "text", "acceptedAnswer", "suggestedAnswer", "mainEntity", "x"]),
                inner | st.just("Question") | st.just(["Question"]),
                max_size=5,
            )
        ),
    )
)
def test_any_json_ld_gives_bounded_answers(data: object) -> None:
    answers = _answers(_ld(data).replace("</p>", '</p><i>"Question"</i>'))
    assert len(answers) <= MAX_ANSWERS and all(isinstance(a, str) and len(a.split()) >= 3 for a in answers)


def test_a_page_of_questions_is_read_in_bounded_time():
    many = [
        {"@type": "Question", "name": f"question number {i} here", "acceptedAnswer": {"text": f"answer {i} is this"}}
        for i in range(5_000)
    ]
    assert len(_answers(_ld({"@type": "FAQPage", "mainEntity": many}))) == MAX_ANSWERS
    # JSON nested deeper than Python's json reads is skipped, not raised on.
    deep = '{"@type": "Question", "name": "a deep question here", "x": ' + "[" * 100_000 + "1" + "]" * 100_000 + "}"
    html = f'<html><head><script type="application/ld+json">{deep}</script></head><body><p>x</p></body></html>'
    assert _answers(html) == []


#: Pieces of sources that declare kinds, and of near misses: needles cut short, overlapping, run together.
_PIECES = (
    '"@type"', '"@type": "Product"', '{"@type" : ["QAPage", "Thing"]}', "@type", '"@', "type", "typetype",
    "itemtype=", 'itemtype="https://schema.org/Recipe"', "itemtype='http://schema.org/Offer'", "item", "mtype=",
    "og:type", '<meta property="og:type" content="article">', "<meta content='Video.Movie' property='og:type'>",
    "<meta ", " content=\"blog\"", "og:", ":type", "<", ">", '"', "'", " ", "é", "型", "\\n",
    'itemtype="https://schema.org/Product"', '"@type":"https://schema.org/Product"', "Product", "product\"",
)  # fmt: skip


@settings(derandomize=True, max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=3), max_size=30).map("".join))
def test_one_scan_reads_what_a_scan_a_needle_reads(html: str) -> None:
    assert declared_kinds(html) == _declared_kinds_by_needle(html)
    # and as often: the products a page declares are counted from the one scan's names
    assert declared_products(declared_names(html)) == _declared_products_by_needle(html)


@pytest.mark.parametrize(
    "html",
    ['"@type"@type": "Product"', "itemtype=itemtype=https://schema.org/Offer", 'og:type"og:type content="a">',
     'type"@type":"Product"',
     '<meta property="og:type" content="article">og:type<meta content="x" property="og:type">'],
)  # fmt: skip
def test_needles_that_overlap_are_read_as_three_scans_read_them(html: str) -> None:
    assert declared_kinds(html) == _declared_kinds_by_needle(html)
    assert declared_products(declared_names(html)) == _declared_products_by_needle(html)
