"""The default keeps a documentation site's content whole and removes its template.

A news-trained extractor deletes signatures, code, tables and definition lists;
the generated site of :mod:`tests.docsite` holds all of them, under a sidebar
table of contents, prev/next bars, a header and a footer.
"""

from __future__ import annotations

import re

import forumsite
import pytest
from docsite import FOOTER, site

from scrapy_detemplate import Detemplater
from scrapy_detemplate.evaluation import bag

_WORDS = re.compile(r"\w+")
#: Pages a site needs before its template is known from site evidence.
WARM = 3


def _lines(text: str) -> set[str]:
    return {line.replace("¶", "").strip() for line in text.splitlines()}


def test_the_default_keeps_every_word_of_a_documentation_sites_content():
    engine = Detemplater()
    for page in site():
        result = engine.process(page.url, page.body)
        missing = bag("\n".join(page.content)) - bag(result.text)
        assert not missing, f"{page.url} lost {sorted(missing.elements())[:10]}"


def test_the_default_removes_a_documentation_sites_template_once_the_site_is_known():
    engine = Detemplater()
    for n, page in enumerate(site()):
        result = engine.process(page.url, page.body)
        if n < WARM:
            continue
        kept = _lines(result.text)
        leaked = [line for line in page.template if line in kept]
        assert not leaked, f"{page.url} kept template lines {leaked}"
        assert not any(FOOTER[0] in line for line in kept)
        assert result.status == "cleaned"


@pytest.mark.parametrize("replies", ["post", "comment"])
def test_the_default_keeps_every_post_of_a_forum_thread_whole(replies: str) -> None:
    """A forum's replies are not a news page's comments: every word of every post stays, on
    every page, whether the posts are ``post`` records or a thread of ``comment`` ones (a
    thread that is all the page has stays: ``combined._unless_the_thread_is_the_page``).  The
    thread's title is left to the trees on a site's very first page (on wcxb-dev, an ``<h1>``
    that repeats the ``<title>`` is content on 38% of pages), and kept from then on."""
    engine = Detemplater()
    for n, page in enumerate(forumsite.site(replies=replies)):
        result = engine.process(page.url, page.body)
        missing = bag("\n".join(page.posts if n == 0 else (page.title, *page.posts))) - bag(result.text)
        assert not missing, f"{page.url} lost {sorted(missing.elements())[:10]}"


@pytest.mark.parametrize("replies", ["post", "comment"])
def test_the_default_removes_a_forums_template_once_the_site_is_known(replies: str) -> None:
    """Header, sidebar and footer go from the fourth page on.  The row of buttons under each
    post (``Reply Like Share Flag``, in a ``<nav>`` inside the posts' container) goes two pages
    later, once the site is warm: a line on nearly every earlier page, in a ``<nav>`` or a
    ``<button>``, is template even inside the main container, where site evidence alone does
    not remove other text (a documentation page's ``Parameters``).  Before, the trees had it,
    and in ``post`` records they left a few of each page's ten rows on most pages."""
    engine = Detemplater()
    for n, page in enumerate(forumsite.site(replies=replies)):
        result = engine.process(page.url, page.body)
        if n < WARM:
            continue
        kept = _lines(result.text)
        template = page.template if n >= WARM + 2 else page.template[:-1]
        leaked = [line for line in template if line in kept]
        assert not leaked, f"{page.url} kept template lines {leaked}"
        assert result.status == "cleaned"
