"""Markdown out: the kept content as CommonMark with GFM tables, rendered from the tree.

:func:`to_markdown` walks the lxml tree the engine already holds (the page with
its template removed) once and writes Markdown: headings with their level,
paragraphs (``<br>`` as hard breaks), ordered, unordered and nested lists,
blockquotes, ``<pre>`` as fenced code (with the language when a class names it:
``language-x``, ``lang-x``, ``highlight-x``), inline code, emphasis, tables as
GFM tables, definition lists (the term a paragraph, the definition's first
paragraph after ``": "``, as Pandoc and PHP Markdown Extra write them; plain
CommonMark reads both as paragraphs), images as ``![alt]()`` and links as their
text, or, with ``links=True``, as ``[text](url)`` and ``![alt](url)`` with the
URL made absolute against the page's.

**Words.**  The Markdown holds exactly the words of the engine's text output,
in the same order: read back by a CommonMark parser and taken as visible text
(METRICS.md rules), ``re.findall(r"\\w+", text.lower())`` gives the same list.
That is why:

* the walk follows :func:`~scrapy_detemplate._html.visible_lines`: the same
  invisible elements, a word boundary at every block element and ``<br>`` and
  nowhere else (``foo<b>bar</b>`` is one word, and stays one);
* markup never splits or joins words: emphasis is written with ``*`` only
  (never ``_``), and only where no word character touches it from outside
  (otherwise the text goes out plain); whitespace at the edges of emphasis,
  links and code spans moves outside them;
* text is escaped so that it stays text: ``\\ ` * [ ] < | ~`` always, ``_``
  unless it sits between two letters or digits, ``#`` at the start of a word,
  ``&`` before a name or number, ``- + = >`` and ``1.`` at the start of a line.
  A backslash escape is read back as the character alone;
* the image alt text is an attribute, not visible text, in the page and in the
  Markdown alike (``![alt]()``), so it adds no word; link targets neither.

**Tables.**  A table whose cells hold only inline content (lists and
paragraphs are flattened, code spans kept) becomes a GFM table: the first row
is the header, ragged rows are padded, ``colspan`` and ``rowspan`` leave empty
cells.  A table that cannot be a grid (a cell holding a table or a multi-line
``<pre>``, or text outside its cells, as layout tables have) says so
in an HTML comment (``<!-- table of 3 rows x 2 columns ... -->``) and its cells
follow in reading order, each with its own structure; a table of one cell is
its content.  A heading in a grid's cell is written in bold.

The escaping, emphasis and code span rules live in
:mod:`scrapy_detemplate._markdown_text`.

**Bad input.**  The walk recurses at most :data:`MAX_DEPTH` levels; deeper
content is written as plain paragraphs (iteratively, so a 10,000-deep tree is
fine).  A fence is always longer than any run of backticks in the code it
holds.  Nothing here raises on any tree lxml can build.

**Compiled.**  Where it was built, the walk runs compiled
(``scrapy_detemplate/_markdown.pyx``, on lxml's C API), with the same Markdown
byte for byte; the Python renderer here is its reference and its fallback
(no C compiler, or a tree holding namespaced elements or entity references).
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from lxml import etree

from scrapy_detemplate import _compiled
from scrapy_detemplate._html import BLOCK_TAGS, SKIP_TAGS, find_body
from scrapy_detemplate._markdown_text import (
    BACKTICKS,
    BR,
    EM_CLOSE,
    EM_OPEN,
    LINE_START_CHARS,
    SENTINELS,
    STRONG_CLOSE,
    STRONG_OPEN,
    code_span,
    esc,
    has_sentinel,
    indent_lines,
    line_start,
    resolve,
    wrap,
)

#: Nesting levels rendered with structure; deeper subtrees become plain paragraphs.
MAX_DEPTH = 100
#: Container nesting written at most (a list counts 2, list and item; a blockquote 1): markdown-it,
#: like other parsers, stops reading blocks nested deeper than 20; deeper lists and quotes are plain blocks.
MAX_NESTING = 14


_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_LISTS = frozenset({"ul", "ol", "menu", "dir"})
_STRONG = frozenset({"strong", "b"})
_EM = frozenset({"em", "i"})
_CODE = frozenset({"code", "kbd", "samp", "tt"})
_SECTIONS = frozenset({"thead", "tbody", "tfoot"})
#: Blocks with a Markdown form of their own, and the inline elements that are not plain text.
_STRUCTURE = frozenset({*_HEADINGS, *_LISTS, "pre", "li", "blockquote", "table", "dl", "hr", "br", "img"})
_CELLS = frozenset({"td", "th"})
#: Descendants that make a table not a grid (``pre`` only when it spans lines).
_NOT_GRID = ("table", "pre")
#: Descendants that end or hide a run of text.
_TEXT_BREAKS = (*BLOCK_TAGS, "br", *SKIP_TAGS)
_TEXT_BREAK_SET = frozenset(_TEXT_BREAKS)
_BLOCKS = tuple(BLOCK_TAGS)
_MAX_CELLS = 100_000

# Inline context flags.
_FLAT, _IN_STRONG, _IN_EM, _IN_LINK, _IN_TABLE = 1, 2, 4, 8, 16

_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang|highlight)-([A-Za-z0-9_+#.-]+)")
_URL_UNSAFE = re.compile(r"[\x00-\x20<>()\\|\x7f]")
_BLANK_LEAD = re.compile(r"^(?:[ \t]*\n)+")
_BLANK_QUOTED = re.compile(r"(?m)^> $")


def to_markdown(root: etree._Element | None, *, base_url: str = "", links: bool = False) -> str:
    """The content of ``root``'s body (or of ``root`` itself, without one) as Markdown.

    ``links``: write ``[text](url)`` and ``![alt](url)``, URLs made absolute
    against ``base_url``; by default links are their text and images ``![alt]()``.
    """
    return _to_markdown(root, base_url, links, compiled=True)


def _to_markdown_py(root: etree._Element | None, *, base_url: str = "", links: bool = False) -> str:
    """:func:`to_markdown` with the Python renderer alone (the reference of the compiled walk, and its fallback)."""
    return _to_markdown(root, base_url, links, compiled=False)


def _to_markdown(root: etree._Element | None, base_url: str, links: bool, compiled: bool) -> str:
    if root is None:
        return ""
    body = find_body(root)
    top = root if body is None else body
    # The compiled walk where it is built and reads the whole tree itself (see _markdown.plain).
    if compiled and _compiled_renderer is not None and _walk is not None and _walk.plain(top):
        renderer = _compiled_renderer(base_url, links)
    else:
        renderer = _Renderer(base_url, links)
    renderer.walk(top, 0)
    renderer.flush()
    return "\n\n".join(text for _, text in renderer.blocks)


class _Renderer:
    """The walk's state: finished blocks (``(kind, markdown)``) and the paragraph being written."""

    def __init__(self, base_url: str, links: bool) -> None:
        self.base_url = base_url
        self.links = links
        self.blocks: list[tuple[str, str]] = []
        self.buf: list[str] = []
        self.nesting = 0  # containers (lists, quotes) open around the current block
        self.formatting = _STRONG | _EM | _CODE | ({"a"} if links else set())
        #: Tags :meth:`walk` hands to :meth:`node`.
        self.special = self.formatting | _STRUCTURE

    # -- block context ------------------------------------------------------

    def walk(self, el: etree._Element, depth: int) -> None:
        """``el``'s text and children in block context (``el`` itself already dispatched).

        The hot loop: plain inline elements and plain blocks (``div``, ``p``...)
        are handled here; the rest goes to :meth:`node`.  ``flush`` empties the
        buffer in place, so ``buf`` stays the paragraph being written.
        """
        buf = self.buf
        text = el.text
        # Whitespace before a paragraph's first word is dropped: fewer flushes of nothing.
        if text and (buf or not text.isspace()):
            buf.append(esc(text))
        depth += 1
        special = self.special
        for child in el:
            tag = child.tag
            if tag.__class__ is str and tag not in SKIP_TAGS:
                if tag in special or depth > MAX_DEPTH:
                    self.node(child, tag, depth)
                elif tag in BLOCK_TAGS:
                    if buf:
                        self.flush()
                    self.walk(child, depth)
                    if buf:
                        self.flush()
                else:
                    self.walk(child, depth)
            text = child.tail
            if text and (buf or not text.isspace()):
                buf.append(esc(text))

    def node(self, el: etree._Element, tag: str, depth: int) -> None:
        """One element in block context, ``depth`` levels down."""
        if tag == "br":
            self.buf.append(BR)
            return
        if tag == "img":
            self.buf.append(self.image(el))
            return
        if depth > MAX_DEPTH:
            self.plain(el, tag)
            return
        if tag in BLOCK_TAGS:
            self.flush()
            level = _HEADINGS.get(tag)
            if level:
                text = self.inline_block(el, _FLAT, depth)
                if text:
                    self.blocks.append(("h", "#" * level + " " + text))
            elif tag == "pre":
                self.pre(el)
            elif tag in _LISTS or tag == "li":
                if self.nesting + 2 > MAX_NESTING:
                    self.walk(el, depth)  # too deep for a reader: its items as plain blocks
                elif tag == "li":
                    self.nesting += 2
                    self.list_items([self.frame(el, depth)], False, 1)
                    self.nesting -= 2
                else:
                    self.nesting += 2
                    self.list_block(el, depth)
                    self.nesting -= 2
            elif tag == "blockquote":
                if self.nesting + 1 > MAX_NESTING:
                    self.walk(el, depth)
                else:
                    self.nesting += 1
                    self.quote(el, depth)
                    self.nesting -= 1
            elif tag == "table":
                self.table(el, depth)
            elif tag == "dl":
                self.definitions(el, depth)
            elif tag == "hr":
                self.blocks.append(("hr", "---"))
            else:
                self.walk(el, depth)
            self.flush()
            return
        if tag in self.formatting and (not len(el) or not _has_descendant(el, BLOCK_TAGS, _BLOCKS)):
            self.buf.append(self.inline(el, tag, 0, depth))
            return
        self.walk(el, depth)  # inline element (or formatting around blocks): its content, no markup

    def flush(self) -> None:
        """Finish the paragraph being written (if it has any text)."""
        buf = self.buf
        if not buf:
            return
        text = "".join(buf)
        buf.clear()
        if BR in text or STRONG_OPEN in text or EM_OPEN in text:
            lines = [line_start(" ".join(line.split())) for line in resolve(text).split(BR)]
            text = "\\\n".join(line for line in lines if line)
        else:  # one line, no emphasis: the common case, kept cheap
            text = " ".join(text.split())
            if text and text[0] in LINE_START_CHARS:
                text = line_start(text)
        if text:
            self.blocks.append(("p", text))

    def frame(self, el: etree._Element, depth: int) -> list[tuple[str, str]]:
        """``el``'s content rendered as blocks of their own."""
        saved = self.blocks, self.buf
        self.blocks, self.buf = [], []
        self.walk(el, depth)
        self.flush()
        out = self.blocks
        self.blocks, self.buf = saved
        return out

    def plain(self, el: etree._Element, tag: str) -> None:
        """Past :data:`MAX_DEPTH`: ``el``'s text as paragraphs, one per line of the text output."""
        block = tag in BLOCK_TAGS
        if block:
            self.flush()
        for i, line in enumerate(_text_of(el, "\n").split("\n")):
            if i:
                self.flush()
            self.buf.append(esc(line))
        if block:
            self.flush()

    # -- blocks -----------------------------------------------------------------

    def pre(self, el: etree._Element) -> None:
        code = _BLANK_LEAD.sub("", _text_of(el, "\n").replace("\r\n", "\n").replace("\r", "\n")).rstrip()
        if not code.strip():
            return
        runs = BACKTICKS.findall(code)
        fence = "`" * max(3, 1 + max(map(len, runs), default=0))
        self.blocks.append(("code", f"{fence}{_language(el)}\n{code}\n{fence}"))

    def list_block(self, el: etree._Element, depth: int) -> None:
        """A list: each ``<li>`` an item; a list right inside the list joins the item before it
        (or, before any item, stands on its own); other content between items is an item of its own."""
        saved = self.blocks, self.buf
        items: list[list[tuple[str, str]]] = []
        before: list[tuple[str, str]] = []  # lists found before the first item
        self.blocks, self.buf = [], []

        def close_stray() -> None:
            self.flush()
            if self.blocks:
                items.append(self.blocks)
            self.blocks, self.buf = [], []

        if el.text:
            self.buf.append(esc(el.text))
        for child in el:
            tag = child.tag
            if tag == "li" and depth < MAX_DEPTH:
                close_stray()
                items.append(self.frame(child, depth + 1))
            elif tag in _LISTS and not self.blocks and not "".join(self.buf).strip():
                self.buf = []
                (items[-1] if items else before).extend(self.frame_of(child, depth + 1))
            elif isinstance(tag, str) and tag not in SKIP_TAGS:
                self.node(child, tag, depth + 1)
            if child.tail:
                self.buf.append(esc(child.tail))
        close_stray()
        self.blocks, self.buf = saved
        self.blocks.extend(before)
        start = _int(el.get("start"), 1, 0, 999_999_999) if el.tag == "ol" else 1
        self.list_items(items, el.tag == "ol", start)

    def frame_of(self, el: etree._Element, depth: int) -> list[tuple[str, str]]:
        """``el`` itself (not only its content) rendered as blocks of their own."""
        saved = self.blocks, self.buf
        self.blocks, self.buf = [], []
        self.node(el, el.tag, depth)  # type: ignore[arg-type]
        self.flush()
        out = self.blocks
        self.blocks, self.buf = saved
        return out

    def list_items(self, items: list[list[tuple[str, str]]], ordered: bool, start: int) -> None:
        lines: list[str] = []
        number = start
        for blocks in items:
            if not blocks:
                continue
            marker = f"{min(number, 999_999_999)}." if ordered else "-"
            number += 1
            indent = " " * (len(marker) + 1)
            text = blocks[0][1]
            for (kind, block), (prev_kind, _) in zip(blocks[1:], blocks, strict=False):
                # A list right after a paragraph stays tight; other blocks need a blank line.
                text += ("\n" if kind == "list" and prev_kind == "p" else "\n\n") + block
            lines.append(f"{marker} " + indent_lines(text, indent))
        if lines:
            self.blocks.append(("list", "\n".join(lines)))

    def quote(self, el: etree._Element, depth: int) -> None:
        blocks = self.frame(el, depth)
        if blocks:
            text = "\n\n".join(block for _, block in blocks)
            self.blocks.append(("quote", _BLANK_QUOTED.sub(">", "> " + text.replace("\n", "\n> "))))

    def definitions(self, el: etree._Element, depth: int) -> None:
        """``<dl>``: a term is a paragraph; a definition's blocks follow, its first paragraph after ``": "``."""
        if el.text:
            self.buf.append(esc(el.text))
        for child in el:
            tag = child.tag
            if tag in ("dt", "dd", "div"):
                self.flush()
                if tag == "dt":
                    text = self.inline_block(child, _FLAT, depth + 1)
                    if text:
                        self.blocks.append(("p", line_start(text)))
                elif tag == "dd":
                    blocks = self.frame(child, depth + 1)
                    if blocks and blocks[0][0] == "p":
                        blocks[0] = ("p", ": " + blocks[0][1])
                    self.blocks.extend(blocks)
                elif depth + 1 > MAX_DEPTH:  # past the bound, as everywhere: plain paragraphs
                    self.node(child, tag, depth + 1)
                else:  # a <div> grouping terms and definitions
                    self.definitions(child, depth + 1)
            elif isinstance(tag, str) and tag not in SKIP_TAGS:
                self.node(child, tag, depth + 1)
            if child.tail:
                self.buf.append(esc(child.tail))
        self.flush()

    def table(self, el: etree._Element, depth: int) -> None:
        rows, grid_ok = _table_rows(el)
        rows = [cells for cells in rows if cells]
        cells = sum(len(cells) for cells in rows)
        if grid_ok:
            for hit in el.iterdescendants(*_NOT_GRID):
                if hit.tag != "pre" or "\n" in _text_of(hit, "\n").strip():
                    grid_ok = False
                    break
        columns = max((sum(_int(c.get("colspan"), 1, 1, 1000) for c in cells) for cells in rows), default=0)
        if grid_ok and len(rows) * columns > _MAX_CELLS:
            grid_ok = False
        if not grid_ok or cells < 2:
            if cells >= 2:
                self.blocks.append(
                    ("html", f"<!-- table of {len(rows)} rows x {columns} columns, not a grid: its cells in order -->")
                )
            self.walk(el, depth)
            self.flush()
            return
        for child in el:
            if child.tag == "caption":
                text = self.inline_block(child, _FLAT, depth + 1)
                if text:
                    self.blocks.append(("p", line_start(text)))
        grid = self.grid(rows, depth)
        width = max(map(len, grid))
        lines = []
        for i, row in enumerate(grid):
            row = row + [""] * (width - len(row))
            lines.append("| " + " | ".join(row) + " |")
            if i == 0:
                lines.append("|" + " --- |" * width)
        self.blocks.append(("table", "\n".join(lines)))

    def grid(self, rows: list[list[etree._Element]], depth: int) -> list[list[str]]:
        """Cells placed on a grid: a spanning cell's other slots are empty cells."""
        grid: list[list[str]] = []
        covered: dict[int, int] = {}  # column -> rows a rowspan still covers
        for index, cells in enumerate(rows):
            row: list[str] = []

            def skip_covered(row: list[str] = row) -> None:
                while covered.get(len(row), 0) > 0:
                    covered[len(row)] -= 1
                    row.append("")

            for cell in cells:
                skip_covered()
                text = self.inline_block(cell, _FLAT | _IN_TABLE, depth + 1)
                colspan = _int(cell.get("colspan"), 1, 1, 1000)
                rowspan = _int(cell.get("rowspan"), 1, 1, len(rows) - index)
                for k in range(colspan):
                    if rowspan > 1:
                        covered[len(row)] = rowspan - 1
                    row.append("" if k else text)
            skip_covered()
            for column in [c for c in covered if c > len(row) and covered[c] > 0]:
                covered[column] -= 1
            grid.append(row)
        return grid

    # -- inline context -------------------------------------------------------------

    def inline_block(self, el: etree._Element, flags: int, depth: int) -> str:
        """``el``'s content on one line (blocks and ``<br>`` as spaces): headings, terms, cells."""
        return " ".join(resolve(self.content(el, flags | _FLAT, depth)).split())

    def content(self, el: etree._Element, flags: int, depth: int) -> str:
        parts = [esc(el.text)] if el.text else []
        for child in el:
            tag = child.tag
            if isinstance(tag, str) and tag not in SKIP_TAGS:
                parts.append(self.inline(child, tag, flags, depth + 1))
            if child.tail:
                parts.append(esc(child.tail))
        return "".join(parts)

    def inline(self, el: etree._Element, tag: str, flags: int, depth: int) -> str:
        """One element in inline context, with its markup."""
        if tag == "br":
            return " " if flags & _FLAT else BR
        if tag == "img":
            return self.image(el)
        if depth > MAX_DEPTH:
            return esc(_text_of(el, " "))
        if tag in BLOCK_TAGS:  # only in flat context: a word boundary each side
            if tag == "pre":
                return " " + code_span(_text_of(el, " "), bool(flags & _IN_TABLE)) + " "
            if tag in _HEADINGS and not flags & _IN_STRONG:  # a heading in a cell: bold
                return " " + STRONG_OPEN + self.content(el, flags | _IN_STRONG, depth) + STRONG_CLOSE + " "
            return " " + self.content(el, flags, depth) + " "
        if tag in _STRONG and not flags & _IN_STRONG:
            return STRONG_OPEN + self.content(el, flags | _IN_STRONG, depth) + STRONG_CLOSE
        if tag in _EM and not flags & _IN_EM:
            return EM_OPEN + self.content(el, flags | _IN_EM, depth) + EM_CLOSE
        if tag in _CODE:
            return code_span(_text_of(el, " "), bool(flags & _IN_TABLE))
        if tag == "a" and self.links and not flags & _IN_LINK:
            inner = self.content(el, flags | _IN_LINK, depth)
            href = (el.get("href") or "").strip()
            if not href or href.startswith("#") or href.lower().startswith(("javascript:", "data:")):
                return inner
            return wrap("[", inner, "](" + self.url(href) + ")")
        return self.content(el, flags, depth)

    def image(self, el: etree._Element) -> str:
        alt = esc(" ".join((el.get("alt") or "").split()))
        src = (el.get("src") or "").strip()
        if self.links and src and not src.lower().startswith("data:"):
            return f"![{alt}]({self.url(src)})"
        return f"![{alt}]()" if alt else ""

    def url(self, href: str) -> str:
        try:
            url = urljoin(self.base_url, href) if self.base_url else href
        except ValueError:  # e.g. a malformed IPv6 host
            url = href
        return _URL_UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", url)


