# cython: language_level=3, boundscheck=False, wraparound=False
"""The columns of learned class/id names on a site's first page, compiled
(:func:`scrapy_detemplate.methods.names.page_columns`).

The same walk as the Python function (the tests hold the two equal): from the element each
line starts in up to ``<body>``, each element's columns from its parent's, read on
libxml2's nodes (lxml's public C API) with a table of node addresses instead of element
proxies and a dict of them.  An element's ``class``, ``id`` and ``itemprop`` are read in C;
when all three are ASCII, their tokens and word parts are split and looked up in C, in a
table of the lexicon's ASCII names (:class:`Lexicon`, summed in sorted-name order as
``names.columns`` sums them); otherwise they are joined into the key of
:class:`~scrapy_detemplate.methods.names.KnownNames` and asked of it (Python's ``lower``,
``isalpha`` and ``split`` on any text; kept from page to page).

Optional: when this module was not built, or was built against another lxml, ``names`` runs
its Python walk.  ``page_columns`` returns ``None`` and ``page_columns_into`` ``False`` for a
page handed back (an attribute value that is not one text node, a value that is not UTF-8).
"""

from libc.stdlib cimport free
from libc.string cimport memcmp, memset, strcmp

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlNode

from scrapy_detemplate._nodes cimport Buf, attr_value, cstrlen, grow, parent_element, put, reserve

cetree.import_lxml__etree()

from lxml import etree as _etree

#: The lxml this module was compiled against (checked by ``_compiled.load``).
LXML_VERSION = _etree.LXML_VERSION

cdef extern from "Python.h":
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)

cdef enum:
    _MOST_KNOWN = 20

#: ``names.MOST_KNOWN`` (a test holds them equal).
MOST_KNOWN = _MOST_KNOWN


class _HandBack(Exception):
    pass


cdef struct Stats:
    double mean, least, most
    long long count


# Per node visited on this page (its address): its Stats; open addressing.
cdef struct Memo:
    size_t* keys
    Stats* values
    size_t mask
    Py_ssize_t n


cdef inline size_t _hash(size_t key) noexcept nogil:
    return (key >> 4) * <size_t> 11400714819323198485ULL >> 7


cdef Stats* _find(Memo* memo, xmlNode* c) noexcept nogil:
    cdef size_t key = <size_t> c, h = _hash(key) & memo.mask
    while memo.keys[h]:
        if memo.keys[h] == key:
            return &memo.values[h]
        h = (h + 1) & memo.mask
    return NULL


cdef int _grow_memo(Memo* memo, size_t size) except -1:
    """A table of ``size`` slots (a power of two) holding what ``memo`` held."""
    cdef size_t* keys = memo.keys
    cdef Stats* values = memo.values
    cdef size_t old = memo.mask + 1 if keys is not NULL else 0, i, h
    memo.keys = <size_t*> grow(NULL, size * sizeof(size_t))
    memset(memo.keys, 0, size * sizeof(size_t))
    try:
        memo.values = <Stats*> grow(NULL, size * sizeof(Stats))
    except MemoryError:
        free(memo.keys)
        memo.keys, memo.values = keys, values
        raise
    memo.mask = size - 1
    for i in range(old):
        if keys[i]:
            h = _hash(keys[i]) & memo.mask
            while memo.keys[h]:
                h = (h + 1) & memo.mask
            memo.keys[h], memo.values[h] = keys[i], values[i]
    free(keys)
    free(values)
    return 0


cdef int _put(Memo* memo, xmlNode* c, Stats stats) except -1:
    cdef size_t h
    if 2 * (memo.n + 1) > <Py_ssize_t> (memo.mask + 1):
        _grow_memo(memo, 2 * (memo.mask + 1))
    h = _hash(<size_t> c) & memo.mask
    while memo.keys[h]:
        h = (h + 1) & memo.mask
    memo.keys[h], memo.values[h] = <size_t> c, stats
    memo.n += 1
    return 0


cdef inline bint _is_body(xmlNode* c) noexcept nogil:
    """``c.tag == "body"``."""
    return c.type == tree.XML_ELEMENT_NODE and c.ns is NULL and strcmp(<const char*> c.name, "body") == 0


