# cython: language_level=3, boundscheck=False, wraparound=False
"""The engine's tree walks, compiled: visible lines, the size checks, removal (and two text scans).

Each function here gives what a Python function of the package gives, ``==``
on the results (the tests and ``bench/check_compiled_tree.py`` hold them
equal): :func:`scrapy_detemplate._html.visible_lines`,
:func:`scrapy_detemplate._html.tree_size_and_depth` and
:func:`scrapy_detemplate.engine._removal`; and two scans of the page's text
before the parse, :func:`drop_early_ends` and :func:`count_controls` (the
regexes of ``keep_content_after_early_end`` and ``looks_binary``).  They read libxml2's nodes through
lxml's public C API (as ``methods/_walk.pyx`` does) instead of making an
element proxy for every node: a proxy is only made for what the result holds
(a line's slots, a dropped element).  What is not the common case (an element
in a namespace, text that is not valid UTF-8) is handed back to the Python
function.

Optional: when this module was not built (no C compiler at install time) or
was built against another lxml, the Python functions run.
"""

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memset, strcmp

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlAttr, xmlNode

from scrapy_detemplate._nodes cimport (
    Buf, attr_value, cstrlen, grow, is_text, parent_element, put, put_run, reserve, run_has_text, space,
)

cetree.import_lxml__etree()

from lxml import etree as _etree

#: The lxml this module was compiled against (checked by ``_compiled.load``).
LXML_VERSION = _etree.LXML_VERSION

#: The characters ``str.split()`` splits on, as this module's line text does
#: (the tests check them against Python's own).
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

cdef object _Line = None
cdef object _py_visible_lines = None
cdef frozenset _BLOCK = frozenset()
cdef frozenset _SKIP_TAGS = frozenset()


cdef int _init() except -1:
    global _Line, _py_visible_lines, _BLOCK, _SKIP_TAGS
    if _Line is None:
        from scrapy_detemplate import _html
        _BLOCK, _SKIP_TAGS = _html.BLOCK_TAGS, _html.SKIP_TAGS
        _py_visible_lines = _html._visible_lines_py
        _Line = _html.Line
    return 0


# -- text as lxml reads it --------------------------------------------------------------------------

cdef Py_ssize_t _collapse(const unsigned char* s, Py_ssize_t n, unsigned char* out) noexcept nogil:
    """``" ".join(text.split())`` on UTF-8 bytes: the length written to ``out`` (``n`` bytes at most).

    The text is valid UTF-8 (libxml2's), so a lead byte is never mistaken for a
    continuation byte: whitespace is only looked for where a character starts,
    and other bytes are copied as they are."""
    cdef Py_ssize_t i = 0, o = 0, w
    cdef bint gap = False
    while i < n:
        w = space(s + i, n - i)
        if w:
            gap = True
            i += w
            continue
        if gap and o:
            out[o] = 32
            o += 1
        gap = False
        out[o] = s[i]
        o += 1
        i += 1
    return o


# -- visible lines --------------------------------------------------------------------------------

cdef enum:
    _NORMAL = 0
    _BLOCK_EL = 1
    _SKIPPED = 2
    _BR = 3
    _CACHE = 128  # names kept per walk (half of it filled at most)


cdef struct Kinds:
    const void* names[_CACHE]
    int kinds[_CACHE]
    int used


cdef int _kind_of_name(const unsigned char* name) except -1:
    tag = PyUnicode_DecodeUTF8(<const char*> name, cstrlen(name), NULL)
    if tag in _SKIP_TAGS:
        return _SKIPPED
    if tag == "br":
        return _BR
    return _BLOCK_EL if tag in _BLOCK else _NORMAL


