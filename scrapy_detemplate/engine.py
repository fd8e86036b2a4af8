"""The engine: one object that both the Scrapy components and the CLI call.

:class:`Detemplater` takes pages one at a time in crawl order, keeps per-site
and per-directory state in a :class:`~scrapy_detemplate.store.StateStore`, asks
the configured method which parts are template, and renders the template-free
HTML and text.  Bad input never raises: it comes back as a ``passthrough``
result that says why.
"""

from __future__ import annotations

import copy
import gc
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import lxml.html
from lxml import etree

from scrapy_detemplate import _compiled
from scrapy_detemplate._html import (
    decode_html,
    find_body,
    looks_binary,
    parse_html,
    reveal_noscript,
    scrub_surrogates,
    tree_size_and_depth,
    visible_lines,
    xml_safe,
)
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.markdown import to_markdown
from scrapy_detemplate.methods.sandwich import lcs_indexes, line_key
from scrapy_detemplate.runners import RUNNERS, ParsedPage, Runner, Verdict
from scrapy_detemplate.state import memory_store
from scrapy_detemplate.store import StateStore

logger = logging.getLogger(__name__)

#: Why a page was passed through unchanged (a fixed set: stats keys stay bounded).
PASSTHROUGH_REASONS = ("non_html", "empty", "too_large", "too_deep", "undecodable", "no_body", "bad_type", "error")

_HTML_TYPES = ("text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml")


@dataclass(frozen=True, slots=True)
class CleanResult:
    """What the engine says about one page.

    ``status`` is ``"cleaned"`` (template removed), ``"unchanged"`` (the method
    found nothing to remove; ``reason`` says why, e.g. ``"no_peer"``) or
    ``"passthrough"`` (the page was not processed; ``reason`` is one of
    :data:`PASSTHROUGH_REASONS`).  ``text`` has one line per block;
    ``template_lines`` are the page's visible lines that did not survive whole.
    ``html`` is the clean page's HTML (the page's own when nothing was
    removed) and ``bytes_removed`` what that saves; both only when the config
    asks for HTML (:attr:`DetemplateConfig.renders_html`) or the call marks,
    else empty and 0.  ``markdown`` is the same content as CommonMark with GFM
    tables, with the words of ``text``; it is rendered only when the config asks
    for it (:attr:`DetemplateConfig.renders_markdown`), else empty.
    """

    url: str
    status: str
    method: str
    reason: str = ""
    text: str = ""
    html: str = ""
    template_lines: tuple[str, ...] = ()
    chars_total: int = 0
    chars_removed: int = 0
    bytes_in: int = 0
    bytes_removed: int = 0
    #: The page with every removed region marked (``data-detemplate``), only
    #: when :meth:`Detemplater.process` was asked to ``mark`` (for reports).
    marked_html: str = ""
    markdown: str = ""

    @property
    def removed_share(self) -> float:
        """Share of the page's visible characters that were removed."""
        return self.chars_removed / self.chars_total if self.chars_total else 0.0

    def as_dict(self) -> dict[str, object]:
        """The result as JSON-ready data."""
        return {
            "url": self.url,
            "status": self.status,
            "method": self.method,
            "reason": self.reason,
            "text": self.text,
            "html": self.html,
            "template_lines": list(self.template_lines),
            "chars_total": self.chars_total,
            "chars_removed": self.chars_removed,
            "bytes_removed": self.bytes_removed,
            "markdown": self.markdown,
        }