cdef int _attr(xmlNode* c, const char* name, const unsigned char** value) except -1:
    """``el.get(name) or ""`` into ``value`` (never NULL); hands back a value that is not one text node."""
    cdef const char* got = NULL
    cdef int found = attr_value(c, name, &got)
    if found < 0:
        raise _HandBack()
    value[0] = <const unsigned char*> got if found > 0 else <const unsigned char*> b""
    return 0


cdef int _own(xmlNode* c, Buf* buf, Buf* name, Lexicon lex, object known, Stats* own) except -1:
    """``c``'s own stats into ``own``: 1 when it has known names, else 0."""
    cdef const unsigned char* cls
    cdef const unsigned char* id_
    cdef const unsigned char* prop
    _attr(c, "class", &cls)
    _attr(c, "id", &id_)
    _attr(c, "itemprop", &prop)
    if not (cls[0] or id_[0] or prop[0]):
        return 0
    cdef int done = _own_in_c(lex, name, cls, id_, prop, own)
    if done != ASK_PYTHON:
        return done
    buf.len = 0
    put(buf, cls, cstrlen(cls))
    put(buf, <const unsigned char*> b"\0", 1)
    put(buf, id_, cstrlen(id_))
    put(buf, <const unsigned char*> b"\0", 1)
    put(buf, prop, cstrlen(prop))
    try:
        key = PyUnicode_DecodeUTF8(<const char*> buf.data, buf.len, NULL)
    except UnicodeDecodeError:
        raise _HandBack()
    found = known.own(key)  # kept, or computed and kept
    if found is None:
        return 0
    own.mean, own.least, own.most, own.count = found
    return 1


# ---------------------------------------------------------------- the lexicon in C

cdef enum:
    MOST_FOUND = 256  # more known names on one element: ask Python
    ASK_PYTHON = 2


cdef class Lexicon:
    """A lexicon's ASCII names (the only ones an ASCII attribute can show) in an
    open-addressing table: name -> its value and its rank in sorted order."""
    cdef list _keep  # the bytes the names point into
    cdef const char** names
    cdef Py_ssize_t* sizes
    cdef double* values
    cdef Py_ssize_t* table  # index + 1 into the arrays, 0 for an empty slot
    cdef size_t mask

    def __cinit__(self, lexicon):
        cdef Py_ssize_t n = 0, i
        cdef size_t size = 16, h
        ascii = [name for name in sorted(lexicon) if name.isascii()]  # sorted: an index is a rank
        while size < 2 * len(ascii) + 2:
            size *= 2
        self._keep = [name.encode() for name in ascii]
        self.names = <const char**> grow(NULL, (len(ascii) + 1) * sizeof(char*))
        self.sizes = <Py_ssize_t*> grow(NULL, (len(ascii) + 1) * sizeof(Py_ssize_t))
        self.values = <double*> grow(NULL, (len(ascii) + 1) * sizeof(double))
        self.table = <Py_ssize_t*> grow(NULL, size * sizeof(Py_ssize_t))
        memset(self.table, 0, size * sizeof(Py_ssize_t))
        self.mask = size - 1
        for i, name in enumerate(ascii):
            data = self._keep[i]
            self.names[i], self.sizes[i], self.values[i] = <const char*> data, len(data), float(lexicon[name])
            h = _fnv(<const unsigned char*> self.names[i], self.sizes[i]) & self.mask
            while self.table[h]:
                h = (h + 1) & self.mask
            self.table[h] = i + 1

    def __dealloc__(self):
        free(self.names)
        free(self.sizes)
        free(self.values)
        free(self.table)

    cdef Py_ssize_t find(self, const unsigned char* name, Py_ssize_t size) noexcept nogil:
        """The index of ``name`` (``size`` bytes), or -1."""
        cdef size_t h = _fnv(name, size) & self.mask
        cdef Py_ssize_t i
        while self.table[h]:
            i = self.table[h] - 1
            if self.sizes[i] == size and memcmp(self.names[i], name, size) == 0:
                return i
            h = (h + 1) & self.mask
        return -1