cdef inline int _kind(Kinds* cache, xmlNode* c) except -1:
    """How the walk treats ``c`` (as ``visible_lines`` tests its tag: skipped, ``br``, block or
    inline); names are interned by libxml2's dictionary, so the answer is kept per name pointer."""
    cdef size_t h
    cdef int k
    if c.type != tree.XML_ELEMENT_NODE:
        return _SKIPPED  # comments, processing instructions, entities: only their tail shows
    h = ((<size_t> c.name) >> 4) & (_CACHE - 1)
    while cache.names[h] is not NULL:
        if cache.names[h] == <const void*> c.name:
            return cache.kinds[h]
        h = (h + 1) & (_CACHE - 1)
    k = _kind_of_name(<const unsigned char*> c.name)
    if cache.used < _CACHE // 2:
        cache.names[h], cache.kinds[h] = <const void*> c.name, k
        cache.used += 1
    return k


cdef inline xmlNode* _next_item(xmlNode* c) noexcept nogil:
    """``c`` or the first sibling after it that lxml iterates (``_isElement``), or NULL."""
    while c is not NULL and not cetree._isElement(c):
        c = c.next
    return c


cdef struct Slot:
    xmlNode* node
    bint is_tail


cdef class _Lines:
    """The state of one walk: the lines so far and the line being read.

    The pieces of the line being read are kept as nodes: their element proxies
    are only made when the line has text (many runs of pieces are only the
    blanks between blocks, and are dropped)."""
    cdef cetree._Document doc
    cdef list lines
    cdef Slot* slots
    cdef Py_ssize_t count  # pieces of the line being read
    cdef Py_ssize_t cap
    cdef Buf raw  # their text, as libxml2 holds it
    cdef Buf flat  # the line's text, blanks collapsed
    cdef Buf path  # the tag path of the element being read
    cdef Buf start  # the path where the line being read starts

    def __cinit__(self, cetree._Document doc):
        self.doc = doc
        self.lines = []

    def __dealloc__(self):
        free(self.slots)
        free(self.raw.data)
        free(self.flat.data)
        free(self.path.data)
        free(self.start.data)

    cdef int piece(self, xmlNode* el, bint is_tail) except -1:
        """A non-empty ``.text`` (``is_tail`` false) or ``.tail`` of ``el`` joins the line."""
        if not self.count:
            self.start.len = 0
            put(&self.start, self.path.data, self.path.len)
        put_run(&self.raw, el.next if is_tail else el.children)
        if self.count == self.cap:
            self.cap = self.cap * 2 if self.cap else 64
            self.slots = <Slot*> grow(self.slots, self.cap * sizeof(Slot))
        self.slots[self.count].node, self.slots[self.count].is_tail = el, is_tail
        self.count += 1
        return 0

    cdef int flush(self) except -1:
        """The line ends (it has pieces: ``self.count`` > 0)."""
        cdef Py_ssize_t n, i
        cdef list slots
        if self.flat.cap < self.raw.len + 1:
            reserve(&self.flat, self.raw.len)
        n = _collapse(self.raw.data, self.raw.len, self.flat.data)
        if n:
            text = PyUnicode_DecodeUTF8(<const char*> self.flat.data, n, NULL)
            path = PyUnicode_DecodeUTF8(<const char*> self.start.data, self.start.len, NULL)
            slots = [None] * self.count
            for i in range(self.count):
                slots[i] = (cetree.elementFactory(self.doc, self.slots[i].node), self.slots[i].is_tail)
            line = _Line.__new__(_Line)  # the dataclass's fields, without its Python __init__ frame
            line.text, line.path, line.slots = text, path, slots
            self.lines.append(line)
        self.count = 0
        self.raw.len = 0
        return 0


def visible_lines(root):
    """:func:`scrapy_detemplate._html.visible_lines` in one walk over libxml2's nodes."""
    _init()
    if root is None:
        return []
    from scrapy_detemplate._html import find_body
    body = find_body(root)
    if body is None:
        return []
    try:
        lines = _walk_lines(body)
    except UnicodeDecodeError:
        lines = None
    return _py_visible_lines(root) if lines is None else lines


