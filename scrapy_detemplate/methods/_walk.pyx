# cython: language_level=3, boundscheck=False, wraparound=False
"""The walk of :func:`scrapy_detemplate.methods.rtdm.find`, compiled.

The same walk, step for step, as the Python function (the tests hold the two,
and the plain reference, equal): the page's children are read from libxml2's
nodes (lxml's public C API) instead of through element proxies, so a child
costs a few comparisons in C instead of five attribute reads in Python.
Everything that is not the common case (labels to build, the LCS, recall's
fingerprints, texts that are not plain ASCII blanks) is handed to the same
Python helpers the Python walk uses, on proxies made for those nodes only.

Optional: when this module was not built (no C compiler at install time) or
was built against another lxml, ``rtdm`` uses its Python walk.
"""

from libc.stdlib cimport free, realloc
from libc.string cimport strcmp

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlAttr, xmlNode

from scrapy_detemplate._nodes cimport grow, is_text

cetree.import_lxml__etree()

from lxml import etree as _etree

#: The lxml this module was compiled against (checked by ``rtdm`` on import).
LXML_VERSION = _etree.LXML_VERSION

cdef object _rt = None
cdef int _TEXT, _DIGEST  # rtdm's kinds of text labels
cdef tuple _SKIP = ()  # SKIP_TAGS in UTF-8, as libxml2 names them


cdef object _rtdm():
    global _rt, _TEXT, _DIGEST, _SKIP
    if _rt is None:
        from scrapy_detemplate.methods import rtdm
        _rt, _TEXT, _DIGEST = rtdm, rtdm._TEXT, rtdm._DIGEST
        _SKIP = tuple(tag.encode() for tag in sorted(rtdm.SKIP_TAGS))
    return _rt


cdef struct Entry:
    int t
    int parent
    xmlNode* el


cdef inline bint _ascii_blank(xmlNode* c) noexcept nogil:
    """Whether the run of text nodes from ``c`` (lxml's ``.text``/``.tail``) is
    only ASCII blanks, or absent.  False means: ask Python."""
    cdef const unsigned char* p
    while c is not NULL:
        if is_text(c):
            p = <const unsigned char*> c.content
            if p is not NULL:
                while p[0]:
                    if p[0] != 32 and not (9 <= p[0] <= 13):
                        return False
                    p += 1
        elif c.type != tree.XML_XINCLUDE_START and c.type != tree.XML_XINCLUDE_END:
            return True
        c = c.next
    return True


cdef inline object _text(xmlNode* c):
    """``el.text`` when it is not blank, else None."""
    if _ascii_blank(c.children):
        return None
    text = cetree.textOf(c)
    return text if text and not text.isspace() else None


cdef inline object _tail(xmlNode* c):
    """``el.tail`` when it is not blank, else None."""
    if _ascii_blank(c.next):
        return None
    tail = cetree.tailOf(c)
    return tail if tail and not tail.isspace() else None


cdef inline bint _skipped(const char* name, tuple skip) noexcept:
    cdef bytes s
    for s in skip:
        if strcmp(name, s) == 0:
            return True
    return False


cdef inline int _attr_is(xmlNode* c, const char* name, object want) except -1:
    """Whether ``(el.get(name) or None) == want`` (``want``: UTF-8 bytes or None);
    -1 when the value is not one plain text node (ask Python)."""
    cdef xmlAttr* a = c.properties
    cdef xmlNode* v
    cdef const char* value = NULL
    while a is not NULL:
        if a.ns is NULL and strcmp(<const char*> a.name, name) == 0:
            v = a.children
            if v is NULL:
                value = ""
            elif v.next is NULL and v.type == tree.XML_TEXT_NODE and v.content is not NULL:
                value = <const char*> v.content
            else:
                return -1
            break
        a = a.next
    if value is NULL or value[0] == 0:
        return want is None
    return want is not None and strcmp(value, <const char*> want) == 0


cdef inline bint _is_item(xmlNode* c, tuple skip) noexcept:
    """Whether a child (``_isElement``) is an element item: an element not in ``SKIP_TAGS``."""
    return c.type == tree.XML_ELEMENT_NODE and (c.ns is not NULL or not _skipped(<const char*> c.name, skip))


cdef inline object _proxy(cetree._Document doc, xmlNode* c):
    return cetree.elementFactory(doc, c)


