"""The kinds a page declares (schema.org types, ``og:type``): the ``combined`` method's page-kind flags."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_detemplate._html import parse_html
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods.kinds import KIND_FEATURES, declared_kinds, page_kinds
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