cdef object _walk_lines(cetree._Element body):
    cdef cetree._Document doc = body._doc
    cdef xmlNode* top = body._c_node
    cdef xmlNode* c = top
    cdef xmlNode* child
    cdef _Lines walk = _Lines(doc)
    cdef Kinds cache
    cdef Py_ssize_t* marks = NULL  # the path's length before each open element's tag
    cdef Py_ssize_t depth = 0, cap = 0
    cdef int kind
    cdef bint entering = True
    memset(&cache, 0, sizeof(Kinds))
    try:
        while True:
            if entering:
                if c.type == tree.XML_ELEMENT_NODE and c.ns is not NULL:
                    return None  # a namespaced tag ("{ns}p"): the Python walk names it
                kind = _kind(&cache, c)
                if kind == _BR:
                    if walk.count:
                        walk.flush()
                elif kind != _SKIPPED:
                    if kind == _BLOCK_EL and walk.count:
                        walk.flush()
                    if depth == cap:
                        cap = cap * 2 if cap else 64
                        marks = <Py_ssize_t*> grow(marks, cap * sizeof(Py_ssize_t))
                    marks[depth] = walk.path.len
                    depth += 1
                    if walk.path.len:
                        put(&walk.path, <const unsigned char*> b"/", 1)
                    put(&walk.path, <const unsigned char*> c.name, cstrlen(<const unsigned char*> c.name))
                    if run_has_text(c.children):
                        walk.piece(c, False)
                    child = _next_item(c.children)
                    if child is not NULL:
                        c = child
                        continue
                    entering = False  # no children: leave it now
            if not entering:
                depth -= 1
                walk.path.len = marks[depth]
                if walk.count and _kind(&cache, c) == _BLOCK_EL:
                    walk.flush()
            if c is top:
                break
            if run_has_text(c.next):
                walk.piece(c, True)
            child = _next_item(c.next)
            if child is not NULL:
                c, entering = child, True
            else:
                c, entering = c.parent, False
        if walk.count:
            walk.flush()
    finally:
        free(marks)
    return walk.lines


# -- the engine's size checks -----------------------------------------------------------------------

def tree_size_and_depth(cetree._Element root):
    """:func:`scrapy_detemplate._html.tree_size_and_depth`: the nodes of ``root``'s document that
    ``count_nodes`` counts (elements, comments, processing instructions), the most elements
    nested in it and its ``<noscript>`` elements, in one walk."""
    cdef xmlNode* c = (<xmlNode*> root._c_node.doc).children
    cdef Py_ssize_t count = 0, level = 1, deepest = 0, noscripts = 0
    while c is not NULL:
        if c.type == tree.XML_ELEMENT_NODE:
            count += 1
            if level > deepest:
                deepest = level
            if c.name[0] == b"n" and _named(c, "noscript"):
                noscripts += 1
            if c.children is not NULL:
                c = c.children
                level += 1
                continue
        elif c.type == tree.XML_COMMENT_NODE or c.type == tree.XML_PI_NODE:
            count += 1
        while c.next is NULL:
            c = c.parent
            level -= 1
            if level == 0 or c is NULL:
                return count, deepest, noscripts
        c = c.next
    return count, deepest, noscripts


# -- furniture the page marks ------------------------------------------------------------------------

cdef bint _ascii_is(const char* s, const char* word) noexcept:
    """Whether ``s``, blanks (space, tab, CR, LF, FF) around it left out, is ``word`` (lower case) in any
    ASCII case."""
    cdef const unsigned char* a = <const unsigned char*> s
    cdef const unsigned char* b = <const unsigned char*> word
    while a[0] == 32 or a[0] == 9 or a[0] == 10 or a[0] == 13 or a[0] == 12:
        a += 1
    while b[0] and (a[0] == b[0] or (65 <= a[0] <= 90 and a[0] + 32 == b[0])):
        a += 1
        b += 1
    if b[0]:
        return False
    while a[0] == 32 or a[0] == 9 or a[0] == 10 or a[0] == 13 or a[0] == 12:
        a += 1
    return a[0] == 0


cdef bint _has_attr(xmlNode* c, const char* name) noexcept:
    """Whether ``c`` has the attribute ``name`` (no namespace), whatever its value: ``el.get(name) is not None``."""
    cdef xmlAttr* a = c.properties
    while a is not NULL:
        if a.ns is NULL and strcmp(<const char*> a.name, name) == 0:
            return True
        a = a.next
    return False