class Detemplater:
    """Learns each site's template as pages arrive and returns them without it.

    >>> det = Detemplater(DetemplateConfig(method="sandwich"))
    >>> page = "<html><body><nav>Home</nav><p>{}</p><footer>(c) Ex</footer></body></html>"
    >>> det.process("http://ex.com/a/1", page.format("First story").encode()).reason
    'no_peer'
    >>> det.process("http://ex.com/a/2", page.format("Second story").encode()).text
    'Second story'

    The clean HTML is rendered when the config asks for it (``html=True``, an
    HTML item field, or a replaced body):

    >>> det = Detemplater(DetemplateConfig(method="sandwich", html=True))
    >>> _ = det.process("http://ex.com/a/1", page.format("First story").encode())
    >>> det.process("http://ex.com/a/2", page.format("Second story").encode()).html
    '<html><body><p>Second story</p></body></html>'
    """

    def __init__(self, config: DetemplateConfig | None = None, store: StateStore | None = None) -> None:
        self.config = config or DetemplateConfig()
        # The same bounded store a crawl gets (per-directory and per-site bounds).
        self.store: StateStore = store or memory_store(self.config)
        self.runner: Runner = RUNNERS[self.config.method](self.config, self.store)
        self._warned: set[str] = set()

    def process(
        self,
        url: str,
        body: bytes | bytearray | memoryview | str | None = None,
        *,
        headers: HeadersLike | None = None,
        tree: etree._Element | None = None,
        mark: bool = False,
    ) -> CleanResult:
        """Clean one page: raw ``body`` (bytes-like or text) or an already-parsed ``tree``.

        ``headers`` (a ``Content-Type`` at least) select the encoding and tell
        HTML from other content: a mapping (Scrapy's ``response.headers`` too)
        or ``(name, value)`` pairs, names and values ``str`` or ``bytes``, a
        value possibly a list (the last one counts, as in Scrapy).  A given
        ``tree`` is never modified.  Never raises: a body or headers of another
        type pass through as ``bad_type``, an unexpected failure as ``error``.
        With ``mark``, the result also holds the whole page with every removed
        region marked (:attr:`CleanResult.marked_html`, see :func:`mark_template`);
        it costs a copy of the tree, so only reports ask for it.
        """
        try:
            if not isinstance(url, str):
                url = str(url)
            if isinstance(body, (bytearray, memoryview)):
                body = bytes(body)
            try:
                content_type = content_type_of(headers)
            except TypeError:
                return self._passthrough(url, "bad_type", 0)
            if not (body is None or isinstance(body, (bytes, str))):
                return self._passthrough(url, "bad_type", 0)
            # The call makes and frees thousands of small objects (line pieces, proxies, rows) and
            # leaves no cycle behind: with the cyclic collector on, their peak would start
            # collections that walk the whole process's heap, Scrapy's included (in a crawl of
            # the demo site, 0.4 ms of CPU per response, twice the call itself).  Off during the
            # call; left as it was found (a caller's, or another thread's, gc.disable() stands).
            collecting = gc.isenabled()
            if collecting:
                gc.disable()
            try:
                return self._process(url, body, content_type, tree, mark)
            finally:
                if collecting:
                    gc.enable()
        except Exception:  # never let one page break a crawl
            self._warn_once("error", url, exc_info=True)
            return CleanResult(url, "passthrough", self.runner.name, "error", bytes_in=_size(body))

    def clean_with_peers(
        self,
        url: str,
        body: bytes | str,
        peers: Iterable[tuple[str, bytes | str, HeadersLike | None]],
        *,
        headers: HeadersLike | None = None,
    ) -> CleanResult | None:
        """``url``'s page cleaned as if the ``peers`` (URL, body, headers), pages of its site, had
        come just before it and nothing else: a site's first page, cleaned again once its site's
        next pages have come, with the evidence they give (``scrapy_detemplate._firstpages``).
        The pages go through a store of their own: the engine's state is neither read nor
        changed.  ``None`` when the method has no use for it (only the default, ``combined``, has).

        >>> det = Detemplater()
        >>> page = "<html><body><nav>Home | News | Sport</nav><p>{}</p><footer>(c) Ex</footer></body></html>"
        >>> first = page.format("The first story is long enough to be read as a story.")
        >>> second = page.format("The second story is also long enough to be read as one.")
        >>> det.process("http://ex.com/1", first).text.splitlines()  # the site's first page, alone
        ['Home | News | Sport', 'The first story is long enough to be read as a story.']
        >>> det.clean_with_peers("http://ex.com/1", first, [("http://ex.com/2", second, None)]).text
        'The first story is long enough to be read as a story.'
        """
        twin = getattr(self.runner, "on_store", None)
        if twin is None:
            return None
        scratch = copy.copy(self)  # the config and the warnings given; its own store and evidence
        scratch.store = memory_store(self.config)
        scratch.runner = twin(scratch.store)
        for peer_url, peer_body, peer_headers in peers:
            scratch.process(peer_url, peer_body, headers=peer_headers)
        return scratch.process(url, body, headers=headers)

    # -- steps -------------------------------------------------------------

    def _process(
        self, url: str, body: bytes | str | None, content_type: str, tree: etree._Element | None, mark: bool
    ) -> CleanResult:
        cfg = self.config
        bytes_in = _size(body)
        if content_type and content_type.split(";")[0].strip().lower() not in _HTML_TYPES:
            return self._passthrough(url, "non_html", bytes_in)
        owned = tree is None
        html = ""
        if tree is None:
            if body is None or not body or body.isspace():  # isspace stops at the first mark; strip copies
                return self._passthrough(url, "empty", bytes_in)
            if bytes_in > cfg.max_bytes:
                return self._passthrough(url, "too_large", bytes_in)
            if isinstance(body, bytes):
                _, html = decode_html(body, content_type or None)
                if looks_binary(html):
                    return self._passthrough(url, "undecodable", bytes_in)
            else:
                html = scrub_surrogates(body)
            tree = parse_html(html)
            if tree is None:
                return self._passthrough(url, "empty", bytes_in)
        nodes, levels, noscripts = tree_size_and_depth(tree)  # count_nodes and deeper_than in one walk
        if nodes > cfg.max_nodes:
            return self._passthrough(url, "too_large", bytes_in)
        if levels >= cfg.max_depth:
            return self._passthrough(url, "too_deep", bytes_in)
        root = tree if owned else copy.deepcopy(tree)
        if noscripts:  # a page that lives in <noscript> is read as a crawler is served it
            reveal_noscript(root)
        if not html:
            html = lxml.html.tostring(root, encoding="unicode")
        page = ParsedPage.of(url, html, root, cfg)
        if find_body(root) is None or not page.lines:
            return self._passthrough(url, "no_body", bytes_in, html=html)
        if len(page.lines) > cfg.max_lines:
            markdown = self._markdown(root, url)
            return self._passthrough(url, "too_large", bytes_in, html=html, text=_join(page.lines), markdown=markdown)
        verdict = self.runner.run(page)
        return self._render(page, verdict, bytes_in, mark)

    def _passthrough(
        self, url: str, reason: str, bytes_in: int, html: str = "", text: str = "", markdown: str = ""
    ) -> CleanResult:
        self._warn_once(reason, url)
        return CleanResult(
            url, "passthrough", self.runner.name, reason, text=text, html=html, bytes_in=bytes_in, markdown=markdown
        )

    def _markdown(self, root: etree._Element, url: str) -> str:
        """The kept tree as Markdown, when the config asks for it (else nothing is rendered)."""
        if not self.config.renders_markdown:
            return ""
        try:
            return to_markdown(root, base_url=url, links=self.config.markdown_links)
        except Exception:  # the text and HTML are still good: never lose them for the Markdown
            if "markdown" not in self._warned:
                self._warned.add("markdown")
                logger.warning("detemplate: could not render %s as Markdown; its text and HTML are kept "
                               "(logged once)", url, exc_info=True)  # fmt: skip
            return ""

    def _warn_once(self, reason: str, url: str, exc_info: bool = False) -> None:
        if reason in self._warned:
            logger.debug("detemplate: passed %s through (%s)", url, reason, exc_info=exc_info)
            return
        self._warned.add(reason)
        logger.warning(
            "detemplate: passed %s through unchanged (%s); further pages passed through for this reason are "
            "only counted (stats detemplate/passed_through/%s)",
            url, reason, reason, exc_info=exc_info,
        )  # fmt: skip

    def _render(self, page: ParsedPage, verdict: Verdict, bytes_in: int, mark: bool = False) -> CleanResult:
        original_lines = [line.text for line in page.lines]
        chars_total = sum(map(len, original_lines))
        method = verdict.method or self.runner.name
        renders_html = self.config.renders_html or mark
        if not verdict.removes_something:
            return CleanResult(
                page.url, "unchanged", method, verdict.detail, text="\n".join(original_lines),
                html=page.html if renders_html else "", chars_total=chars_total, bytes_in=bytes_in,
                marked_html=mark_template(page, verdict) if mark else "",
                markdown=self._markdown(page.root, page.url),
            )  # fmt: skip
        # Before removal: it works on the page's own tree, which removal changes.
        marked = mark_template(page, verdict) if mark and verdict.clean_source is None else ""
        whole_lines = verdict.clean_source is None and not verdict.template_elements
        root: etree._Element | None = None
        if verdict.clean_source is not None:
            root = parse_html(verdict.clean_source)
            if root is None:
                root = lxml.html.document_fromstring("<html><body></body></html>")
            reveal_noscript(root)
        elif renders_html or self.config.renders_markdown or not whole_lines:
            root = remove_template(page, verdict)
        # else: whole lines go and only the text is wanted: the tree is left as it is.
        if whole_lines:
            # Whole lines were removed: the rest is the text, line breaks as they were.
            template = verdict.template_lines
            removed = [original_lines[i] for i in sorted(template) if 0 <= i < len(original_lines)]
            clean_lines = [t for i, t in enumerate(original_lines) if i not in template]
        else:
            assert root is not None
            clean_lines = [line.text for line in visible_lines(root)]
            gone = _removed_lines(original_lines, clean_lines)
            removed = [original_lines[i] for i in gone]
            if mark and verdict.clean_source is not None:
                # Source lines were cut: mark the visible lines that did not survive.
                marked = mark_template(page, Verdict(template_lines=frozenset(gone)))
        # The clean HTML only when asked for: serialising costs about half a parse.
        html = lxml.html.tostring(root, encoding="unicode") if renders_html and root is not None else ""
        return CleanResult(
            page.url,
            "cleaned",
            method,
            verdict.detail,
            text="\n".join(clean_lines),
            html=html,
            template_lines=tuple(removed),
            chars_total=chars_total,
            chars_removed=chars_total - sum(map(len, clean_lines)),
            bytes_in=bytes_in,
            bytes_removed=max(0, bytes_in - len(html.encode("utf-8"))) if renders_html else 0,
            marked_html=marked,
            markdown=self._markdown(root, page.url) if root is not None else "",
        )


