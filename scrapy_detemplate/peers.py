"""The extractors users pick instead, wrapped for the same evaluation.

Each peer turns one page (decoded HTML text) into extracted text.  They are an
optional extra (``pip install scrapy-detemplate[bench]``), imported only when
asked for, never at crawl time.  Pages are given one at a time: peers are
page-level, so crawl order does not matter to them.
"""

from __future__ import annotations

from collections.abc import Callable

from scrapy_detemplate._html import parse_html, visible_text

Extractor = Callable[[str], str]


def _trafilatura() -> Extractor:
    import trafilatura

    def extract(html: str) -> str:
        return trafilatura.extract(html) or ""  # defaults, as users call it

    return extract


def _readability() -> Extractor:
    from readability import Document

    def extract(html: str) -> str:
        doc = Document(html)
        return f"{doc.short_title()}\n{visible_text(parse_html(doc.summary()))}"

    return extract


def _justext() -> Extractor:
    import justext

    stoplist = justext.get_stoplist("English")

    def extract(html: str) -> str:
        paragraphs = justext.justext(html.encode("utf-8"), stoplist, encoding="utf-8")
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return extract


def _goose3() -> Extractor:
    from goose3 import Goose

    goose = Goose({"enable_image_fetching": False, "http_timeout": 0.001})

    def extract(html: str) -> str:
        article = goose.extract(raw_html=html)
        return f"{article.title or ''}\n{article.cleaned_text or ''}"

    return extract


def _boilerpy3() -> Extractor:
    from boilerpy3 import extractors

    article = extractors.ArticleExtractor(raise_on_failure=False)

    def extract(html: str) -> str:
        return article.get_content(html) or ""

    return extract


def _resiliparse() -> Extractor:
    from resiliparse.extract.html2text import extract_plain_text

    def extract(html: str) -> str:
        return extract_plain_text(html, main_content=True)

    return extract


#: Peer name -> factory of its extractor (the factory imports the package).
PEERS: dict[str, Callable[[], Extractor]] = {
    "trafilatura": _trafilatura,
    "readability": _readability,
    "goose3": _goose3,
    "justext": _justext,
    "boilerpy3": _boilerpy3,
    "resiliparse": _resiliparse,
}


def load_peer(name: str) -> Extractor:
    """The peer's extractor; ``ImportError`` names the extra when it is missing."""
    try:
        return PEERS[name]()
    except ImportError as exc:
        raise ImportError(f"peer {name!r} needs the bench extra: pip install 'scrapy-detemplate[bench]'") from exc