cdef bint _furniture_role(const char* v) noexcept:
    """Whether a ``role`` value is one of ``scrapy_detemplate.runners.combined._FURNITURE_ROLES``."""
    return (_ascii_is(v, "dialog") or _ascii_is(v, "alertdialog") or _ascii_is(v, "contentinfo")
            or _ascii_is(v, "menu") or _ascii_is(v, "menubar") or _ascii_is(v, "menuitem")
            or _ascii_is(v, "option") or _ascii_is(v, "tooltip") or _ascii_is(v, "status"))


cdef int _is_furniture(xmlNode* c) noexcept:
    """1 when ``c`` is furniture the page marks (``<dialog>``, a ``role`` of :func:`_furniture_role`,
    ``aria-modal`` ``true``, a ``data-nosnippet`` attribute), 0 when not, -1 when an attribute is not one
    text node (Python must read it)."""
    cdef const char* value = NULL
    cdef int got
    if _named(c, "dialog"):
        return 1
    got = attr_value(c, "role", &value)
    if got < 0:
        return -1
    if got and _furniture_role(value):
        return 1
    got = attr_value(c, "aria-modal", &value)
    if got < 0:
        return -1
    if got and _ascii_is(value, "true"):
        return 1
    return 1 if _has_attr(c, "data-nosnippet") else 0


def furniture_lines(cetree._Element root, list lines):
    """:func:`scrapy_detemplate.runners.combined.furniture_lines`: the indexes of ``lines`` whose first piece
    of text stands in furniture ``root``'s document marks (a dialog, its footer landmark, a widget, a
    ``data-nosnippet`` element), or ``None`` when Python must answer (an attribute it cannot read as one
    text node)."""
    cdef xmlNode* c = (<xmlNode*> root._c_node.doc).children
    cdef xmlNode** marked = NULL
    cdef xmlNode** grown
    cdef Py_ssize_t count = 0, cap = 0, i, k
    cdef int kind
    cdef list found = []
    try:
        while c is not NULL:
            if c.type == tree.XML_ELEMENT_NODE:
                kind = _is_furniture(c)
                if kind < 0:
                    return None
                if kind:
                    if count == cap:
                        cap = cap * 2 + 8
                        grown = <xmlNode**> realloc(marked, cap * sizeof(xmlNode*))
                        if grown is NULL:
                            raise MemoryError()
                        marked = grown
                    marked[count] = c
                    count += 1
                if c.children is not NULL:
                    c = c.children
                    continue
            while c.next is NULL:
                c = c.parent
                if c is NULL:
                    break
            if c is NULL:
                break
            c = c.next
        if not count:
            return frozenset()
        for i, line in enumerate(lines):
            c = _line_owner(line)
            while c is not NULL:
                for k in range(count):
                    if marked[k] == c:
                        found.append(i)
                        break
                else:
                    c = c.parent
                    continue
                break
        return frozenset(found)
    finally:
        free(marked)


# -- removal ----------------------------------------------------------------------------------------

