# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The page-level line features of :mod:`scrapy_detemplate.methods.density`, compiled.

The same computation, number for number, as ``density._line_features_py`` (the
tests and ``bench/check_compiled_density.py`` hold the two equal, floats
bit for bit): the elements are numbered in document order (what
``body.iter()`` yields) and every per-element measure lives in a C array
indexed by that number, read from libxml2's nodes (lxml's public C API)
instead of through element proxies and dictionaries keyed by them.

* The containers' measures (visible characters, commas, link characters) are
  one backwards pass over the numbered nodes; the length of
  ``" ".join(text.split())`` and its commas are counted in C over the UTF-8 of
  the text nodes, with Python's ``str.isspace`` set of blanks (a test holds
  the two equal over every code point).
* The votes, the scores and the chosen containers follow, with the Python
  function's float arithmetic in the same order and its tie-breaking (the
  first best in the order the candidates were first voted for).
* Each line's ancestry (tags on its path, class/id words, depth, block...) is
  memoised per element, top-down, as ``_Ancestry`` does.  The class/id regexes
  are alternations of plain words (checked when the module starts): on plain
  ASCII values they are matched in C (ASCII case folding, ``\\b`` as a word
  boundary), once per distinct value of the page; other values go to the
  regexes themselves.
* The line features: tokens, commas and title words are counted in C for the
  lines (and the title) whose characters are ASCII or "safe" non-ASCII ones
  (not ``\\w``, unchanged by ``str.lower()``: ``’``, ``—``, ``¶``...); other
  lines use the Python expressions.  The rows are doubles in a C array:
  :func:`line_features_into` leaves them there (for the combined method's
  ``FeatureRows``), :func:`line_features` makes them Python lists.
* Working memory is kept between calls (``_kept``): a large ``malloc`` right
  after a parse makes glibc consolidate the parse's freed chunks, a cost that
  should not be paid here on every page.

Rare inputs are handed back: :func:`line_features` returns ``None`` (the caller
then runs the Python function) for a page without a body, namespaced elements,
entity-reference or other unusual nodes, text that is not valid UTF-8,
attribute values that are not one text node, slots outside the body or on a
comment's own text, and a Python whose ``sum`` adds floats in a way this module
does not reproduce.

