# cython: language_level=3, boundscheck=False, wraparound=False
"""The Markdown walk compiled: :class:`Walk`, the base of the compiled renderer.

:mod:`scrapy_detemplate.markdown` builds its compiled renderer as
``class _CompiledRenderer(Walk, _Renderer)``.  The methods here do what the
Python methods of ``_Renderer`` do, with the same Markdown, byte for byte (the
tests and ``bench/check_compiled_markdown.py`` hold them equal): the block walk
(``walk``, ``node``, ``flush``, ``frame``), inline content (``inline_block``,
``content``, ``inline``, ``image``), ``<pre>`` and its language, lists and
their items, definition lists, tables and their grid, and, as functions, the
text helpers of :mod:`scrapy_detemplate._markdown_text` (``esc``, ``code_span``,
``resolve``) and ``markdown._text_of``.  Quotes (``quote``), what lies past the
depth bound (``plain``) and link targets (``url``) stay the Python methods,
called with an element proxy; they call back into these.

The walk reads libxml2's nodes through lxml's public C API (as ``_tree.pyx``
does) instead of making an element proxy and a string for every node and text:
tags are classified once per name, a text becomes a string only when it shows,
and what needs escaping is looked for on its UTF-8 bytes first.

:func:`plain` says whether a subtree holds only what this walk reads itself
(elements without a namespace, text, comments, processing instructions); the
renderer runs the Python renderer on any other tree.

Optional: when this module was not built (no C compiler at install time) or
was built against another lxml, the Python renderer runs.
"""

from cpython.unicode cimport PyUnicode_DecodeUTF8
from cpython.unicode cimport Py_UNICODE_ISSPACE, PyUnicode_FromKindAndData, PyUnicode_4BYTE_KIND
from libc.stdlib cimport free
from libc.string cimport memset, strcmp

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlNode

from scrapy_detemplate._nodes cimport (
    Buf, cstrlen, grow, next_outside, parent_element, put, put_run, run_has_text, space, text_or_skip,
)

cetree.import_lxml__etree()

from lxml import etree as _etree

#: The lxml this module was compiled against (checked by ``_compiled.load``).
LXML_VERSION = _etree.LXML_VERSION

# What an element is to the walk (from its tag; see _classify).  Codes from _H1 on are blocks.
cdef enum:
    _SKIP = 0  # a skipped tag, a comment or a processing instruction: only the tail shows
    _INLINE = 1  # any other inline element
    _BR = 2
    _IMG = 3
    _STRONG = 4
    _EM = 5
    _CODE = 6
    _A = 7
    _H1 = 8  # _H1 .. _H1 + 5: h1 .. h6
    _PRE = 14
    _LIST = 15
    _LI = 16
    _QUOTE = 17
    _TABLE = 18
    _DL = 19
    _HR = 20
    _BLOCK = 21  # any other block
    _CACHE = 128  # tag names kept per walk (half of it filled at most)

cdef inline bint _is_block(int kind) noexcept nogil:
    return kind >= _H1

# Set from scrapy_detemplate.markdown and _markdown_text at first use (they import this module).
cdef bint _ready = False
cdef frozenset _SKIP_TAGS, _BLOCK_TAGS
cdef dict _HEADINGS
cdef frozenset _LISTS, _STRONG_TAGS, _EM_TAGS, _CODE_TAGS
cdef int _MAX_DEPTH, _MAX_NESTING, _MAX_CELLS, _FLAT, _IN_STRONG, _IN_EM, _IN_LINK, _IN_TABLE
cdef str BR, STRONG_OPEN, STRONG_CLOSE, EM_OPEN, EM_CLOSE
cdef frozenset _LINE_START_CHARS
cdef object _line_start, _indent_lines, _wrap, _SENTINELS, _LANGUAGE, _BLANK_LEAD


cdef int _init() except -1:
    global _ready, _SKIP_TAGS, _BLOCK_TAGS, _HEADINGS, _LISTS, _STRONG_TAGS, _EM_TAGS, _CODE_TAGS
    global _MAX_DEPTH, _MAX_NESTING, _MAX_CELLS, _FLAT, _IN_STRONG, _IN_EM, _IN_LINK, _IN_TABLE
    global BR, STRONG_OPEN, STRONG_CLOSE, EM_OPEN, EM_CLOSE, _LINE_START_CHARS
    global _line_start, _indent_lines, _wrap, _SENTINELS, _LANGUAGE, _BLANK_LEAD
    if _ready:
        return 0
    from scrapy_detemplate import _markdown_text as text, markdown as md
    _SKIP_TAGS, _BLOCK_TAGS = md.SKIP_TAGS, md.BLOCK_TAGS
    _HEADINGS, _LISTS, _STRONG_TAGS, _EM_TAGS, _CODE_TAGS = md._HEADINGS, md._LISTS, md._STRONG, md._EM, md._CODE
    _MAX_DEPTH, _MAX_NESTING, _MAX_CELLS = md.MAX_DEPTH, md.MAX_NESTING, md._MAX_CELLS
    _FLAT, _IN_STRONG, _IN_EM, _IN_LINK, _IN_TABLE = md._FLAT, md._IN_STRONG, md._IN_EM, md._IN_LINK, md._IN_TABLE
    BR, STRONG_OPEN, STRONG_CLOSE, EM_OPEN, EM_CLOSE = (
        text.BR, text.STRONG_OPEN, text.STRONG_CLOSE, text.EM_OPEN, text.EM_CLOSE
    )
    _LINE_START_CHARS = text.LINE_START_CHARS
    _line_start, _indent_lines, _wrap = text.line_start, text.indent_lines, text.wrap
    _LANGUAGE, _BLANK_LEAD = md._LANGUAGE, md._BLANK_LEAD
    _SENTINELS = text.SENTINELS
    _ready = True
    return 0