cdef class _Index:
    """The nodes of a subtree in ``body.iter()`` order, each with its parent's number, and a
    table from node to number (open addressing on the node's address)."""
    cdef xmlNode** nodes
    cdef Py_ssize_t* parents
    cdef Py_ssize_t count
    cdef xmlNode** keys
    cdef Py_ssize_t* values
    cdef size_t mask

    def __dealloc__(self):
        free(self.nodes)
        free(self.parents)
        free(self.keys)
        free(self.values)

    cdef int build(self, xmlNode* top) except -1:
        cdef Py_ssize_t cap = 256, n, cur = 0, at, i
        cdef xmlNode* c = top
        cdef xmlNode* child
        cdef size_t size = 1, h
        self.nodes = <xmlNode**> grow(NULL, cap * sizeof(xmlNode*))
        self.parents = <Py_ssize_t*> grow(NULL, cap * sizeof(Py_ssize_t))
        # Pre-order as lxml's iter() goes: every node it hands out (_isElement), children of all
        # but entity references; ``cur`` is the number of ``c``, ``at`` that of the next one's parent.
        self.nodes[0], self.parents[0], n = top, -1, 1
        while True:
            child = NULL
            if c.type != tree.XML_ENTITY_REF_NODE and c.type != tree.XML_DTD_NODE:
                child = _next_item(c.children)
            if child is not NULL:
                at = cur
            else:
                while c is not top and _next_item(c.next) is NULL:
                    c = c.parent
                    cur = self.parents[cur]
                if c is top:
                    break
                child = _next_item(c.next)
                at = self.parents[cur]
            if n == cap:
                cap *= 2
                self.nodes = <xmlNode**> grow(self.nodes, cap * sizeof(xmlNode*))
                self.parents = <Py_ssize_t*> grow(self.parents, cap * sizeof(Py_ssize_t))
            self.nodes[n], self.parents[n] = child, at
            cur = n
            n += 1
            c = child
        self.count = n
        while size < 2 * <size_t> n:
            size *= 2
        self.mask = size - 1
        self.keys = <xmlNode**> grow(NULL, size * sizeof(xmlNode*))
        self.values = <Py_ssize_t*> grow(NULL, size * sizeof(Py_ssize_t))
        memset(self.keys, 0, size * sizeof(xmlNode*))
        for i in range(n):
            h = _hash(self.nodes[i]) & self.mask
            while self.keys[h] is not NULL:
                h = (h + 1) & self.mask
            self.keys[h], self.values[h] = self.nodes[i], i
        return 0

    cdef inline Py_ssize_t find(self, xmlNode* node) noexcept:
        """The node's number, or -1 when it is not in the subtree."""
        cdef size_t h = _hash(node) & self.mask
        while self.keys[h] is not NULL:
            if self.keys[h] is node:
                return self.values[h]
            h = (h + 1) & self.mask
        return -1


cdef inline size_t _hash(xmlNode* node) noexcept nogil:
    cdef size_t h = <size_t> node
    return (h >> 4) ^ (h >> 13)




def removal(cetree._Element body, list lines, template_lines, template_elements):
    """:func:`scrapy_detemplate.engine._removal` for a page with a body: the text pieces to blank
    and the outermost elements to drop (in document order), counted in C arrays over one index
    of the body's nodes instead of dicts of element proxies."""
    cdef cetree._Document doc = body._doc
    cdef xmlNode* top = body._c_node
    cdef _Index index = _Index()
    cdef Py_ssize_t* kept = NULL
    cdef Py_ssize_t* removed = NULL
    cdef unsigned char* forced = NULL
    cdef Py_ssize_t n, i, at, k, r, p
    cdef xmlNode* owner
    cdef cetree._Element el
    cdef bint is_template, tail
    cdef list blank = [], dropped = []
    index.build(top)
    n = index.count
    try:
        kept = <Py_ssize_t*> grow(NULL, n * sizeof(Py_ssize_t))
        removed = <Py_ssize_t*> grow(NULL, n * sizeof(Py_ssize_t))
        forced = <unsigned char*> grow(NULL, n)
        memset(kept, 0, n * sizeof(Py_ssize_t))
        memset(removed, 0, n * sizeof(Py_ssize_t))
        memset(forced, 0, n)
        i = 0
        for line in lines:
            is_template = i in template_lines
            i += 1
            for slot in line.slots:
                item, is_tail = slot
                el = <cetree._Element?> item
                tail = bool(is_tail)
                owner = parent_element(el._c_node) if tail else el._c_node
                if owner is NULL:
                    continue
                at = index.find(owner)
                if at >= 0:  # owners outside the body count for nothing
                    if is_template:
                        removed[at] += 1
                    else:
                        kept[at] += 1
                if is_template:
                    blank.append(slot if type(slot) is tuple else (item, is_tail))
        for item in template_elements:
            el = <cetree._Element?> item
            at = index.find(el._c_node)
            if at < 0:
                continue
            forced[at] = 1
            if at and parent_element(el._c_node) is not NULL:
                removed[at] += 1 + kept[at]
                kept[at] = 0
        # Post-order totals: backwards, descendants come before their ancestors.
        for i in range(n - 1, -1, -1):
            if forced[i]:
                removed[i] += kept[i]
                kept[i] = 0
            if i:
                p = index.parents[i]
                kept[p] += kept[i]
                removed[p] += removed[i]
        # Only the outermost emptied element is dropped (its tail stays).
        for i in range(1, n):
            if removed[i] and not kept[i]:
                p = index.parents[i]
                if p == 0 or not (removed[p] and not kept[p]):
                    dropped.append(cetree.elementFactory(doc, index.nodes[i]))
    finally:
        free(kept)
        free(removed)
        free(forced)
    return blank, dropped


