"""What kind of page a page says it is: its schema.org types and its ``og:type``.

Many sites declare the kind of each page for search engines: JSON-LD
(``"@type": "Product"``), microdata (``itemtype="https://schema.org/Product"``) and
Open Graph (``<meta property="og:type" content="article">``).  Gold content differs by
kind (a product page's gold leaves out marketing prose and reviews; a forum thread's
keeps every post; a listing's keeps its short items), and a line's own features do not
say which kind of page it stands on.  The ``combined`` method gives every line of a
page four flags, one per kind the page declares (:data:`KIND_FEATURES`), and lets the
trees weigh them; a page that declares nothing has none set.

Read from the decoded HTML by a regular expression at each hit of a ``str.find`` (no
JSON parse, no walk of the tree): what is declared anywhere in the source counts, in a
script or an attribute.  Measured on sites never seen (``docs/methods/combined.md``), with trees
of 63 leaves: wcxb-dev micro F1 up 0.001 to 0.003 on each of three splits of the
sites.
"""

from __future__ import annotations

import re

#: The flags, in the order :func:`page_kinds` gives them (the last columns of ``combined``'s features).
KIND_FEATURES = ("kind_product", "kind_discussion", "kind_article", "kind_list")

#: The declared names (lowercased; Open Graph's prefixed ``og:``) that set each flag.
KIND_NAMES: tuple[frozenset[str], ...] = (
    frozenset({"product", "offer", "aggregateoffer", "og:product", "individualproduct", "productgroup"}),
    frozenset({"discussionforumposting", "qapage", "comment", "socialmediaposting", "question", "answer"}),
    frozenset(
        {
            "article",
            "newsarticle",
            "blogposting",
            "og:article",
            "reportagenewsarticle",
            "techarticle",
            "scholarlyarticle",
            "og:blog",
        }
    ),
    frozenset({"itemlist", "collectionpage", "searchresultspage", "og:product.group", "offercatalog"}),
)

#: A JSON-LD ``@type`` (the first one of a list).
_LD_TYPE = re.compile(r'"@type"\s*:\s*\[?\s*"([^"]+)"')
#: A microdata item type from schema.org, the attribute's name in lower case as pages write it.
_ITEM_TYPE = re.compile(r'itemtype=["\']https?://schema\.org/(\w+)')
#: Open Graph's ``og:type``, its attributes in either order, matched from the ``<`` of its
#: tag; no match runs past a ``<`` or ``>``, so a page of unclosed ``<meta`` costs linear
#: time, not quadratic.
_OG_TYPE = re.compile(
    r'<meta[^<>]+property=["\']og:type["\'][^<>]*content=["\']([^"\'<>]+)'
    r'|<meta[^<>]+content=["\']([^"\'<>]+)["\'][^<>]*property=["\']og:type',
    re.I,
)


def _declared(html: str, needle: str, pattern: re.Pattern[str], *, from_tag: bool = False) -> list[str]:
    """What ``pattern`` reads at each ``needle`` in ``html`` (from the start of its tag if ``from_tag``).

    ``str.find`` skips through the page faster than a regular expression searches it
    (median over 300 pages each of c2f / docs / wcxb-dev, against a parse of the page: the
    three searches 0.20 / 0.19 / 0.30, the finds 0.13 / 0.10 / 0.19).
    """
    found = []
    at, searched = html.find(needle), 0
    while at >= 0:
        # From the tag's ``<``, looked for back to the needle before: none between them is
        # the same tag, read already (and a page of needles without tags costs linear time).
        start = html.rfind("<", searched, at) if from_tag else at
        match = pattern.match(html, start) if start >= 0 else None
        if match:
            found.append((match.group(1) or match.group(pattern.groups)).lower())
        searched = at
        at = html.find(needle, at + len(needle))
    return found


def declared_kinds(html: str) -> set[str]:
    """The kinds ``html`` declares, lowercased: schema.org types as they are, ``og:type`` prefixed ``og:``."""
    names = set(_declared(html, '"@type"', _LD_TYPE))
    names.update(_declared(html, "itemtype=", _ITEM_TYPE))
    names.update("og:" + name for name in _declared(html, "og:type", _OG_TYPE, from_tag=True))
    return names


def page_kinds(html: str) -> list[float]:
    """:data:`KIND_FEATURES` of the page: 1.0 for each kind it declares, else 0.0."""
    names = declared_kinds(html)
    return [1.0 if names & group else 0.0 for group in KIND_NAMES]
