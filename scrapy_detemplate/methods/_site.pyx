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
  caller runs the Python function.  :class:`SegmentKeys` keeps the keys made,
  by their bytes, so a template's segments are not hashed again page after page.
* :func:`expand` is :meth:`SegmentTable.expand` (the same dict updates, in the
  same order), :func:`sweep` its :meth:`SegmentTable.sweep`.
* :func:`text_line_keys` is Sandwich's ``line_key(path NUL text)`` for every line.
* :func:`site_rows` is the per-line loop of ``CombinedEvidence.site_features``
  (the same float operations in the same order).
* :class:`ForestScorer` is ``Forest.probability`` over many rows: the trees as
  flat C arrays, ``t = base`` then ``t += rate * value[leaf]`` tree by tree.
* :class:`FeatureRows` holds a page's feature rows in one C array of doubles,
  from the evidence (``_density.line_features_into``, :meth:`FeatureRows.site_columns`)
  to the trees, and :func:`decide_rows` is ``combined.decide`` on it: the same
  numbers and lines as the Python lists, without a Python float per feature
  (building and freeing ~140 rows of 126 floats cost about a fifth of a parse).

Optional: when this module was not built, or was built against another lxml,
the Python functions run.
"""

from libc.math cimport exp, expm1, isfinite
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcmp, memcpy, memset, strcmp, strlen
from cpython.buffer cimport PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_CheckExact
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_Check, PyLong_CheckExact, PyLong_FromLongLong
from cpython.object cimport Py_LE, PyObject, PyObject_RichCompareBool
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlNode

from scrapy_detemplate._nodes cimport Buf, grow, parent_element, reserve, space, text_or_skip

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
    #define SD_ROUND(r) do { \\
        SD_G(0, 4, 8, 12, m[sd_b2_sigma[r][0]], m[sd_b2_sigma[r][1]]); \\
        SD_G(1, 5, 9, 13, m[sd_b2_sigma[r][2]], m[sd_b2_sigma[r][3]]); \\
        SD_G(2, 6, 10, 14, m[sd_b2_sigma[r][4]], m[sd_b2_sigma[r][5]]); \\
        SD_G(3, 7, 11, 15, m[sd_b2_sigma[r][6]], m[sd_b2_sigma[r][7]]); \\
        SD_G(0, 5, 10, 15, m[sd_b2_sigma[r][8]], m[sd_b2_sigma[r][9]]); \\
        SD_G(1, 6, 11, 12, m[sd_b2_sigma[r][10]], m[sd_b2_sigma[r][11]]); \\
        SD_G(2, 7, 8, 13, m[sd_b2_sigma[r][12]], m[sd_b2_sigma[r][13]]); \\
        SD_G(3, 4, 9, 14, m[sd_b2_sigma[r][14]], m[sd_b2_sigma[r][15]]); } while (0)
    static void sd_b2_compress(uint64_t h[8], const uint8_t block[128], uint64_t t, int last) {
        uint64_t v[16], m[16];
        int i;
        for (i = 0; i < 8; i++) { v[i] = h[i]; v[i + 8] = sd_b2_iv[i]; }
        v[12] ^= t;
        if (last) v[14] = ~v[14];
        for (i = 0; i < 16; i++) {
            const uint8_t *q = block + 8 * i;
            m[i] = (uint64_t)q[0] | ((uint64_t)q[1] << 8) | ((uint64_t)q[2] << 16) | ((uint64_t)q[3] << 24)
                 | ((uint64_t)q[4] << 32) | ((uint64_t)q[5] << 40) | ((uint64_t)q[6] << 48) | ((uint64_t)q[7] << 56);
        }
        /* Unrolled: constant sigma indexes, so the message words stay in registers. */
        SD_ROUND(0); SD_ROUND(1); SD_ROUND(2); SD_ROUND(3); SD_ROUND(4); SD_ROUND(5);
        SD_ROUND(6); SD_ROUND(7); SD_ROUND(8); SD_ROUND(9); SD_ROUND(10); SD_ROUND(11);
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


cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object o)


cdef inline str _hex8(uint64_t h):
    """``hexdigest()`` of an 8-byte digest whose little-endian word is ``h``."""
    cdef object s = PyUnicode_New(16, 127)  # a compact ASCII string, written in place
    cdef char* out = <char*> PyUnicode_DATA(s)
    cdef int i
    cdef unsigned int b
    for i in range(8):
        b = (h >> (8 * i)) & 0xFF
        out[2 * i] = _HEX[b >> 4]
        out[2 * i + 1] = _HEX[b & 15]
    return <str> s


def blake2b_8(bytes data):
    """``hashlib.blake2b(data, digest_size=8).hexdigest()`` (for the tests)."""
    return _hex8(sd_blake2b_8(<const uint8_t*> PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data)))


# ---------------------------------------------------------------------------------------------
# Text as str.split() sees it, on UTF-8 (white space: _nodes.space).

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


cdef inline Py_ssize_t _collapse(xmlNode* run, Buf* b) except -2:
    """Append ``" ".join(raw.split())`` of the run of text nodes from ``run`` (lxml's ``.text``
    or ``.tail``) to ``b``; its length in characters, or -1 when it is not well-formed UTF-8."""
    cdef xmlNode* node = text_or_skip(run)
    cdef const unsigned char* p
    cdef bint words = False
    cdef bint gap = False
    cdef Py_ssize_t chars = 0
    cdef int w, k
    cdef unsigned char c
    cdef unsigned char* out
    while node is not NULL:
        p = <const unsigned char*> node.content
        if p is not NULL:
            reserve(b, strlen(<const char*> p) + 1)  # the most this node adds: a space, then its bytes
            out = b.data + b.len
            while p[0]:
                c = p[0]
                if 32 < c < 0x80 or (c < 28 and not 9 <= c <= 13):  # plain ASCII, not white space
                    if gap and words:
                        out[0] = 32
                        out += 1
                        chars += 1
                    gap = False
                    out[0] = c
                    out += 1
                    p += 1
                    chars += 1
                    words = True
                    continue
                w = space(p, 3)  # the text ends in a NUL: no byte past it is read
                if w:
                    gap = True
                    p += w
                    continue
                w = _char_bytes(p)
                if w == 0:
                    return -1
                if gap and words:
                    out[0] = 32
                    out += 1
                    chars += 1
                gap = False
                for k in range(w):
                    out[k] = p[k]
                out += w
                p += w
                chars += 1
                words = True
            b.len = out - b.data
        node = text_or_skip(node.next)
    return chars


cdef tuple _LAYOUT = ()  # segments.LAYOUT_TAGS in UTF-8
cdef char _LAYOUT_FIRST[256]  # whether some layout tag starts with this byte


cdef inline bint _layout(const char* name) noexcept:
    cdef bytes s
    cdef const char* t
    if not _LAYOUT_FIRST[<unsigned char> name[0]]:
        return False
    for s in _LAYOUT:
        t = <const char*> s
        if t[0] == name[0] and t[1] == name[1] and strcmp(name, t) == 0:  # t[1] is there: t[0] is not NUL
            return True
    return False


cdef inline bint _is_body(const char* name) noexcept nogil:
    return name[0] == c'b' and strcmp(name, "body") == 0


cdef class _Memo:
    """``segment_lines``'s memo: element -> (path, block), in C arrays.

    A hash table from node address to entry number; an entry's path is a slice
    of one byte arena.  Blocks are numbered as the Python function numbers them.
    """

    cdef size_t* slots  # node addresses (0: empty)
    cdef Py_ssize_t* slot_entry
    cdef Py_ssize_t mask
    cdef Py_ssize_t count
    cdef Py_ssize_t* path_at
    cdef Py_ssize_t* path_len
    cdef Py_ssize_t* block
    cdef Py_ssize_t cap
    cdef Buf arena
    cdef list block_elements
    cdef bint elements  # whether block_elements is filled (an element proxy per block)
    cdef list block_parents
    cdef cetree._Document doc

    def __cinit__(self):
        self.mask = 255
        self.slots = <size_t*> calloc(self.mask + 1, sizeof(size_t))
        self.slot_entry = <Py_ssize_t*> malloc((self.mask + 1) * sizeof(Py_ssize_t))
        self.cap = 128
        self.path_at = <Py_ssize_t*> malloc(self.cap * sizeof(Py_ssize_t))
        self.path_len = <Py_ssize_t*> malloc(self.cap * sizeof(Py_ssize_t))
        self.block = <Py_ssize_t*> malloc(self.cap * sizeof(Py_ssize_t))
        self.arena.data, self.arena.len, self.arena.cap = NULL, 0, 0
        if not (self.slots and self.slot_entry and self.path_at and self.path_len and self.block):
            raise MemoryError()
        self.block_elements = []
        self.block_parents = []

    def __dealloc__(self):
        free(self.slots)
        free(self.slot_entry)
        free(self.path_at)
        free(self.path_len)
        free(self.block)
        free(self.arena.data)

    cdef int presize(self, Py_ssize_t entries) except -1:
        """Room for about ``entries`` entries before the first one (no rehash on the way)."""
        cdef Py_ssize_t n = self.mask + 1
        if self.count:
            return 0
        while 2 * (entries + 1) > n:
            n *= 2
        if n == self.mask + 1:
            return 0
        free(self.slots)
        self.slots = <size_t*> calloc(n, sizeof(size_t))
        self.slot_entry = <Py_ssize_t*> grow(self.slot_entry, n * sizeof(Py_ssize_t))
        if self.slots is NULL:
            raise MemoryError()
        self.mask = n - 1
        return 0

    cdef inline Py_ssize_t _slot(self, size_t key) noexcept:
        cdef Py_ssize_t i = <Py_ssize_t> (((key >> 4) * <size_t> 0x9E3779B97F4A7C15ULL) >> 40) & self.mask
        while self.slots[i] != 0 and self.slots[i] != key:
            i = (i + 1) & self.mask
        return i

    cdef inline Py_ssize_t find(self, xmlNode* c) noexcept:
        cdef Py_ssize_t i = self._slot(<size_t> c)
        return self.slot_entry[i] if self.slots[i] != 0 else -1

    cdef int _grow(self) except -1:
        cdef size_t* old = self.slots
        cdef Py_ssize_t* old_entry = self.slot_entry
        cdef Py_ssize_t n = self.mask + 1, i, j
        self.mask = 2 * n - 1
        self.slots = <size_t*> calloc(2 * n, sizeof(size_t))
        self.slot_entry = <Py_ssize_t*> malloc(2 * n * sizeof(Py_ssize_t))
        if self.slots is NULL or self.slot_entry is NULL:
            free(old)
            free(old_entry)
            raise MemoryError()
        for i in range(n):
            if old[i] != 0:
                j = self._slot(old[i])
                self.slots[j] = old[i]
                self.slot_entry[j] = old_entry[i]
        free(old)
        free(old_entry)
        return 0

    cdef Py_ssize_t add(self, xmlNode* c, Py_ssize_t parent, Py_ssize_t block) except -1:
        """A new entry for ``c``: the path of entry ``parent`` (-1: none) then ``/name``, and ``block``."""
        cdef Py_ssize_t n = self.count, i, at, length
        cdef const char* name = <const char*> c.name
        cdef Py_ssize_t name_len = strlen(name)
        if 2 * (n + 1) > self.mask + 1:
            self._grow()
        if n == self.cap:
            self.cap *= 2
            self.path_at = <Py_ssize_t*> grow(self.path_at, self.cap * sizeof(Py_ssize_t))
            self.path_len = <Py_ssize_t*> grow(self.path_len, self.cap * sizeof(Py_ssize_t))
            self.block = <Py_ssize_t*> grow(self.block, self.cap * sizeof(Py_ssize_t))
        length = (self.path_len[parent] + 1 + name_len) if parent >= 0 else name_len
        reserve(&self.arena, length)
        at = self.arena.len
        if parent >= 0:
            memcpy(self.arena.data + at, self.arena.data + self.path_at[parent], self.path_len[parent])
            self.arena.data[at + self.path_len[parent]] = c'/'
        memcpy(self.arena.data + at + length - name_len, name, name_len)
        self.arena.len += length
        self.path_at[n], self.path_len[n], self.block[n] = at, length, block
        i = self._slot(<size_t> c)
        self.slots[i] = <size_t> c
        self.slot_entry[i] = n
        self.count = n + 1
        return n

    cdef inline Py_ssize_t new_block(self, xmlNode* c, Py_ssize_t parent) except -1:
        if self.elements:
            self.block_elements.append(cetree.elementFactory(self.doc, c))
        self.block_parents.append(parent)
        return len(self.block_parents) - 1

    cdef Py_ssize_t locate(self, xmlNode* owner) except -2:
        """``_locate``: climb to a known ancestor (or the top), then fill down; -1: ask Python."""
        cdef xmlNode* chain[64]
        cdef list more = None  # beyond 64 levels
        cdef Py_ssize_t depth = 0
        cdef xmlNode* el = owner
        cdef Py_ssize_t known = -1, i, block
        while el is not NULL:
            if el.type != tree.XML_ELEMENT_NODE or el.ns is not NULL or el.name is NULL or el.name[0] == 0:
                return -1
            known = self.find(el)
            if known >= 0:
                break
            if depth < 64:
                chain[depth] = el
            else:
                if more is None:
                    more = []
                more.append(<size_t> el)
            depth += 1
            if _is_body(<const char*> el.name):
                break
            el = parent_element(el)
        block = self.block[known] if known >= 0 else -1
        for i in range(depth - 1, -1, -1):
            el = chain[i] if i < 64 else <xmlNode*> <size_t> more[i - 64]
            if block < 0 or _layout(<const char*> el.name):
                block = self.new_block(el, block)
            known = self.add(el, known, block)
        return known


def segment_lines(lines, segmentation, bint elements=True, SegmentKeys known=None):
    """:func:`scrapy_detemplate.methods.segments.segment_lines`, or ``None``: ask Python.

    ``segmentation`` is the ``Segmentation`` class (the result's type); without
    ``elements``, its ``block_elements`` is left empty (no element proxy is made);
    the keys are looked up in ``known`` first (the same keys, hashed once).
    """
    global _LAYOUT
    cdef bytes tag
    if not _LAYOUT:
        from scrapy_detemplate.methods.segments import LAYOUT_TAGS
        _LAYOUT = tuple(t.encode() for t in sorted(LAYOUT_TAGS))
        for tag in _LAYOUT:
            _LAYOUT_FIRST[<unsigned char> (<const char*> tag)[0]] = 1
    cdef _Memo memo = _Memo()
    memo.elements = elements
    memo.presize(2 * len(lines))  # a line's elements and their ancestors, roughly
    cdef list keys = []
    cdef list lengths = []
    cdef list blocks = []
    cdef list line_of = []
    cdef Buf b
    b.data, b.len, b.cap = NULL, 0, 0
    cdef Py_ssize_t line_index = -1
    cdef Py_ssize_t entry, block, chars, n
    cdef xmlNode* c
    cdef xmlNode* owner
    cdef xmlNode* parent
    cdef cetree._Element el
    cdef bint is_tail
    try:
        for line in lines:
            line_index += 1
            index = None
            for slot in line.slots:
                el, tail = slot
                is_tail = tail
                c = el._c_node
                if not is_tail and c.type != tree.XML_ELEMENT_NODE:
                    return None
                # The buffer: path NUL text; the text first, after room for the longest path so far.
                b.len = 0
                chars = _collapse(c.next if is_tail else c.children, &b)
                if chars < 0:
                    return None
                if chars == 0:
                    continue
                owner = parent_element(c) if is_tail else c
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
                    parent = parent_element(owner) if not _is_body(<const char*> owner.name) else NULL
                    entry = memo.find(parent) if parent is not NULL else -1
                    if entry >= 0 and owner.name is not NULL and owner.name[0] != 0:
                        block = memo.block[entry]
                        if _layout(<const char*> owner.name):
                            block = memo.new_block(owner, block)
                        entry = memo.add(owner, entry, block)
                    else:
                        entry = memo.locate(owner)
                        if entry < 0:
                            return None
                keys.append(_key_of(&b, <const char*> memo.arena.data + memo.path_at[entry], memo.path_len[entry], known))
                lengths.append(chars)
                blocks.append(memo.block[entry])
                if index is None:
                    index = line_index
                line_of.append(index)
    finally:
        free(b.data)
    return segmentation(keys, lengths, blocks, line_of, memo.block_elements, memo.block_parents)


cdef str _key_of(Buf* b, const char* path, Py_ssize_t path_len, SegmentKeys known):
    """The table key (hex BLAKE2b) of ``path NUL text``, the buffer holding ``text``: from
    ``known`` when it holds these bytes (and kept there when it does not)."""
    cdef Py_ssize_t n = b.len
    reserve(b, n + path_len + 1)
    memcpy(b.data + n, path, path_len)
    b.data[n + path_len] = 0
    memcpy(b.data + n + path_len + 1, b.data, n)
    if known is not None:
        return known.key(<const char*> (b.data + n), n + path_len + 1)
    return _hex8(sd_blake2b_8(<const uint8_t*> (b.data + n), n + path_len + 1))


cdef inline uint64_t _quick_hash(const char* data, Py_ssize_t size) noexcept nogil:
    """A fast 64-bit hash of ``data`` (for :class:`SegmentKeys`' table only; never stored)."""
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t> size, w
    cdef Py_ssize_t i = 0
    while i + 8 <= size:
        memcpy(&w, data + i, 8)
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL
        h ^= h >> 32
        i += 8
    w = 0
    memcpy(&w, data + i, size - i)
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL
    return h ^ (h >> 29)


cdef enum:
    _KEY_BYTES = 256  # longer segments (mostly a page's own text) are not kept by SegmentKeys


cdef struct _KeyEntry:
    uint64_t hash  # _quick_hash of the bytes (0: an empty slot)
    Py_ssize_t at  # where the bytes are in the arena
    Py_ssize_t size
    PyObject* key  # the hex key (a reference held)


cdef class SegmentKeys:
    """Segment keys already made, by the bytes they hash (``path NUL text``).

    A segment that stands on page after page (most of a template) gets the same
    ``str`` back instead of BLAKE2b and a new string, and :func:`expand`'s lookups
    in the site's table find its hash already made.  A lookup compares the bytes
    themselves, so a key is always the BLAKE2b of its bytes.  Bounded: when
    ``most`` keys (or ``64 * most`` bytes) are held, all are let go; segments over
    256 bytes are not kept.
    """

    cdef _KeyEntry* slots
    cdef Py_ssize_t mask
    cdef readonly Py_ssize_t count
    cdef readonly Py_ssize_t most
    cdef Buf arena

    def __cinit__(self, Py_ssize_t most=1 << 13):
        if most < 1:
            raise ValueError(f"bad most={most!r}")
        self.most = most
        self.mask = 1
        while self.mask + 1 < 2 * most:
            self.mask = 2 * self.mask + 1
        self.slots = <_KeyEntry*> calloc(self.mask + 1, sizeof(_KeyEntry))
        self.arena.data, self.arena.len, self.arena.cap = NULL, 0, 0
        if self.slots is NULL:
            raise MemoryError()

    def __dealloc__(self):
        self.clear()
        free(self.slots)
        free(self.arena.data)

    def __len__(self):
        return self.count

    def clear(self):
        """Let every key go."""
        cdef Py_ssize_t i
        if self.slots is NULL:
            return
        for i in range(self.mask + 1):
            if self.slots[i].hash:
                Py_XDECREF(self.slots[i].key)
                self.slots[i].hash, self.slots[i].key = 0, NULL
        self.count = 0
        self.arena.len = 0

    def hex(self, bytes data):
        """The key of ``data`` (for the tests): ``blake2b(data, digest_size=8).hexdigest()``."""
        return self.key(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))

    cdef str key(self, const char* data, Py_ssize_t size):
        """The hex BLAKE2b of ``data``: found, or made and kept."""
        cdef uint64_t h
        cdef Py_ssize_t i
        cdef str made
        if size > _KEY_BYTES:
            return _hex8(sd_blake2b_8(<const uint8_t*> data, size))
        h = _quick_hash(data, size)
        if h == 0:
            h = 1
        i = <Py_ssize_t> (h & <uint64_t> self.mask)
        while self.slots[i].hash:
            if (self.slots[i].hash == h and self.slots[i].size == size
                    and memcmp(self.arena.data + self.slots[i].at, data, size) == 0):
                return <str> self.slots[i].key
            i = (i + 1) & self.mask
        made = _hex8(sd_blake2b_8(<const uint8_t*> data, size))
        if self.count >= self.most or self.arena.len + size > 64 * self.most:
            self.clear()
            i = <Py_ssize_t> (h & <uint64_t> self.mask)
        reserve(&self.arena, size)
        memcpy(self.arena.data + self.arena.len, data, size)
        self.slots[i].hash, self.slots[i].at, self.slots[i].size = h, self.arena.len, size
        Py_INCREF(made)
        self.slots[i].key = <PyObject*> made
        self.arena.len += size
        self.count += 1
        return made


# ---------------------------------------------------------------------------------------------
# SegmentTable.expand

cdef enum:
    _DF_BITS = 24
    _DF_MAX = (1 << 24) - 1
    _SPANS = 256


cdef extern from "Python.h":
    dict _PyDict_NewPresized(Py_ssize_t minused)


cdef class _Stamps:
    """One page's table expansion: the DF a key reaches from its entry, and the entry objects
    written (``stamp | df``, one per DF, kept alive for the call)."""

    cdef long long clock
    cdef long long stamp
    cdef bint expires
    cdef object span
    cdef long long spans[_SPANS]  # living time by DF, -1 until asked
    cdef list stamped  # df -> the int stamp | df written by this call
    cdef dict stamped_big  # the same, for DFs of _SPANS and more

    def __cinit__(self, long long clock, bint expires, span):
        cdef Py_ssize_t i
        self.clock, self.stamp, self.expires, self.span = clock, clock << _DF_BITS, expires, span
        for i in range(_SPANS):
            self.spans[i] = -1
        self.stamped = [None] * _SPANS
        self.stamped_big = {}

    cdef long long counted(self, PyObject* found) except -1:
        """The DF of a key whose table entry is ``found`` (NULL: none) once this page counts it."""
        cdef long long v, old
        cdef int overflow
        if found is NULL:
            return 1
        value = <object> found
        v = PyLong_AsLongLongAndOverflow(value, &overflow) if PyLong_CheckExact(value) else -1
        if v < 0 or overflow or v >= (1LL << 62):
            # Not a small packed count (a bad state): Python's arithmetic, and its errors.
            old_obj = value & _DF_MAX
            if not self.expires or self.clock - (value >> _DF_BITS) <= self.span(old_obj):
                return min(old_obj + 1, _DF_MAX)
            return 1
        old = v & _DF_MAX
        if not self.expires or self.clock - (v >> _DF_BITS) <= _span(self.spans, old, self.span):
            return min(old + 1, _DF_MAX)
        return 1

    cdef long long written(self, PyObject* found) except -2:
        """The DF of ``found`` when it is an entry this call wrote (the key was counted on this
        page already), else -1.  No older entry can be one: they were made before the call."""
        cdef long long v, df
        cdef int overflow
        if found is NULL or not PyLong_CheckExact(<object> found):
            return -1
        v = PyLong_AsLongLongAndOverflow(<object> found, &overflow)
        if overflow or v < 0 or (v >> _DF_BITS) != self.clock:
            return -1
        df = v & _DF_MAX
        if df < _SPANS:
            return df if found == <PyObject*> self.stamped[df] else -1
        return df if PyDict_GetItem(self.stamped_big, df) == found else -1

    cdef object entry(self, long long df):
        """The table entry of a key counted with ``df`` on this page (one object per DF)."""
        if df < _SPANS:
            made = self.stamped[df]
            if made is None:
                made = self.stamped[df] = PyLong_FromLongLong(self.stamp | df)
            return made
        made = self.stamped_big.get(df)
        if made is None:
            made = self.stamped_big[df] = PyLong_FromLongLong(self.stamp | df)
        return made


def expand(dict entries, list keys, long long clock, bint expires, span):
    """:meth:`SegmentTable.expand` after its clock is advanced to ``clock``: the page's DFs."""
    cdef dict dfs = _PyDict_NewPresized(len(keys))  # no growing on the way
    cdef _Stamps page = _Stamps(clock, expires, span)
    cdef long long df
    for key in keys:
        if PyDict_GetItem(dfs, key) is not NULL:
            continue
        df = page.counted(PyDict_GetItem(entries, key))
        PyDict_SetItem(entries, key, page.entry(df))
        PyDict_SetItem(dfs, key, PyLong_FromLongLong(df))
    return dfs


def expand_each(dict entries, list keys, long long clock, bint expires, span):
    """:func:`expand`, the DF of each key of ``keys`` in a list beside it (a key repeated on
    the page has its first DF again), without the dict of the page's DFs.

    A key seen earlier on this page is told by its entry: a stamp object this call wrote
    (:meth:`_Stamps.written`).  With ``clock < 1`` a stamp could be a shared small int: then
    :func:`expand`'s dict is read instead.
    """
    if clock < 1:
        dfs = expand(entries, keys, clock, expires, span)
        return [dfs[key] for key in keys]
    cdef _Stamps page = _Stamps(clock, expires, span)
    cdef Py_ssize_t i, n = len(keys)
    cdef list out = [None] * n
    cdef long long df
    cdef PyObject* found
    for i in range(n):
        key = <object> PyList_GET_ITEM(keys, i)
        found = PyDict_GetItem(entries, key)
        df = page.written(found)
        if df < 0:
            df = page.counted(found)
            PyDict_SetItem(entries, key, page.entry(df))
        out[i] = df
    return out


cdef inline long long _span(long long* spans, long long df, span) except? -1:
    if df < _SPANS:
        if spans[df] < 0:
            spans[df] = span(df)
        return spans[df]
    return span(df)


def sweep(dict entries, long long clock, span):
    """:meth:`SegmentTable.sweep` at ``clock``: the entries with ``clock - L >= T(df)`` deleted;
    how many."""
    cdef long long spans[_SPANS]
    cdef long long v
    cdef int overflow
    cdef Py_ssize_t i
    cdef list dead = []
    for i in range(_SPANS):
        spans[i] = -1
    for key, value in entries.items():
        v = PyLong_AsLongLongAndOverflow(value, &overflow) if PyLong_CheckExact(value) else -1
        if v < 0 or overflow or v >= (1LL << 62):
            # Not a small packed count (a bad state): Python's arithmetic, and its errors.
            if clock - (value >> _DF_BITS) >= span(value & _DF_MAX):
                dead.append(key)
        elif clock - (v >> _DF_BITS) >= _span(spans, v & _DF_MAX, span):
            dead.append(key)
    for key in dead:
        del entries[key]
    return len(dead)


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
    b.data, b.len, b.cap = NULL, 0, 0
    try:
        for line in lines:
            path, text = line.path, line.text
            try:
                p = PyUnicode_AsUTF8AndSize(path, &np)
                t = PyUnicode_AsUTF8AndSize(text, &nt)
            except UnicodeEncodeError:
                out.append(line_key(f"{path}\x00{text}"))
                continue
            b.len = 0
            reserve(&b, np + nt + 1)
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
    cdef double* values = <double*> malloc(max(count * 5, 1) * sizeof(double))
    cdef double* row
    cdef Py_ssize_t i
    cdef list out = []
    if values is NULL:
        raise MemoryError()
    try:
        _site_rows(keys, lengths, line_of, dfs, count, window, matched, log_seen, warm, values, 5)
        for i in range(count):
            row = values + 5 * i
            out.append([row[0], row[1], row[2], row[3], row[4]])
    finally:
        free(values)
    return out


cdef int _site_rows(list keys, list lengths, list line_of, dfs, Py_ssize_t count, long long window,
                    matched, double log_seen, double warm, double* out, Py_ssize_t stride) except -1:
    """The five site features of line ``i`` in ``out[i * stride:i * stride + 5]``; ``dfs`` is a
    dict of key -> DF, or a list of the DF of each key (:func:`expand_each`)."""
    cdef double* repeated = <double*> malloc(max(count, 1) * sizeof(double))
    cdef long long* chars = <long long*> malloc(max(count, 1) * sizeof(long long))
    cdef char* lcs = <char*> malloc(max(count, 1))
    cdef Py_ssize_t i, n = len(keys), line
    cdef long long length, df
    cdef double share, q, peer = 0.0 if matched is None else 1.0
    cdef double* row
    cdef PyObject* found
    if repeated is NULL or chars is NULL or lcs is NULL:
        free(repeated)
        free(chars)
        free(lcs)
        raise MemoryError()
    try:
        if len(lengths) != n or len(line_of) != n:
            raise ValueError("zip() arguments differ in length")
        aligned = type(dfs) is list
        if aligned and len(<list> dfs) != n:
            raise ValueError("a DF for each key expected")
        elif not aligned and type(dfs) is not dict:
            raise TypeError(f"dfs must be a dict or a list, not {type(dfs).__name__}")
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
                if aligned:
                    df = <object> PyList_GET_ITEM(<list> dfs, i)
                else:
                    found = PyDict_GetItem(<dict> dfs, <object> PyList_GET_ITEM(keys, i))
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
            row = out + i * stride
            row[0], row[1], row[2], row[3], row[4] = share, 1.0 if lcs[i] else 0.0, peer, log_seen, share * warm
    finally:
        free(repeated)
        free(chars)
        free(lcs)
    return 0


# ---------------------------------------------------------------------------------------------
# A page's feature rows in one C array

cdef enum:
    _KEEP_AT_MOST = 1 << 22  # bytes a FeatureRows keeps between pages, per block


cdef class FeatureRows:
    """The combined method's feature rows of one page in one C array of doubles, never as
    Python floats: ``count`` rows of ``width`` (page evidence, then site evidence).

    The page evidence is written in through the buffer protocol (a 2-D C-contiguous
    array, ``density.line_features_into``), the site evidence by :meth:`site_columns`;
    :func:`decide_rows` scores and decides on it.  :meth:`tolist` gives the rows as the
    Python functions make them (the same floats).

    One object serves page after page (:meth:`reshape`): its memory is kept, as
    ``_density`` keeps its own, since a large ``malloc`` right after a parse makes
    glibc consolidate the parse's freed chunks (a tenth of a parse, every page).
    """

    cdef double* data
    cdef readonly Py_ssize_t count
    cdef readonly Py_ssize_t width
    cdef Py_ssize_t shape[2]
    cdef Py_ssize_t strides[2]
    cdef double* probability  # per row: its probability of content, where the scorer last wrote it
    cdef double* scratch  # the scorer's gathered features
    cdef Py_ssize_t rows_room  # rows data and probability have room for
    cdef Py_ssize_t scratch_room  # doubles scratch has room for
    cdef int exports  # buffers handed out and not released

    def __cinit__(self, Py_ssize_t count, Py_ssize_t width):
        if width < 1:
            raise ValueError(f"bad shape ({count}, {width})")
        self.width = width
        self.strides[0], self.strides[1] = width * sizeof(double), sizeof(double)
        self.reshape(count)

    def __dealloc__(self):
        free(self.data)
        free(self.probability)
        free(self.scratch)

    def reshape(self, Py_ssize_t count):
        """Make these ``count`` fresh rows (every feature 0.0), in the memory kept (grown when
        a page needs more, given back when one needed a lot).  Not while a buffer is out."""
        cdef double* data
        cdef double* probability
        cdef Py_ssize_t room = count if count > 1 else 1
        if count < 0:
            raise ValueError(f"bad shape ({count}, {self.width})")
        if self.exports:
            raise BufferError("the rows are exported")
        if (room > self.rows_room or self.data is NULL
                or (self.rows_room * self.width * sizeof(double) > _KEEP_AT_MOST
                    and room * self.width * sizeof(double) <= _KEEP_AT_MOST)):
            data = <double*> realloc(self.data, room * self.width * sizeof(double))
            if data is NULL:
                raise MemoryError()
            self.data = data
            probability = <double*> realloc(self.probability, room * sizeof(double))
            if probability is NULL:
                raise MemoryError()
            self.probability = probability
            self.rows_room = room
        self.count = count
        self.shape[0], self.shape[1] = count, self.width
        memset(self.data, 0, count * self.width * sizeof(double))

    cdef double* room_to_score(self, Py_ssize_t doubles) except NULL:
        """The scorer's scratch, with room for ``doubles``."""
        cdef double* grown
        cdef Py_ssize_t room = doubles if doubles > 1 else 1
        if (room > self.scratch_room or self.scratch is NULL
                or (self.scratch_room * sizeof(double) > _KEEP_AT_MOST and room * sizeof(double) <= _KEEP_AT_MOST)):
            grown = <double*> realloc(self.scratch, room * sizeof(double))
            if grown is NULL:
                raise MemoryError()
            self.scratch, self.scratch_room = grown, room
        return self.scratch

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        # C-contiguous doubles: the shape, strides and format only to a consumer that asks.
        buffer.buf = <char*> self.data
        buffer.obj = self
        buffer.len = self.count * self.width * sizeof(double)
        buffer.readonly = 0
        buffer.itemsize = sizeof(double)
        buffer.format = NULL
        if flags & PyBUF_FORMAT:
            buffer.format = b"d"
        buffer.ndim = 2
        buffer.shape = NULL
        if flags & PyBUF_ND:
            buffer.shape = self.shape
        buffer.strides = NULL
        if (flags & PyBUF_STRIDES) == PyBUF_STRIDES:
            buffer.strides = self.strides
        buffer.suboffsets = NULL
        buffer.internal = NULL
        self.exports += 1

    def __releasebuffer__(self, Py_buffer* buffer):
        self.exports -= 1

    def __len__(self):
        return self.count

    def value(self, Py_ssize_t i, Py_ssize_t j):
        """Row ``i``'s feature ``j``."""
        if not (0 <= i < self.count and 0 <= j < self.width):
            raise IndexError(f"no feature ({i}, {j}) in {self.count} rows of {self.width}")
        return self.data[i * self.width + j]

    def tolist(self):
        """The rows as lists of Python floats."""
        cdef Py_ssize_t i, j
        cdef double* row
        cdef list out = [None] * self.count
        for i in range(self.count):
            row = self.data + i * self.width
            out[i] = [row[j] for j in range(self.width)]
        return out

    def set_columns(self, list rows, Py_ssize_t at):
        """Each row's features from column ``at`` on, from ``rows`` (lists of numbers, as the
        Python functions make them: one per row, all of the same length)."""
        cdef Py_ssize_t i, j, size
        cdef double* row
        if len(rows) != self.count:
            raise ValueError(f"expected {self.count} rows, got {len(rows)}")
        for i in range(self.count):
            values = rows[i]
            size = len(values)
            if at < 0 or at + size > self.width:
                raise ValueError(f"{size} features from column {at} do not fit in {self.width}")
            row = self.data + i * self.width + at
            for j in range(size):
                row[j] = values[j]

    def site_columns(self, list keys, list lengths, list line_of, dfs, long long window, matched,
                     double log_seen, double warm, Py_ssize_t at):
        """:func:`site_rows` written into columns ``at`` to ``at + 4`` of every row."""
        if at < 0 or at + 5 > self.width:
            raise ValueError(f"5 site features from column {at} do not fit in {self.width}")
        _site_rows(keys, lengths, line_of, dfs, self.count, window, matched, log_seen, warm,
                   self.data + at, self.width)


# ---------------------------------------------------------------------------------------------
# Forest scoring

cdef struct Node:
    double threshold  # at a leaf: 1.0, over a slot holding 0.0 (the step stays put)
    double value  # at a leaf, rate * value (what the generated code adds)
    int feature  # the used-feature slot compared (see ForestScorer.used)
    int child  # the left child (the right one is next to it); at a leaf, the leaf itself
    int leaf  # whether it is a leaf


def unfit(forest):
    """Why :class:`ForestScorer` cannot hold ``forest`` ("" when it can): what ``Forest`` refuses
    (:func:`~scrapy_detemplate.methods.forest.tree_problem`: node arrays of different lengths, a
    child outside the tree or reached twice, a feature out of range; asked again here, since the
    C arrays rely on it and ``trees`` is a list anyone can change), and a child numbered before its
    parent, which the C layout cannot hold (scikit-learn numbers children after their parent)."""
    from scrapy_detemplate.methods.forest import tree_problem  # here: forest.py imports this module
    cdef Py_ssize_t k, node
    features = len(forest.features)
    for k, tree in enumerate(forest.trees):
        problem = tree_problem(tree, features)
        if problem:
            return f"tree {k}: {problem}"
        left, right = tree[2], tree[3]
        for node in range(len(left)):
            if left[node] != -1 and not (node < left[node] and node < right[node]):
                return f"tree {k}: node {node}'s children are not after it"
    return ""


cdef class ForestScorer:
    """``Forest.probability`` for many rows at once (a model :func:`unfit` finds nothing wrong with).

    Every tree's nodes are laid out breadth first in one C array, the two
    children of a node side by side, so a step down is ``child + (not x <= t)``
    without a branch, and a leaf steps to itself, so eight rows walk a tree
    together.  Only the features the trees compare are read from a row, once,
    into a C array of doubles (an ``int`` or ``bool`` that a double holds
    exactly compares as Python compares it; a row with any other value is scored
    comparing Python objects).  Each row's sum is ``t = base`` then
    ``t += rate * value[leaf]`` tree by tree, as ``Forest.probability`` adds.
    """

    cdef Node* nodes
    cdef int* roots
    cdef int trees
    cdef readonly Py_ssize_t features
    cdef int* used  # feature number of each used-feature slot
    cdef int nused
    cdef double base
    cdef list thresholds  # node -> the Python float (rows of other numbers)

    def __cinit__(self, forest):
        cdef Py_ssize_t total = 0, at = 0, k, n, head, slot
        cdef int node, f
        cdef list order
        cdef dict position
        problem = unfit(forest)
        if problem:
            raise ValueError(problem)
        self.trees = len(forest.trees)
        self.features = len(forest.features)
        self.base = forest.base
        for t in forest.trees:
            total += len(t[2])
        self.nodes = <Node*> malloc(max(total, 1) * sizeof(Node))
        self.roots = <int*> malloc(max(self.trees, 1) * sizeof(int))
        self.used = <int*> malloc(max(self.features, 1) * sizeof(int))
        if not (self.nodes and self.roots and self.used):
            raise MemoryError()
        self.thresholds = [None] * total
        slot_of = {}
        rate = forest.rate
        for k, (feature, threshold, left, right, value) in enumerate(forest.trees):
            # Breadth first from the root, a node's children side by side.
            order = [0]
            position = {0: 0}
            head = 0
            while head < len(order):
                node = order[head]
                head += 1
                if left[node] != -1:
                    position[left[node]] = len(order)
                    order.append(left[node])
                    position[right[node]] = len(order)
                    order.append(right[node])
            self.roots[k] = at
            for head in range(len(order)):
                node = order[head]
                if left[node] == -1:
                    self.nodes[at + head].value = rate * value[node]
                    self.nodes[at + head].threshold = 1.0
                    self.nodes[at + head].feature = -1  # set below: the slot after the used ones
                    self.nodes[at + head].child = at + head
                    self.nodes[at + head].leaf = 1
                else:
                    f = feature[node]
                    if f not in slot_of:
                        slot_of[f] = len(slot_of)
                        self.used[slot_of[f]] = f
                    self.nodes[at + head].threshold = threshold[node]
                    self.nodes[at + head].value = 0.0
                    self.nodes[at + head].feature = slot_of[f]
                    self.nodes[at + head].child = at + position[left[node]]
                    self.nodes[at + head].leaf = 0
                    self.thresholds[at + head] = threshold[node]
            at += len(order)
        self.nused = len(slot_of)
        for node in range(at):
            if self.nodes[node].leaf:
                self.nodes[node].feature = self.nused

    def __dealloc__(self):
        free(self.nodes)
        free(self.roots)
        free(self.used)

    def probabilities(self, rows):
        """``[forest.probability(row) for row in rows]``, the same floats."""
        cdef list xs = rows if type(rows) is list else list(rows)
        cdef Py_ssize_t count = len(xs), i
        cdef int stride = self.nused + 1
        cdef double* x = <double*> malloc(max(count * stride, 1) * sizeof(double))
        cdef double* t = <double*> malloc(max(count, 1) * sizeof(double))
        cdef char* exact = <char*> malloc(max(count, 1))
        cdef list out
        if x is NULL or t is NULL or exact is NULL:
            free(x)
            free(t)
            free(exact)
            raise MemoryError()
        try:
            for i in range(count):
                row = xs[i]
                if type(row) is not list:
                    row = list(row)  # the caller's rows are left as they are
                if PyList_GET_SIZE(row) != self.features:
                    raise ValueError(f"expected {self.features} features, got {PyList_GET_SIZE(row)}")
                exact[i] = _doubles(<list> row, self.used, self.nused, x + i * stride)
                x[i * stride + self.nused] = 0.0  # the leaves' slot
            self._totals(x, count, t)
            for i in range(count):
                if not exact[i]:
                    row = xs[i]
                    t[i] = self._total_objects(row if type(row) is list else list(row))
            out = [None] * count
            for i in range(count):
                out[i] = _sigmoid(t[i])
            return out
        finally:
            free(x)
            free(t)
            free(exact)

    cdef int _score_rows(self, FeatureRows rows, const Py_ssize_t* which, Py_ssize_t count) except -1:
        """The probabilities of rows ``which[:count]`` of ``rows``, into ``rows.probability``."""
        cdef int stride = self.nused + 1, j
        cdef Py_ssize_t i
        cdef const double* row
        cdef double* x
        cdef double* t
        if not count:
            return 0
        x = rows.room_to_score(count * (stride + 1))
        t = x + count * stride
        for i in range(count):
            row = rows.data + which[i] * rows.width
            for j in range(self.nused):
                x[i * stride + j] = row[self.used[j]]
            x[i * stride + self.nused] = 0.0  # the leaves' slot
        self._totals(x, count, t)
        for i in range(count):
            rows.probability[which[i]] = _sigmoid(t[i])
        return 0

    cdef void _totals(self, const double* x, Py_ssize_t count, double* t) noexcept:
        """Each row's sum ``t = base`` then ``t += rate * value[leaf]`` tree by tree; row ``i``'s
        used features are ``x[i * (nused + 1):]``, then 0.0 (the slot the leaves read)."""
        cdef Py_ssize_t i
        cdef int k, root, stride = self.nused + 1
        cdef const Node* nodes = self.nodes
        cdef const double* xj[8]
        cdef int nj[8]
        cdef int j, n0, n1, n2, n3, n4, n5, n6, n7
        for i in range(count):
            t[i] = self.base
        for k in range(self.trees):
            root = self.roots[k]
            # Eight rows at a time: eight independent walks in flight.  A leaf steps to
            # itself, so the walks that end first wait there for the others.
            for i in range(0, count, 8):
                for j in range(8):
                    xj[j] = x + min(i + j, count - 1) * stride
                n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = root
                while not (nodes[n0].leaf & nodes[n1].leaf & nodes[n2].leaf & nodes[n3].leaf
                           & nodes[n4].leaf & nodes[n5].leaf & nodes[n6].leaf & nodes[n7].leaf):
                    n0 = nodes[n0].child + (not (xj[0][nodes[n0].feature] <= nodes[n0].threshold))
                    n1 = nodes[n1].child + (not (xj[1][nodes[n1].feature] <= nodes[n1].threshold))
                    n2 = nodes[n2].child + (not (xj[2][nodes[n2].feature] <= nodes[n2].threshold))
                    n3 = nodes[n3].child + (not (xj[3][nodes[n3].feature] <= nodes[n3].threshold))
                    n4 = nodes[n4].child + (not (xj[4][nodes[n4].feature] <= nodes[n4].threshold))
                    n5 = nodes[n5].child + (not (xj[5][nodes[n5].feature] <= nodes[n5].threshold))
                    n6 = nodes[n6].child + (not (xj[6][nodes[n6].feature] <= nodes[n6].threshold))
                    n7 = nodes[n7].child + (not (xj[7][nodes[n7].feature] <= nodes[n7].threshold))
                nj[0], nj[1], nj[2], nj[3], nj[4], nj[5], nj[6], nj[7] = n0, n1, n2, n3, n4, n5, n6, n7
                for j in range(min(8, count - i)):
                    t[i + j] += nodes[nj[j]].value

    cdef double _total_objects(self, list x) except? -1.0:
        """One row's sum, comparing its values as Python objects."""
        cdef double total = self.base
        cdef int k, node
        for k in range(self.trees):
            node = self.roots[k]
            while not self.nodes[node].leaf:
                le = x[self.used[self.nodes[node].feature]] <= self.thresholds[node]
                node = self.nodes[node].child + (0 if le else 1)
            total += self.nodes[node].value
        return total


cdef inline double _sigmoid(double t) noexcept:
    """``1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, t))))``."""
    t = t if t < 50.0 else 50.0  # min(50.0, t)
    t = t if t > -50.0 else -50.0  # max(-50.0, t)
    return 1.0 / (1.0 + exp(-t))


cdef inline bint _doubles(list row, const int* used, int nused, double* out) except -1:
    """The used features of ``row`` as doubles; False when one is not a float, or an
    int a double holds exactly (the row is then scored on Python objects)."""
    cdef int j
    cdef PyObject* v
    cdef long long n
    cdef int overflow
    for j in range(nused):
        v = PyList_GET_ITEM(row, used[j])
        if PyFloat_CheckExact(<object> v):
            out[j] = PyFloat_AS_DOUBLE(<object> v)
        elif PyLong_Check(<object> v):  # int and bool
            n = PyLong_AsLongLongAndOverflow(<object> v, &overflow)
            if overflow or not -(1LL << 53) <= n <= (1LL << 53):
                return False
            out[j] = <double> n
        else:
            return False
    return True


ctypedef struct _Ranked:
    double p
    double size
    Py_ssize_t i


cdef int _more_probable(const void* a, const void* b) noexcept nogil:
    """qsort's order for ``combined.expected_f1_cut``: probability down, then line up."""
    cdef const _Ranked* x = <const _Ranked*> a
    cdef const _Ranked* y = <const _Ranked*> b
    if x.p > y.p:
        return -1
    if x.p < y.p:
        return 1
    return (x.i > y.i) - (x.i < y.i)


cdef double _expected_f1_cut(_Ranked* ranked, Py_ssize_t n, double keep_weight) noexcept nogil:
    """``combined.expected_f1_cut`` on ``n`` lines (sorted in place); the same sums in the same order."""
    cdef Py_ssize_t k
    cdef double gold = 0.0, total = 0.0, best = -1.0, cut = 1.0, kept = 0.0, size = 0.0, f1
    qsort(ranked, n, sizeof(_Ranked), _more_probable)
    for k in range(n):
        gold += ranked[k].p * ranked[k].size
        total += ranked[k].size
    for k in range(n):
        kept += ranked[k].p * ranked[k].size
        size += ranked[k].size
        if k + 1 < n and ranked[k + 1].p == ranked[k].p:
            continue
        f1 = 2.0 * kept / (size + gold) if size + gold > 0 else 0.0
        if keep_weight != 0.0:
            f1 = (1.0 - keep_weight) * f1 + keep_weight * (size / total if total > 0 else 0.0)
        if f1 > best:
            best = f1
            cut = ranked[k].p
    return cut


def page_shares(FeatureRows rows not None, tuple columns, double new_df):
    """``combined.page_shares`` on ``rows`` (the same floats, or ``None``).

    ``columns`` are the line's words (``log1p``), under ``<pre>``, under ``<code>``, under
    ``<td>``, link density, in the container, site DF share and in the LCS; ``new_df`` is
    ``combined.NEW_DF``.
    """
    cdef Py_ssize_t words, under_pre, under_code, under_td, link, in_container, site_df, in_lcs, i
    cdef double total = 0.0, code = 0.0, table = 0.0, links = 0.0, inside = 0.0, new = 0.0, w
    cdef const double* r
    words, under_pre, under_code, under_td, link, in_container, site_df, in_lcs = columns
    for j in columns:
        if not 0 <= j < rows.width:
            raise IndexError(f"no column {j} in rows of {rows.width}")
    for i in range(rows.count):
        r = rows.data + i * rows.width
        w = expm1(r[words])
        total += w
        code += w * (1.0 if (r[under_pre] != 0.0 or r[under_code] != 0.0) else 0.0)
        table += w * (1.0 if r[under_td] != 0.0 else 0.0)
        links += w * r[link]
        inside += w * (1.0 if r[in_container] != 0.0 else 0.0)
        new += w * (1.0 if (r[site_df] <= new_df and r[in_lcs] == 0.0) else 0.0)
    if not total > 0.0:
        return None
    shares = [code / total, table / total, links / total, inside / total, new / total]
    for x in shares:
        if not isfinite(<double> x):
            return None
    return shares


def decide_rows(FeatureRows rows not None, ForestScorer scorer not None, double threshold, double site_df,
                tuple columns, tuple limits):
    """``combined.decide`` on ``rows``: the template lines, a ``frozenset``.

    ``columns`` are the features the rules read (warm DF, in container, link density,
    log words, pages seen, site DF, in the LCS, unlikely, under nav, under aside, comment
    words, ends sentence, under pre, under button, the page's product flag and its site's share
    of code (``combined._keeps_new_text``), and log characters, the line's size to the cut)
    and ``limits`` their bounds (menu words, known site, new DF, new link density, the margin of new text below the page's cut, and the thread rule's comment
    words, characters of the rest of the page and ratio:
    ``combined._unless_the_thread_is_the_page``; and the weight of the share kept in the
    page's cut, ``combined.KEEP_WEIGHT``; the words of a sentence that repeats as template
    even inside the container, ``combined._REPEATED_SENTENCE``; the share of code of a site
    that keeps new text, ``combined.CODE_SITE``).
    """
    cdef Py_ssize_t warm_df, in_container, link, log_words, pages_seen, df, in_lcs, unlikely, under_nav, under_aside
    cdef Py_ssize_t comment_words, ends_sentence, under_pre, under_button, log_chars, kind_product, site_code
    cdef bint new
    cdef double menu_words, known_site, new_df, new_link, unique_margin, cut, repeated_sentence, code_site
    cdef double thread_words, thread_only, thread_ratio, keep_weight, others = 0.0, thread = 0.0, kept_thread = 0.0
    (warm_df, in_container, link, log_words, pages_seen, df, in_lcs, unlikely, under_nav, under_aside,
     comment_words, ends_sentence, under_pre, under_button, kind_product, site_code, log_chars) = columns
    (menu_words, known_site, new_df, new_link, unique_margin, thread_words, thread_only, thread_ratio, keep_weight,
     repeated_sentence, code_site) = limits
    if rows.width != scorer.features:
        raise ValueError(f"expected {scorer.features} features, got {rows.width}")
    for j in columns:
        if not 0 <= j < rows.width:
            raise IndexError(f"no column {j} in rows of {rows.width}")
    cdef Py_ssize_t i, k, npending = 0
    cdef const double* r
    cdef Py_ssize_t* pending = <Py_ssize_t*> malloc(max(rows.count, 1) * sizeof(Py_ssize_t))
    cdef _Ranked* ranked = <_Ranked*> malloc(max(rows.count, 1) * sizeof(_Ranked))
    cdef list template = []
    cdef list below = []
    cdef char* out = NULL
    if pending is NULL or ranked is NULL:
        free(pending)
        free(ranked)
        raise MemoryError()
    try:
        for i in range(rows.count):
            r = rows.data + i * rows.width
            if (r[warm_df] >= site_df and (
                r[in_container] == 0.0 or r[link] >= 0.5 or r[under_nav] != 0.0 or r[under_button] != 0.0
                or (r[log_words] >= repeated_sentence and r[ends_sentence] != 0.0)
            )) or (
                r[link] >= 0.99 and r[in_container] == 0.0 and r[log_words] <= menu_words
                and (
                    not (r[df] <= new_df and r[in_lcs] == 0.0)
                    or r[unlikely] != 0.0 or r[under_nav] != 0.0 or r[under_aside] != 0.0
                )
            ):
                template.append(i)
            else:
                pending[npending] = i
                npending += 1
        scorer._score_rows(rows, pending, npending)
        for k in range(npending):
            i = pending[k]
            ranked[k].i = i
            ranked[k].p = rows.probability[i]
            ranked[k].size = expm1(rows.data[i * rows.width + log_chars])
        if npending and not rows.data[pending[0] * rows.width + pages_seen] < known_site:
            keep_weight = 0.0  # a known site: its own evidence decides, no lean toward keeping
        cut = min(_expected_f1_cut(ranked, npending, keep_weight), threshold)
        out = <char*> calloc(max(rows.count, 1), sizeof(char))  # 1: kept by the cut, 2: below it
        if out is NULL:
            raise MemoryError()
        for k in range(npending):
            r = rows.data + ranked[k].i * rows.width
            new = r[pages_seen] >= known_site and r[df] <= new_df and r[in_lcs] == 0.0 and r[link] < new_link
            if (
                ranked[k].p < (cut - unique_margin if new else cut)
                and not (r[under_pre] != 0.0 and r[link] < new_link)  # combined._code: the cut keeps code
                and not (new and (r[kind_product] != 0.0 or (  # combined._keeps_new_text
                    r[site_code] >= code_site and r[unlikely] == 0.0 and r[under_nav] == 0.0 and r[under_aside] == 0.0
                )))
            ):
                below.append(ranked[k].i)
                out[ranked[k].i] = 2
            else:
                out[ranked[k].i] = 1
        # combined._unless_the_thread_is_the_page: a comment thread on a page with nothing else stays.
        for i in range(rows.count):  # in the order of the lines, as the Python sums
            r = rows.data + i * rows.width
            if out[i] == 1 and r[comment_words] < thread_words:
                others += expm1(r[log_chars])
                if others >= thread_only:
                    break
        if others < thread_only:
            for i in range(rows.count):
                r = rows.data + i * rows.width
                if (out[i] != 0 and r[comment_words] >= thread_words
                        and (r[ends_sentence] != 0.0 or r[under_pre] != 0.0) and r[link] < new_link):
                    if out[i] == 2:
                        thread += expm1(r[log_chars])
                        out[i] = 3  # a thread line under the cut
                    else:
                        kept_thread += expm1(r[log_chars])
            if thread > 0.0 and thread + kept_thread >= thread_ratio * max(others, 1.0):
                below = [k for k in below if out[k] != 3]
        template += below
    finally:
        free(pending)
        free(ranked)
        free(out)
    return frozenset(template)