cdef int _classify(str tag) except -1:
    if tag in _SKIP_TAGS:
        return _SKIP
    if tag == "br":
        return _BR
    if tag == "img":
        return _IMG
    if tag in _STRONG_TAGS:
        return _STRONG
    if tag in _EM_TAGS:
        return _EM
    if tag in _CODE_TAGS:
        return _CODE
    if tag == "a":
        return _A
    level = _HEADINGS.get(tag)
    if level:
        return _H1 + <int> level - 1
    if tag == "pre":
        return _PRE
    if tag in _LISTS:
        return _LIST
    if tag == "li":
        return _LI
    if tag == "blockquote":
        return _QUOTE
    if tag == "table":
        return _TABLE
    if tag == "dl":
        return _DL
    if tag == "hr":
        return _HR
    return _BLOCK if tag in _BLOCK_TAGS else _INLINE


# -- text as lxml reads it, on libxml2's UTF-8 ------------------------------------------------------



cdef inline xmlNode* _next_item(xmlNode* c) noexcept nogil:
    """``c`` or the first sibling after it that lxml iterates (``_isElement``), or NULL."""
    while c is not NULL and not cetree._isElement(c):
        c = c.next
    return c


cdef bint _needs_escape(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Whether ``esc`` may change the text: one of ``\\ ` * _ [ ] < | ~ & #`` or a sentinel
    (U+FDD0..U+FDD4, ``EF B7 90``..``EF B7 94`` in UTF-8)."""
    cdef Py_ssize_t i
    cdef unsigned char b
    for i in range(n):
        b = s[i]
        if (b == 92 or b == 96 or b == 42 or b == 95 or b == 91 or b == 93 or b == 60 or b == 124 or b == 126
                or b == 38 or b == 35):
            return True
        if b == 0xEF and i + 2 < n and s[i + 1] == 0xB7 and 0x90 <= s[i + 2] <= 0x94:
            return True
    return False


cdef bint _has_sentinel(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n - 2):
        if s[i] == 0xEF and s[i + 1] == 0xB7 and 0x90 <= s[i + 2] <= 0x94:
            return True
    return False


cdef bint _all_space(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """``str.isspace()`` on non-empty UTF-8 text."""
    cdef Py_ssize_t i = 0, w
    while i < n:
        w = space(s + i, n - i)
        if not w:
            return False
        i += w
    return True




# -- what the compiled walk can read ---------------------------------------------------------------

def plain(cetree._Element top):
    """Whether ``top`` and everything below it is what :class:`Walk` reads itself: elements
    without a namespace, text, comments and processing instructions (nothing else lxml can
    hold: entity references, XInclude markers, namespaced tags)."""
    cdef xmlNode* c = top._c_node
    cdef xmlNode* start = c
    cdef int t
    if c.type != tree.XML_ELEMENT_NODE:
        return False
    while True:
        t = c.type
        if t == tree.XML_ELEMENT_NODE:
            if c.ns is not NULL:
                return False
            if c.children is not NULL:
                c = c.children
                continue
        elif not (t == tree.XML_TEXT_NODE or t == tree.XML_CDATA_SECTION_NODE or t == tree.XML_COMMENT_NODE
                  or t == tree.XML_PI_NODE):
            return False
        while c is not start and c.next is NULL:
            c = c.parent
        if c is start:
            return True
        c = c.next


# -- the walk ----------------------------------------------------------------------------------------

cdef class Walk:
    """The renderer's state (the same attributes as the Python ``_Renderer``) and its hot methods."""

    cdef public object base_url
    cdef public bint links
    cdef public list blocks
    cdef public list buf
    cdef public int nesting
    cdef public object formatting
    cdef public object special
    cdef cetree._Document doc
    cdef Buf text  # a text being read
    cdef const void* names[_CACHE]
    cdef int kinds[_CACHE]
    cdef int used

    def __cinit__(self, *args, **kwargs):
        _init()
        memset(self.names, 0, sizeof(self.names))

    def __dealloc__(self):
        free(self.text.data)

    cdef int kind(self, xmlNode* c) except -1:
        """What ``c`` is to the walk; tag names are interned by libxml2's dictionary, so the
        answer is kept per name pointer."""
        cdef size_t h
        cdef int k
        if c.type != tree.XML_ELEMENT_NODE:
            return _SKIP
        h = ((<size_t> c.name) >> 4) & (_CACHE - 1)
        while self.names[h] is not NULL:
            if self.names[h] == <const void*> c.name:
                return self.kinds[h]
            h = (h + 1) & (_CACHE - 1)
        k = _classify(PyUnicode_DecodeUTF8(<const char*> c.name, cstrlen(<const unsigned char*> c.name), NULL))
        if self.used < _CACHE // 2:
            self.names[h], self.kinds[h] = <const void*> c.name, k
            self.used += 1
        return k

    cdef inline object proxy(self, xmlNode* c):
        return cetree.elementFactory(self.doc, c)

    cdef object piece(self, xmlNode* first, bint blank_too):
        """The escaped text of the run of text nodes from ``first``, or None when it is empty
        (or, unless ``blank_too``, only white space)."""
        cdef xmlNode* c = text_or_skip(first)
        cdef xmlNode* other
        cdef const unsigned char* s
        cdef Py_ssize_t n
        if c is NULL:
            return None
        other = text_or_skip(c.next)
        if other is NULL:  # one text node: read in place
            if c.content is NULL:
                return None
            s = <const unsigned char*> c.content
            n = cstrlen(s)
        else:
            self.text.len = 0
            put_run(&self.text, c)
            s, n = self.text.data, self.text.len
        if n == 0 or (not blank_too and _all_space(s, n)):
            return None
        text = PyUnicode_DecodeUTF8(<const char*> s, n, NULL)
        return _escape(text) if _needs_escape(s, n) else text

    # -- block context -------------------------------------------------------------------------

    def walk(self, cetree._Element el, int depth):
        self.doc = el._doc
        self._walk(el._c_node, depth)

    cdef int _walk(self, xmlNode* el, int depth) except -1:
        cdef list buf = self.buf
        cdef xmlNode* child
        cdef int kind
        text = self.piece(el.children, len(buf) > 0)
        if text is not None:
            buf.append(text)
        depth += 1
        child = _next_item(el.children)
        while child is not NULL:
            kind = self.kind(child)
            if kind != _SKIP:
                if depth > _MAX_DEPTH or not (kind == _INLINE or kind == _BLOCK or (kind == _A and not self.links)):
                    self._node(child, kind, depth)
                elif kind == _BLOCK:
                    if buf:
                        self._flush()
                    self._walk(child, depth)
                    if buf:
                        self._flush()
                else:
                    self._walk(child, depth)
            text = self.piece(child.next, len(buf) > 0)
            if text is not None:
                buf.append(text)
            child = _next_item(child.next)
        return 0

    def node(self, cetree._Element el, tag, int depth):
        self.doc = el._doc
        self._node(el._c_node, self.kind(el._c_node), depth)

    cdef int _node(self, xmlNode* el, int kind, int depth) except -1:
        cdef object me = self  # the Python methods of the renderer (lists, tables...)
        if kind == _BR:
            self.buf.append(BR)
            return 0
        if kind == _IMG:
            self.buf.append(self._image(el))
            return 0
        if depth > _MAX_DEPTH:
            proxy = self.proxy(el)
            me.plain(proxy, proxy.tag)
            return 0
        if _is_block(kind):
            self._flush()
            if _H1 <= kind < _H1 + 6:
                text = self._inline_block(el, _FLAT, depth)
                if text:
                    self.blocks.append(("h", "#" * (kind - _H1 + 1) + " " + text))
            elif kind == _PRE:
                self._pre(el)
            elif kind == _LIST or kind == _LI:
                if self.nesting + 2 > _MAX_NESTING:
                    self._walk(el, depth)  # too deep for a reader: its items as plain blocks
                elif kind == _LI:
                    self.nesting += 2
                    self._list_items([self._frame(el, depth)], False, 1)
                    self.nesting -= 2
                else:
                    self.nesting += 2
                    self._list_block(el, depth)
                    self.nesting -= 2
            elif kind == _QUOTE:
                if self.nesting + 1 > _MAX_NESTING:
                    self._walk(el, depth)
                else:
                    self.nesting += 1
                    me.quote(self.proxy(el), depth)
                    self.nesting -= 1
            elif kind == _TABLE:
                self._table(el, depth)
            elif kind == _DL:
                self._definitions(el, depth)
            elif kind == _HR:
                self.blocks.append(("hr", "---"))
            else:
                self._walk(el, depth)
            self._flush()
            return 0
        if (_STRONG <= kind <= _CODE or (kind == _A and self.links)) and not _has_block_below(self, el):
            self.buf.append(self._inline(el, kind, 0, depth))
            return 0
        self._walk(el, depth)  # inline element (or formatting around blocks): its content, no markup
        return 0

    def flush(self):
        self._flush()

    cdef int _flush(self) except -1:
        cdef list buf = self.buf
        cdef str text
        if not buf:
            return 0
        text = "".join(buf)
        del buf[:]
        if BR in text or STRONG_OPEN in text or EM_OPEN in text:
            lines = [_line_start(" ".join(line.split())) for line in _resolve_of(text).split(BR)]
            text = "\\\n".join([line for line in lines if line])
        else:  # one line, no emphasis: the common case, kept cheap
            text = " ".join(text.split())
            if text and text[0] in _LINE_START_CHARS:
                text = _line_start(text)
        if text:
            self.blocks.append(("p", text))
        return 0

    def frame(self, cetree._Element el, int depth):
        self.doc = el._doc
        return self._frame(el._c_node, depth)

    cdef list _frame(self, xmlNode* el, int depth):
        cdef list saved_blocks = self.blocks, saved_buf = self.buf, out
        self.blocks, self.buf = [], []
        self._walk(el, depth)
        self._flush()
        out = self.blocks
        self.blocks, self.buf = saved_blocks, saved_buf
        return out

    # -- blocks --------------------------------------------------------------------------------------

    cdef int _pre(self, xmlNode* el) except -1:
        """``_Renderer.pre``: fenced code, longer than any run of backticks in it."""
        cdef str code = self.text_of(el, 10)
        if "\r" in code:
            code = code.replace("\r\n", "\n").replace("\r", "\n")
        if code and (code[0] == " " or code[0] == "\t" or code[0] == "\n"):
            code = _BLANK_LEAD.sub("", code)
        code = code.rstrip()
        if not code:  # rstrip took all of it: nothing but white space
            return 0
        fence = "`" * max(3, 1 + _longest_ticks(code))
        self.blocks.append(("code", f"{fence}{_language(self, el)}\n{code}\n{fence}"))
        return 0

    cdef list _frame_of(self, xmlNode* el, int kind, int depth):
        """``el`` itself (not only its content) rendered as blocks of their own."""
        cdef list saved_blocks = self.blocks, saved_buf = self.buf, out
        self.blocks, self.buf = [], []
        self._node(el, kind, depth)
        self._flush()
        out = self.blocks
        self.blocks, self.buf = saved_blocks, saved_buf
        return out

    cdef int _close_stray(self, list items) except -1:
        self._flush()
        if self.blocks:
            items.append(self.blocks)
        self.blocks, self.buf = [], []
        return 0

    cdef int _list_block(self, xmlNode* el, int depth) except -1:
        """``_Renderer.list_block``: each ``<li>`` an item; a list right inside the list joins the item
        before it (or, before any item, stands on its own); other content between items is an item."""
        cdef list saved_blocks = self.blocks, saved_buf = self.buf
        cdef list items = [], before = []
        cdef xmlNode* child
        cdef int kind
        cdef bint ordered = strcmp(<const char*> el.name, "ol") == 0
        self.blocks, self.buf = [], []
        text = self.piece(el.children, True)
        if text is not None:
            self.buf.append(text)
        child = _next_item(el.children)
        while child is not NULL:
            kind = self.kind(child)
            if kind == _LI and depth < _MAX_DEPTH:
                self._close_stray(items)
                items.append(self._frame(child, depth + 1))
            elif kind == _LIST and not self.blocks and not "".join(self.buf).strip():
                self.buf = []
                (items[len(items) - 1] if items else before).extend(self._frame_of(child, kind, depth + 1))
            elif kind != _SKIP:
                self._node(child, kind, depth + 1)
            text = self.piece(child.next, True)
            if text is not None:
                self.buf.append(text)
            child = _next_item(child.next)
        self._close_stray(items)
        self.blocks, self.buf = saved_blocks, saved_buf
        self.blocks.extend(before)
        start = _int_attr(self, el, b"start", 1, 0, 999_999_999) if ordered else 1
        self._list_items(items, ordered, start)
        return 0

    cdef int _list_items(self, list items, bint ordered, long start) except -1:
        """``_Renderer.list_items``: the items (lists of blocks) as one list block."""
        cdef list lines = [], blocks
        cdef long number = start
        cdef Py_ssize_t k
        cdef str text, marker
        for blocks in items:
            if not blocks:
                continue
            marker = f"{min(number, 999_999_999)}." if ordered else "-"
            number += 1
            text = blocks[0][1]
            for k in range(1, len(blocks)):
                # A list right after a paragraph stays tight; other blocks need a blank line.
                kind, block = blocks[k]
                text += ("\n" if kind == "list" and blocks[k - 1][0] == "p" else "\n\n") + block
            if "\n" in text:
                text = _indent_lines(text, " " * (len(marker) + 1))
            lines.append(marker + " " + text)
        if lines:
            self.blocks.append(("list", "\n".join(lines)))
        return 0

    cdef int _definitions(self, xmlNode* el, int depth) except -1:
        """``_Renderer.definitions``: a term is a paragraph; a definition's blocks follow, its first
        paragraph after ``": "``."""
        cdef xmlNode* child
        cdef int kind
        cdef list blocks
        text = self.piece(el.children, True)
        if text is not None:
            self.buf.append(text)
        child = _next_item(el.children)
        while child is not NULL:
            kind = self.kind(child)
            if _named(child, b"dt"):
                self._flush()
                text = self._inline_block(child, _FLAT, depth + 1)
                if text:
                    self.blocks.append(("p", _line_start(text)))
            elif _named(child, b"dd"):
                self._flush()
                blocks = self._frame(child, depth + 1)
                if blocks and blocks[0][0] == "p":
                    blocks[0] = ("p", ": " + blocks[0][1])
                self.blocks.extend(blocks)
            elif _named(child, b"div"):
                self._flush()
                if depth + 1 > _MAX_DEPTH:
                    self._node(child, kind, depth + 1)
                else:  # a <div> grouping terms and definitions
                    self._definitions(child, depth + 1)
            elif kind != _SKIP:
                self._node(child, kind, depth + 1)
            text = self.piece(child.next, True)
            if text is not None:
                self.buf.append(text)
            child = _next_item(child.next)
        self._flush()
        return 0

    cdef int _table(self, xmlNode* el, int depth) except -1:
        """``_Renderer.table``: a GFM table when the cells make a grid, else a comment and the cells in order."""
        cdef _Cells rows = _Cells()
        cdef Py_ssize_t r, i, columns = 0, width, cells
        cdef long span
        cdef bint grid_ok = _table_rows(self, el, rows)
        cdef xmlNode* c
        cdef list grid, lines
        cells = rows.count
        if grid_ok:
            grid_ok = self._no_grid_breaker(el)
        for r in range(rows.rows):
            span = 0
            for i in range(rows.ends[r - 1] if r else 0, rows.ends[r]):
                span += _int_attr(self, rows.cells[i], b"colspan", 1, 1, 1000)
            columns = max(columns, span)
        if grid_ok and rows.rows * columns > _MAX_CELLS:
            grid_ok = False
        if not grid_ok or cells < 2:
            if cells >= 2:
                self.blocks.append(
                    ("html", f"<!-- table of {rows.rows} rows x {columns} columns, not a grid: its cells in order -->")
                )
            self._walk(el, depth)
            self._flush()
            return 0
        c = _next_item(el.children)
        while c is not NULL:
            if _named(c, b"caption"):
                text = self._inline_block(c, _FLAT, depth + 1)
                if text:
                    self.blocks.append(("p", _line_start(text)))
            c = _next_item(c.next)
        grid = self._grid(rows, depth)
        width = max([len(row) for row in grid])
        lines = []
        for r, row in enumerate(grid):
            row = row + [""] * (width - len(row))
            lines.append("| " + " | ".join(row) + " |")
            if r == 0:
                lines.append("|" + " --- |" * width)
        self.blocks.append(("table", "\n".join(lines)))
        return 0

    cdef bint _no_grid_breaker(self, xmlNode* el) except -1:
        """No table below ``el``, and no ``<pre>`` whose text spans lines."""
        cdef xmlNode* c = el.children
        while c is not NULL:
            if c.type == tree.XML_ELEMENT_NODE:
                if _named(c, b"table"):
                    return False
                if _named(c, b"pre") and "\n" in self.text_of(c, 10).strip():
                    return False
                if c.children is not NULL:
                    c = c.children
                    continue
            c = next_outside(c, el)
        return True

    cdef list _grid(self, _Cells rows, int depth):
        """Cells placed on a grid: a spanning cell's other slots are empty cells."""
        cdef list grid = [], row
        cdef dict covered = {}  # column -> rows a rowspan still covers
        cdef Py_ssize_t index, i, k
        cdef long colspan, rowspan
        for index in range(rows.rows):
            row = []
            for i in range(rows.ends[index - 1] if index else 0, rows.ends[index]):
                _skip_covered(row, covered)
                text = self._inline_block(rows.cells[i], _FLAT | _IN_TABLE, depth + 1)
                colspan = _int_attr(self, rows.cells[i], b"colspan", 1, 1, 1000)
                rowspan = _int_attr(self, rows.cells[i], b"rowspan", 1, 1, rows.rows - index)
                for k in range(colspan):
                    if rowspan > 1:
                        covered[len(row)] = rowspan - 1
                    row.append("" if k else text)
            _skip_covered(row, covered)
            for column in [c for c in covered if c > len(row) and covered[c] > 0]:
                covered[column] -= 1
            grid.append(row)
        return grid

    # -- inline context --------------------------------------------------------------------------

    def inline_block(self, cetree._Element el, int flags, int depth):
        self.doc = el._doc
        return self._inline_block(el._c_node, flags, depth)

    cdef str _inline_block(self, xmlNode* el, int flags, int depth):
        cdef str text = self._content(el, flags | _FLAT, depth)
        if STRONG_OPEN in text or EM_OPEN in text:
            text = _resolve_of(text)
        return " ".join(text.split())

    def content(self, cetree._Element el, int flags, int depth):
        self.doc = el._doc
        return self._content(el._c_node, flags, depth)

    cdef str _content(self, xmlNode* el, int flags, int depth):
        cdef list parts = []
        cdef xmlNode* child
        cdef int kind
        text = self.piece(el.children, True)
        if text is not None:
            parts.append(text)
        child = _next_item(el.children)
        while child is not NULL:
            kind = self.kind(child)
            if kind != _SKIP:
                parts.append(self._inline(child, kind, flags, depth + 1))
            text = self.piece(child.next, True)
            if text is not None:
                parts.append(text)
            child = _next_item(child.next)
        return "".join(parts)

    def inline(self, cetree._Element el, tag, int flags, int depth):
        self.doc = el._doc
        return self._inline(el._c_node, self.kind(el._c_node), flags, depth)

    cdef str _inline(self, xmlNode* el, int kind, int flags, int depth):
        if kind == _BR:
            return " " if flags & _FLAT else BR
        if kind == _IMG:
            return self._image(el)
        if depth > _MAX_DEPTH:
            return _escape(self.text_of(el, 32))
        if _is_block(kind):  # only in flat context: a word boundary each side
            if kind == _PRE:
                return " " + _code_span_of(self.text_of(el, 32), bool(flags & _IN_TABLE)) + " "
            if _H1 <= kind < _H1 + 6 and not flags & _IN_STRONG:  # a heading in a cell: bold
                return " " + STRONG_OPEN + self._content(el, flags | _IN_STRONG, depth) + STRONG_CLOSE + " "
            return " " + self._content(el, flags, depth) + " "
        if kind == _STRONG and not flags & _IN_STRONG:
            return STRONG_OPEN + self._content(el, flags | _IN_STRONG, depth) + STRONG_CLOSE
        if kind == _EM and not flags & _IN_EM:
            return EM_OPEN + self._content(el, flags | _IN_EM, depth) + EM_CLOSE
        if kind == _CODE:
            return _code_span_of(self.text_of(el, 32), bool(flags & _IN_TABLE))
        if kind == _A and self.links and not flags & _IN_LINK:
            inner = self._content(el, flags | _IN_LINK, depth)
            href = (_attr(self, el, b"href") or "").strip()
            if not href or href.startswith("#") or href.lower().startswith(("javascript:", "data:")):
                return inner
            return _wrap("[", inner, "](" + (<object> self).url(href) + ")")
        return self._content(el, flags, depth)

    def image(self, cetree._Element el):
        self.doc = el._doc
        return self._image(el._c_node)

    cdef str _image(self, xmlNode* el):
        alt = _escape(" ".join((_attr(self, el, b"alt") or "").split()))
        src = (_attr(self, el, b"src") or "").strip()
        if self.links and src and not src.lower().startswith("data:"):
            return f"![{alt}]({(<object> self).url(src)})"
        return f"![{alt}]()" if alt else ""

    # -- the text of an element ---------------------------------------------------------------------

    cdef str text_of(self, xmlNode* el, unsigned char sep):
        """``markdown._text_of(el, sep)``: the visible text inside ``el``, ``sep`` (a space or a
        line feed) at every block boundary and ``<br>``; its three ways, kept apart as there."""
        cdef Buf* b = &self.text
        cdef xmlNode* c
        cdef xmlNode* child
        cdef int kind
        cdef bint entering = True
        cdef Py_ssize_t last = -1  # where the last part starts
        b.len = 0
        if _next_item(el.children) is NULL:  # el.text
            put_run(b, el.children)
        elif not _has_below(self, el, True):  # lxml's text serialisation: every text node below
            c = el.children
            while c is not NULL:
                if c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE:
                    if c.content is not NULL:
                        put(b, <const unsigned char*> c.content, cstrlen(<const unsigned char*> c.content))
                elif c.type == tree.XML_ELEMENT_NODE and c.children is not NULL:
                    c = c.children
                    continue
                c = next_outside(c, el)
        else:  # the iterative walk of _text_of
            c = el
            while True:
                if entering:
                    kind = self.kind(c)
                    if kind != _SKIP and kind != _BR:
                        if _is_block(kind) and c is not el and not (b.len and b.data[b.len - 1] == sep):
                            last = b.len
                            put(b, &sep, 1)
                        if run_has_text(c.children):
                            last = b.len
                            put_run(b, c.children)
                        child = _next_item(c.children)
                        if child is not NULL:
                            c = child
                            continue
                        entering = False  # no children: leave it now
                    elif kind == _BR:
                        last = b.len
                        put(b, &sep, 1)
                if not entering:
                    if _is_block(self.kind(c)) and not (b.len and b.data[b.len - 1] == sep):
                        last = b.len
                        put(b, &sep, 1)
                if c is el:
                    break
                if run_has_text(c.next):
                    last = b.len
                    put_run(b, c.next)
                child = _next_item(c.next)
                if child is not NULL:
                    c, entering = child, True
                else:
                    c, entering = c.parent, False
            if _is_block(self.kind(el)) and last >= 0 and b.len - last == 1 and b.data[last] == sep:
                b.len = last  # el's own end: the caller puts the boundary there
        text = PyUnicode_DecodeUTF8(<const char*> b.data, b.len, NULL)
        return _SENTINELS.sub("\ufffd", text) if _has_sentinel(b.data, b.len) else text


cdef bint _has_below(Walk walk, xmlNode* el, bint breaks) except -1:
    """Whether an element below ``el`` is a block (or, with ``breaks``, also a ``<br>`` or a
    skipped tag: what ends or hides a run of text)."""
    cdef xmlNode* c = el.children
    cdef int kind
    while c is not NULL:
        if c.type == tree.XML_ELEMENT_NODE:
            kind = walk.kind(c)
            if _is_block(kind) or (breaks and (kind == _BR or kind == _SKIP)):
                return True
            if c.children is not NULL:
                c = c.children
                continue
        c = next_outside(c, el)
    return False


cdef inline bint _has_block_below(Walk walk, xmlNode* el) except -1:
    return _has_below(walk, el, False)


# -- tables ----------------------------------------------------------------------------------------------

cdef class _Cells:
    """A table's rows of cells (rows without a cell left out): ``cells``, row ``r`` ending at ``ends[r]``."""
    cdef xmlNode** cells
    cdef Py_ssize_t count, cap
    cdef Py_ssize_t* ends
    cdef Py_ssize_t rows, rows_cap

    def __dealloc__(self):
        free(self.cells)
        free(self.ends)

    cdef int add(self, xmlNode* cell) except -1:
        if self.count == self.cap:
            self.cap = self.cap * 2 if self.cap else 64
            self.cells = <xmlNode**> grow(self.cells, self.cap * sizeof(xmlNode*))
        self.cells[self.count] = cell
        self.count += 1
        return 0

    cdef int end_row(self) except -1:
        if self.count == (self.ends[self.rows - 1] if self.rows else 0):
            return 0  # no cell
        if self.rows == self.rows_cap:
            self.rows_cap = self.rows_cap * 2 if self.rows_cap else 16
            self.ends = <Py_ssize_t*> grow(self.ends, self.rows_cap * sizeof(Py_ssize_t))
        self.ends[self.rows] = self.count
        self.rows += 1
        return 0


cdef int _skip_covered(list row, dict covered) except -1:
    while covered.get(len(row), 0) > 0:
        covered[len(row)] -= 1
        row.append("")
    return 0


cdef bint _table_rows(Walk walk, xmlNode* table, _Cells rows) except -1:
    """``markdown._table_rows``: the table's own rows into ``rows``; False when text stands outside its cells."""
    cdef bint ok = not _run_shows(table.children)
    cdef xmlNode* child = _next_item(table.children)
    cdef xmlNode* row
    while child is not NULL:
        if _run_shows(child.next):
            ok = False
        if _named(child, b"thead") or _named(child, b"tbody") or _named(child, b"tfoot"):
            ok = ok and not _run_shows(child.children)
            row = _next_item(child.children)
            while row is not NULL:
                if _run_shows(row.next):
                    ok = False
                if _named(row, b"tr"):
                    ok = _row(walk, row, rows) and ok
                elif _visible(walk, row):
                    ok = False
                row = _next_item(row.next)
        elif _named(child, b"tr"):
            ok = _row(walk, child, rows) and ok
        elif not (_named(child, b"caption") or _named(child, b"colgroup") or _named(child, b"col")) and _visible(
                walk, child):
            ok = False
        child = _next_item(child.next)
    return ok


cdef bint _row(Walk walk, xmlNode* tr, _Cells rows) except -1:
    """``markdown._row``: ``tr``'s cells into ``rows``; False when it holds text outside them."""
    cdef bint ok = not _run_shows(tr.children)
    cdef xmlNode* cell = _next_item(tr.children)
    while cell is not NULL:
        if _named(cell, b"td") or _named(cell, b"th"):
            rows.add(cell)
        elif _visible(walk, cell):
            ok = False
        if _run_shows(cell.next):
            ok = False
        cell = _next_item(cell.next)
    rows.end_row()
    return ok


cdef bint _visible(Walk walk, xmlNode* el) except -1:
    """``markdown._visible``: an element, not a skipped one, with text that is not white space below it."""
    cdef xmlNode* c
    if el.type != tree.XML_ELEMENT_NODE or walk.kind(el) == _SKIP:
        return False
    c = el.children
    while c is not NULL:
        if c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE:
            if c.content is not NULL and not _all_space(<const unsigned char*> c.content,
                                                         cstrlen(<const unsigned char*> c.content)):
                return True
        elif c.type == tree.XML_ELEMENT_NODE and c.children is not NULL:
            c = c.children
            continue
        c = next_outside(c, el)
    return False


cdef bint _run_shows(xmlNode* c) noexcept nogil:
    """Whether the run of text nodes from ``c`` holds more than white space (``(text or "").strip()``)."""
    c = text_or_skip(c)
    while c is not NULL:
        if c.content is not NULL and not _all_space(<const unsigned char*> c.content,
                                                     cstrlen(<const unsigned char*> c.content)):
            return True
        c = text_or_skip(c.next)
    return False


cdef inline bint _named(xmlNode* c, const char* name) noexcept nogil:
    return c.type == tree.XML_ELEMENT_NODE and strcmp(<const char*> c.name, name) == 0


cdef object _attr(Walk walk, xmlNode* c, const char* name):
    """``el.get(name)``: the attribute's value (libxml2's ``xmlGetNsProp`` without a namespace), or None."""
    cdef tree.xmlAttr* a = c.properties
    cdef xmlNode* t
    while a is not NULL:
        if a.ns is NULL and strcmp(<const char*> a.name, name) == 0:
            t = a.children
            if t is NULL:
                return ""
            if t.next is NULL and t.type == tree.XML_TEXT_NODE and t.content is not NULL:
                return PyUnicode_DecodeUTF8(<const char*> t.content, cstrlen(<const unsigned char*> t.content), NULL)
            return walk.proxy(c).get(name.decode())  # a value of several nodes: as lxml joins them
        a = a.next
    return None


cdef long _int_attr(Walk walk, xmlNode* c, const char* name, long default, long low, long high) except? -1:
    """``markdown._int(el.get(name), default, low, high)``."""
    value = _attr(walk, c, name)
    if not value:
        return default  # int("") fails
    try:
        number = int(value.strip())
    except ValueError:
        return default
    return min(max(number, low), high)


# -- the text helpers of _markdown_text, on str -------------------------------------------------------

def escape(str text):
    """:func:`scrapy_detemplate._markdown_text.esc` (for the tests)."""
    _init()
    return _escape(text)


def resolve(str text):
    """:func:`scrapy_detemplate._markdown_text.resolve` (for the tests)."""
    _init()
    return _resolve_of(text)


def code_span(str raw, bint in_table=False):
    """:func:`scrapy_detemplate._markdown_text.code_span` (for the tests)."""
    _init()
    return _code_span_of(raw, in_table)


cdef inline bint _punct(Py_UCS4 c) noexcept nogil:
    """ASCII punctuation (what a backslash escapes in CommonMark)."""
    return 0x21 <= c <= 0x2F or 0x3A <= c <= 0x40 or 0x5B <= c <= 0x60 or 0x7B <= c <= 0x7E


cdef inline Py_UCS4 _at(str text, Py_ssize_t i) noexcept:
    """``text[i]`` with the sentinels as ``esc`` first makes them (U+FFFD)."""
    cdef Py_UCS4 c = text[i]
    return 0xFFFD if 0xFDD0 <= c <= 0xFDD4 else c


cdef inline bint _at_end(str text, Py_ssize_t i, Py_ssize_t n) noexcept:
    """Whether a regular expression's ``$`` matches at ``i``: the end, or a line feed that ends the text."""
    return i == n or (i == n - 1 and text[i] == "\n")


cdef str _escape(str text):
    """``esc`` in one pass: its substitutions, applied one after the other there, look only at
    characters none of the earlier ones changes (a neighbour that is a letter, a digit, white
    space or punctuation stays one), so each is decided on the text as it came."""
    cdef Py_ssize_t n = len(text), i = 0, j, o = 0
    cdef Py_UCS4 c, nxt
    cdef Py_UCS4* out
    cdef bint keep
    if n == 0:
        return text
    out = <Py_UCS4*> grow(NULL, 2 * n * sizeof(Py_UCS4))
    try:
        while i < n:
            c = _at(text, i)
            if c == "\\":
                out[o] = c
                o += 1
                if _at_end(text, i + 1, n) or _punct(_at(text, i + 1)):
                    out[o] = c
                    o += 1
            elif c == "`" or c == "*" or c == "[" or c == "]" or c == "<" or c == "|" or c == "~":
                out[o], out[o + 1] = "\\", c
                o += 2
            elif c == "_":
                j = i
                while j < n and text[j] == "_":
                    j += 1
                keep = i > 0 and j < n and _at(text, i - 1).isalnum() and _at(text, j).isalnum()
                while i < j:
                    if not keep:
                        out[o] = "\\"
                        o += 1
                    out[o] = "_"
                    o += 1
                    i += 1
                continue
            elif c == "&":
                if i + 1 < n:
                    nxt = _at(text, i + 1)
                if _at_end(text, i + 1, n) or nxt == "#" or ("A" <= nxt <= "Z") or ("a" <= nxt <= "z") or ("0" <= nxt <= "9"):
                    out[o] = "\\"
                    o += 1
                out[o] = c
                o += 1
            elif c == "#":
                if i == 0 or _at(text, i - 1).isspace():
                    out[o] = "\\"
                    o += 1
                out[o] = c
                o += 1
            else:
                out[o] = c
                o += 1
            i += 1
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, o)
    finally:
        free(out)