def blank(list pieces):
    """Set each ``(element, is_tail)`` piece's text (``is_tail`` false) or tail to None, as
    :func:`scrapy_detemplate.engine.remove_template` does with ``el.text = None`` / ``el.tail = None``."""
    cdef cetree._Element el
    for item, is_tail in pieces:
        el = <cetree._Element?> item
        if is_tail:
            cetree.setTailText(el._c_node, None)
        elif el._c_node.type == tree.XML_ELEMENT_NODE:
            cetree.setNodeText(el._c_node, None)
        else:
            item.text = None  # a comment's or processing instruction's text is its content


# -- combined's table rows --------------------------------------------------------------------------

cdef inline bint _named(xmlNode* c, const char* name) noexcept:
    """Whether ``c`` is an element ``name`` in no namespace (lxml's ``el.tag == name``)."""
    cdef const unsigned char* a = <const unsigned char*> c.name
    cdef const unsigned char* b = <const unsigned char*> name
    if c.type != tree.XML_ELEMENT_NODE or c.ns is not NULL:
        return False
    while a[0] and a[0] == b[0]:
        a += 1
        b += 1
    return a[0] == b[0]


cdef inline bint _row_stop(xmlNode* c) noexcept:
    return _named(c, "tr") or _named(c, "table") or _named(c, "body")


cdef xmlNode* _line_owner(line) except? NULL:
    """``combined._owner``: the element holding the line's first piece of text, or NULL."""
    cdef cetree._Element el
    slots = line.slots
    if not slots:
        return NULL
    item, is_tail = slots[0]
    el = <cetree._Element?> item
    return parent_element(el._c_node) if is_tail else el._c_node


cdef bint _namespaced(xmlNode* c) noexcept:
    return c.type == tree.XML_ELEMENT_NODE and c.ns is not NULL


cdef inline xmlNode* _after(xmlNode* c, xmlNode* top) noexcept:
    """The node after ``c`` in ``top.iter()`` order (an entity reference's children not entered),
    or NULL past ``top``'s last descendant."""
    if c.type != tree.XML_ENTITY_REF_NODE and _next_item(c.children) is not NULL:
        return _next_item(c.children)
    while c is not top and _next_item(c.next) is NULL:
        c = c.parent
    if c is top:
        return NULL
    return _next_item(c.next)


def keep_table_rows_whole(list lines, template, Py_ssize_t row_lines, python):
    """:func:`scrapy_detemplate.runners.combined.keep_table_rows_whole`, walking up and down
    libxml2's nodes (``python``, the Python function, takes a tree with namespaced elements)."""
    cdef cetree._Document doc = None
    cdef xmlNode* node
    cdef xmlNode* top
    cdef xmlNode* c
    cdef set candidates = set()
    cdef dict row_of = {}
    cdef dict members = {}
    cdef set keep = set()
    cdef Py_ssize_t i
    cdef bint has_table
    cdef cetree._Element row
    for i in template:
        line = lines[i]
        node = _line_owner(line)
        if node is NULL:
            continue
        if _namespaced(node):
            return python(lines, template)
        if not _row_stop(node):
            node = parent_element(node)
            while node is not NULL and not _row_stop(node):
                if _namespaced(node):
                    return python(lines, template)
                node = parent_element(node)
        if node is not NULL and _named(node, "tr"):
            if doc is None:
                doc = (<cetree._Element> line.slots[0][0])._doc
            candidates.add(cetree.elementFactory(doc, node))
    if not candidates:
        return template
    for item in candidates:  # in the set's order, as the Python function maps a node in two rows
        row = <cetree._Element> item
        top = row._c_node
        # row.find(".//table") is None, then every node of row.iter() -> row
        has_table = False
        c = _next_item(top.children) if top.type != tree.XML_ENTITY_REF_NODE else NULL
        while c is not NULL:
            if _namespaced(c):
                return python(lines, template)
            if _named(c, "table"):
                has_table = True
                break
            c = _after(c, top)
        if has_table:
            continue
        c = top
        while c is not NULL:
            row_of[<size_t> c] = row
            c = _after(c, top)
    i = 0
    for line in lines:
        node = _line_owner(line)
        if node is not NULL:
            found = row_of.get(<size_t> node)
            if found is not None:
                members.setdefault(found, []).append(i)
        i += 1
    for found in members.values():
        if len(found) <= row_lines and not all(k in template for k in found):
            keep.update(found)
    return template - keep if keep else template