# -- helpers ------------------------------------------------------------------------


def _text_of(el: etree._Element, sep: str) -> str:
    """The visible text inside ``el`` (not its tail), ``sep`` at every block boundary and ``<br>``."""
    if not len(el):
        text = el.text or ""
        return SENTINELS.sub("\ufffd", text) if has_sentinel(text) else text
    if not _has_descendant(el, _TEXT_BREAK_SET, _TEXT_BREAKS):
        text = etree.tostring(el, method="text", encoding="unicode", with_tail=False)
        return SENTINELS.sub("\ufffd", text) if has_sentinel(text) else text
    parts: list[str] = []
    stack: list[tuple[etree._Element, bool]] = [(el, False)]
    while stack:
        node, leaving = stack.pop()
        tag = node.tag
        if leaving:
            if tag in BLOCK_TAGS and not (parts and parts[-1].endswith(sep)):
                parts.append(sep)
        elif isinstance(tag, str) and tag not in SKIP_TAGS:
            if tag == "br":
                parts.append(sep)
            else:
                if tag in BLOCK_TAGS and node is not el and not (parts and parts[-1].endswith(sep)):
                    parts.append(sep)
                if node.text:
                    parts.append(node.text)
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node))
                continue
        if node is not el and node.tail:
            parts.append(node.tail)
    if el.tag in BLOCK_TAGS and parts and parts[-1] == sep:
        parts.pop()  # el's own end: the caller puts the boundary there
    text = "".join(parts)
    return SENTINELS.sub("\ufffd", text) if has_sentinel(text) else text


