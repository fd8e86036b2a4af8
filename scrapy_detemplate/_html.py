"""Decoding, guarded parsing and the visible-text walk shared by every method.

Everything here works on lxml trees parsed by libxml2's HTML parser, and on
plain strings; nothing imports Scrapy.  Trees are plain ``etree`` elements, not
``lxml.html``'s element classes: every method walks the tree in Python, and
``lxml.html`` looks up a Python class for each element it hands out, which
costs several times the element itself (the parse is the same libxml2 parse).
The walk is iterative (no recursion), so deeply nested input cannot overflow
the Python stack.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import cast

from lxml import etree
from w3lib.encoding import html_body_declared_encoding, html_to_unicode

from scrapy_detemplate import _compiled

#: Elements whose content is never visible text (METRICS.md).
SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "head", "title", "meta", "link"})

#: Block-level elements: their boundaries are line breaks in the visible text.
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
        "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html",
        "iframe", "legend", "li", "main", "menu", "nav", "noframes", "ol", "option", "p", "pre",
        "section", "select", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
        "textarea",
    }
)  # fmt: skip

_EARLY_END = re.compile(r"</\s*(?:body|html)\s*>", re.IGNORECASE)
# lxml refuses str input that carries an XML encoding declaration.
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*>", re.IGNORECASE)
#: libxml2's HTML parser with lxml's defaults, without lxml.html's element classes, and
#: without a table of ``id`` attributes (nothing here looks an element up by its id; filling
#: it is about a twentieth of a parse on documentation pages, whose headings all have one).
_PARSER = etree.HTMLParser(collect_ids=False)
_WS = re.compile(r"\s+")


def decode_html(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """Decode page bytes the way Scrapy's ``TextResponse`` does.

    The charset from the Content-Type header wins, then a BOM, then a ``<meta>``
    declaration, then auto-detection; undecodable bytes become U+FFFD.
    Returns ``(encoding, text)``.
    """
    return _DECODE(body, content_type)


def _decoder(convert: Callable[..., tuple[str, str]]) -> Callable[[bytes, str | None], tuple[str, str]]:
    """w3lib's ``html_to_unicode`` (``convert``) called as Scrapy's ``TextResponse`` calls it, with the
    detection :func:`_auto_detect`; or, from a w3lib whose ``html_to_unicode`` no longer takes
    ``auto_detect_fun`` (deprecated in w3lib 2.6), with w3lib's own detection, as a browser reads the
    page.  Without this, such a w3lib would fail every call, and every page would pass through."""
    try:
        takes_detection = "auto_detect_fun" in inspect.signature(convert).parameters
    except (TypeError, ValueError):  # no signature to read: call it as w3lib has always been called
        takes_detection = True
    if takes_detection:
        return lambda body, content_type: convert(content_type, body, auto_detect_fun=_auto_detect)
    return lambda body, content_type: convert(content_type, body)


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(text: str) -> str:
    """``text`` with lone surrogates as U+FFFD (a surrogate pair becomes its character).

    Python strings can hold them (JSON's ``"\\ud800"``, ``surrogateescape``); UTF-8
    cannot, and lxml stops reading text at the first one.
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def looks_binary(text: str) -> bool:
    """Whether decoded text is not text: many U+FFFD, or control characters near its start.

    One stray NUL in a real page does not count against it; an image or other
    binary served as HTML has many (or many U+FFFD where it did not decode).
    """
    if text.count("\ufffd") > max(16, len(text) // 20):
        return True
    head = text[:4096]
    controls: int = _tree.count_controls(head) if _tree is not None else len(_CONTROL.findall(head))
    return controls > max(16, len(head) // 50)


#: C0 controls other than tab, line feed, form feed and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f]")


#: Characters a parsed tree can hold but lxml refuses in text it is given.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` without the characters lxml refuses to set (a form feed becomes a space)."""
    if _NOT_XML.search(text) is None:
        return text
    return _NOT_XML.sub(lambda m: " " if m.group() == "\x0c" else "", text)


def _auto_detect(body: bytes) -> str | None:
    declared = html_body_declared_encoding(body)
    if declared:
        return declared
    utf16 = _sniff_utf16(body)
    if utf16:
        return utf16
    for encoding in ("utf-8", "cp1252"):
        try:
            body.decode(encoding)
        except UnicodeDecodeError:
            continue
        return encoding
    return None


_DECODE = _decoder(html_to_unicode)


def _sniff_utf16(body: bytes) -> str | None:
    """UTF-16 without a BOM or a header: mostly-ASCII markup has a NUL in every other byte.

    A ``<meta charset="utf-16">`` inside such a page is itself UTF-16, so it
    cannot be read before the page is decoded.
    """
    head = body[:4096]
    pairs = len(head) // 2
    if pairs < 8:
        return None
    even, odd = head[0 : 2 * pairs : 2].count(0), head[1 : 2 * pairs : 2].count(0)
    if odd > pairs * 0.6 and even < pairs * 0.05:
        return "utf-16-le"
    if even > pairs * 0.6 and odd < pairs * 0.05:
        return "utf-16-be"
    return None


def keep_content_after_early_end(html: str) -> str:
    """Drop ``</body>`` and ``</html>`` end tags so that content after them stays.

    Browsers keep such content in the body; libxml2 (lxml >= 6.1) throws it away.
    The end tags are implied, so removing them changes nothing else.  Compiled
    when it can be (the regex tries every ``<`` of the page: a tenth of a parse).
    """
    if _tree is not None:
        return _tree.drop_early_ends(html)  # type: ignore[no-any-return]
    return _EARLY_END.sub("", html)


def parse_html(html: str) -> etree._Element | None:
    """Parse with recovery; ``None`` when there is no document at all.

    A NUL character is read as U+FFFD, as libxml2 2.14 (lxml 6.1) reads it; the libxml2 of
    the oldest lxml supported (5.0) ended the document there, so one stray NUL near the
    top of a page lost all of it (``scripts/check_min_versions.sh``).
    """
    if not html or html.isspace():  # as strip() would say, without copying the page
        return None
    html = html.replace("\x00", "\ufffd")  # without a NUL, the same string back (no copy)
    try:
        html = _XML_DECL.sub("", html, count=1)
        return etree.fromstring(keep_content_after_early_end(html), _PARSER)
    except (etree.ParserError, ValueError):
        return None


def count_nodes(root: etree._Element) -> int:
    """Number of nodes in the tree (elements, comments, processing instructions)."""
    count = root.xpath("count(//node()[not(self::text())])")
    return int(count) if isinstance(count, float) else 0


def deeper_than(root: etree._Element, depth: int) -> bool:
    """Whether any element lies ``depth`` or more levels below ``root``.

    libxml2 stops nesting at 256 levels and flattens the rest, so a page that
    reaches the bound has most likely been mangled by the parser.  The engine
    asks :func:`tree_size_and_depth` (one walk); this XPath is what the tests
    and ``bench/check_compiled_tree.py`` hold it to.
    """
    return bool(root.xpath(f"boolean(//*[count(ancestor::*) >= {int(depth) - 1}])"))


def tree_size_and_depth(root: etree._Element) -> tuple[int, int, int]:
    """What the engine checks before it walks a tree, in one walk: ``(nodes, levels, noscripts)``.

    ``nodes`` is :func:`count_nodes`; ``levels`` is the most elements nested in
    the tree (``<html>`` alone is 1), so ``deeper_than(root, depth)`` is
    ``levels >= depth`` (for ``depth`` >= 1); ``noscripts`` counts the
    ``<noscript>`` elements (none: :func:`reveal_noscript` has nothing to look
    at).  All are of ``root``'s whole document, as the XPath of the first two
    reads it.  Compiled when it can be.
    """
    if _tree is not None:
        return _tree.tree_size_and_depth(root)  # type: ignore[no-any-return]
    return _tree_size_and_depth_py(root)


def _tree_size_and_depth_py(root: etree._Element) -> tuple[int, int, int]:
    """:func:`tree_size_and_depth` in Python (the reference of the compiled one)."""
    top = root.getroottree().getroot()
    levels = 0
    stack = [(top, 1)]
    while stack:
        el, level = stack.pop()
        if level > levels:
            levels = level
        stack.extend((child, level + 1) for child in el.iterchildren(etree.Element))
    return count_nodes(root), levels, sum(1 for _ in top.iter("noscript"))


def find_body(root: etree._Element) -> etree._Element | None:
    if root.tag == "body":
        return root
    for child in root:
        if child.tag == "body":
            return child
    return root.find(".//body")


@dataclass(slots=True)
class Line:
    """One line of visible text: the pieces of text that make it up.

    ``slots`` are ``(element, is_tail)`` pairs: where each piece of the line
    lives in the tree (``element.text`` or ``element.tail``).  ``path`` is the
    tag path of the element the line starts in, from ``<body>`` down.
    """

    text: str
    path: str
    slots: list[tuple[etree._Element, bool]] = field(default_factory=list)


def visible_lines(root: etree._Element | None) -> list[Line]:
    """Split the visible text of ``root``'s body into lines (METRICS.md rules).

    Block-level boundaries and ``<br>`` end a line; inline elements do not split
    words.  Script, style, noscript, template, comments and processing
    instructions contribute nothing (their tails do).  This walk is on every
    page's path: it runs compiled (``_tree.pyx``) where that was built, else
    :func:`_visible_lines_py`, with the same lines.
    """
    if _tree is not None:
        return _tree.visible_lines(root)  # type: ignore[no-any-return]
    return _visible_lines_py(root)


def _visible_lines_py(root: etree._Element | None) -> list[Line]:
    """:func:`visible_lines` in Python (the reference of the compiled walk, and its fallback).

    Written for speed: one explicit stack, no recursion, no per-piece function calls.
    """
    if root is None:
        return []
    body = find_body(root)
    if body is None:
        return []
    lines: list[Line] = []
    parts: list[str] = []
    slots: list[tuple[etree._Element, bool]] = []
    start_path = ""
    path: list[str] = []
    block_tags, skip_tags = BLOCK_TAGS, SKIP_TAGS
    # (element, leaving?) pairs; the body's own tail is outside the body.
    stack: list[tuple[etree._Element, bool]] = [(body, False)]
    pop, push = stack.pop, stack.append
    while stack:
        el, leaving = pop()
        tag = el.tag
        if leaving:
            path.pop()
            if tag in block_tags and parts:
                text = " ".join("".join(parts).split())
                if text:
                    lines.append(Line(text, start_path, slots))
                parts, slots = [], []
        elif not isinstance(tag, str) or tag in skip_tags:
            pass  # comments, processing instructions, invisible elements: only the tail shows
        elif tag == "br":
            if parts:
                text = " ".join("".join(parts).split())
                if text:
                    lines.append(Line(text, start_path, slots))
                parts, slots = [], []
        else:
            if tag in block_tags and parts:
                text = " ".join("".join(parts).split())
                if text:
                    lines.append(Line(text, start_path, slots))
                parts, slots = [], []
            path.append(tag)
            if el.text:
                if not parts:
                    start_path = "/".join(path)
                parts.append(el.text)
                slots.append((el, False))
            push((el, True))
            children = list(el)
            if children:
                stack.extend((child, False) for child in reversed(children))
            continue
        tail = el.tail
        if tail and el is not body:
            if not parts:
                start_path = "/".join(path)
            parts.append(tail)
            slots.append((el, True))
    if parts:
        text = " ".join("".join(parts).split())
        if text:
            lines.append(Line(text, start_path, slots))
    return lines


#: Text inside a ``<noscript>`` not counted: what its scripts, styles and templates hold.
_NOSCRIPT_TEXT = etree.XPath(
    ".//text()[not(ancestor::script or ancestor::style or ancestor::template or ancestor::noscript[2])]"
)
#: The ``<noscript>`` views are the page when they hold at least this many characters of text ...
NOSCRIPT_MIN_CHARS = 200
#: ... and at least this many times what the rest of the page shows (an application shell shows
#: next to nothing: on wcxb-dev's Discourse and Flarum forums at most 2% of the views' text; a
#: gallery's captions in a news page's ``<noscript>`` are about as long as its article).
NOSCRIPT_DOMINANCE = 4


def reveal_noscript(root: etree._Element) -> int:
    """Show the ``<noscript>`` view of a page whose text lives there; returns how many were shown.

    A crawler runs no script, so it is served what a browser without JavaScript
    shows: some sites (Discourse forums, pre-rendered single-page apps) put the
    whole page there, behind an empty application shell, and reading only the
    rest would lose all of it.  The usual ``<noscript>`` (a tracking pixel, an
    "enable JavaScript" line, a fallback menu) stays hidden: the views are shown
    (renamed ``div``) only when together they hold at least
    :data:`NOSCRIPT_MIN_CHARS` characters of text and :data:`NOSCRIPT_DOMINANCE`
    times what the rest of the page shows.  Changes ``root`` in place: call it on
    a tree of one's own.
    """
    views = [el for el in root.iter("noscript") if not any(a.tag == "noscript" for a in el.iterancestors())]
    if not views:
        return 0
    sizes = [sum(len(t.strip()) for t in cast("list[str]", _NOSCRIPT_TEXT(el))) for el in views]
    inside = sum(sizes)
    if inside < NOSCRIPT_MIN_CHARS:
        return 0
    outside = sum(len(line.text) for line in visible_lines(root))
    if inside < NOSCRIPT_DOMINANCE * outside:
        return 0
    shown = 0
    for el, size in zip(views, sizes, strict=True):
        if size:
            el.tag = "div"
            shown += 1
    return shown


def visible_text(root: etree._Element | None) -> str:
    """The visible text of ``root``: one line per text line, blocks kept apart."""
    return "\n".join(line.text for line in visible_lines(root))


def iter_text_lines(text: str) -> Iterator[str]:
    for raw in text.splitlines():
        line = _WS.sub(" ", raw).strip()
        if line:
            yield line


#: The compiled walks (``scrapy_detemplate/_tree.pyx``), or None when they are not built.
_tree = _compiled.load("scrapy_detemplate._tree")