cdef Py_ssize_t _longest_ticks(str text):
    """The longest run of backticks in ``text`` (0 without one)."""
    cdef Py_ssize_t run = 0, longest = 0
    cdef Py_UCS4 c
    if "`" not in text:
        return 0
    for c in text:
        if c == "`":
            run += 1
            if run > longest:
                longest = run
        else:
            run = 0
    return longest


cdef str _code_span_of(str raw, bint in_table):
    """``code_span``: a code span for ``raw`` (white space collapsed, edges moved outside)."""
    cdef str core = " ".join(raw.split())
    cdef str ticks, pad
    if not core:
        return " " if raw else ""
    lead = " " if raw[0].isspace() else ""
    trail = " " if raw[len(raw) - 1].isspace() else ""
    if in_table and "|" in core:
        core = core.replace("|", "\\|")  # GFM: a pipe ends a cell even inside code
    ticks = "`" * (1 + _longest_ticks(core))
    pad = " " if core[0] == "`" or core[len(core) - 1] == "`" else ""
    return lead + ticks + pad + core + pad + ticks + trail


cdef str _language(Walk walk, xmlNode* pre):
    """``markdown._language``: the language a class names on the ``<pre>``, its ``<code>``, or the two
    elements around it."""
    cdef xmlNode* candidates[4]
    cdef int count = 1, k
    cdef xmlNode* c = _next_item(pre.children)
    candidates[0] = pre
    if c is not NULL and _named(c, b"code"):
        candidates[count] = c
        count += 1
    c = parent_element(pre)
    if c is not NULL:
        candidates[count] = c
        count += 1
        c = parent_element(c)
        if c is not NULL:
            candidates[count] = c
            count += 1
    for k in range(count):
        value = _attr(walk, candidates[k], b"class")
        if value:
            match = _LANGUAGE.search(value)
            if match:
                name = match.group(1).removeprefix("source-")
                return "" if name in ("default", "none") else name
    return ""