def _has_descendant(el: etree._Element, tags: frozenset[str], tag_tuple: tuple[str, ...]) -> bool:
    """Whether an element below ``el`` has one of ``tags``.

    A look at the first few descendants in Python, then lxml's own tag filter
    for large subtrees (it costs tens of microseconds to set up for this many
    tags, more than small subtrees take in Python).
    """
    if not len(el):
        return False
    for count, child in enumerate(el.iterdescendants()):
        if child.tag in tags:
            return True
        if count == 24:
            return next(el.iterdescendants(*tag_tuple), None) is not None
    return False


def _language(pre: etree._Element) -> str:
    """The language a class names on the ``<pre>``, its ``<code>``, or the two elements around it."""
    candidates = [pre]
    code = next(iter(pre), None)
    if code is not None and code.tag == "code":
        candidates.append(code)
    parent = pre.getparent()
    if parent is not None:
        candidates.append(parent)
        grandparent = parent.getparent()
        if grandparent is not None:
            candidates.append(grandparent)
    for el in candidates:
        match = _LANGUAGE.search(el.get("class") or "")
        if match:
            name = match.group(1).removeprefix("source-")
            return "" if name in ("default", "none") else name
    return ""


def _table_rows(table: etree._Element) -> tuple[list[list[etree._Element]], bool]:
    """The table's own rows (its cells, in document order), and False when text stands outside its cells."""
    rows: list[list[etree._Element]] = []
    grid_ok = not (table.text or "").strip()
    for child in table:
        if (child.tail or "").strip():
            grid_ok = False
        tag = child.tag
        if tag in _SECTIONS:
            grid_ok = grid_ok and not (child.text or "").strip()
            for row in child:
                if (row.tail or "").strip():
                    grid_ok = False
                if row.tag == "tr":
                    grid_ok = _row(row, rows) and grid_ok
                elif _visible(row):
                    grid_ok = False
        elif tag == "tr":
            grid_ok = _row(child, rows) and grid_ok
        elif tag not in ("caption", "colgroup", "col") and _visible(child):
            grid_ok = False
    return rows, grid_ok