# -- the page's source before the parse ----------------------------------------------------------

cdef extern from "Python.h":
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil


cdef inline Py_ssize_t _early_end_at(int kind, void* data, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Where a match of ``</\\s*(?:body|html)\\s*>`` (ignoring case) that starts at ``i`` ends, or -1."""
    cdef Py_ssize_t k
    cdef const char* name
    cdef unsigned int ch
    if i + 1 >= n or <unsigned int> PyUnicode_READ(kind, data, i + 1) != 47:  # '/'
        return -1
    i += 2
    while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
        i += 1
    if i >= n:
        return -1
    # Only ASCII letters have these lower cases (re.IGNORECASE compares lower cases).
    ch = <unsigned int> PyUnicode_READ(kind, data, i) | 0x20
    if ch == 98:  # 'b'
        name = b"body"
    elif ch == 104:  # 'h'
        name = b"html"
    else:
        return -1
    if i + 4 > n:
        return -1
    for k in range(4):
        ch = <unsigned int> PyUnicode_READ(kind, data, i + k)
        if ch > 127 or (ch | 0x20) != <unsigned int> name[k]:
            return -1
    i += 4
    while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
        i += 1
    if i < n and <unsigned int> PyUnicode_READ(kind, data, i) == 62:  # '>'
        return i + 1
    return -1


def drop_early_ends(str html):
    """``_html._EARLY_END.sub("", html)``: every ``</body>`` and ``</html>`` end tag removed
    (``re.IGNORECASE``, white space as ``\\s`` reads it); ``html`` itself when it has none.
    The regex tries every ``<``; here they are found with ``memchr``: every character
    that is ``<`` holds the byte 0x3C, whatever its width and byte order, so only the
    characters holding one are looked at."""
    cdef int kind = PyUnicode_KIND(html)
    cdef void* data = PyUnicode_DATA(html)
    cdef const char* base = <const char*> data
    cdef Py_ssize_t n = len(html), i = 0, end, kept = 0
    cdef const char* at
    cdef list pieces = None
    while i < n:
        at = <const char*> memchr(base + i * kind, 60, (n - i) * kind)
        if at is NULL:
            break
        i = (at - base) // kind
        if <unsigned int> PyUnicode_READ(kind, data, i) != 60:  # another character with a 0x3C byte
            i += 1
            continue
        end = _early_end_at(kind, data, i, n)
        if end < 0:
            i += 1
            continue
        if pieces is None:
            pieces = []
        pieces.append(html[kept:i])
        kept = i = end
    if pieces is None:
        return html
    pieces.append(html[kept:])
    return "".join(pieces)


def count_controls(str text):
    """``len(_html._CONTROL.findall(text))``: the C0 controls but tab, line feed, form feed and
    carriage return."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), i, count = 0
    cdef unsigned int ch
    for i in range(n):
        ch = <unsigned int> PyUnicode_READ(kind, data, i)
        if ch < 32 and ch != 9 and ch != 10 and ch != 12 and ch != 13:
            count += 1
    return count