Optional: when this module was not built (no C compiler at install time) or
was built against another lxml, ``density`` uses its Python function.
"""

from libc.math cimport fabs, log1p, signbit
from cpython.float cimport PyFloat_FromDouble
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset, strcmp, strlen

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ, PyUnicode_READ_CHAR
from cpython.version cimport PY_VERSION_HEX

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlNode

from scrapy_detemplate._nodes cimport attr_value

cetree.import_lxml__etree()

from lxml import etree as _etree

#: The lxml this module was compiled against (checked by ``_compiled.load``).
LXML_VERSION = _etree.LXML_VERSION


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)


# Tag properties (bits of _tag_flags).
cdef enum:
    F_SKIP = 1
    F_PARAGRAPH = 2
    F_DIV_BLOCK = 4
    F_A = 8
    F_DIV = 16
    F_INLINE = 32
    F_BODY = 64
    F_HTML_OR_BODY = 128

DEF MAX_TAGS = 192
DEF RECORD_SIBLINGS = 3  # density.RECORD_SIBLINGS (checked at load)
DEF CACHE = 256
DEF VALUES = 512

# The tag table: id 0 is every other name; ids from 1 are the names the features know.
cdef int _ntags = 0
cdef const char* _tag_names[MAX_TAGS]
cdef int _tag_flags[MAX_TAGS]
cdef int _tag_prior[MAX_TAGS]
cdef int _tag_index[MAX_TAGS]  # position in density.TAGS, -1 when not there
cdef list _keep = []  # the bytes the names point into
cdef unsigned long long _A_BIT = 0
cdef Py_ssize_t _NTAGS_FEATURE = 0, _NFEATURES = 0, _UNDER = 0, _OWN = 0
cdef object _d = None  # the density module
cdef object _BOILER, _CONTENT, _COMMENT, _UNLIKELY, _MAYBE, _POSITIVE, _NEGATIVE, _TOKEN, _tokens_of, _commas_of
cdef object _other_commas
cdef object _find_body
# density.LANDMARKS: each role's name (lower case ASCII; the bytes kept in _keep), its length and tag bit.
DEF MAX_LANDMARKS = 16
cdef int _nlandmarks = 0
cdef const char* _landmark_names[MAX_LANDMARKS]
cdef size_t _landmark_sizes[MAX_LANDMARKS]
cdef unsigned long long _landmark_bits[MAX_LANDMARKS]

# The class/id regexes, each an alternation of plain words (checked at load): matched in C on plain ASCII
# values, as bits of one pass; other values go to the regexes themselves.
cdef enum:
    R_BOILER = 1
    R_CONTENT = 2
    R_COMMENT = 4
    R_UNLIKELY = 8
    R_MAYBE = 16
    R_POSITIVE = 32
    R_NEGATIVE = 64

DEF MAX_WORDS = 256
cdef int _nwords = 0
cdef const char* _word_text[MAX_WORDS]
cdef Py_ssize_t _word_size[MAX_WORDS]
cdef bint _word_boundary[MAX_WORDS]  # the word is ``\bword``
cdef int _word_bit[MAX_WORDS]
cdef int _bucket[257]  # the words starting with byte b: _bucket[b] to _bucket[b + 1] - 1
cdef unsigned char _WORD[256]  # the bytes of ``\\w`` in ASCII: [A-Za-z0-9_]
DEF SEP_BELOW = 0x3000
DEF CJK_CHARS = 3  # density.CJK_CHARS: what a CJK character counts for in the lengths
cdef unsigned char _SEP[SEP_BELOW]  # per code point: 0 not known yet, 1 splits tokens as a blank does, 2 not
cdef unsigned char _pairs[65536]  # the first two bytes of a word, lower case: (b0 << 8) | b1
cdef bint _c_words = False
cdef object ZERO = 0.0, ONE = 1.0, MINUS_ONE = -1.0


cdef int _init() except -1:
    global _d, _ntags, _A_BIT, _NTAGS_FEATURE, _NFEATURES, _UNDER, _OWN, _nlandmarks
    global _BOILER, _CONTENT, _COMMENT, _UNLIKELY, _MAYBE, _POSITIVE, _NEGATIVE, _TOKEN, _find_body, _tokens_of, _commas_of
    global _other_commas
    if _d is not None:
        return 0
    from scrapy_detemplate import _html
    from scrapy_detemplate.methods import density as d

    names = (
        set(_html.SKIP_TAGS) | set(d._PARAGRAPHS) | set(d._DIV_BLOCKS) | set(d._INLINE) | set(d._TAG_PRIOR)
        | set(d.TAGS) | {"a", "div", "body", "html"}
    )
    if len(names) + 1 > MAX_TAGS or len(d.TAGS) > 64:
        raise RuntimeError("density's tag lists outgrew the compiled table")
    _keep.clear()
    _tag_names[0], _tag_flags[0], _tag_prior[0], _tag_index[0] = b"", 0, 0, -1
    _keep.append(b"")
    cdef int i = 1, flags
    for name in sorted(names):
        raw = name.encode()
        _keep.append(raw)
        _tag_names[i] = <const char*> raw
        flags = 0
        flags |= F_SKIP if name in _html.SKIP_TAGS else 0
        flags |= F_PARAGRAPH if name in d._PARAGRAPHS else 0
        flags |= F_DIV_BLOCK if name in d._DIV_BLOCKS else 0
        flags |= F_A if name == "a" else 0
        flags |= F_DIV if name == "div" else 0
        flags |= F_INLINE if name in d._INLINE else 0
        flags |= F_BODY if name == "body" else 0
        flags |= F_HTML_OR_BODY if name in ("html", "body") else 0
        _tag_flags[i] = flags
        _tag_prior[i] = d._TAG_PRIOR.get(name, 0)
        _tag_index[i] = d._TAG_INDEX.get(name, -1)
        i += 1
    _ntags = i
    _A_BIT = 1ULL << d._TAG_INDEX["a"]
    _NTAGS_FEATURE = len(d.TAGS)
    _NFEATURES = len(d.FEATURES)
    _UNDER = d.FEATURES.index("under_" + d.TAGS[0])
    _OWN = d.FEATURES.index("own_" + d.TAGS[0])
    if _NFEATURES != 12 + 2 * _NTAGS_FEATURE + 23 + len(d.RECORD_FEATURES) or _UNDER != 12 or _OWN != 12 + _NTAGS_FEATURE:
        raise RuntimeError("density.FEATURES changed: update the compiled line features")
    _BOILER, _CONTENT, _COMMENT, _UNLIKELY = d._BOILER, d._CONTENT, d._COMMENT, d._UNLIKELY
    _MAYBE, _POSITIVE, _NEGATIVE, _TOKEN = d._MAYBE, d._POSITIVE, d._NEGATIVE, d._TOKEN
    _tokens_of, _commas_of, _other_commas = d.tokens, d.commas, d._OTHER_COMMAS
    if (
        d.CJK_CHARS != CJK_CHARS
        or d._SENTENCE_END != ".!?\"'\u201d\u0964\u0965\u06d4\u061f\u1362\u0589\u104b\u17d4"
        or d._CJK_SENTENCE_END != d._SENTENCE_END + "\u3002\uff01\uff1f\uff61"
        or d._OTHER_COMMAS != "\u060c\u1363"
    ):
        raise RuntimeError("density's CJK measures, sentence ends or commas changed: update the compiled line features")
    _find_body = _html.find_body
    if d.RECORD_SIBLINGS != RECORD_SIBLINGS:
        raise RuntimeError("density.RECORD_SIBLINGS changed: update the compiled line features")
    if len(d.LANDMARKS) > MAX_LANDMARKS or not all(role.isascii() and role.islower() for role in d.LANDMARKS):
        raise RuntimeError("density.LANDMARKS outgrew the compiled table")
    _nlandmarks = 0
    for role, tag in d.LANDMARKS.items():
        raw = role.encode()
        _keep.append(raw)
        _landmark_names[_nlandmarks], _landmark_sizes[_nlandmarks] = <const char*> raw, len(raw)
        _landmark_bits[_nlandmarks] = 1ULL << d._TAG_INDEX[tag]
        _nlandmarks += 1
    for i in range(256):
        _WORD[i] = 1 if (97 <= i <= 122) or (65 <= i <= 90) or (48 <= i <= 57) or i == 95 else 0
    _load_words(d)
    _check_sums()
    _d = d
    return 0


cdef bint _sums_agree = True


cdef int _check_sums() except -1:
    """Whether :func:`_window_sum` adds floats as this Python's ``sum`` does (plain before 3.12,
    compensated since); when not, every page is handed back to Python."""
    global _sums_agree
    cdef double values[8]
    cdef Py_ssize_t k
    for case in (
        [1.0, 1e100, 1.0, -1e100], [0.1] * 7, [0.3, 0.2, 0.1, 1e-17, 5.0], [log1p(k) for k in range(7)],
        [2.0 ** -60, 1.0, -1.0, 2.0 ** -60], [0.7, 0.0, 1.0, 1.0 / 3.0, 0.2],
    ):
        for k in range(len(case)):
            values[k] = case[k]
        if _window_sum(values, 0, len(case)) != sum(case):
            _sums_agree = False
    return 0


cdef int _load_words(d) except -1:
    """Read the class/id regexes into the tables of words (or leave them to ``re``)."""
    global _nwords, _c_words
    import re

    plain = re.compile(r"(\\b)?([a-z0-9-]+)")
    entries = []
    for bit, regex in (
        (R_BOILER, d._BOILER), (R_CONTENT, d._CONTENT), (R_COMMENT, d._COMMENT), (R_UNLIKELY, d._UNLIKELY),
        (R_MAYBE, d._MAYBE), (R_POSITIVE, d._POSITIVE), (R_NEGATIVE, d._NEGATIVE),
    ):
        if regex.flags != re.IGNORECASE | re.UNICODE:
            return 0
        for alternative in regex.pattern.split("|"):
            match = plain.fullmatch(alternative)
            if match is None:
                return 0
            entries.append((match.group(2).encode(), match.group(1) is not None, bit))
    if len(entries) > MAX_WORDS or any(len(word) < 2 for word, _, _ in entries):
        return 0
    entries.sort(key=lambda entry: entry[0][0])
    cdef int k, b
    for k in range(len(entries)):
        word, boundary, bit = entries[k]
        _keep.append(word)
        _word_text[k], _word_size[k], _word_boundary[k], _word_bit[k] = <const char*> word, len(word), boundary, bit
        _pairs[(word[0] << 8) | word[1]] = 1
    _nwords = len(entries)
    k = 0
    for b in range(257):
        while k < _nwords and <unsigned char> _word_text[k][0] < b:
            k += 1
        _bucket[b] = k
    _c_words = True
    return 0


cdef int _words_of(Page* page, const char* value) noexcept nogil:
    """:func:`_words_in`, remembered per distinct value for the page."""
    cdef size_t h = 14695981039346656037ULL, slot
    cdef const unsigned char* s = <const unsigned char*> value
    cdef int probes = 0, bits
    while s[0]:
        h = (h ^ s[0]) * 1099511628211ULL
        s += 1
    slot = h & (VALUES - 1)
    while page.seen_value[slot] is not NULL and probes < VALUES:
        if page.seen_hash[slot] == h and strcmp(page.seen_value[slot], value) == 0:
            return page.seen_bits[slot]
        slot = (slot + 1) & (VALUES - 1)
        probes += 1
    bits = _words_in(value)
    if page.seen < VALUES // 2 and page.seen_value[slot] is NULL:
        page.seen_value[slot], page.seen_hash[slot], page.seen_bits[slot] = value, h, bits
        page.seen += 1
    return bits


cdef int _words_in(const char* value) noexcept nogil:
    """The bits of the regexes that find a word in ``value`` (a class or an id; in the
    joined class/id text it follows the start or a blank), -1 when it is not plain ASCII."""
    cdef const unsigned char* s = <const unsigned char*> value
    cdef Py_ssize_t n = 0, i, k
    cdef int bits = 0
    cdef unsigned char c
    while s[n]:
        if s[n] >= 128:
            return -1
        n += 1
    cdef unsigned char d = s[0] + 32 if 65 <= s[0] <= 90 else s[0]
    for i in range(n - 1):
        c = d
        d = s[i + 1]
        if 65 <= d <= 90:
            d += 32
        if not _pairs[(c << 8) | d]:
            continue
        for k in range(_bucket[c], _bucket[c + 1]):
            if (
                not (bits & _word_bit[k]) and i + _word_size[k] <= n
                and (not _word_boundary[k] or i == 0 or not _word(s[i - 1]))
                and _same_lower(s + i, _word_text[k], _word_size[k])
            ):
                bits |= _word_bit[k]
    return bits


cdef struct Node:
    xmlNode* c
    int parent  # number of the parent (-1: none)
    int end  # number after the last descendant
    int tag  # tag id; -1: not an element (comment, processing instruction)
    Py_ssize_t text_len  # len(" ".join(el.text.split())); -2: not measured
    Py_ssize_t tail_len  # the same for el.tail
    long long chars
    long long commas
    long long links
    double raw
    double score
    bint voted  # has a raw score (a key of _containers' ``raw``)
    bint chosen
    bint known  # the ancestry below is computed
    unsigned long long tags
    int boiler
    int content
    int depth
    int boiler_below
    int content_below
    int depth_below
    int comments
    int block
    bint inside
    bint unlikely
    double near
    long long block_count
    long long block_sentences
    double block_log
    # Repeated records (``density._Records``): the signature's hash (tag and first class name), the
    # group's first member (its leader holds the group's records, characters and link characters),
    # inside a chosen container, the nearest record group on the path (-1: none) and how far up, and
    # the group on the path with the most characters.
    size_t signature
    int group
    long long group_count
    long long group_chars
    long long group_links
    bint in_chosen
    int near_group
    int near_up
    bint near_inside
    int big_group


# Working memory: one set kept between calls (a large malloc after a parse makes glibc consolidate
# the parse's freed chunks; done once per page, that costs a fair share of this function), grown as
# pages need and given back when a page needed a lot; a call made while it is in use has its own.
cdef enum:
    M_NODES = 0
    M_KEYS = 1
    M_VALUES = 2
    M_CHAIN = 3
    M_INTEGERS = 4
    M_FLOATS = 5
    M_TEXT = 6
    M_TABLE = 7
    M_TITLE = 8
    M_RECORDS = 9
    M_COUNT = 10

DEF KEEP_AT_MOST = 1 << 22  # bytes kept between calls, per block


cdef struct Memory:
    void* block[M_COUNT]
    size_t size[M_COUNT]


cdef Memory _kept
cdef bint _kept_busy = False


cdef void* _room(Memory* memory, int which, size_t size) except NULL:
    """Block ``which`` with room for ``size`` bytes (its content kept when it grows)."""
    cdef void* grown
    if size > memory.size[which] or memory.block[which] is NULL:
        grown = realloc(memory.block[which], size if size > 64 else 64)
        if grown is NULL:
            raise MemoryError()
        memory.block[which], memory.size[which] = grown, size if size > 64 else 64
    return memory.block[which]


cdef void _give_back(Memory* memory, bint everything) noexcept:
    cdef int k
    for k in range(M_COUNT):
        if everything or memory.size[k] > KEEP_AT_MOST:
            free(memory.block[k])
            memory.block[k], memory.size[k] = NULL, 0


cdef struct Page:
    Memory* memory
    Node* nodes
    Py_ssize_t n  # numbered nodes: body and its descendants
    Py_ssize_t cap
    Py_ssize_t total  # n, then the body's parent and grandparent (when they are elements)
    size_t* keys  # xmlNode* -> number (open addressing)
    int* values
    size_t mask
    const char* cache_name[CACHE]  # tag name pointer -> tag id (names are interned per document)
    int cache_id[CACHE]
    int cached
    const char* seen_value[VALUES]  # class/id value -> _words_in (values repeat within a page)
    size_t seen_hash[VALUES]
    int seen_bits[VALUES]
    int seen
    bint cjk  # written without spaces (density.written_without_spaces): CJK measures


# ---------------------------------------------------------------- text


cdef inline bint _space(unsigned int cp) noexcept nogil:
    """``chr(cp).isspace()`` (what ``str.split()`` splits on)."""
    if cp < 128:
        return cp == 32 or 9 <= cp <= 13 or 28 <= cp <= 31
    return (
        cp == 0x85 or cp == 0xA0 or cp == 0x1680 or 0x2000 <= cp <= 0x200A or cp == 0x2028 or cp == 0x2029
        or cp == 0x202F or cp == 0x205F or cp == 0x3000
    )


def _is_space(unsigned int cp):
    """The C test of :func:`str.isspace` for one code point (for the tests)."""
    return _space(cp)


cdef inline bint _cjk(Py_UCS4 cp) noexcept nogil:
    """Whether ``density._CJK`` matches the character (Chinese and Japanese: ideographs, kana)."""
    return (
        0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0x3400 <= cp <= 0x4DBF or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF or 0xFF66 <= cp <= 0xFF9F or 0x20000 <= cp <= 0x2FFFF
    )


def _is_cjk(unsigned int cp):
    """The C test of ``density._CJK`` for one code point (for the tests)."""
    return _cjk(cp)


cdef inline bint _sea(Py_UCS4 cp) noexcept nogil:
    """Whether ``density._SEA`` matches the character (Thai, Lao, Myanmar, Khmer: letters, marks, digits)."""
    return (
        0x0E01 <= cp <= 0x0E3A or 0x0E40 <= cp <= 0x0E4E or 0x0E50 <= cp <= 0x0E59 or 0x0E81 <= cp <= 0x0EDF
        or 0x1000 <= cp <= 0x1049 or 0x104C <= cp <= 0x109F or 0x1780 <= cp <= 0x17D3 or 0x17E0 <= cp <= 0x17E9
    )


def _is_sea(unsigned int cp):
    """The C test of ``density._SEA`` for one code point (for the tests)."""
    return _sea(cp)


cdef Py_ssize_t _unspaced_chars(str text, Py_ssize_t* sea) noexcept:
    """``density.cjk_chars(text)``: how many CJK characters ``text`` holds; its ``density.sea_chars`` in ``sea``."""
    cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text), i, count = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data
    cdef Py_UCS4 cp
    sea[0] = 0
    if kind == 1:  # Latin-1: none
        return 0
    data = PyUnicode_DATA(text)
    for i in range(size):
        cp = PyUnicode_READ(kind, data, i)
        if cp >= 0x3040:
            if _cjk(cp):
                count += 1
        elif cp >= 0x0E01 and _sea(cp):
            sea[0] += 1
    return count


cdef bint _without_spaces(list lines) except -1:
    """``density.written_without_spaces`` of the lines' texts: at least a tenth of their characters are CJK
    or Thai-like ones."""
    cdef Py_ssize_t unspaced = 0, total = 0, sea
    cdef str text
    for line in lines:
        text = <str> line.text
        total += PyUnicode_GET_LENGTH(text)
        unspaced += _unspaced_chars(text, &sea) + sea
    return unspaced > 0 and 10 * unspaced >= total


cdef Py_ssize_t _norm_len(xmlNode* c, long long* commas, bint cjk) noexcept nogil:
    """``density.text_size(" ".join(text.split()), cjk)`` for the run of text nodes from ``c``
    (lxml's ``.text`` of the parent or ``.tail`` of the previous node), and its commas
    (``density.commas(text, cjk)``) added to ``commas``; -1 when the text is not valid UTF-8 (ask Python)."""
    cdef Py_ssize_t chars = 0, words = 0, sea = 0
    cdef bint in_word = False, starts, after_sea = False
    cdef const unsigned char* p
    cdef unsigned int b, cp
    while c is not NULL:
        if c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE:
            p = <const unsigned char*> c.content
            if p is not NULL:
                while p[0]:
                    b = p[0]
                    if b < 0x80:
                        cp = b
                        p += 1
                    elif 0xC2 <= b <= 0xDF:
                        if (p[1] & 0xC0) != 0x80:
                            return -1
                        cp = ((b & 0x1F) << 6) | (p[1] & 0x3F)
                        p += 2
                    elif 0xE0 <= b <= 0xEF:
                        if (p[1] & 0xC0) != 0x80 or (p[2] & 0xC0) != 0x80:
                            return -1
                        cp = ((b & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)
                        if cp < 0x800 or 0xD800 <= cp <= 0xDFFF:
                            return -1
                        p += 3
                    elif 0xF0 <= b <= 0xF4:
                        if (p[1] & 0xC0) != 0x80 or (p[2] & 0xC0) != 0x80 or (p[3] & 0xC0) != 0x80:
                            return -1
                        cp = ((b & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F)
                        if cp < 0x10000 or cp > 0x10FFFF:
                            return -1
                        p += 4
                    else:
                        return -1
                    if _space(cp):
                        in_word = False
                    else:
                        starts = not in_word
                        if starts:
                            words += 1
                            in_word = True
                        if cp < 0x3000 or not cjk:
                            chars += 1
                            if cp == 44 or cp == 0x60C or cp == 0x1363:
                                commas[0] += 1
                            if cjk:  # a Thai-like character counts 1.5; blanks between two of them a comma
                                if _sea(cp):
                                    sea += 1
                                    if starts and after_sea:
                                        commas[0] += 1
                                    after_sea = True
                                else:
                                    after_sea = False
                        elif _cjk(cp):
                            chars += CJK_CHARS
                            after_sea = False
                        else:
                            chars += 1
                            after_sea = False
                            if cp == 0xFF0C or cp == 0x3001:
                                commas[0] += 1
        elif c.type != tree.XML_XINCLUDE_START and c.type != tree.XML_XINCLUDE_END:
            break
        c = c.next
    return chars + sea // 2 + words - 1 if words else 0


# ---------------------------------------------------------------- tree


cdef int _tag_id(Page* page, xmlNode* c) noexcept:
    """The tag table id of an element's name (0 for names the features do not know)."""
    cdef const char* name = <const char*> c.name
    cdef size_t h = ((<size_t> name) >> 3) & (CACHE - 1)
    cdef int i, found = 0, probes = 0
    while page.cache_name[h] is not NULL and probes < CACHE:
        if page.cache_name[h] == name:
            return page.cache_id[h]
        h = (h + 1) & (CACHE - 1)
        probes += 1
    for i in range(1, _ntags):
        if strcmp(name, _tag_names[i]) == 0:
            found = i
            break
    if page.cached < CACHE // 2 and page.cache_name[h] is NULL:
        page.cache_name[h], page.cache_id[h] = name, found
        page.cached += 1
    return found


cdef int _add(Page* page, xmlNode* c, int parent) except -1:
    cdef Node* grown
    if page.total == page.cap:
        page.cap *= 2
        page.nodes = <Node*> _room(page.memory, M_NODES, page.cap * sizeof(Node))
    cdef Node* node = &page.nodes[page.total]
    node.c, node.parent, node.end = c, parent, <int> page.total + 1
    node.tag = _tag_id(page, c) if c.type == tree.XML_ELEMENT_NODE else -1
    node.chars = node.commas = node.links = 0
    node.text_len = node.tail_len = -2
    node.raw = node.score = node.near = node.block_log = 0.0
    node.voted = node.chosen = node.known = node.inside = node.unlikely = False
    node.tags = 0
    node.boiler = node.content = node.depth = node.boiler_below = node.content_below = node.depth_below = 0
    node.comments = 0
    node.block = -1
    node.block_count = node.block_sentences = 0
    page.total += 1
    return 0


cdef int _number(Page* page, xmlNode* body) except -2:
    """Number ``body`` and its elements, comments and processing instructions in
    document order (``body.iter()``), with each one's parent and the end of its
    subtree; 0, or -1 when the tree holds nodes this module does not handle."""
    cdef xmlNode* c = body
    cdef int parent = -1
    cdef int t
    while True:
        t = c.type
        if t == tree.XML_ELEMENT_NODE or t == tree.XML_COMMENT_NODE or t == tree.XML_PI_NODE:
            if t == tree.XML_ELEMENT_NODE and c.ns is not NULL:
                return -1
            _add(page, c, parent)
            if t == tree.XML_ELEMENT_NODE and c.children is not NULL:
                parent = <int> page.total - 1
                c = c.children
                continue
        elif (t != tree.XML_TEXT_NODE and t != tree.XML_CDATA_SECTION_NODE and t != tree.XML_XINCLUDE_START
              and t != tree.XML_XINCLUDE_END):
            return -1
        if c is body:
            return 0
        while c.next is NULL:
            c = c.parent
            page.nodes[parent].end = <int> page.total
            parent = page.nodes[parent].parent
            if c is body:
                return 0
        c = c.next


cdef int _index(Page* page) except -1:
    """The map from a numbered node to its number."""
    cdef size_t size = 16, h
    cdef Py_ssize_t i
    while size < <size_t> (2 * page.total):
        size *= 2
    page.keys = <size_t*> _room(page.memory, M_KEYS, size * sizeof(size_t))
    page.values = <int*> _room(page.memory, M_VALUES, size * sizeof(int))
    memset(page.keys, 0, size * sizeof(size_t))
    page.mask = size - 1
    for i in range(page.total):
        h = _hash(<size_t> page.nodes[i].c) & page.mask
        while page.keys[h]:
            h = (h + 1) & page.mask
        page.keys[h], page.values[h] = <size_t> page.nodes[i].c, <int> i
    return 0


cdef inline size_t _hash(size_t key) noexcept nogil:
    return (key >> 4) * <size_t> 11400714819323198485ULL >> 7


cdef inline int _lookup(Page* page, xmlNode* c) noexcept nogil:
    cdef size_t key = <size_t> c, h = _hash(key) & page.mask
    while page.keys[h]:
        if page.keys[h] == key:
            return page.values[h]
        h = (h + 1) & page.mask
    return -1


# ---------------------------------------------------------------- records


cdef inline bint _blank(unsigned char b) noexcept nogil:
    """One of ``density._BLANKS`` (ASCII white space as HTML splits class names on it)."""
    return b == 32 or b == 9 or b == 10 or b == 13 or b == 12


cdef size_t _signature(xmlNode* c) except? 0:
    """``density._signature`` as a hash: the tag's name and the first name of the ``class``."""
    cdef size_t h = 14695981039346656037ULL
    cdef const unsigned char* name = <const unsigned char*> c.name
    cdef const char* value = NULL
    cdef const unsigned char* v
    cdef int got
    while name[0]:
        h = (h ^ name[0]) * 1099511628211ULL
        name += 1
    h = (h ^ 0x100) * 1099511628211ULL  # between the name and the class name
    got = attr_value(c, "class", &value)
    if got < 0:
        raise _HandBack()
    if got:
        v = <const unsigned char*> value
        while v[0] and _blank(v[0]):
            v += 1
        while v[0] and not _blank(v[0]):
            h = (h ^ v[0]) * 1099511628211ULL
            v += 1
    return h if h else 1


cdef int _records(Page* page) except -1:
    """Every numbered node's record group, then top-down its nearest and biggest group on the path
    below the body (``density._Records``)."""
    cdef Py_ssize_t i, slots = 16, n = page.n
    cdef size_t mask, h
    cdef int leader, p
    cdef Node* node
    cdef Node* up
    cdef Node* group
    while slots < 2 * n:
        slots *= 2
    mask = <size_t> (slots - 1)
    cdef int* table = <int*> _room(page.memory, M_RECORDS, slots * sizeof(int))
    for i in range(slots):
        table[i] = -1
    for i in range(n):
        node = &page.nodes[i]
        node.group = -1
        node.near_group = node.big_group = -1
        node.near_up = 0
        node.near_inside = False
        node.in_chosen = node.chosen
        if i == 0 or node.tag < 0:
            continue
        node.signature = _signature(node.c)
        h = _hash(node.signature ^ (<size_t> node.parent * <size_t> 0x9E3779B97F4A7C15ULL)) & mask
        while True:
            leader = table[h]
            if leader < 0:
                table[h] = node.group = <int> i
                node.group_count, node.group_chars, node.group_links = 1, node.chars, node.links
                break
            group = &page.nodes[leader]
            if group.parent == node.parent and group.signature == node.signature:
                node.group = leader
                group.group_count += 1
                group.group_chars += node.chars
                group.group_links += node.links
                break
            h = (h + 1) & mask
    for i in range(1, n):
        node = &page.nodes[i]
        p = node.parent
        up = &page.nodes[p]
        node.in_chosen = node.chosen or up.in_chosen
        if p > 0:  # the body's own group is not on any path
            node.near_group, node.near_up, node.near_inside = up.near_group, up.near_up + 1, up.near_inside
            node.big_group = up.big_group
        if node.tag < 0 or _tag_flags[node.tag] & F_INLINE or page.nodes[node.group].group_count < RECORD_SIBLINGS:
            continue
        group = &page.nodes[node.group]
        node.near_group, node.near_up, node.near_inside = node.group, 0, node.in_chosen
        if node.big_group < 0 or group.group_chars >= page.nodes[node.big_group].group_chars:
            node.big_group = node.group
    return 0


cdef void _record_columns(Page* page, Node* node, double* out, long long body_chars) noexcept nogil:
    """``density._Records.of`` of a line's owner, into ``out`` (zeros already)."""
    cdef Node* group
    cdef long long up
    if node.near_group >= 0:
        group = &page.nodes[node.near_group]
        up = node.near_up if node.near_up < 10 else 10
        out[0] = log1p(<double> group.group_count)
        out[1] = <double> up / 10.0
        out[2] = <double> group.group_chars / <double> body_chars
        out[3] = log1p(<double> group.group_chars / <double> group.group_count)
        out[4] = <double> group.group_links / <double> group.group_chars if group.group_chars else 0.0
        out[5] = 1.0 if node.near_inside else 0.0
    if node.big_group >= 0:
        group = &page.nodes[node.big_group]
        out[6] = <double> group.group_chars / <double> body_chars
        out[7] = <double> group.group_links / <double> group.group_chars if group.group_chars else 0.0
        out[8] = log1p(<double> group.group_count)


# ---------------------------------------------------------------- containers


cdef int _measure(Page* page) except -1:
    """``_containers``' chars, commas and links, children before parents; -1: ask Python."""
    cdef Py_ssize_t i
    cdef Node* node
    cdef Node* up
    cdef Py_ssize_t size
    cdef long long commas
    for i in range(page.n - 1, -1, -1):
        node = &page.nodes[i]
        if node.tag >= 0 and not (_tag_flags[node.tag] & F_SKIP):
            commas = 0
            size = _norm_len(node.c.children, &commas, page.cjk)
            if size < 0:
                return -1
            node.text_len = size
            node.chars += size
            node.commas += commas
        if node.tag >= 0 and _tag_flags[node.tag] & F_A:
            node.links = node.chars
        if i:
            commas = 0
            size = _norm_len(node.c.next, &commas, page.cjk)
            if size < 0:
                return -1
            node.tail_len = size
            up = &page.nodes[node.parent]
            up.chars += node.chars + size
            up.commas += node.commas + commas
            up.links += node.links
    return 0


cdef int _class_weight(Page* page, Node* node, dict memo) except? -1000:
    cdef int weight = 0, got, bits
    cdef const char* value = NULL
    for name in (b"class", b"id"):
        got = attr_value(node.c, <const char*> name, &value)
        if got < 0:
            raise _HandBack()
        if got:
            bits = _words_of(page, value) if _c_words else -1
            if bits >= 0:
                weight += (25 if bits & R_POSITIVE else 0) - (25 if bits & R_NEGATIVE else 0)
                continue
            key = <bytes> value
            w = memo.get(key)
            if w is None:
                text = key.decode("utf-8")
                w = memo[key] = (25 if _POSITIVE.search(text) else 0) - (25 if _NEGATIVE.search(text) else 0)
            weight += <int> w
    return weight


class _HandBack(Exception):
    """The page has what the compiled path does not handle: run the Python function."""


cdef int _vote(Page* page, int ancestor, double share, long long vote, list order, dict memo) except -1:
    cdef Node* node
    if ancestor < 0:
        return 0
    node = &page.nodes[ancestor]
    if node.tag < 0:
        return 0
    if not node.voted:
        node.voted = True
        node.raw = <double> (_tag_prior[node.tag] + _class_weight(page, node, memo))
        order.append(ancestor)
    node.raw += <double> vote * share
    return 0


cdef int _containers(Page* page, list order, dict memo) except -1:
    """Votes, scores and the chosen containers (``order``: the voted, in the order of their first vote)."""
    cdef Py_ssize_t i, j, best = -1, parent
    cdef Node* node
    cdef bint blocks
    cdef long long vote
    cdef double floor, best_score = 0.0
    for i in range(page.n):
        node = &page.nodes[i]
        if node.tag < 0 or not (_tag_flags[node.tag] & F_PARAGRAPH) or node.chars < 25:
            continue
        if _tag_flags[node.tag] & F_DIV:
            blocks = False
            j = i + 1
            while j < node.end:
                if page.nodes[j].tag >= 0 and _tag_flags[page.nodes[j].tag] & F_DIV_BLOCK:
                    blocks = True
                    break
                j = page.nodes[j].end
            if blocks:
                continue
        vote = 1 + node.commas + min(node.chars // 100, 3)
        parent = node.parent
        _vote(page, <int> parent, 1.0, vote, order, memo)
        _vote(page, page.nodes[parent].parent if parent >= 0 else -1, 0.5, vote, order, memo)
    for i in order:
        node = &page.nodes[i]
        node.score = node.raw * (1 - <double> node.links / <double> node.chars) if node.chars else 0.0
        if best < 0 or node.score > best_score:
            best, best_score = i, node.score
    if best < 0:
        return 0
    page.nodes[best].chosen = True
    parent = page.nodes[best].parent
    if 0 <= parent < page.n:  # the body's parent and grandparent have no other numbered children
        floor = best_score * 0.2
        if not floor > 10.0:
            floor = 10.0
        j = parent + 1
        while j < page.nodes[parent].end:
            if j != best and page.nodes[j].voted and page.nodes[j].score >= floor:
                page.nodes[j].chosen = True
            j = page.nodes[j].end
    return 0


# ---------------------------------------------------------------- ancestry


cdef int _kinds(Page* page, Node* node, dict memo) except -1:
    """The class/id words of an element as bits: 1 boilerplate, 2 content, 4 comment thread, 8 unlikely."""
    cdef const char* cls = NULL
    cdef const char* ident = NULL
    cdef int has_cls = attr_value(node.c, "class", &cls), has_id = attr_value(node.c, "id", &ident)
    cdef size_t lc, li
    cdef char* buf
    if has_cls < 0 or has_id < 0:
        raise _HandBack()
    if not has_cls and not has_id:
        return 0
    cdef int bits = 0, part
    if _c_words:
        part = _words_of(page, cls) if has_cls else 0
        if part >= 0:
            bits = part
            part = _words_of(page, ident) if has_id else 0
        if part >= 0:
            bits |= part
            return (
                (1 if bits & R_BOILER else 0) | (2 if bits & R_CONTENT else 0) | (4 if bits & R_COMMENT else 0)
                | (8 if bits & R_UNLIKELY and not bits & R_MAYBE else 0)
            )
    lc = strlen(cls) if has_cls else 0
    li = strlen(ident) if has_id else 0
    key = PyBytes_FromStringAndSize(NULL, lc + 1 + li)
    buf = PyBytes_AS_STRING(key)
    if lc:
        memcpy(buf, cls, lc)
    buf[lc] = 32
    if li:
        memcpy(buf + lc + 1, ident, li)
    kinds = memo.get(key)
    if kinds is None:
        words = (<bytes> key).decode("utf-8")
        kinds = memo[key] = (
            (1 if _BOILER.search(words) else 0)
            | (2 if _CONTENT.search(words) else 0)
            | (4 if _COMMENT.search(words) else 0)
            | (8 if _UNLIKELY.search(words) is not None and _MAYBE.search(words) is None else 0)
        )
    return <int> kinds


cdef unsigned long long _landmark(Node* node) except? 1:
    """The tag bit of the element's landmark role (``density.LANDMARKS``: the value whole, ASCII
    blanks stripped, compared without ASCII case), 0 when it has none."""
    cdef const char* role = NULL
    cdef int has = attr_value(node.c, "role", &role), k
    cdef size_t start = 0, end
    if has < 0:
        raise _HandBack()
    if not has:
        return 0
    end = strlen(role)
    while start < end and role[start] in b" \t\n\r\f":
        start += 1
    while end > start and role[end - 1] in b" \t\n\r\f":
        end -= 1
    for k in range(_nlandmarks):
        if end - start == _landmark_sizes[k] and _ascii_lower_is(role + start, _landmark_names[k], end - start):
            return _landmark_bits[k]
    return 0


cdef inline bint _ascii_lower_is(const char* s, const char* lower, size_t n) noexcept nogil:
    """Whether ``s[:n]``, ASCII capitals lowered, is ``lower[:n]`` (not ``strncasecmp``: that
    follows the C locale, which Python sets from the environment)."""
    cdef size_t i
    cdef char c
    for i in range(n):
        c = s[i]
        if (c + 32 if 65 <= c <= 90 else c) != lower[i]:
            return False
    return True


cdef inline void _no_info(Node* none) noexcept nogil:
    """What ``_NO_INFO`` says in Python: above the top, nothing."""
    none.tags = 0
    none.boiler = none.content = none.depth = none.boiler_below = none.content_below = none.depth_below = 0
    none.comments = 0
    none.block = -1
    none.inside = none.unlikely = False
    none.near = 0.0
    none.near_group = none.big_group = -1  # in no record group: ``_NO_RECORD``


cdef int _ancestry(Page* page, int el, int* chain, dict memo) except -1:
    """``_Ancestry.of``: the element and its ancestors up to the nearest known one
    or a ``body``, computed top-down."""
    cdef int count = 0, node_ix, kinds, tag, flags
    cdef Node* node
    cdef Node* above
    cdef Node none
    node_ix = el
    while node_ix >= 0 and not page.nodes[node_ix].known:
        chain[count] = node_ix
        count += 1
        node_ix = page.nodes[node_ix].parent if not (_tag_flags[page.nodes[node_ix].tag] & F_BODY) else -1
    _no_info(&none)
    above = &page.nodes[node_ix] if node_ix >= 0 else &none
    while count:
        count -= 1
        node_ix = chain[count]
        node = &page.nodes[node_ix]
        tag = node.tag
        flags = _tag_flags[tag]
        kinds = _kinds(page, node, memo)
        node.comments = above.comments + (1 if kinds & 4 else 0)
        node.unlikely = above.unlikely or (kinds & 8 and not (flags & F_HTML_OR_BODY))
        if node.chosen:
            node.boiler_below = node.content_below = node.depth_below = 0
        elif above.inside:
            node.boiler_below = above.boiler_below + (kinds & 1)
            node.content_below = above.content_below + (1 if kinds & 2 else 0)
            node.depth_below = above.depth_below + 1
        else:
            node.boiler_below, node.content_below, node.depth_below = (
                above.boiler_below, above.content_below, above.depth_below
            )
        node.tags = above.tags | ((1ULL << _tag_index[tag]) if _tag_index[tag] >= 0 else 0)
        node.tags |= _landmark(node)
        node.boiler = above.boiler + (kinds & 1)
        node.content = above.content + (1 if kinds & 2 else 0)
        node.inside = above.inside or node.chosen
        node.near = node.score if node.voted and node.score > above.near else above.near
        node.depth = above.depth + 1
        node.block = above.block if flags & F_INLINE and above.block >= 0 else node_ix
        node.known = True
        above = node
    return 0


# ---------------------------------------------------------------- features


cdef inline double _window_sum(double* values, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """``sum(values[lo:hi])`` as the running Python sums floats (Neumaier's compensation from 3.12)."""
    cdef double total = values[lo], c = 0.0, x, t
    cdef Py_ssize_t k
    if PY_VERSION_HEX >= 0x030C0000:
        for k in range(lo + 1, hi):
            x = values[k]
            t = total + x
            if fabs(total) >= fabs(x):
                c += (total - t) + x
            else:
                c += (x - t) + total
            total = t
        if c != 0.0 and c - c == 0.0:  # c is finite and not zero
            total += c
        return total
    for k in range(lo + 1, hi):
        total += values[k]
    return total


cdef inline bint _word(unsigned char b) noexcept nogil:
    return _WORD[b]


cdef inline bint _ends_sentence(str text, bint cjk) noexcept:
    """``text[-1:] in density._SENTENCE_END`` (``_CJK_SENTENCE_END`` when ``cjk``; both checked when
    the module starts)."""
    cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
    cdef Py_UCS4 last
    if not size:
        return True
    last = PyUnicode_READ_CHAR(text, size - 1)
    if last == 46 or last == 33 or last == 63 or last == 34 or last == 39 or last == 0x201D:
        return True
    if last < 0x589:
        return False
    if (
        last == 0x964 or last == 0x965 or last == 0x6D4 or last == 0x61F or last == 0x1362 or last == 0x589
        or last == 0x104B or last == 0x17D4
    ):
        return True
    return cjk and (last == 0x3002 or last == 0xFF01 or last == 0xFF1F or last == 0xFF61)


cdef int _extend(Page* page) except -2:
    """Number the body's parent and grandparent after the body's nodes (votes reach
    them); 0, or -1 when they are not plain elements (ask Python)."""
    cdef xmlNode* c = page.nodes[0].c.parent
    cdef Py_ssize_t below = 0, k
    for k in range(2):
        if c is NULL or not cetree._isElement(c):
            break
        if c.type != tree.XML_ELEMENT_NODE or c.ns is not NULL:
            return -1
        _add(page, c, -1)
        page.nodes[below].parent = <int> page.total - 1
        below = page.total - 1
        c = c.parent
    return 0


def line_features(cetree._Element root, lines, str title=""):
    """:func:`scrapy_detemplate.methods.density.line_features`, or ``None`` when the
    page has what this module hands back to the Python function."""
    cdef list todo = lines if type(lines) is list else list(lines)
    cdef Py_ssize_t n = len(todo), i, j
    cdef double* out
    cdef double* row
    cdef list rows, values
    _init()
    out = <double*> malloc((n * _NFEATURES if n else 1) * sizeof(double))
    if out is NULL:
        raise MemoryError()
    try:
        if not _line_features(root, todo, title, out, _NFEATURES):
            return None
        rows = [None] * n
        for i in range(n):
            row = out + i * _NFEATURES
            values = [None] * _NFEATURES
            for j in range(_NFEATURES):
                values[j] = _f(row[j])
            rows[i] = values
        return rows
    finally:
        free(out)


def line_features_into(cetree._Element root, lines, str title, double[:, ::1] out not None):
    """:func:`line_features` written into ``out`` (a C-contiguous array of doubles with a row per
    line, at least as many columns as features), not made into Python lists: whether it was
    (``False``: the page is one to hand back to Python, ``out`` holds nothing yet)."""
    cdef list todo = lines if type(lines) is list else list(lines)
    _init()
    if out.shape[0] != len(todo) or out.shape[1] < _NFEATURES:
        raise ValueError(f"expected room for {len(todo)} rows of {_NFEATURES} features, got {out.shape[0]} of {out.shape[1]}")
    if not todo:
        return True
    return _line_features(root, todo, title, &out[0, 0], out.shape[1])


cdef bint _line_features(cetree._Element root, list todo, str title, double* out, Py_ssize_t stride) except -1:
    """The rows of ``todo`` written into ``out``; False when the page is handed back to Python."""
    body = _find_body(root)
    if body is None or not _sums_agree:
        return False
    if not todo:
        return True
    cdef xmlNode* body_node = (<cetree._Element> body)._c_node
    cdef Page page
    page.nodes, page.keys, page.values = NULL, NULL, NULL
    page.n = page.total = page.cached = 0
    cdef Py_ssize_t i, n = len(todo)
    page.seen = 0
    for i in range(CACHE):
        page.cache_name[i] = NULL
    for i in range(VALUES):
        page.seen_value[i] = NULL
    cdef int* chain = NULL
    cdef long long* integers = NULL
    cdef double* floats = NULL
    cdef Memory own
    global _kept_busy
    memset(&own, 0, sizeof(Memory))
    if _kept_busy:  # a call during a call (a finaliser, another thread): its own memory
        page.memory = &own
    else:
        page.memory = &_kept
        _kept_busy = True
    try:
        # As many nodes as the kept memory holds (it grows when a page needs more).
        page.nodes = <Node*> _room(page.memory, M_NODES, 256 * sizeof(Node))
        page.cap = page.memory.size[M_NODES] // sizeof(Node)
        if _number(&page, body_node) < 0:
            return False
        page.n = page.total
        if _extend(&page) < 0:
            return False
        _index(&page)
        page.cjk = _without_spaces(todo)
        if _measure(&page) < 0:
            return False
        _containers(&page, [], {})
        _records(&page)
        chain = <int*> _room(page.memory, M_CHAIN, (page.n + 1) * sizeof(int))
        integers = <long long*> _room(page.memory, M_INTEGERS, (3 * n + 1) * sizeof(long long))
        floats = <double*> _room(page.memory, M_FLOATS, 2 * n * sizeof(double))
        _features(&page, todo, title, chain, integers, floats, {}, out, stride)
        return True
    except _HandBack:
        return False
    finally:
        if page.memory is &_kept:
            _give_back(&_kept, False)
            _kept_busy = False
        else:
            _give_back(page.memory, True)


cdef inline bint _same_lower(const unsigned char* text, const char* word, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t k
    cdef unsigned char b
    for k in range(size):
        b = text[k]
        if 65 <= b <= 90:
            b += 32
        if b != <unsigned char> word[k]:
            return False
    return True


cdef inline size_t _token_hash(const unsigned char* s, Py_ssize_t size) noexcept nogil:
    cdef size_t h = 14695981039346656037ULL
    cdef Py_ssize_t k
    cdef unsigned char b
    for k in range(size):
        b = s[k]
        h = (h ^ (b + 32 if 65 <= b <= 90 else b)) * 1099511628211ULL
    return h


cdef inline bint _same_tokens(const unsigned char* a, const unsigned char* b, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t k
    cdef unsigned char x, y
    for k in range(size):
        x, y = a[k], b[k]
        if 65 <= x <= 90:
            x += 32
        if 65 <= y <= 90:
            y += 32
        if x != y:
            return False
    return True


cdef Py_ssize_t _distinct(const unsigned char* data, Py_ssize_t size, Py_ssize_t words, Scratch* scratch) except -1:
    """``len(set(_TOKEN.findall(text.lower())))`` for a plain ASCII text of ``words`` tokens."""
    cdef size_t slots = 8, mask, h
    while slots < <size_t> (2 * words):
        slots *= 2
    mask = slots - 1
    # Per slot: the token's start + 1 (0: empty) and its size.
    cdef Py_ssize_t* table = <Py_ssize_t*> _room(scratch.memory, M_TABLE, 2 * slots * sizeof(Py_ssize_t))
    memset(table, 0, 2 * slots * sizeof(Py_ssize_t))
    cdef Py_ssize_t k = 0, start, count = 0, length
    if True:
        while k < size:
            if not _word(data[k]):
                k += 1
                continue
            start = k
            while k < size and _word(data[k]):
                k += 1
            length = k - start
            h = _token_hash(data + start, length) & mask
            while table[2 * h]:
                if table[2 * h + 1] == length and _same_tokens(data + table[2 * h] - 1, data + start, length):
                    break
                h = (h + 1) & mask
            else:
                table[2 * h], table[2 * h + 1] = start + 1, length
                count += 1
        return count


cdef struct Title:
    Py_ssize_t count  # len(title_tokens)
    Py_ssize_t ascii  # how many of them are plain ASCII (the only ones an ASCII line can hold)
    const char** words
    Py_ssize_t* sizes
    char* found


cdef struct Scratch:
    Memory* memory  # M_TEXT: a line with its safe non-ASCII characters as blanks; M_TABLE: _distinct's table


cdef const unsigned char* _plain(str text, Scratch* scratch) except? NULL:
    """The line as ASCII bytes that tokenise as it does: itself when it is ASCII, else a copy with
    its non-ASCII characters as blanks when all of them are safe (``_SEP``); NULL: ask Python."""
    cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text), i
    cdef unsigned int kind
    cdef void* data
    cdef Py_UCS4 cp
    cdef unsigned char* copy
    if PyUnicode_IS_ASCII(text):
        return <const unsigned char*> PyUnicode_DATA(text)
    copy = <unsigned char*> _room(scratch.memory, M_TEXT, size + 1)
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    for i in range(size):
        cp = PyUnicode_READ(kind, data, i)
        if cp < 128:
            copy[i] = <unsigned char> cp
        elif cp < SEP_BELOW and (_SEP[cp] or _learn_sep(cp)) == 1:
            copy[i] = 32
        else:
            return NULL
    return copy


cdef int _learn_sep(Py_UCS4 cp) except -1:
    """Whether a non-ASCII character can stand in a line tokenised in C: not ``\\w``, not one of
    ``density._OTHER_COMMAS`` (``_scan`` counts only ``,``), and unchanged by ``str.lower()`` (so it
    splits ASCII tokens exactly as a blank does); learnt once per character."""
    ch = chr(cp)
    _SEP[cp] = 1 if _TOKEN.match(ch) is None and ch.lower() == ch and ch not in _other_commas and not _sea(cp) else 2
    return _SEP[cp]


cdef Py_ssize_t _scan(const unsigned char* data, Py_ssize_t size, Title* title, Py_ssize_t* shared,
                      long long* commas) noexcept nogil:
    """The tokens of an ASCII line (``len(_TOKEN.findall(text.lower()))``), the title words among
    them (distinct) in ``shared`` and its commas."""
    cdef Py_ssize_t k = 0, start, t, words = 0
    cdef unsigned char b
    for t in range(title.ascii):
        title.found[t] = 0
    shared[0] = 0
    commas[0] = 0
    while k < size:
        b = data[k]
        if _WORD[b]:
            start = k
            k += 1
            while k < size and _WORD[data[k]]:
                k += 1
            words += 1
            for t in range(title.ascii):
                if (
                    not title.found[t] and title.sizes[t] == k - start
                    and _same_lower(data + start, title.words[t], k - start)
                ):
                    title.found[t] = 1
                    shared[0] += 1
                    break
        else:
            if b == 44:
                commas[0] += 1
            k += 1
    return words


cdef inline object _f(double value):
    """``value`` as a Python float (the shared 0.0, 1.0 and -1.0 when it is one of them)."""
    if value == 0.0 and not signbit(value):
        return ZERO
    if value == 1.0:
        return ONE
    if value == -1.0:
        return MINUS_ONE
    return PyFloat_FromDouble(value)


DEF TITLE_WORDS = 64


cdef bint _title_words(str title, Scratch* scratch, Title* out) except -1:
    """The title's distinct tokens (``set(_TOKEN.findall(title.lower()))``) in ``out``, lower case,
    when the title tokenises in C (see :func:`_plain`) into at most ``TITLE_WORDS`` of them."""
    cdef Py_ssize_t size = PyUnicode_GET_LENGTH(title), k = 0, start, t, count = 0
    cdef const unsigned char* plain = _plain(title, scratch)
    cdef unsigned char* lower
    cdef char* block
    cdef bint seen
    if plain is NULL:
        return False
    # One block: the title in lower case, then the words' pointers, sizes and found flags.
    cdef Py_ssize_t words_at = ((size + 8) // 8) * 8  # after the title and its NUL, aligned
    block = <char*> _room(scratch.memory, M_TITLE, words_at + TITLE_WORDS * (sizeof(char*) + sizeof(Py_ssize_t) + 1))
    lower = <unsigned char*> block
    out.words = <const char**> (block + words_at)
    out.sizes = <Py_ssize_t*> (<char*> out.words + TITLE_WORDS * sizeof(char*))
    out.found = <char*> out.sizes + TITLE_WORDS * sizeof(Py_ssize_t)
    for k in range(size):
        lower[k] = plain[k] + 32 if 65 <= plain[k] <= 90 else plain[k]
    k = 0
    while k < size:
        if not _WORD[lower[k]]:
            k += 1
            continue
        start = k
        while k < size and _WORD[lower[k]]:
            k += 1
        seen = False
        for t in range(count):
            if out.sizes[t] == k - start and memcmp(out.words[t], lower + start, k - start) == 0:
                seen = True
                break
        if not seen:
            if count == TITLE_WORDS:
                return False
            out.words[count], out.sizes[count] = <const char*> (lower + start), k - start
            count += 1
    out.count = out.ascii = count
    return True


cdef int _features(Page* page, list lines, str title, int* chain, long long* integers, double* floats, dict memo,
                   double* out, Py_ssize_t stride) except -1:
    """The rows of ``lines``: row ``i`` is ``out[i * stride:i * stride + _NFEATURES]``."""
    cdef Py_ssize_t n = len(lines), i, k, t, size, o, lo, hi, first_in = n, last_in = -1, words, shared
    cdef Py_ssize_t distinct, before, after, start, ntitle, count_title, block, sea
    cdef long long link, total, page_chars, block_chars, body_chars, chosen_chars = 0, commas, count
    cdef long long* owners = integers
    cdef long long* own_tags = integers + n
    cdef long long* cumulative = integers + 2 * n  # n + 1 of them
    cdef double* log_chars = floats
    cdef double* links = floats + n
    cdef double max_log, best = 0.0, value, container_share, block_log
    cdef xmlNode* c
    cdef Node* node
    cdef Node* block_node
    cdef Node none
    cdef long long none_count = 0, none_sentences = 0, sentences
    cdef double none_log = 0.0
    cdef bint is_tail, inside, ends
    cdef const unsigned char* data
    cdef unsigned long long bits
    _no_info(&none)
    for i in range(page.total):
        if page.nodes[i].chosen and page.nodes[i].score > best:
            best = page.nodes[i].score
    # Per line: its owner (the element of its first piece), own tag and link density.
    texts = [None] * n
    for i in range(n):
        link = total = 0
        owners[i] = own_tags[i] = -1
        line = lines[i]
        texts[i] = line.text
        for slot in line.slots:
            el, tail_flag = slot
            c = (<cetree._Element?> el)._c_node
            is_tail = tail_flag
            if is_tail and (c.parent is NULL or not cetree._isElement(c.parent)):
                continue  # no owner
            k = _lookup(page, c)
            o = page.nodes[k].parent if is_tail and k >= 0 else k
            if k < 0 or o < 0 or o >= page.n or page.nodes[o].tag < 0:
                raise _HandBack()
            if not page.nodes[o].known:
                _ancestry(page, <int> o, chain, memo)
            size = page.nodes[k].tail_len if is_tail else page.nodes[k].text_len
            if size == -2:
                commas = 0
                size = _norm_len(c.next if is_tail else c.children, &commas, page.cjk)
            if size < 0:
                raise _HandBack()
            total += size
            if page.nodes[o].tags & _A_BIT:
                link += size
            if owners[i] < 0:
                owners[i] = o
                own_tags[i] = _tag_index[page.nodes[o].tag]
        links[i] = <double> link / <double> total if total else 0.0
        if owners[i] >= 0 and page.nodes[owners[i]].inside:
            if first_in == n:
                first_in = i
            last_in = i
    if last_in < 0:
        first_in = n
    # Lengths, blocks' lines, the page's characters.
    cumulative[0] = 0
    max_log = 0.0
    for i in range(n):
        text = <str> texts[i]
        size = PyUnicode_GET_LENGTH(text)
        if page.cjk:
            size += (CJK_CHARS - 1) * _unspaced_chars(text, &sea) + sea // 2
        log_chars[i] = log1p(<double> size)
        if i == 0 or log_chars[i] > max_log:
            max_log = log_chars[i]
        cumulative[i + 1] = cumulative[i] + size
        ends = _ends_sentence(text, page.cjk)
        block = page.nodes[owners[i]].block if owners[i] >= 0 else -1
        if block >= 0:
            block_node = &page.nodes[block]
            block_node.block_count += 1
            block_node.block_sentences += ends
            block_node.block_log += log_chars[i]
        else:
            none_count += 1
            none_sentences += ends
            none_log += log_chars[i]
    body_chars = page.nodes[0].chars if page.nodes[0].chars > 1 else 1
    for i in range(page.total):
        if page.nodes[i].chosen:
            chosen_chars += page.nodes[i].chars if i < page.n else 0
    container_share = <double> chosen_chars / <double> body_chars
    page_chars = cumulative[n] if cumulative[n] else 1
    # The title's words: those in plain ASCII are looked for in C.
    cdef Title words_of_title
    cdef Scratch scratch
    scratch.memory = page.memory
    words_of_title.words, words_of_title.sizes, words_of_title.found = NULL, NULL, NULL
    title_tokens = None  # set(density.tokens(title.lower())), made when a line or the title needs Python
    ascii_title = None
    if not _title_words(title, &scratch, &words_of_title):
        title_tokens = set(_tokens_of(title.lower(), page.cjk))
        ascii_title = [word.encode() for word in title_tokens if word.isascii()]
        words_of_title.count = len(title_tokens)
        words_of_title.ascii = len(ascii_title)
    count_title = words_of_title.count
    cdef double* row
    cdef double* measures = NULL  # per block and for lines without one: its five measures, made once
    cdef Py_ssize_t at
    try:
        measures = <double*> malloc((page.n + 1) * 6 * sizeof(double))
        if measures is NULL:
            raise MemoryError()
        for i in range(page.n + 1):
            measures[6 * i] = 0.0  # not made yet
        if ascii_title is not None:
            words_of_title.found = <char*> malloc(words_of_title.ascii + 1)
            words_of_title.words = <const char**> malloc((words_of_title.ascii + 1) * sizeof(char*))
            words_of_title.sizes = <Py_ssize_t*> malloc((words_of_title.ascii + 1) * sizeof(Py_ssize_t))
            if words_of_title.found is NULL or words_of_title.words is NULL or words_of_title.sizes is NULL:
                raise MemoryError()
            for t in range(words_of_title.ascii):
                words_of_title.words[t] = <const char*> (<bytes> ascii_title[t])
                words_of_title.sizes[t] = len(<bytes> ascii_title[t])
        for i in range(n):
            text = <str> texts[i]
            node = &page.nodes[owners[i]] if owners[i] >= 0 else &none
            inside = node.inside
            data = _plain(text, &scratch)
            if data is not NULL:
                size = PyUnicode_GET_LENGTH(text)
                words = _scan(data, size, &words_of_title, &shared, &commas)
                distinct = _distinct(data, size, words, &scratch) if shared else 0
            else:
                if title_tokens is None:
                    title_tokens = set(_tokens_of(title.lower(), page.cjk))
                tokens = _tokens_of(text.lower(), page.cjk)
                words = len(tokens)
                token_set = set(tokens)
                distinct = len(token_set)
                shared = len(token_set & title_tokens)
                commas = _commas_of(text, page.cjk)
            row = out + i * stride
            memset(row, 0, _NFEATURES * sizeof(double))
            row[0] = log1p(<double> (cumulative[i + 1] - cumulative[i]))
            row[1] = log1p(<double> words)
            row[2] = links[i]
            ends = _ends_sentence(text, page.cjk)
            row[3] = 1.0 if ends else 0.0
            if commas:
                row[4] = <double> commas / <double> (words if words > 1 else 1)
            row[5] = <double> i / <double> (n - 1 if n > 2 else 1)
            row[6] = <double> (node.boiler if node.boiler < 3 else 3) / 3.0
            row[7] = <double> (node.content if node.content < 3 else 3) / 3.0
            row[8] = <double> node.depth / 30.0
            row[9] = 1.0 if inside else 0.0
            if best > 0:
                value = node.near / best
                if 1.0 < value:
                    value = 1.0
                if not value > -1.0:
                    value = -1.0
                row[10] = value
            if inside:
                row[11] = links[i]
            bits = node.tags
            t = 0
            while bits:
                if bits & 1:
                    row[12 + t] = 1.0
                bits >>= 1
                t += 1
            if own_tags[i] >= 0:
                row[12 + _NTAGS_FEATURE + own_tags[i]] = 1.0
            k = 12 + 2 * _NTAGS_FEATURE
            if shared:
                row[k] = <double> shared / <double> distinct
            if count_title:
                row[k + 1] = <double> shared / <double> count_title
            before = first_in - i if i < first_in else 0
            after = i - last_in if i > last_in else 0
            row[k + 2] = <double> (before if before < 20 else 20) / 20.0
            row[k + 3] = <double> (after if after < 20 else 20) / 20.0
            row[k + 4] = 1.0 if before == 1 else 0.0
            row[k + 5] = 1.0 if 0 < before <= 3 else 0.0
            lo = i - 3 if i > 3 else 0
            hi = i + 4 if i + 4 < n else n
            row[k + 6] = _window_sum(log_chars, lo, hi) / <double> (hi - lo)
            row[k + 7] = _window_sum(links, lo, hi) / <double> (hi - lo)
            if inside:
                row[k + 8] = <double> (node.boiler_below if node.boiler_below < 3 else 3) / 3.0
                row[k + 9] = <double> (node.content_below if node.content_below < 3 else 3) / 3.0
                row[k + 10] = <double> (node.depth_below if node.depth_below < 15 else 15) / 15.0
            else:
                row[k + 8] = row[k + 9] = row[k + 10] = -1.0
            block = node.block
            if block >= 0:
                block_node = &page.nodes[block]
                block_chars = block_node.chars
                count, sentences, block_log = block_node.block_count, block_node.block_sentences, block_node.block_log
            else:
                block_node = NULL
                block_chars = 0
                count, sentences, block_log = none_count, none_sentences, none_log
            at = 6 * (block if block >= 0 else page.n)
            if measures[at] == 0.0:
                measures[at] = 1.0
                measures[at + 1] = <double> block_chars / <double> body_chars
                measures[at + 2] = (
                    <double> block_node.links / <double> block_chars if block >= 0 and block_chars else 0.0
                )
                measures[at + 3] = log1p(<double> count)
                measures[at + 4] = <double> sentences / <double> count
                measures[at + 5] = block_log / <double> count
            memcpy(row + k + 11, measures + at + 1, 5 * sizeof(double))
            row[k + 16] = log_chars[i] - max_log
            row[k + 17] = <double> cumulative[i] / <double> page_chars
            row[k + 18] = container_share
            if i > last_in >= 0:
                row[k + 19] = <double> (cumulative[i] - cumulative[last_in + 1]) / <double> page_chars
            if block >= 0 and (block_node.chosen or (block_node.parent >= 0 and page.nodes[block_node.parent].chosen)):
                row[k + 20] = 1.0
            row[k + 21] = <double> (node.comments if node.comments < 3 else 3) / 3.0
            row[k + 22] = 1.0 if node.unlikely else 0.0
            _record_columns(page, node, row + k + 23, body_chars)
    finally:
        free(measures)
        if ascii_title is not None:
            free(words_of_title.found)
            free(words_of_title.words)
            free(words_of_title.sizes)
    return 0