def find(template, cetree._Element body):
    """:func:`scrapy_detemplate.methods.rtdm.find`, in C where it matters."""
    rt = _rtdm()
    if not len(template) or template.labels[0] != rt.root_label(body):
        return None
    cdef cetree._Document doc = body._doc
    compiled = template.compiled()
    cdef list kids_of = compiled.kids
    cdef list labels_of = compiled.labels
    cdef list kinds_of = compiled.kinds
    cdef list texts_of = compiled.texts
    cdef list specs_of = compiled.specs
    cdef list tags_of = compiled.tags
    cdef dict known = compiled.recall.whole
    cdef tuple skip = _SKIP
    fingerprint = rt.fingerprint
    cdef set text_of = set()
    cdef set tail_of = set()
    # One visit per matched element pair, numbered as they are walked (parents first).
    cdef list elements = []  # xmlNode* as integers
    cdef list parents = []
    cdef list tnodes = []
    cdef list own_nodes = []
    cdef list own_texts = []
    cdef bytearray full = bytearray()
    cdef dict walked = {}
    cdef set recalled = set()
    cdef Entry* stack = NULL
    cdef Py_ssize_t top = 0, cap = 0, mark, n, k, added, visit, count, v, h
    cdef int t, parent
    cdef bint same, own, whole
    cdef xmlNode* el
    cdef xmlNode* child
    cdef bytes kinds
    cdef tuple kids, keys, specs, labels
    try:
        cap = 64
        stack = <Entry*> realloc(NULL, cap * sizeof(Entry))
        if stack is NULL:
            raise MemoryError()
        stack[0].t, stack[0].parent, stack[0].el = 0, -1, body._c_node
        top = 1
        while top:
            top -= 1
            t, el, parent = stack[top].t, stack[top].el, stack[top].parent
            visit = len(parents)
            parents.append(parent)
            elements.append(<size_t> el)
            tnodes.append(t)
            kids = kids_of[t]
            if t in known:
                page_el = _proxy(doc, el)
                key = fingerprint(page_el)
                counts = known[t].get(key)
                if counts is not None:
                    own_nodes.append(counts[0])
                    own_texts.append(counts[1])
                    text_of.update(page_el.iter())
                    tail_of.update(page_el.iterdescendants())
                    recalled.add(visit)
                    full.append(1)
                    continue
                walked[visit] = key
            if not kids:  # a template leaf: the page element is whole if it has no child items
                whole = _text(el) is None
                if whole:
                    child = el.children
                    while child is not NULL:
                        if cetree._isElement(child) and (_is_item(child, skip) or _tail(child) is not None):
                            whole = False
                            break
                        child = child.next
                own_nodes.append(0)
                own_texts.append(0)
                full.append(whole)
                continue
            kinds, keys, specs = kinds_of[t], texts_of[t], specs_of[t]
            n = len(kids)
            mark = top
            k = added = 0
            same = True
            labels = labels_of[t]
            text = _text(el)
            own = text is not None
            if own:
                same = _same(doc, 0, el, 1, text, labels, kinds, keys, specs)
                k = 1
            if same:
                child = el.children
                while child is not NULL:
                    if not cetree._isElement(child):
                        child = child.next
                        continue
                    if _is_item(child, skip):
                        if k == n or not _same(doc, k, child, 0, None, labels, kinds, keys, specs):
                            same = False
                            break
                        if top == cap:
                            cap *= 2
                            stack = <Entry*> grow(stack, cap * sizeof(Entry))
                        stack[top].t, stack[top].parent, stack[top].el = kids[k], <int> visit, child
                        top += 1
                        k += 1
                    tail = _tail(child)
                    if tail is not None:
                        if k == n or not _same(doc, k, child, 2, tail, labels, kinds, keys, specs):
                            same = False
                            break
                        tail_of.add(_proxy(doc, child))
                        added += 1
                        k += 1
                    child = child.next
            if same and k == n:
                # The page's children are the template's: that is the alignment.
                if own:
                    text_of.add(_proxy(doc, el))
                    added += 1
                own_nodes.append(n)
                own_texts.append(added)
                full.append(1)
                continue
            # Otherwise align by labels; undo what the comparison recorded first
            # (only this visit records the tails of el's children).
            top = mark
            if added:
                tail_of.difference_update(_proxy(doc, el))
            # The page's child items: (node, 0 element / 1 its text / 2 its tail, text).
            nodes, sorts, texts = [], [], []
            if own:
                nodes.append(<size_t> el); sorts.append(1); texts.append(text)
            child = el.children
            while child is not NULL:
                if cetree._isElement(child):
                    if _is_item(child, skip):
                        nodes.append(<size_t> child); sorts.append(0); texts.append(None)
                    tail = _tail(child)
                    if tail is not None:
                        nodes.append(<size_t> child); sorts.append(2); texts.append(tail)
                child = child.next
            matched = _align(doc, nodes, sorts, texts, labels, kinds, keys, specs, tags_of[t], rt)
            added = 0
            for k, h in matched:
                child = <xmlNode*> <size_t> nodes[h]
                if sorts[h] == 0:
                    if top == cap:
                        cap *= 2
                        stack = <Entry*> grow(stack, cap * sizeof(Entry))
                    stack[top].t, stack[top].parent, stack[top].el = kids[k], <int> visit, child
                    top += 1
                else:
                    added += 1
                    (tail_of if sorts[h] == 2 else text_of).add(_proxy(doc, child))
            own_nodes.append(len(matched))
            own_texts.append(added)
            full.append(len(matched) == len(nodes))
    finally:
        free(stack)
    # Children are numbered after their parents: backwards, they come first.
    count = len(parents)
    uncovered = [0] * count
    covered = bytearray(count)
    for v in range(count - 1, 0, -1):
        parent = parents[v]
        own_nodes[parent] += own_nodes[v]
        own_texts[parent] += own_texts[v]
        if full[v] and not uncovered[v]:
            covered[v] = 1
        else:
            uncovered[parent] += 1
    outer = [v for v in range(1, count) if covered[v] and not covered[parents[v]]]
    compiled.recall.remember(
        walked, recalled, outer, covered, tnodes, own_nodes, own_texts,
        lambda v: _proxy(doc, <xmlNode*> <size_t> elements[v]),
    )
    return rt.Located(
        1 + own_nodes[0], own_texts[0], text_of, tail_of,
        tuple(_proxy(doc, <xmlNode*> <size_t> elements[v]) for v in outer),
    )