cdef inline size_t _fnv(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef size_t h = 1469598103934665603ULL
    cdef Py_ssize_t k
    for k in range(n):
        h = (h ^ s[k]) * <size_t> 1099511628211ULL
    return h ^ (h >> 29)


cdef struct Found:
    Py_ssize_t n
    Py_ssize_t at[MOST_FOUND]


cdef inline bint _ascii(const unsigned char* s) noexcept nogil:
    while s[0]:
        if s[0] >= 0x80:
            return False
        s += 1
    return True


cdef inline bint _blank(unsigned char b) noexcept nogil:
    """``str.split()``'s ASCII white space."""
    return b == 32 or 9 <= b <= 13 or 28 <= b <= 31


cdef inline bint _letter(unsigned char b) noexcept nogil:
    return 65 <= b <= 90 or 97 <= b <= 122


cdef inline bint _separator(unsigned char b) noexcept nogil:
    """What ``names._PART`` splits a token at, besides white space (a token has none)."""
    return b == 45 or b == 95 or b == 58 or b == 47  # - _ : /


cdef inline bint _letters(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        if not _letter(s[k]):
            return False
    return True


cdef bint _look(Lexicon lex, Buf* name, const char* prefix, const unsigned char* s, Py_ssize_t n, Found* found) except -1:
    """``prefix`` + ``s[:n]`` in lower case: its index added to ``found`` when known and new;
    False when ``found`` is full (ask Python)."""
    cdef Py_ssize_t k, i
    cdef unsigned char b
    name.len = 0
    put(name, <const unsigned char*> prefix, 2)
    reserve(name, n)
    for k in range(n):
        b = s[k]
        name.data[name.len + k] = b + 32 if 65 <= b <= 90 else b
    name.len += n
    i = lex.find(name.data, name.len)
    if i < 0:
        return True
    for k in range(found.n):
        if found.at[k] == i:
            return True
    if found.n == MOST_FOUND:
        return False
    found.at[found.n] = i
    found.n += 1
    return True


cdef bint _tokens(Lexicon lex, Buf* name, const char* prefix, const unsigned char* s, bint parts, Found* found) except -1:
    """Each token of ``s`` (split at white space): looked up whole with ``prefix``, and with
    ``parts`` each of its word parts (split at ``-_:/`` and lower-to-upper, three letters or
    more) as ``w:`` (``names._token_names``)."""
    cdef Py_ssize_t start, end, a, k
    start = 0
    while True:
        while s[start] and _blank(s[start]):
            start += 1
        if not s[start]:
            return True
        end = start
        while s[end] and not _blank(s[end]):
            end += 1
        if not _look(lex, name, prefix, s + start, end - start, found):
            return False
        if parts:
            a = start
            for k in range(start, end + 1):
                if k == end or _separator(s[k]) or (k > start and 97 <= s[k - 1] <= 122 and 65 <= s[k] <= 90):
                    if k - a >= 3 and _letters(s + a, k - a) and not _look(lex, name, "w:", s + a, k - a, found):
                        return False
                    a = k + 1 if k < end and _separator(s[k]) else k
        start = end


cdef int _own_in_c(Lexicon lex, Buf* name, const unsigned char* cls, const unsigned char* id_,
                   const unsigned char* prop, Stats* own) except -1:
    """``KnownNames.own`` of ASCII values, in C, into ``own``: 1 when it has known names, 0 when
    not, ``ASK_PYTHON`` for values that are not ASCII (or too many names)."""
    cdef Found found
    cdef Py_ssize_t k, j, i
    cdef double total = 0.0, v
    found.n = 0
    if not (_ascii(cls) and _ascii(id_) and _ascii(prop)):
        return ASK_PYTHON
    if not (_tokens(lex, name, "c:", cls, True, &found) and _tokens(lex, name, "i:", id_, True, &found)
            and _tokens(lex, name, "p:", prop, False, &found)):
        return ASK_PYTHON
    if not found.n:
        return 0
    for k in range(1, found.n):  # by rank: summed in element_names' (sorted) order
        i = found.at[k]
        j = k - 1
        while j >= 0 and found.at[j] > i:
            found.at[j + 1] = found.at[j]
            j -= 1
        found.at[j + 1] = i
    own.least = own.most = lex.values[found.at[0]]
    for k in range(found.n):  # Python's sum, min and max: from 0, the first of equal values
        v = lex.values[found.at[k]]
        total += v
        if v < own.least:
            own.least = v
        if v > own.most:
            own.most = v
    own.mean = total / found.n
    own.count = found.n
    return 1


def page_columns(list lines, object known):
    """``names._page_columns_py(lines, known)``, or ``None`` for a page handed back."""
    cdef Py_ssize_t n = len(lines), i
    cdef double* out = <double*> grow(NULL, (4 * n + 1) * sizeof(double))
    try:
        if not _columns(lines, known, out, 4):
            return None
        return [[out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]] for i in range(n)]
    finally:
        free(out)


def page_columns_into(list lines, object known, double[:, ::1] out not None, Py_ssize_t at):
    """:func:`page_columns` written into columns ``at`` to ``at + 3`` of ``out`` (a row per line),
    not made into Python lists: whether it was (``False``: handed back, ``out`` half written)."""
    if out.shape[0] != len(lines) or at < 0 or out.shape[1] < at + 4:
        raise ValueError(f"expected room for {len(lines)} rows of {at + 4} columns, got {out.shape[0]} of {out.shape[1]}")
    return True if not lines else _columns(lines, known, &out[0, at], out.shape[1])


cdef bint _columns(list lines, object known, double* out, Py_ssize_t stride) except -1:
    """The four columns of each line into ``out`` (row ``i`` at ``out + i * stride``); False: handed back."""
    cdef Memo memo
    cdef Buf buf, name
    cdef xmlNode** path = NULL
    cdef Py_ssize_t depth, cap = 0, k
    cdef xmlNode* node
    cdef Stats base, own
    cdef Stats* kept
    cdef Stats none
    cdef double* row
    cdef Lexicon lex = known.table
    if lex is None:
        lex = known.table = Lexicon(known.lexicon)
    cdef Py_ssize_t i = 0
    memset(&memo, 0, sizeof(Memo))
    memset(&buf, 0, sizeof(Buf))
    memset(&name, 0, sizeof(Buf))
    memset(&none, 0, sizeof(Stats))
    try:
        _grow_memo(&memo, 256)
        for line in lines:
            slots = line.slots
            row = out + i * stride
            i += 1
            if not slots:
                row[0] = row[1] = row[2] = row[3] = 0.0
                continue
            el, tail = slots[0]
            if not isinstance(el, _etree._Element):
                return False
            node = (<cetree._Element> el)._c_node
            if tail:
                node = parent_element(node)
            base = none
            depth = 0
            while node is not NULL and not _is_body(node):
                kept = _find(&memo, node)
                if kept is not NULL:
                    base = kept[0]
                    break
                if depth == cap:
                    cap = 2 * cap if cap else 64
                    path = <xmlNode**> grow(path, cap * sizeof(xmlNode*))
                path[depth] = node
                depth += 1
                node = parent_element(node)
            for k in range(depth - 1, -1, -1):
                node = path[k]
                if node.type == tree.XML_ELEMENT_NODE and _own(node, &buf, &name, lex, known, &own):
                    if base.count:  # Python's min and max: the earlier value unless the new one is beyond it
                        base.mean = own.mean
                        base.least = own.least if own.least < base.least else base.least
                        base.most = own.most if own.most > base.most else base.most
                        base.count += own.count
                    else:
                        base = own
                _put(&memo, node, base)
            row[0], row[1], row[2] = base.mean, base.least, base.most
            row[3] = <double> (base.count if base.count < _MOST_KNOWN else _MOST_KNOWN)
        return True
    except _HandBack:
        return False
    finally:
        free(memo.keys)
        free(memo.values)
        free(buf.data)
        free(name.data)
        free(path)