def remove_template(page: ParsedPage, verdict: Verdict) -> etree._Element:
    """Remove template lines and subtrees from the page's own tree, in one pass.

    Text pieces of template lines are blanked; template subtrees are dropped;
    then every element whose visible text was all template is dropped too, so
    empty menus and footers leave no shell behind.  Ancestors of kept text
    always stay, so the structure of the content is preserved.
    """
    blank, dropped = _removal(page, verdict)
    if _tree is not None:
        _tree.blank(blank)  # the same assignments, without a Python call each
    else:
        for el, is_tail in blank:
            if is_tail:
                el.tail = None
            else:
                el.text = None
    for el in dropped:
        _drop_keep_tail(el)
    return page.root


#: The attribute that marks what was removed: ``"removed"`` on a dropped
#: element, ``"removed-text"`` on a ``<span>`` wrapped around a removed piece
#: of text whose element stays.
MARK_ATTRIBUTE = "data-detemplate"


def mark_template(page: ParsedPage, verdict: Verdict) -> str:
    """The whole page, with what :func:`remove_template` would remove marked.

    Works on a copy (the page's tree is not changed): every element removal
    drops gets ``data-detemplate="removed"``, and every removed piece of text
    outside those is wrapped in ``<span data-detemplate="removed-text">``.  So
    the page without the marked parts is the clean page.
    """
    root = page.root
    copied = copy.deepcopy(root)
    twin = dict(zip(root.iter(), copied.iter(), strict=True))
    blank, dropped = _removal(page, verdict)
    dropped_set = set(dropped)
    for el in dropped:
        twin[el].set(MARK_ATTRIBUTE, "removed")

    def inside_dropped(el: etree._Element | None) -> bool:
        while el is not None:
            if el in dropped_set:
                return True
            el = el.getparent()
        return False

    for el, is_tail in blank:
        text = el.tail if is_tail else el.text
        if not text or not text.strip() or inside_dropped(el.getparent() if is_tail else el):
            continue
        target = twin[el]
        span = etree.Element("span", {MARK_ATTRIBUTE: "removed-text"})
        span.text = xml_safe(text)  # lxml refuses control characters the parsed tree can hold
        if is_tail:
            target.tail = None
            target.addnext(span)
        else:
            target.text = None
            target.insert(0, span)
    doctype = getattr(root.getroottree().docinfo, "doctype", "")  # not in lxml's stubs
    html = lxml.html.tostring(copied, encoding="unicode")
    return f"{doctype}\n{html}" if doctype else html


