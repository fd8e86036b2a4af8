# cython: language_level=3
"""What the compiled modules share (``cimport``ed, inlined into each; nothing of its own to build).

libxml2's text nodes as lxml reads them (``.text`` and ``.tail`` are runs of
text nodes), white space as ``str.split()`` sees it on libxml2's UTF-8, and
growable C memory that raises ``MemoryError`` instead of returning NULL.
"""

from libc.stdlib cimport realloc
from libc.string cimport memcpy, strcmp

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlAttr, xmlNode


cdef inline int attr_value(xmlNode* c, const char* name, const char** value) noexcept nogil:
    """``el.get(name)``: 0 when absent or empty, 1 with ``value`` set, -1 when the
    value is not one text node (ask Python)."""
    cdef xmlAttr* a = c.properties
    cdef xmlNode* v
    while a is not NULL:
        if a.ns is NULL and strcmp(<const char*> a.name, name) == 0:
            v = a.children
            if v is NULL:
                return 0
            if v.next is not NULL or v.type != tree.XML_TEXT_NODE or v.content is NULL:
                return -1
            value[0] = <const char*> v.content
            return 1 if value[0][0] else 0
        a = a.next
    return 0


cdef inline bint is_text(xmlNode* c) noexcept nogil:
    return c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE


cdef inline xmlNode* text_or_skip(xmlNode* c) noexcept nogil:
    """lxml's ``_textNodeOrSkip``: the text node at ``c``, past XInclude markers, or NULL."""
    while c is not NULL:
        if is_text(c):
            return c
        if c.type == tree.XML_XINCLUDE_START or c.type == tree.XML_XINCLUDE_END:
            c = c.next
        else:
            return NULL
    return NULL


cdef inline Py_ssize_t space(const unsigned char* p, Py_ssize_t left) noexcept nogil:
    """The length in UTF-8 of the white space character at ``p`` (one ``str.split()`` splits on:
    ``"\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"``;
    the tests hold the set equal to Python's), else 0.  ``left``: the bytes readable at ``p``
    (text that ends in a NUL may pass more: no byte past a NUL is read)."""
    cdef unsigned char b = p[0]
    if b < 0x80:
        return 1 if b == 32 or 9 <= b <= 13 or 28 <= b <= 31 else 0
    if b == 0xC2:
        return 2 if left >= 2 and (p[1] == 0x85 or p[1] == 0xA0) else 0
    if left < 3:
        return 0
    if b == 0xE2:
        if p[1] == 0x80:
            return 3 if 0x80 <= p[2] <= 0x8A or p[2] == 0xA8 or p[2] == 0xA9 or p[2] == 0xAF else 0
        return 3 if p[1] == 0x81 and p[2] == 0x9F else 0
    if b == 0xE1:
        return 3 if p[1] == 0x9A and p[2] == 0x80 else 0
    if b == 0xE3:
        return 3 if p[1] == 0x80 and p[2] == 0x80 else 0
    return 0


cdef inline void* grow(void* block, size_t size) except NULL:
    """``realloc``, or ``MemoryError``."""
    cdef void* grown = realloc(block, size)
    if grown is NULL:
        raise MemoryError()
    return grown


cdef struct Buf:
    unsigned char* data
    Py_ssize_t len
    Py_ssize_t cap


cdef inline int reserve(Buf* b, Py_ssize_t extra) except -1:
    """Room for ``extra`` more bytes after ``b.len``, and one more (for a NUL)."""
    cdef Py_ssize_t cap = b.cap if b.cap else 256
    if b.len + extra + 1 <= b.cap:
        return 0
    while cap < b.len + extra + 1:
        cap *= 2
    b.data = <unsigned char*> grow(b.data, cap)
    b.cap = cap
    return 0


cdef inline int put(Buf* b, const unsigned char* s, Py_ssize_t n) except -1:
    if b.len + n + 1 > b.cap:
        reserve(b, n)
    memcpy(b.data + b.len, s, n)
    b.len += n
    return 0


cdef inline Py_ssize_t cstrlen(const unsigned char* s) noexcept nogil:
    """The length of a NUL-terminated string (libxml2's names and texts)."""
    cdef Py_ssize_t n = 0
    while s[n]:
        n += 1
    return n


cdef inline bint run_has_text(xmlNode* c) noexcept nogil:
    """Whether the text of the run of text nodes from ``c`` (``.text`` or ``.tail`` as lxml reads
    them) is not empty."""
    c = text_or_skip(c)
    while c is not NULL:
        if c.content is not NULL and c.content[0]:
            return True
        c = text_or_skip(c.next)
    return False


cdef inline int put_run(Buf* b, xmlNode* c) except -1:
    """Append the text of the run of text nodes from ``c`` (``.text`` or ``.tail`` as lxml reads
    them; UTF-8, as libxml2 holds it)."""
    c = text_or_skip(c)
    while c is not NULL:
        if c.content is not NULL:
            put(b, <const unsigned char*> c.content, cstrlen(<const unsigned char*> c.content))
        c = text_or_skip(c.next)
    return 0


cdef inline xmlNode* next_outside(xmlNode* c, xmlNode* top) noexcept nogil:
    """The node after ``c`` and all below it in document order, or NULL past ``top``'s last
    descendant: a pre-order walk below ``top`` steps down with ``c.children``, on with this."""
    while c is not top and c.next is NULL:
        c = c.parent
    return NULL if c is top else c.next


cdef inline xmlNode* parent_element(xmlNode* c) noexcept nogil:
    """lxml's ``getparent()``: the parent when it is an element (lxml's ``_isElement``), else NULL."""
    if c is NULL or not cetree._isElement(c):
        return NULL
    c = c.parent
    if c is NULL or not cetree._isElement(c):
        return NULL
    return c
