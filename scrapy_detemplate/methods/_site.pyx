# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: extra_compile_args = -ffp-contract=off
"""The combined method's site evidence and forest scoring, compiled.

Each function here returns exactly what its Python reference returns (the
tests and ``bench/check_compiled_site.py`` hold them equal on every corpus
page):

* :func:`segment_lines` is :func:`scrapy_detemplate.methods.segments.segment_lines`:
  the text of each slot is read from libxml2's text nodes (lxml's public C
  API), its white space collapsed in C as ``str.split`` does (the Unicode
  white space included, on the UTF-8 bytes), and the segment key is BLAKE2b
  (RFC 7693, 8-byte digest) of the same ``path NUL text`` UTF-8 bytes that
  ``hashlib`` hashes, so the keys kept in a crawl's state are byte-identical.
  A page with anything unusual (a namespaced or non-element node on a path,
  bytes that are not UTF-8) is handed back: it returns ``None`` and the
  caller runs the Python function.
* :func:`expand` is :meth:`SegmentTable.expand` (the same dict updates, in the
  same order).
* :func:`text_line_keys` is Sandwich's ``line_key(path NUL text)`` for every line.
* :func:`site_rows` is the per-line loop of ``CombinedEvidence.site_features``
  (the same float operations in the same order).
* :class:`ForestScorer` is ``Forest.probability`` over many rows: the trees as
  flat C arrays, ``t = base`` then ``t += rate * value[leaf]`` tree by tree.

Optional: when this module was not built, or was built against another lxml,
the Python functions run.
"""

from libc.math cimport exp
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, strcmp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_CheckExact
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_CheckExact, PyLong_FromLongLong
from cpython.object cimport Py_LE, PyObject, PyObject_RichCompareBool
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeASCII

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlNode

cetree.import_lxml__etree()

from lxml import etree as _etree

#: The lxml this module was compiled against (checked by ``_compiled.load``).
LXML_VERSION = _etree.LXML_VERSION


cdef extern from *:
    """
    /* BLAKE2b as in RFC 7693 (unkeyed), for an 8-byte digest. */
    #include <stdint.h>
    #include <string.h>
    static const uint64_t sd_b2_iv[8] = {
        0x6A09E667F3BCC908ULL, 0xBB67AE8584CAA73BULL, 0x3C6EF372FE94F82BULL, 0xA54FF53A5F1D36F1ULL,
        0x510E527FADE682D1ULL, 0x9B05688C2B3E6C1FULL, 0x1F83D9ABFB41BD6BULL, 0x5BE0CD19137E2179ULL};
    static const uint8_t sd_b2_sigma[12][16] = {
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
        {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
        {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
        {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
        {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
        {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
        {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
        {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
        {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
        {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
        {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};
    #define SD_ROTR64(x, y) (((x) >> (y)) ^ ((x) << (64 - (y))))
    #define SD_G(a, b, c, d, x, y) do { \\
        v[a] = v[a] + v[b] + (x); v[d] = SD_ROTR64(v[d] ^ v[a], 32); \\
        v[c] = v[c] + v[d];       v[b] = SD_ROTR64(v[b] ^ v[c], 24); \\
        v[a] = v[a] + v[b] + (y); v[d] = SD_ROTR64(v[d] ^ v[a], 16); \\
        v[c] = v[c] + v[d];       v[b] = SD_ROTR64(v[b] ^ v[c], 63); } while (0)
    static void sd_b2_compress(uint64_t h[8], const uint8_t block[128], uint64_t t, int last) {
        uint64_t v[16], m[16];
        int i, j;
        for (i = 0; i < 8; i++) { v[i] = h[i]; v[i + 8] = sd_b2_iv[i]; }
        v[12] ^= t;
        if (last) v[14] = ~v[14];
        for (i = 0; i < 16; i++) {
            uint64_t w = 0;
            for (j = 7; j >= 0; j--) w = (w << 8) | block[8 * i + j];
            m[i] = w;
        }
        for (i = 0; i < 12; i++) {
            const uint8_t *s = sd_b2_sigma[i];
            SD_G(0, 4, 8, 12, m[s[0]], m[s[1]]);
            SD_G(1, 5, 9, 13, m[s[2]], m[s[3]]);
            SD_G(2, 6, 10, 14, m[s[4]], m[s[5]]);
            SD_G(3, 7, 11, 15, m[s[6]], m[s[7]]);
            SD_G(0, 5, 10, 15, m[s[8]], m[s[9]]);
            SD_G(1, 6, 11, 12, m[s[10]], m[s[11]]);
            SD_G(2, 7, 8, 13, m[s[12]], m[s[13]]);
            SD_G(3, 4, 9, 14, m[s[14]], m[s[15]]);
        }
        for (i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
    }
    /* The first 8 bytes of BLAKE2b-64(data), as the little-endian word hashlib's digest() spells. */
    static uint64_t sd_blake2b_8(const uint8_t *data, size_t n) {
        uint64_t h[8];
        uint8_t block[128];
        uint64_t t = 0;
        int i;
        for (i = 0; i < 8; i++) h[i] = sd_b2_iv[i];
        h[0] ^= 0x01010000ULL ^ 8ULL;  /* no key, 8-byte digest */
        while (n > 128) {
            t += 128;
            sd_b2_compress(h, data, t, 0);
            data += 128;
            n -= 128;
        }
        memset(block, 0, sizeof block);
        if (n) memcpy(block, data, n);
        t += n;
        sd_b2_compress(h, block, t, 1);
        return h[0];
    }
    """
    uint64_t sd_blake2b_8(const uint8_t* data, size_t n) nogil