def _removal(page: ParsedPage, verdict: Verdict) -> tuple[list[tuple[etree._Element, bool]], list[etree._Element]]:
    """What removal does, without doing it: the text pieces to blank and the
    outermost elements to drop (in document order).  Compiled when it can be."""
    if _tree is not None:
        body = find_body(page.root)
        if body is not None:
            return _tree.removal(  # type: ignore[no-any-return]
                body, page.lines, verdict.template_lines, verdict.template_elements
            )
    return _removal_py(page, verdict)


def _removal_py(page: ParsedPage, verdict: Verdict) -> tuple[list[tuple[etree._Element, bool]], list[etree._Element]]:
    """:func:`_removal` in Python (the reference of the compiled one, and its fallback)."""
    root = page.root
    body = find_body(root)
    kept: dict[etree._Element, int] = {}
    removed: dict[etree._Element, int] = {}
    blank: list[tuple[etree._Element, bool]] = []
    for index, line in enumerate(page.lines):
        is_template = index in verdict.template_lines
        for el, is_tail in line.slots:
            owner = el.getparent() if is_tail else el
            if owner is None:
                continue
            counts = removed if is_template else kept
            counts[owner] = counts.get(owner, 0) + 1
            if is_template:
                blank.append((el, is_tail))
    for el in verdict.template_elements:
        if el.getparent() is not None and el is not body:
            removed[el] = removed.get(el, 0) + 1 + kept.pop(el, 0)
    if body is None:
        return blank, []
    # Post-order totals: reversed pre-order visits descendants before ancestors.
    order = list(body.iter())
    subtree_kept: dict[etree._Element, int] = {}
    subtree_removed: dict[etree._Element, int] = {}
    forced = set(verdict.template_elements)
    for el in reversed(order):
        k = subtree_kept.get(el, 0) + kept.get(el, 0)
        r = subtree_removed.get(el, 0) + removed.get(el, 0)
        if el in forced:
            k, r = 0, r + k
        subtree_kept[el], subtree_removed[el] = k, r
        parent = el.getparent()
        if parent is not None and el is not body:
            subtree_kept[parent] = subtree_kept.get(parent, 0) + k
            subtree_removed[parent] = subtree_removed.get(parent, 0) + r
    dropped = []
    for el in order:
        parent = el.getparent()
        if el is body or parent is None:
            continue
        emptied = subtree_removed.get(el, 0) and not subtree_kept.get(el, 0)
        # Only the outermost emptied element is dropped; its tail stays.
        if emptied and (parent is body or not (subtree_removed.get(parent, 0) and not subtree_kept.get(parent, 0))):
            dropped.append(el)
    return blank, dropped