cdef inline bint _edge(Py_UCS4 c) noexcept:
    """In ``EDGE_SPACE``: white space (``str.split()``'s) or the hard break sentinel."""
    return c == 0xFDD4 or Py_UNICODE_ISSPACE(c)


cdef inline bint _mark(Py_UCS4 c) noexcept nogil:
    """An emphasis sentinel (U+FDD0..U+FDD3; the hard break U+FDD4 is not one)."""
    return 0xFDD0 <= c <= 0xFDD3


cdef str _resolve_of(str text):
    """``resolve``: emphasis sentinels to ``*``/``**``, innermost pairs first, each pass as ``_PAIR.sub``
    finds them (an opener whose next sentinel is a closer), until none is left; then the rest go."""
    cdef list parts
    cdef Py_ssize_t k, n, start, last
    cdef Py_UCS4 c
    if STRONG_OPEN not in text and EM_OPEN not in text:
        return text
    while True:
        parts = []
        n, start, last = len(text), -1, 0
        for k in range(n):
            c = text[k]
            if c == 0xFDD0 or c == 0xFDD2:
                start = k
            elif c == 0xFDD1 or c == 0xFDD3:
                if start >= 0:
                    parts.append(text[last:start])
                    parts.append(_emphasis_of(text, start, k + 1))
                    last = k + 1
                start = -1
        if not parts:
            break
        parts.append(text[last:])
        text = "".join(parts)
    return "".join([ch for ch in text if not _mark(ch)]) if _has_marks(text) else text