cdef const char* _HEX = b"0123456789abcdef"


cdef inline str _hex8(uint64_t h):
    """``hexdigest()`` of an 8-byte digest whose little-endian word is ``h``."""
    cdef char out[16]
    cdef int i
    cdef unsigned int b
    for i in range(8):
        b = (h >> (8 * i)) & 0xFF
        out[2 * i] = _HEX[b >> 4]
        out[2 * i + 1] = _HEX[b & 15]
    return PyUnicode_DecodeASCII(out, 16, NULL)


def blake2b_8(bytes data):
    """``hashlib.blake2b(data, digest_size=8).hexdigest()`` (for the tests)."""
    return _hex8(sd_blake2b_8(<const uint8_t*> PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data)))


# ---------------------------------------------------------------------------------------------
# A growing byte buffer.

cdef struct Buf:
    char* data
    Py_ssize_t size
    Py_ssize_t cap


cdef int _reserve(Buf* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t cap
    cdef char* grown
    if b.size + extra <= b.cap:
        return 0
    cap = max(2 * b.cap, b.size + extra, 256)
    grown = <char*> realloc(b.data, cap)
    if grown is NULL:
        raise MemoryError()
    b.data, b.cap = grown, cap
    return 0


# ---------------------------------------------------------------------------------------------
# White space as str.split() sees it, on UTF-8.

cdef inline int _space(const unsigned char* p) noexcept nogil:
    """Bytes taken by the white space character at ``p`` (0: not white space)."""
    cdef unsigned char c = p[0]
    if c < 0x80:
        return 1 if (9 <= c <= 13 or 28 <= c <= 32) else 0
    if c == 0xC2:
        return 2 if (p[1] == 0x85 or p[1] == 0xA0) else 0
    if c == 0xE1:
        return 3 if (p[1] == 0x9A and p[2] == 0x80) else 0
    if c == 0xE2:
        if p[1] == 0x80:
            return 3 if (0x80 <= p[2] <= 0x8A or p[2] == 0xA8 or p[2] == 0xA9 or p[2] == 0xAF) else 0
        if p[1] == 0x81:
            return 3 if p[2] == 0x9F else 0
        return 0
    if c == 0xE3:
        return 3 if (p[1] == 0x80 and p[2] == 0x80) else 0
    return 0


cdef inline int _char_bytes(const unsigned char* p) noexcept nogil:
    """Length of the UTF-8 character at ``p`` (0: not well-formed UTF-8: ask Python)."""
    cdef unsigned char c = p[0]
    cdef int n, k
    if c < 0x80:
        return 1
    if c < 0xC2:
        return 0
    if c < 0xE0:
        n = 2
    elif c < 0xF0:
        n = 3
        # no overlong forms, no surrogates (Python's strict decoder refuses them)
        if (c == 0xE0 and p[1] < 0xA0) or (c == 0xED and p[1] >= 0xA0):
            return 0
    elif c < 0xF5:
        n = 4
        if (c == 0xF0 and p[1] < 0x90) or (c == 0xF4 and p[1] >= 0x90):
            return 0
    else:
        return 0
    for k in range(1, n):
        if (p[k] & 0xC0) != 0x80:
            return 0
    return n


cdef inline bint _is_text(xmlNode* c) noexcept nogil:
    return c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE


cdef inline xmlNode* _text_or_skip(xmlNode* c) noexcept nogil:
    """lxml's ``_textNodeOrSkip``: the text node at ``c``, skipping XInclude markers, else NULL."""
    while c is not NULL:
        if _is_text(c):
            return c
        if c.type == tree.XML_XINCLUDE_START or c.type == tree.XML_XINCLUDE_END:
            c = c.next
            continue
        return NULL
    return NULL


cdef inline Py_ssize_t _collapse(xmlNode* run, Buf* b) except -2:
    """Append ``" ".join(raw.split())`` of the run of text nodes from ``run`` (lxml's ``.text``
    or ``.tail``) to ``b``; its length in characters, or -1 when it is not well-formed UTF-8."""
    cdef xmlNode* node = _text_or_skip(run)
    cdef const unsigned char* p
    cdef bint words = False
    cdef bint gap = False
    cdef Py_ssize_t chars = 0
    cdef int w, k
    while node is not NULL:
        p = <const unsigned char*> node.content
        if p is not NULL:
            while p[0]:
                w = _space(p)
                if w:
                    gap = True
                    p += w
                    continue
                w = _char_bytes(p)
                if w == 0:
                    return -1
                _reserve(b, w + 1)
                if gap and words:
                    b.data[b.size] = 32
                    b.size += 1
                    chars += 1
                for k in range(w):
                    b.data[b.size + k] = p[k]
                b.size += w
                p += w
                chars += 1
                words = True
                gap = False
        node = _text_or_skip(node.next)
    return chars


cdef inline bint _element_like(xmlNode* c) noexcept nogil:
    """lxml's ``_isElement``."""
    return (c.type == tree.XML_ELEMENT_NODE or c.type == tree.XML_COMMENT_NODE
            or c.type == tree.XML_ENTITY_REF_NODE or c.type == tree.XML_PI_NODE)


cdef inline xmlNode* _parent(xmlNode* c) noexcept nogil:
    """``getparent()``: lxml's ``_parentElement``."""
    if c is NULL or not _element_like(c):
        return NULL
    c = c.parent
    if c is NULL or not _element_like(c):
        return NULL
    return c


cdef tuple _LAYOUT = ()  # segments.LAYOUT_TAGS in UTF-8


cdef inline bint _layout(const char* name) noexcept:
    cdef bytes s
    for s in _LAYOUT:
        if strcmp(name, s) == 0:
            return True
    return False


cdef class _Paths:
    """``segment_lines``'s memo: element -> (path, block), filled top-down."""

    cdef dict index  # node address -> entry number
    cdef list paths  # entry -> path as UTF-8 bytes
    cdef list blocks  # entry -> block number
    cdef list block_elements
    cdef list block_parents
    cdef cetree._Document doc

    def __cinit__(self):
        self.index = {}
        self.paths = []
        self.blocks = []
        self.block_elements = []
        self.block_parents = []

    cdef inline Py_ssize_t find(self, xmlNode* c):
        cdef PyObject* found = PyDict_GetItem(self.index, <size_t> c)
        return -1 if found is NULL else <Py_ssize_t> <object> found

    cdef inline Py_ssize_t add(self, xmlNode* c, bytes path, Py_ssize_t block):
        cdef Py_ssize_t n = len(self.paths)
        self.paths.append(path)
        self.blocks.append(block)
        self.index[<size_t> c] = n
        return n

    cdef inline Py_ssize_t new_block(self, xmlNode* c, Py_ssize_t parent):
        self.block_elements.append(cetree.elementFactory(self.doc, c))
        self.block_parents.append(parent)
        return len(self.block_elements) - 1

    cdef Py_ssize_t locate(self, xmlNode* owner) except -2:
        """``_locate``: climb to a known ancestor (or the top), then fill down; -1: ask Python."""
        cdef list chain = []
        cdef xmlNode* el = owner
        cdef Py_ssize_t known = -1
        cdef Py_ssize_t i, block
        cdef bytes path, name
        while el is not NULL:
            if el.type != tree.XML_ELEMENT_NODE or el.ns is not NULL:
                return -1
            known = self.find(el)
            if known >= 0:
                break
            chain.append(<size_t> el)
            if strcmp(<const char*> el.name, "body") == 0:
                break
            el = _parent(el)
        if known >= 0:
            path, block = self.paths[known], self.blocks[known]
        else:
            path, block = b"", -1
        for i in range(len(chain) - 1, -1, -1):
            el = <xmlNode*> <size_t> chain[i]
            name = <bytes> <const char*> el.name
            path = path + b"/" + name if path else name
            if block < 0 or _layout(<const char*> el.name):
                block = self.new_block(el, block)
            known = self.add(el, path, block)
        return known


def segment_lines(lines, segmentation):
    """:func:`scrapy_detemplate.methods.segments.segment_lines`, or ``None``: ask Python.

    ``segmentation`` is the ``Segmentation`` class (the result's type).
    """
    global _LAYOUT
    if not _LAYOUT:
        from scrapy_detemplate.methods.segments import LAYOUT_TAGS
        _LAYOUT = tuple(tag.encode() for tag in sorted(LAYOUT_TAGS))
    cdef _Paths memo = _Paths()
    cdef list keys = []
    cdef list lengths = []
    cdef list blocks = []
    cdef list line_of = []
    cdef Buf b
    b.data, b.size, b.cap = NULL, 0, 0
    cdef Py_ssize_t line_index = -1
    cdef Py_ssize_t entry, block, chars, start
    cdef xmlNode* c
    cdef xmlNode* owner
    cdef xmlNode* parent
    cdef bytes path
    cdef cetree._Element el
    cdef bint is_tail
    try:
        for line in lines:
            line_index += 1
            for slot in line.slots:
                el, tail = slot
                is_tail = tail
                c = el._c_node
                if not is_tail and c.type != tree.XML_ELEMENT_NODE:
                    return None
                b.size = 0
                chars = _collapse(c.next if is_tail else c.children, &b)
                if chars < 0:
                    return None
                if chars == 0:
                    continue
                owner = _parent(c) if is_tail else c
                if owner is NULL:
                    continue
                if owner.type != tree.XML_ELEMENT_NODE or owner.ns is not NULL:
                    return None
                if memo.doc is None:
                    memo.doc = el._doc
                elif el._doc is not memo.doc:
                    return None
                entry = memo.find(owner)
                if entry < 0:
                    # Usually the parent is known already: one step down, no climb.
                    parent = _parent(owner) if strcmp(<const char*> owner.name, "body") != 0 else NULL
                    entry = memo.find(parent) if parent is not NULL else -1
                    if entry >= 0:
                        block = memo.blocks[entry]
                        if _layout(<const char*> owner.name):
                            block = memo.new_block(owner, block)
                        entry = memo.add(owner, memo.paths[entry] + b"/" + <bytes> <const char*> owner.name, block)
                    else:
                        entry = memo.locate(owner)
                        if entry < 0:
                            return None
                path = memo.paths[entry]
                # The key's bytes: path NUL text (the text is in the buffer already).
                start = b.size
                _reserve(&b, len(path) + 1)
                memcpy(b.data + b.size, PyBytes_AS_STRING(path), len(path))
                b.data[b.size + len(path)] = 0
                b.size += len(path) + 1
                keys.append(_hex8(_key_of(&b, start)))
                lengths.append(chars)
                blocks.append(memo.blocks[entry])
                line_of.append(line_index)
    finally:
        free(b.data)
    return segmentation(keys, lengths, blocks, line_of, memo.block_elements, memo.block_parents)


cdef uint64_t _key_of(Buf* b, Py_ssize_t start) except? 0:
    """The hash of ``path NUL text`` where the buffer holds ``text`` then, from ``start``, ``path NUL``."""
    cdef Py_ssize_t n = b.size
    _reserve(b, n)
    # path NUL, then text: copied after the buffer's content, hashed, and dropped.
    memcpy(b.data + n, b.data + start, n - start)
    memcpy(b.data + n + (n - start), b.data, start)
    return sd_blake2b_8(<const uint8_t*> (b.data + n), n)


# ---------------------------------------------------------------------------------------------
# SegmentTable.expand

cdef enum:
    _DF_BITS = 24
    _DF_MAX = (1 << 24) - 1
    _SPANS = 256


def expand(dict entries, list keys, long long clock, bint expires, span):
    """:meth:`SegmentTable.expand` after its clock is advanced to ``clock``: the page's DFs."""
    cdef dict dfs = {}
    cdef long long stamp = clock << _DF_BITS
    cdef long long v, old, df
    cdef int overflow
    cdef PyObject* found
    cdef long long spans[_SPANS]
    cdef Py_ssize_t i
    for i in range(_SPANS):
        spans[i] = -1
    for key in keys:
        if PyDict_GetItem(dfs, key) is not NULL:
            continue
        found = PyDict_GetItem(entries, key)
        df = 1
        if found is not NULL:
            value = <object> found
            v = PyLong_AsLongLongAndOverflow(value, &overflow) if PyLong_CheckExact(value) else -1
            if v < 0 or overflow or v >= (1LL << 62):
                # Not a small packed count (a bad state): Python's arithmetic, and its errors.
                old_obj = value & _DF_MAX
                if not expires or clock - (value >> _DF_BITS) <= span(old_obj):
                    df = min(old_obj + 1, _DF_MAX)
            else:
                old = v & _DF_MAX
                if not expires or clock - (v >> _DF_BITS) <= _span(spans, old, span):
                    df = min(old + 1, _DF_MAX)
        entry = PyLong_FromLongLong(stamp | df)
        PyDict_SetItem(entries, key, entry)
        PyDict_SetItem(dfs, key, PyLong_FromLongLong(df))
    return dfs


cdef inline long long _span(long long* spans, long long df, span) except? -1:
    if df < _SPANS:
        if spans[df] < 0:
            spans[df] = span(df)
        return spans[df]
    return span(df)


# ---------------------------------------------------------------------------------------------
# Sandwich's keys of text lines

def text_line_keys(lines, line_key):
    """``[line_key(f"{line.path}\\x00{line.text}") for line in lines]`` (``line_key``: for text
    that is not UTF-8 encodable, lone surrogates)."""
    cdef list out = []
    cdef Buf b
    cdef const char* p
    cdef const char* t
    cdef Py_ssize_t np, nt
    b.data, b.size, b.cap = NULL, 0, 0
    try:
        for line in lines:
            path, text = line.path, line.text
            try:
                p = PyUnicode_AsUTF8AndSize(path, &np)
                t = PyUnicode_AsUTF8AndSize(text, &nt)
            except UnicodeEncodeError:
                out.append(line_key(f"{path}\x00{text}"))
                continue
            b.size = 0
            _reserve(&b, np + nt + 1)
            memcpy(b.data, p, np)
            b.data[np] = 0
            memcpy(b.data + np + 1, t, nt)
            out.append(PyLong_FromLongLong(<int64_t> sd_blake2b_8(<const uint8_t*> b.data, np + nt + 1)))
    finally:
        free(b.data)
    return out


# ---------------------------------------------------------------------------------------------
# CombinedEvidence.site_features' per-line loop

def site_rows(list keys, list lengths, list line_of, dict dfs, Py_ssize_t count,
              long long window, matched, double log_seen, double warm):
    """The rows of ``site_features`` for ``count`` lines (see the Python loop there)."""
    cdef double* repeated = <double*> malloc(max(count, 1) * sizeof(double))
    cdef long long* chars = <long long*> malloc(max(count, 1) * sizeof(long long))
    cdef char* lcs = <char*> malloc(max(count, 1))
    cdef Py_ssize_t i, n = len(keys), line
    cdef long long length, df
    cdef double share, q, peer = 0.0 if matched is None else 1.0
    cdef PyObject* found
    cdef list out = []
    if repeated is NULL or chars is NULL or lcs is NULL:
        free(repeated)
        free(chars)
        free(lcs)
        raise MemoryError()
    try:
        if len(lengths) != n or len(line_of) != n:
            raise ValueError("zip() arguments differ in length")
        for i in range(count):
            repeated[i] = 0.0
            chars[i] = 0
            lcs[i] = 0
        if window:
            for i in range(n):
                line = <object> PyList_GET_ITEM(line_of, i)
                if line < 0 or line >= count:
                    raise IndexError("list index out of range")
                length = <object> PyList_GET_ITEM(lengths, i)
                found = PyDict_GetItem(dfs, <object> PyList_GET_ITEM(keys, i))
                df = 1 if found is NULL else <object> found
                q = <double> (df - 1) / <double> window
                if 1.0 < q:
                    q = 1.0
                repeated[line] += <double> length * q
                chars[line] += length
        if matched is not None:
            for line in matched:
                if 0 <= line < count:
                    lcs[line] = 1
        for i in range(count):
            share = repeated[i] / <double> chars[i] if chars[i] else 0.0
            out.append([share, 1.0 if lcs[i] else 0.0, peer, log_seen, share * warm])
    finally:
        free(repeated)
        free(chars)
        free(lcs)
    return out


# ---------------------------------------------------------------------------------------------
# Forest scoring

cdef class ForestScorer:
    """``Forest.probability`` for many rows at once: every tree's nodes as flat C arrays."""

    cdef int* feature
    cdef double* threshold
    cdef int* left
    cdef int* right
    cdef double* leaf  # rate * value, as the generated code adds it
    cdef int* roots
    cdef int trees
    cdef Py_ssize_t features
    cdef double base
    cdef list thresholds  # the Python floats, for rows of other numbers than floats

    def __cinit__(self, forest):
        cdef Py_ssize_t total = sum(len(t[2]) for t in forest.trees)
        cdef Py_ssize_t at = 0, k, n
        cdef int node
        self.trees = len(forest.trees)
        self.features = len(forest.features)
        self.base = forest.base
        self.feature = <int*> malloc(max(total, 1) * sizeof(int))
        self.left = <int*> malloc(max(total, 1) * sizeof(int))
        self.right = <int*> malloc(max(total, 1) * sizeof(int))
        self.threshold = <double*> malloc(max(total, 1) * sizeof(double))
        self.leaf = <double*> malloc(max(total, 1) * sizeof(double))
        self.roots = <int*> malloc(max(self.trees, 1) * sizeof(int))
        if not (self.feature and self.left and self.right and self.threshold and self.leaf and self.roots):
            raise MemoryError()
        self.thresholds = []
        rate = forest.rate
        for k, (feature, threshold, left, right, value) in enumerate(forest.trees):
            n = len(left)
            if not (n and len(feature) == len(threshold) == len(right) == len(value) == n):
                raise ValueError(f"tree {k}: node arrays of different lengths")
            self.roots[k] = at
            for node in range(n):
                if left[node] == -1:
                    self.left[at + node] = -1
                    self.leaf[at + node] = rate * value[node]
                    self.feature[at + node] = 0
                    self.right[at + node] = -1
                    self.threshold[at + node] = 0.0
                else:
                    # Children after their parent (as scikit-learn numbers them): no cycles.
                    if not (node < left[node] < n and node < right[node] < n):
                        raise ValueError(f"tree {k}: node {node}'s children are not after it")
                    if not 0 <= feature[node] < self.features:
                        raise ValueError(f"tree {k}: node {node}'s feature {feature[node]} is out of range")
                    self.left[at + node] = at + left[node]
                    self.right[at + node] = at + right[node]
                    self.feature[at + node] = feature[node]
                    self.threshold[at + node] = threshold[node]
                    self.leaf[at + node] = 0.0
                self.thresholds.append(threshold[node])
            at += n

    def __dealloc__(self):
        free(self.feature)
        free(self.left)
        free(self.right)
        free(self.threshold)
        free(self.leaf)
        free(self.roots)

    cdef double total(self, list x) except? -1.0:
        cdef double t = self.base
        cdef int k, node
        cdef PyObject* v
        cdef int le
        for k in range(self.trees):
            node = self.roots[k]
            while self.left[node] != -1:
                v = PyList_GET_ITEM(x, self.feature[node])
                if PyFloat_CheckExact(<object> v):
                    le = PyFloat_AS_DOUBLE(<object> v) <= self.threshold[node]
                else:  # an int, a bool...: compared as Python compares it
                    le = PyObject_RichCompareBool(<object> v, self.thresholds[node], Py_LE)
                node = self.left[node] if le else self.right[node]
            t += self.leaf[node]
        return t

    def probabilities(self, rows):
        """``[forest.probability(row) for row in rows]``."""
        cdef list out = []
        cdef list x
        cdef double t
        for row in rows:
            x = row if type(row) is list else list(row)
            if PyList_GET_SIZE(x) != self.features:
                raise ValueError(f"expected {self.features} features, got {PyList_GET_SIZE(x)}")
            t = self.total(x)
            t = t if t < 50.0 else 50.0  # min(50.0, t)
            t = t if t > -50.0 else -50.0  # max(-50.0, t)
            out.append(1.0 / (1.0 + exp(-t)))
        return out