#: The compiled removal (``scrapy_detemplate/_tree.pyx``), or None when it is not built.
_tree = _compiled.load("scrapy_detemplate._tree")


def _drop_keep_tail(el: etree._Element) -> None:
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    previous = el.getprevious()
    if tail:
        # libxml2 keeps control characters that lxml refuses to set back: they are invisible anyway.
        if previous is not None:
            previous.tail = xml_safe((previous.tail or "") + tail)
        else:
            parent.text = xml_safe((parent.text or "") + tail)
    parent.remove(el)


def _removed_lines(original: list[str], clean: list[str]) -> list[int]:
    """Indexes of the page's lines that are not in the clean text (outside their LCS)."""
    survived = set(lcs_indexes([line_key(t) for t in original], [line_key(t) for t in clean]))
    return [i for i in range(len(original)) if i not in survived]


def _join(lines: list) -> str:  # type: ignore[type-arg]
    return "\n".join(line.text for line in lines)


#: What ``process()`` reads headers from: Scrapy's ``Headers``, a dict, or pairs; str or bytes.
HeadersLike = Mapping[Any, Any] | Iterable[tuple[Any, Any]]


def content_type_of(headers: HeadersLike | None) -> str:
    """The Content-Type in ``headers`` as text (``""`` when there is none).

    Names are matched without case, ``bytes`` are read as Latin-1 (as Scrapy
    does), and of several values the last counts (Scrapy's ``headers.get``).
    Raises ``TypeError`` for anything that is not headers.
    """
    if headers is None:
        return ""
    if isinstance(headers, (str, bytes, bytearray)):
        raise TypeError(f"headers must be a mapping or (name, value) pairs, not {type(headers).__name__}")
    try:
        pairs = list(headers.items() if isinstance(headers, Mapping) else headers)
    except (AttributeError, TypeError) as exc:
        raise TypeError(f"headers must be a mapping or (name, value) pairs, not {type(headers).__name__}") from exc
    found = ""
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"a header must be a (name, value) pair, not {type(pair).__name__}")
        name, value = pair
        if _latin1(name).strip().lower() != "content-type":
            continue
        if isinstance(value, (list, tuple)):
            value = value[-1] if value else ""
        found = _latin1(value)
    return found


def _latin1(value: object) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("latin-1")
    return value if isinstance(value, str) else str(value)


def _size(body: object) -> int:
    if isinstance(body, (bytes, bytearray, memoryview)):
        return len(bytes(body))
    if isinstance(body, str):
        return len(body.encode("utf-8", "surrogatepass"))
    return 0
