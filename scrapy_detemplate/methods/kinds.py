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

A page also declares some of its own text: a shop its customers' reviews
(:func:`declared_reviews`), a page of questions its questions and answers
(:func:`declared_answers`).  ``combined`` drops the first on a page that declares a
product and keeps the second whatever its trees say (:func:`review_lines` and
:func:`answer_lines` find their lines; ``docs/methods/combined.md``, "What a page declares
of its own text").
"""

from __future__ import annotations

import bisect
import html as html_module
import itertools
import json
import re
from collections.abc import Iterable, Sequence

from lxml import etree

from scrapy_detemplate.methods.density import tokens

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


#: What :func:`declared_kinds` reads, by the character before a ``type`` of the source: the needle
#: that ``type`` closes, how far before it the needle starts, its pattern, whether the pattern reads
#: from the tag's ``<``, and the prefix of the names it reads.
_KIND_NEEDLES: dict[str, tuple[str, int, re.Pattern[str], bool, str]] = {
    "@": ('"@type"', 2, _LD_TYPE, False, ""),
    "m": ("itemtype=", 4, _ITEM_TYPE, False, ""),
    ":": ("og:type", 3, _OG_TYPE, True, "og:"),
}


def declared_kinds(html: str) -> set[str]:
    """The kinds ``html`` declares, lowercased: schema.org types as they are, ``og:type`` prefixed ``og:``
    (:func:`declared_names`, each once)."""
    return set(declared_names(html))


def declared_names(html: str) -> list[str]:
    """The names of the kinds ``html`` declares, lowercased, in the order of the source, each as often as it is
    declared: schema.org types as they are, ``og:type`` prefixed ``og:``.

    The names :func:`_declared` reads at each of the three needles (``"@type"``, ``itemtype=``,
    ``og:type``), found in one scan of the source: each needle ends in ``type``, so the page is
    searched for ``type`` once and each one is read as the needle it closes, if any.  A needle is
    taken where ``_declared``'s own search would find it (not inside the one taken before it), and
    ``og:type``'s tag is looked for back to the ``og:type`` before, as there.  Three scans read the
    whole source three times: median over every page of each corpus, against a parse of the page,
    c2f / dragnet10 / docs / wcxb-dev 0.126 / 0.128 / 0.077 / 0.167 -> 0.061 / 0.065 / 0.042 / 0.086
    of a parse (``bench/cost_declared.py``; the same names, ``tests/methods/test_kinds.py``).  Its
    worst case is a source made of one needle, each read in Python: 8 MB (``max_bytes``) of
    ``"@type"`` takes 0.7 s (0.4 s in three scans), of ``type`` 0.33 s; linear in the page, as before.
    """
    names: list[str] = []
    free = dict.fromkeys(_KIND_NEEDLES, 0)  # where each needle's next one may start
    searched = 0  # the last og:type's start: its tag is looked for after it
    at = html.find("type")
    while at >= 0:
        key = html[at - 1] if at else ""
        if key in _KIND_NEEDLES:
            needle, before, pattern, from_tag, prefix = _KIND_NEEDLES[key]
            start = at - before
            if start >= free[key] and html.startswith(needle, start):
                free[key] = start + len(needle)
                if from_tag:
                    begin, searched = html.rfind("<", searched, start), start
                else:
                    begin = start
                match = pattern.match(html, begin) if begin >= 0 else None
                if match:
                    names.append(prefix + (match.group(1) or match.group(pattern.groups)).lower())
        at = html.find("type", at + 4)
    return names


def _declared_kinds_by_needle(html: str) -> set[str]:
    """:func:`declared_kinds` as it was, the source searched once for each needle: the reference the one
    scan is held to (``tests/methods/test_kinds.py``) and timed against (``bench/cost_declared.py``)."""
    names = set(_declared(html, '"@type"', _LD_TYPE))
    names.update(_declared(html, "itemtype=", _ITEM_TYPE))
    names.update("og:" + name for name in _declared(html, "og:type", _OG_TYPE, from_tag=True))
    return names


def page_kinds(html: str) -> list[float]:
    """:data:`KIND_FEATURES` of the page: 1.0 for each kind it declares, else 0.0."""
    return kind_flags(declared_names(html))


def kind_flags(names: Iterable[str]) -> list[float]:
    """:data:`KIND_FEATURES` of a page that declares ``names`` (:func:`declared_names`)."""
    declared = set(names)
    return [1.0 if declared & group else 0.0 for group in KIND_NAMES]


#: How a declared type may be written: ``Product``, or schema.org's address of it.
_SCHEMA_ORG = re.compile(r"^(?:https?://)?(?:www\.)?schema\.org/")


def declared_products(names: Iterable[str]) -> int:
    """How many products a page that declares ``names`` (:func:`declared_names`) declares: its JSON-LD items
    whose (first) ``@type`` is ``Product`` and its microdata items of type ``https://schema.org/Product``.
    A shop's product page declares one; a shop's category page, a comparison or a listing declares one per
    item, or none but an ``ItemList``.  The names are read once a page, for its kinds' columns; counting
    them is free (the source searched again for the two needles cost a median 0.3 of a parse on
    wcxb-dev's product pages, 1.5 at most), and a name that does not end in ``product`` is not looked at
    twice."""
    return _count_type(names, "product")


def _count_type(names: Iterable[str], type_name: str) -> int:
    """How many of ``names`` are the schema.org type ``type_name``, written as it is or as schema.org's address
    of it (a name that does not end in ``type_name`` is not looked at twice)."""
    return sum(1 for name in names if name.endswith(type_name) and _SCHEMA_ORG.sub("", name) == type_name)


#: The names of a list of items (the ``kind_list`` flag's, :data:`KIND_NAMES`): a page that declares one is
#: not about one product (:func:`about_one_product`).
_LIST_NAMES = KIND_NAMES[KIND_FEATURES.index("kind_list")]
_LIST_ENDS = tuple(_LIST_NAMES)  # a name that ends otherwise is not looked at twice


def about_one_product(names: Sequence[str]) -> bool:
    """Whether a page that declares ``names`` (:func:`declared_names`) says it is about one product: it
    declares exactly one ``Product`` (:func:`declared_products`) or exactly one ``ProductGroup``, and no list
    of items (``ItemList``, ``OfferCatalog``..., the ``kind_list`` names).

    A shop that sells a product in sizes or colours declares a ``ProductGroup`` and each variant as a
    ``Product`` of its own: allbirds.com's, huel.com's, nike.com's and zalando.co.uk's product pages count
    4-50 products and one group.  A page that also declares a list (sephora.com's product page declares an
    ``ItemList`` and two groups beside its reviews) is about more than its product.  Measured on sites never
    seen (``docs/methods/combined.md``, "A shop's product page: the cut leans less")."""
    if any(name.endswith(_LIST_ENDS) and _SCHEMA_ORG.sub("", name) in _LIST_NAMES for name in names):
        return False
    return _count_type(names, "productgroup") == 1 or declared_products(names) == 1


def _declared_products_by_needle(html: str) -> int:
    """:func:`declared_products` of the source searched once for each needle: the reference the one scan's
    count is held to (``tests/methods/test_kinds.py``)."""
    return declared_products(_declared(html, '"@type"', _LD_TYPE) + _declared(html, "itemtype=", _ITEM_TYPE))


#: A page's customer reviews (:func:`declared_reviews`, :func:`review_lines`): at most MAX_REVIEWS
#: texts and MAX_REVIEW_CHARS characters of them are read (a page's source of hostile size costs
#: bounded time); a review of fewer than REVIEW_WORDS words and a line of fewer than
#: REVIEW_LINE_WORDS are not matched (a "Great product!" of one review is another's whole line, an
#: "Easy to build" of a review the shop's own bullet); and a review that spans more than
#: REVIEW_LINES lines of the page is the page's own text (an editor's review of a car, printed
#: paragraph by paragraph), not a customer's.
MAX_REVIEWS = 200
MAX_REVIEW_CHARS = 100_000
REVIEW_WORDS = 4
REVIEW_LINE_WORDS = 5
REVIEW_LINES = 2

#: A JSON-LD ``reviewBody`` string, its escapes left for ``json`` to read.
_REVIEW_BODY = re.compile(r'"reviewBody"\s*:\s*"((?:[^"\\]|\\.)*)"')
#: A microdata ``itemprop`` holding ``reviewBody`` among its names.
_ITEMPROP_REVIEW = "//*[contains(concat(' ', normalize-space(@itemprop), ' '), ' reviewBody ')]"


def review_words(text: str) -> str:
    """``text`` as its lowercased ``\\w+`` words, one space between them (the words content F1 counts)."""
    return " ".join(tokens(text.lower()))


def declared_reviews(html: str, root: etree._Element | None) -> list[str]:
    """The review texts the page declares for search engines, as :func:`review_words`: JSON-LD's
    ``reviewBody`` strings and the text of microdata's ``itemprop="reviewBody"`` elements, each once.

    A shop writes its customers' reviews there (``Product.review``) to show their stars in search
    results.  Nothing is read unless ``reviewBody`` stands in the source (one ``str.find``)."""
    if "reviewBody" not in html:
        return []
    texts: list[str] = []
    for raw in _declared(html, '"reviewBody"', _REVIEW_BODY):  # lowercased: so are the words
        try:
            text = json.loads(f'"{raw}"', strict=False)
        except ValueError:
            text = raw
        texts.append(text)
    if root is not None and "itemprop" in html:
        try:
            found = root.xpath(_ITEMPROP_REVIEW)
        except (etree.XPathError, ValueError):  # a tree lxml cannot search
            found = []
        elements = (
            [element for element in found if isinstance(element, etree._Element)] if isinstance(found, list) else []
        )
        texts += (
            etree.tostring(element, method="text", encoding="unicode", with_tail=False)
            for element in elements[:MAX_REVIEWS]
        )
    reviews: dict[str, None] = {}
    chars = 0
    for text in texts[:MAX_REVIEWS]:
        words = review_words(html_module.unescape(text[:MAX_REVIEW_CHARS]))
        if words.count(" ") + 1 >= REVIEW_WORDS and words not in reviews and chars + len(words) <= MAX_REVIEW_CHARS:
            reviews[words] = None
            chars += len(words) + 1
    return list(reviews)


def review_lines(texts: Sequence[str], reviews: Sequence[str]) -> frozenset[int]:
    """The lines (of ``texts``) that are a customer's review of ``reviews`` (:func:`declared_reviews`):
    lines of :data:`REVIEW_LINE_WORDS` words or more that :func:`_declared_lines` matches.  A review
    matched by more than :data:`REVIEW_LINES` lines is left alone: an editor's review printed
    paragraph by paragraph is the page itself."""
    by_text = _declared_lines(texts, reviews, REVIEW_LINE_WORDS)
    return frozenset(index for lines in by_text.values() if len(lines) <= REVIEW_LINES for index in lines)


def answer_lines(texts: Sequence[str], answers: Sequence[str]) -> frozenset[int]:
    """The lines (of ``texts``) that are one of the questions and answers the page declares
    (:func:`declared_answers`): lines of :data:`ANSWER_LINE_WORDS` words or more that
    :func:`_declared_lines` matches."""
    return frozenset(index for lines in _declared_lines(texts, answers, ANSWER_LINE_WORDS).values() for index in lines)


def _declared_lines(texts: Sequence[str], declared: Sequence[str], least_words: int) -> dict[int, list[int]]:
    """For each text of ``declared`` (as :func:`review_words`), the lines of ``texts`` of at least
    ``least_words`` words that are its: whose words stand in it (a text printed over several lines)
    or of whose words it makes half or more (a review printed with its title and its author's name
    run together, ``Great shelf!DaphneI love this shelf``)."""
    if not declared:
        return {}
    joined = "\n".join(declared)
    starts = list(itertools.accumulate((len(text) + 1 for text in declared[:-1]), initial=0))
    by_length = sorted(range(len(declared)), key=lambda which: len(declared[which]))
    lengths = [len(declared[which]) for which in by_length]
    by_text: dict[int, list[int]] = {}
    for index, text in enumerate(texts):
        words = review_words(text)
        if words.count(" ") + 1 < least_words:
            continue
        at = joined.find(words)
        if at >= 0:
            by_text.setdefault(bisect.bisect_right(starts, at) - 1, []).append(index)
            continue
        # Only a text from half the line's length to all of it can make half of the line.
        low, high = bisect.bisect_left(lengths, (len(words) + 1) // 2), bisect.bisect_right(lengths, len(words))
        for which in by_length[low:high]:
            if declared[which] in words:
                by_text.setdefault(which, []).append(index)
                break
    return by_text


#: A page's declared questions and answers (:func:`declared_answers`): at most MAX_ANSWERS texts, read
#: from at most MAX_JSON_NODES objects and arrays of its JSON-LD; a text of fewer than ANSWER_WORDS
#: words is not read, and a line of fewer than ANSWER_LINE_WORDS is not matched.
MAX_ANSWERS = 200
MAX_JSON_NODES = 20_000
ANSWER_WORDS = 3
ANSWER_LINE_WORDS = 3
_ANSWER_KEYS = ("acceptedAnswer", "suggestedAnswer")
_TAG = re.compile(r"<[^>]*>")


def declared_answers(html: str, root: etree._Element | None) -> list[str]:
    """The questions and answers the page declares for search engines, as :func:`review_words`: the
    ``name`` of each JSON-LD ``Question`` (a ``FAQPage``'s, a ``QAPage``'s) and the ``text`` of its
    ``acceptedAnswer`` and ``suggestedAnswer``, markup taken out, each once.  Nothing is read unless
    ``"Question"`` stands in the source (one ``str.find``), and only JSON that parses."""
    if root is None or '"Question"' not in html:
        return []
    texts: list[str] = []
    budget = MAX_JSON_NODES
    for script in root.iter("script"):
        source = script.text or ""
        if "ld+json" not in (script.get("type") or "").lower() or '"Question"' not in source:
            continue
        try:
            data = json.loads(source, strict=False)
        except (ValueError, RecursionError):
            continue
        stack = [data] if isinstance(data, dict | list) else []  # objects and arrays only
        while stack and budget > 0 and len(texts) < MAX_ANSWERS:
            value = stack.pop()
            budget -= 1
            if isinstance(value, dict):
                kind = value.get("@type")
                if kind == "Question" or (isinstance(kind, list) and "Question" in kind):
                    texts += _question_texts(value)
                value = list(value.values())
            stack += [child for child in reversed(value) if isinstance(child, dict | list)]  # popped in page order
    answers: dict[str, None] = {}
    for text in texts[:MAX_ANSWERS]:
        words = review_words(html_module.unescape(_TAG.sub(" ", text[:MAX_REVIEW_CHARS])))
        if words.count(" ") + 1 >= ANSWER_WORDS:
            answers[words] = None
    return list(answers)


def _question_texts(question: dict[str, object]) -> list[str]:
    """A JSON-LD ``Question``'s name and its answers' texts, those that are strings."""
    name = question.get("name")
    texts = [name] if isinstance(name, str) else []
    for key in _ANSWER_KEYS:
        answers = question.get(key)
        for answer in answers if isinstance(answers, list) else [answers]:
            if isinstance(answer, dict) and isinstance(text := answer.get("text"), str):
                texts.append(text)
    return texts