cdef list _align(cetree._Document doc, list nodes, list sorts, list texts, tuple labels, bytes kinds,
                 tuple keys, tuple specs, frozenset tags, rt):
    """The LCS of the template node's children and the page's items, as
    ``rtdm._lcs_pairs`` of their labels gives it: the common prefix and suffix
    are matched without labels (rapidfuzz's LCS matches them itself), and only
    the middle is labeled and aligned."""
    cdef Py_ssize_t n = len(labels), m = len(nodes), p = 0, s = 0, h
    while p < n and p < m and _same(doc, p, <xmlNode*> <size_t> nodes[p], sorts[p], texts[p], labels, kinds, keys,
                                    specs):
        p += 1
    while s < n - p and s < m - p and _same(doc, n - 1 - s, <xmlNode*> <size_t> nodes[m - 1 - s], sorts[m - 1 - s],
                                            texts[m - 1 - s], labels, kinds, keys, specs):
        s += 1
    cdef list pairs = [(k, k) for k in range(p)]
    if p + s < n and p + s < m:
        no_match, element_label, text_label = rt._NO_MATCH, rt.element_label, rt.text_label
        any_text = any(kinds)
        middle = []
        for h in range(p, m - s):
            if sorts[h] == 0:
                page_el = _proxy(doc, <xmlNode*> <size_t> nodes[h])
                middle.append(element_label(page_el) if page_el.tag in tags else no_match)
            else:
                middle.append(text_label(" ".join(texts[h].split())) if any_text else no_match)
        pairs.extend((k + p, h + p) for k, h in rt._lcs_pairs(labels[p : n - s], middle))
    pairs.extend((n - s + k, m - s + k) for k in range(s))
    return pairs


cdef bint _same(cetree._Document doc, Py_ssize_t k, xmlNode* c, int sort, text, tuple labels, bytes kinds,
                tuple keys, tuple specs) except -1:
    """Whether a page item (``sort``: 0 the element ``c``, 1 its text, 2 its tail;
    ``text`` for the last two) has the label of the template node's ``k``-th
    child: by tag and raw id/class, or stripped text, as ``rtdm.find`` compares."""
    cdef int kind = kinds[k], same_attr
    rt = _rtdm()
    if sort == 0:
        if kind:
            return False
        spec = specs[k]
        if c.ns is NULL and spec is not None and strcmp(<const char*> c.name, <const char*> spec[0]) == 0:
            same_attr = _attr_is(c, "id", spec[1])
            if same_attr == 1:
                same_attr = _attr_is(c, "class", spec[2])
            return same_attr == 1 or rt.element_label(_proxy(doc, c)) == labels[k]
        page_el = _proxy(doc, c)
        return labels[k].startswith(page_el.tag) and rt.element_label(page_el) == labels[k]
    if kind == _TEXT:
        stripped = text.strip()
        return stripped == keys[k] or " ".join(stripped.split()) == keys[k]
    return kind == _DIGEST and rt.text_label(" ".join(text.split()))[1:] == keys[k]


def fingerprint(cetree._Element el):
    """:func:`scrapy_detemplate.methods.rtdm.fingerprint` in one pass over libxml2's
    nodes: the number of elements below ``el`` and a 64-bit FNV-1a hash of the
    text of its subtree, in document order (its own tail left out)."""
    cdef xmlNode* top = el._c_node
    cdef xmlNode* c = top.children
    cdef Py_ssize_t count = 0
    cdef unsigned long long h = 14695981039346656037ULL
    cdef const unsigned char* p
    while c is not NULL:
        if c.type == tree.XML_ELEMENT_NODE:
            count += 1
        elif is_text(c) and c.content is not NULL:
            p = <const unsigned char*> c.content
            while p[0]:
                h = (h ^ p[0]) * 1099511628211ULL
                p += 1
        if c.children is not NULL and c.type == tree.XML_ELEMENT_NODE:
            c = c.children
            continue
        while c is not top and c.next is NULL:
            c = c.parent
        if c is top:
            break
        c = c.next
    return count, <long long> h