def _row(tr: etree._Element, rows: list[list[etree._Element]]) -> bool:
    """Append ``tr``'s cells to ``rows``; False when it holds text outside them."""
    ok = not (tr.text or "").strip()
    cells = []
    for cell in tr:
        if cell.tag in _CELLS:
            cells.append(cell)
        elif _visible(cell):
            ok = False
        if (cell.tail or "").strip():
            ok = False
    rows.append(cells)
    return ok


def _visible(el: etree._Element) -> bool:
    """Whether an element outside the cells would show text (conservatively: any text but in skipped tags)."""
    return isinstance(el.tag, str) and el.tag not in SKIP_TAGS and _has_text(el)


def _has_text(el: etree._Element) -> bool:
    return any(t.strip() for t in el.itertext())


def _int(value: str | None, default: int, low: int, high: int) -> int:
    try:
        number = int((value or "").strip())
    except ValueError:
        return default
    return min(max(number, low), high)


#: The compiled walk (``scrapy_detemplate/_markdown.pyx``), or None when it is not built.
_walk = _compiled.load("scrapy_detemplate._markdown")
#: The renderer with the compiled walk's methods in front of the Python ones it does not replace
#: (``quote``, ``plain``, ``url``), which call back into them; None without it.
_compiled_renderer: type[_Renderer] | None = (
    None if _walk is None else type("_CompiledRenderer", (_walk.Walk, _Renderer), {})
)