cdef bint _has_marks(str text):
    cdef Py_UCS4 c
    for c in text:
        if _mark(c):
            return True
    return False


cdef str _emphasis_of(str text, Py_ssize_t start, Py_ssize_t end):
    """``_emphasis`` for the pair at ``text[start]`` and ``text[end - 1]``."""
    cdef str inner = text[start + 1:end - 1]
    cdef Py_ssize_t a = 0, b = len(inner)
    cdef Py_UCS4 before = 0, after = 0
    cdef bint has_before = False, has_after = False
    while a < b and _edge(inner[a]):
        a += 1
    while b > a and _edge(inner[b - 1]):
        b -= 1
    if a == b:
        return inner
    if a == 0:
        has_before = _neighbour_of(text, start - 1, -1, &before)
    if b == len(inner):
        has_after = _neighbour_of(text, end, 1, &after)
    if (has_before and (before.isalnum() or before == "_")) or (has_after and (after.isalnum() or after == "_")):
        return inner
    mark = "**" if text[start] == 0xFDD0 else "*"
    return inner[:a] + mark + inner[a:b] + mark + inner[b:]


cdef bint _neighbour_of(str text, Py_ssize_t index, Py_ssize_t step, Py_UCS4* found) noexcept:
    """``_neighbour``: the first character from ``index`` on (in direction ``step``) that is not an
    emphasis sentinel, into ``found``; False when there is none."""
    cdef Py_ssize_t n = len(text)
    cdef Py_UCS4 c
    while 0 <= index < n:
        c = text[index]
        if not _mark(c):
            found[0] = c
            return True
        index += step
    return False
