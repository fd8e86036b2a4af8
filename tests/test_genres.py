"""The default keeps a documentation site's content whole and removes its template.

A news-trained extractor deletes signatures, code, tables and definition lists;
the generated site of :mod:`tests.docsite` holds all of them, under a sidebar
table of contents, prev/next bars, a header and a footer.
"""

from __future__ import annotations

import re

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
