"""The compiled site evidence and forest scoring (``methods/_site.pyx``) against the Python functions.

Every compiled function must give exactly what its Python reference gives:
the segmentation (keys byte for byte: they are kept in a crawl's state), the
table expansion, Sandwich's text keys, the site feature rows and the forest's
probabilities (bit-identical floats).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import random
import shutil
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_detemplate._html import parse_html, visible_lines
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods import forest, sandwich, segments
from scrapy_detemplate.methods.forest import Forest
from scrapy_detemplate.methods.segments import LogisticExpiry, Segmentation, SegmentTable
from scrapy_detemplate.runners import ParsedPage, combined
from scrapy_detemplate.runners.combined import CombinedEvidence, load_forest
from scrapy_detemplate.state import memory_store

COMPILED = segments._compiled
#: The compiled decision's bounds on a page that is not a shop's product page.
LIMITS = combined._limits(combined.KEEP_WEIGHT)
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="the compiled site module is not built here")
MODULES = (segments, sandwich, combined, forest)

#: Every character str.split() splits on.
UNICODE_SPACES = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())


@contextmanager
def python_only() -> Iterator[None]:
    """The Python functions, as in an install without the compiled module."""
    saved = [m._compiled for m in MODULES]  # type: ignore[attr-defined]
    for m in MODULES:
        m._compiled = None  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for m, value in zip(MODULES, saved, strict=True):
            m._compiled = value  # type: ignore[attr-defined]


def test_the_compiled_site_module_is_built_and_loaded_where_a_c_compiler_is() -> None:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: the install skips the extension and the Python functions run")
    for module in MODULES:
        assert module._compiled is not None, (  # type: ignore[attr-defined]
            "scrapy_detemplate/methods/_site was not built or not loaded: reinstall (pip install -e .) and read "
            "setup.py's output"
        )


def test_the_space_list_is_what_str_split_splits_on() -> None:
    assert len(UNICODE_SPACES) == 29 and all(len(f"a{c}b".split()) == 2 for c in UNICODE_SPACES)


# -- BLAKE2b -------------------------------------------------------------------------------------


@needs_compiled
@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.binary(max_size=700))
def test_the_c_blake2b_is_hashlibs(data: bytes) -> None:
    assert COMPILED.blake2b_8(data) == hashlib.blake2b(data, digest_size=8).hexdigest()


@needs_compiled
@pytest.mark.parametrize("size", [0, 1, 127, 128, 129, 255, 256, 257, 1000])
def test_the_c_blake2b_at_block_boundaries(size: int) -> None:
    data = bytes(range(256)) * 4
    assert COMPILED.blake2b_8(data[:size]) == hashlib.blake2b(data[:size], digest_size=8).hexdigest()


# -- segmentation and text keys -------------------------------------------------------------------


def assert_same_segmentation(html: str) -> None:
    root = parse_html(html)
    lines = visible_lines(root)
    compiled = COMPILED.segment_lines(lines, Segmentation)
    reference = segments._segment_lines_py(lines)
    assert segments.segment_lines(lines) == reference or compiled is None  # dataclass ==: same elements too
    if compiled is not None:
        assert compiled.keys == reference.keys
        assert compiled.lengths == reference.lengths
        assert compiled.blocks == reference.blocks
        assert compiled.lines == reference.lines
        assert compiled.block_parents == reference.block_parents
        assert len(compiled.block_elements) == len(reference.block_elements)
        assert all(a is b for a, b in zip(compiled.block_elements, reference.block_elements, strict=True))
    # Without the blocks' elements (the combined method): the same segmentation, no element made.
    bare = segments._segment_lines_py(lines, elements=False)
    assert bare == dataclasses.replace(reference, block_elements=[])
    assert segments.segment_lines(lines, elements=False) == bare
    if compiled is not None:
        assert COMPILED.segment_lines(lines, Segmentation, False) == bare
        known = COMPILED.SegmentKeys(most=3)  # small: let go of its keys on the way
        for _ in range(2):  # made, then found
            assert COMPILED.segment_lines(lines, Segmentation, True, known) == compiled
    assert sandwich.text_line_keys(lines) == sandwich._text_line_keys_py(lines)


EDGE_CASES = [
    "<p> Entertainment </p>",  # blanks around one word
    "<p>WATCH VIDEO: <span> Entertainment </span>»</p>",
    "<div>a<br>b<br/>  c  <b>d</b> e</div>",
    "<p>" + UNICODE_SPACES + "</p><p>x" + UNICODE_SPACES + "y" + UNICODE_SPACES + "</p>",
    "<p>caf\u00e9 \u00a0na\u00efve\u3000\u65e5\u672c\u8a9e \U0001f600 \u0085end\u200b zero width</p>",
    "<p>ctrl\x01\x08chars\x0e\x1b and \x1c\x1d\x1e\x1f seps \x7f</p>",
    "<ul><li><a href=x>One</a></li><li><a>Two</a> tail</li></ul><table><tr><td>c<td>d</table>",
    "<div>text<!-- comment -->tail of comment<?pi x?>tail of pi<script>x=1</script>after</div>",
    "<p>&amp; &lt;tag&gt; &nbsp;&nbsp; &copy; &#x2003;em&#8195;space</p>",
    "<body>body text<div>in div</div>body tail</body>",
    "<nav><section><article><aside><header><footer><main><p>deep</p>x</main>y</footer></header></aside>"
    "</article></section></nav>",
    "".join(f"<div><span>{i}</span>" for i in range(90)) + "bottom" + "</div>" * 90,  # deeper than 64
    "<p>" + "long " * 200 + "</p>",  # more than one hash block
    "<pre>  code\n    indented\n\tline</pre><textarea> a  b </textarea>",
    "<html><head><title>t</title></head><body></body></html>",
    "<frameset><frame></frameset>",
]


@needs_compiled
@pytest.mark.parametrize("html", EDGE_CASES)
def test_the_compiled_segmentation_is_the_python_one_on_edge_cases(html: str) -> None:
    assert_same_segmentation(html)


@needs_compiled
def test_a_namespaced_owner_is_handed_back_to_python() -> None:
    root = parse_html("<body><div>x</div></body>")
    div = root.find(".//div")
    assert div is not None
    div.tag = "{urn:x}div"
    lines = visible_lines(root)
    assert lines and COMPILED.segment_lines(lines, Segmentation) is None
    assert segments.segment_lines(lines) == segments._segment_lines_py(lines)


TAGS = ["a", "p", "div", "li", "ul", "td", "tr", "table", "span", "br", "nav", "b", "section", "pre"]
WORDS = st.sampled_from(
    ["Home", "News", "caf\u00e9", "\u65e5\u672c", "&amp;", "&nbsp;", "&#8195;", "x\u00a0y", "\U0001f600", "1", "-"]
)
SPACES = st.text(alphabet=" \t\n\u00a0\u2003\u3000\x1c\x85", max_size=3)
TEXT = st.lists(st.tuples(SPACES, WORDS), max_size=4).map(lambda parts: "".join(s + w for s, w in parts))


def _html() -> st.SearchStrategy[str]:
    leaf = st.one_of(
        TEXT,
        st.just("<br>"),
        st.just("<!-- c -->"),
        st.just("<?pi x?>"),
        st.just("<script>var a = '<p>';</script>"),
        st.just("<style>p { }</style>"),
    )

    def nest(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        attrs = st.sampled_from(["", " class='menu nav'", " id='main'", " class='content'"])
        return st.tuples(st.sampled_from(TAGS), attrs, st.lists(children, max_size=4), TEXT).map(
            lambda t: f"<{t[0]}{t[1]}>{''.join(t[2])}</{t[0]}>{t[3]}"
        )

    head = st.sampled_from(
        [
            "",
            "<meta property='og:type' content='article'>",
            '<script type="application/ld+json">{"@type": ["Product", "Thing"]}</script>',
        ]
    )  # the kinds a page declares (methods.kinds): the last columns of the combined features
    return st.tuples(head, st.recursive(leaf, nest, max_leaves=30)).map(
        lambda t: f"<html><head>{t[0]}</head><body>{t[1]}</body></html>"
    )


@needs_compiled
@settings(derandomize=True, max_examples=200, deadline=None)
@given(_html())
def test_the_compiled_segmentation_is_the_python_one_on_generated_html(html: str) -> None:
    assert_same_segmentation(html)


@needs_compiled
@settings(derandomize=True, max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=40), st.integers(1, 8))
def test_kept_segment_keys_are_the_blake2b_of_their_bytes(values: list[bytes], most: int) -> None:
    known = COMPILED.SegmentKeys(most=most)
    for data in values + values[::-1]:
        got = known.hex(data)
        assert got == hashlib.blake2b(data, digest_size=8).hexdigest()
        assert len(known) <= most
        if len(data) <= 256:
            assert known.hex(data) is got  # kept: the same string again


@needs_compiled
def test_segment_keys_refuse_a_bound_of_nothing() -> None:
    with pytest.raises(ValueError):
        COMPILED.SegmentKeys(most=0)


# -- table expansion ------------------------------------------------------------------------------


@needs_compiled
@settings(derandomize=True, max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([f"{i:016x}" for i in range(12)]), max_size=15), min_size=1, max_size=40),
    st.sampled_from([(20, 50.0, 0.5), (0, 50.0, 0.5), (1, 1.0, 0.0), (3, 4.0, 2.0)]),
)
def test_the_compiled_expansion_is_the_python_one(pages: list[list[str]], expiry: tuple[int, float, float]) -> None:
    shared = LogisticExpiry(*expiry)
    fast = SegmentTable(sweep_every=5, expiry=shared)
    slow = SegmentTable(sweep_every=5, expiry=shared)
    slow.sweep = slow._sweep_py  # type: ignore[method-assign]  # the Python sweep on this one
    for keys in pages:
        got = fast.expand(keys)
        want = slow.expand(iter(keys))  # not a list: the Python expansion
        assert got == want and fast.entries == slow.entries and fast.clock == slow.clock
        assert list(fast.entries) == list(slow.entries)  # the same insertion order, as a store keeps it
        assert fast.shrink() == slow.shrink()
        assert list(fast.entries.items()) == list(slow.entries.items())


@needs_compiled
@settings(derandomize=True, max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([f"{i:016x}" for i in range(12)]), max_size=15), min_size=1, max_size=40),
    st.sampled_from([(20, 50.0, 0.5), (0, 50.0, 0.5), (1, 1.0, 0.0), (3, 4.0, 2.0)]),
)
def test_the_dfs_of_each_key_are_the_expansions(pages: list[list[str]], expiry: tuple[int, float, float]) -> None:
    """``expand_each`` (the combined method's, without the dict) counts as ``expand`` does, and
    gives each key, a repeated one too, its DF from the dict."""
    shared = LogisticExpiry(*expiry)
    each = SegmentTable(sweep_every=5, expiry=shared)
    slow = SegmentTable(sweep_every=5, expiry=shared)
    for keys in pages:
        got = each.expand_each(keys)
        want = slow.expand(iter(keys))  # the Python expansion
        assert got == [want[key] for key in keys]
        assert list(each.entries.items()) == list(slow.entries.items()) and each.clock == slow.clock
        assert each.shrink() == slow.shrink()


@needs_compiled
def test_the_dfs_of_each_key_past_the_small_stamps_and_at_clock_zero() -> None:
    """DFs of 256 and more (stamps kept apart from the small ones), a key repeated with such a
    DF, an entry from an odd state stamped with this very page's clock, and clock 0 (whose
    stamps could be shared small ints: the dict is read)."""
    table = {"big": (7 << 24) | 300, "max": (7 << 24) | ((1 << 24) - 1), "same": (8 << 24) | 2}
    each, slow = SegmentTable(dict(table), clock=7, tb=0), SegmentTable(dict(table), clock=7, tb=0)
    keys = ["big", "max", "big", "same", "new", "max", "same", "new"]
    want = slow.expand(iter(keys))
    assert each.expand_each(keys) == [want[key] for key in keys] == [301, (1 << 24) - 1, 301, 3, 1, (1 << 24) - 1, 3, 1]
    assert each.entries == slow.entries
    assert COMPILED.expand_each({"a": 1}, ["a", "b", "a"], 0, False, None) == [2, 1, 2]


@needs_compiled
def test_the_compiled_expansion_treats_odd_stored_values_as_python_does() -> None:
    huge, negative = (1 << 70) | 3, -5
    fast = SegmentTable({"a": huge, "b": negative}, clock=4, tb=0)
    slow = SegmentTable({"a": huge, "b": negative}, clock=4, tb=0)
    assert fast.expand(["a", "b", "c"]) == slow.expand(iter(["a", "b", "c"]))
    assert fast.entries == slow.entries
    with pytest.raises(TypeError):
        SegmentTable({"a": "oops"}, clock=1).expand(["a"])
    with pytest.raises(TypeError):
        SegmentTable({"a": "oops"}, clock=1).expand(iter(["a"]))
    each, dicts = (SegmentTable({"a": huge, "b": negative}, clock=4, tb=0) for _ in range(2))
    want = dicts.expand(iter(["a", "b", "c", "a"]))
    assert each.expand_each(["a", "b", "c", "a"]) == [want[k] for k in ("a", "b", "c", "a")]
    assert each.entries == dicts.entries
    with pytest.raises(TypeError):
        SegmentTable({"a": "oops"}, clock=1).expand_each(["a"])


@needs_compiled
def test_the_compiled_sweep_treats_odd_stored_values_as_python_does() -> None:
    table = {"huge": (1 << 70) | 3, "negative": -5, "old": (1 << 24) | 1, "new": (40 << 24) | 1}
    fast = SegmentTable(dict(table), clock=40)
    slow = SegmentTable(dict(table), clock=40)
    assert fast.sweep() == slow._sweep_py() and fast.entries == slow.entries
    with pytest.raises(TypeError):
        SegmentTable({"a": "oops"}, clock=1).sweep()
    with pytest.raises(TypeError):
        SegmentTable({"a": "oops"}, clock=1)._sweep_py()


# -- site feature rows ------------------------------------------------------------------------------


@needs_compiled
@settings(derandomize=True, max_examples=12, deadline=None)
@given(st.lists(_html(), min_size=2, max_size=8))
def test_site_features_are_the_python_ones_page_after_page(bodies: list[str]) -> None:
    config = DetemplateConfig()
    fast = CombinedEvidence(config, memory_store(config))
    with python_only():
        slow = CombinedEvidence(config, memory_store(config))
    for n, html in enumerate(bodies + bodies):  # the second round finds every segment known
        url = f"https://example.com/docs/page{n % 3}.html"
        pages = [ParsedPage.of(url, html, parse_html(html), config) for _ in range(2)]
        got = fast.site_features(pages[0])
        with python_only():
            want = slow.site_features(pages[1])
        assert repr(got) == repr(want)  # bit-identical floats


#: A page's segments as (line, length, DF; 0: a key missing from the DFs, DF 1), the earlier pages
#: of its site, and the lines in the LCS with its peer (None: no peer).
SITE_SEGMENTS = given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(1, 300), st.integers(0, 30)), max_size=40),
    st.integers(0, 40),
    st.one_of(st.none(), st.lists(st.integers(0, 5), max_size=6, unique=True)),
)


def _site_inputs(
    segs: list[tuple[int, int, int]], seen: int
) -> tuple[list[str], dict[str, int], list[int], list[int], int, float, float]:
    """keys, DFs by key, lengths, lines, window, log of pages seen and warmth of :data:`SITE_SEGMENTS`."""
    keys = [f"k{k}" for k, _, _ in segs]
    dfs = {f"k{k}": df for k, _, df in segs if df}  # some keys missing: DF 1
    lengths, lines = [n for _, n, _ in segs], [k for k, _, _ in segs]
    return keys, dfs, lengths, lines, min(seen, combined.DF_WINDOW), math.log1p(seen) / 4, min(1.0, seen / 5)


@needs_compiled
@settings(derandomize=True, max_examples=100, deadline=None)
@SITE_SEGMENTS
def test_the_compiled_site_rows_are_the_python_ones(
    segs: list[tuple[int, int, int]], seen: int, matched: list[int] | None
) -> None:
    count = 6
    keys, dfs, lengths, lines, window, log_seen, warm = _site_inputs(segs, seen)
    seg = Segmentation(keys, lengths, [0] * len(segs), lines, [], [])
    got = COMPILED.site_rows(seg.keys, seg.lengths, seg.lines, dfs, count, window, matched, log_seen, warm)
    want = combined._site_rows_py(seg, dfs, count, window, matched, log_seen, warm)
    assert repr(got) == repr(want)


# -- forest scoring ---------------------------------------------------------------------------------


def _tree(rng: random.Random, features: int) -> dict[str, list[Any]]:
    """A random tree of depth 3 at most, its nodes numbered depth first (as scikit-learn numbers them)."""
    tree: dict[str, list[Any]] = {"feature": [], "threshold": [], "left": [], "right": [], "value": []}

    def grow(depth: int) -> int:
        node = len(tree["left"])
        for column in tree.values():
            column.append(0)
        if depth == 3 or rng.random() < 0.2:
            tree["feature"][node], tree["threshold"][node] = -2, -2.0
            tree["left"][node], tree["right"][node] = -1, -1
            tree["value"][node] = rng.uniform(-2, 2)
            return node
        tree["feature"][node] = rng.randrange(features)
        tree["threshold"][node] = rng.choice([0.5, 0.0, 1.0, rng.random()])
        tree["left"][node] = grow(depth + 1)
        tree["right"][node] = grow(depth + 1)
        tree["value"][node] = 0.0
        return node

    grow(0)
    return tree


def _forest(seed: int, features: int = 4, trees: int = 6) -> Forest:
    rng = random.Random(seed)
    names = [f"f{i}" for i in range(features)]
    base, rate = rng.uniform(-1, 1), rng.choice([0.1, 1.0, 0.35])
    return Forest(
        {"features": names, "base": base, "rate": rate, "trees": [_tree(rng, features) for _ in range(trees)]}
    )


VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 0.5, 1.0, 0, 1, True, False, 2**53 + 1, 10**30]),
)


@needs_compiled
@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.integers(0, 50), st.lists(st.lists(VALUES, min_size=4, max_size=4), max_size=12))
def test_the_compiled_scorer_gives_the_reference_floats(seed: int, rows: list[list[float]]) -> None:
    model = _forest(seed)
    scorer = model.scorer()
    assert COMPILED.unfit(model) == "" and type(getattr(scorer, "__self__", None)) is COMPILED.ForestScorer
    got = scorer(rows)
    want = [model.probability(row) for row in rows]
    assert [x.hex() for x in got] == [x.hex() for x in want]
    assert got == [model.compiled()(row) for row in rows]


@needs_compiled
def test_the_shipped_model_is_scored_compiled_and_bit_identical() -> None:
    model = load_forest()
    rng = random.Random(7)
    rows = [[rng.choice([0.0, 1.0, rng.random(), rng.uniform(-3, 30)]) for _ in model.features] for _ in range(300)]
    assert model.scorer()(rows) == [model.probability(row) for row in rows]
    assert model.scorer()([]) == []
    tuples = [tuple(row) for row in rows[:20]] + [(True,) * len(model.features)]
    given = list(tuples)
    assert model.scorer()(given) == [model.probability(row) for row in tuples]
    assert given == tuples and all(type(row) is tuple for row in given)  # the rows are left alone
    with pytest.raises(ValueError):
        model.scorer()([[0.0]])


@needs_compiled
def test_a_model_the_c_arrays_do_not_hold_is_scored_in_python() -> None:
    # Node 2's left child is node 1, numbered before it: valid for the reference, not for the C arrays.
    backwards = Forest({"features": ["a"], "base": 0.0, "rate": 1.0,
                        "trees": [{"feature": [0, -2, 0, -2, -2], "threshold": [0.5, -2.0, 0.2, -2.0, -2.0],
                                   "left": [2, -1, 1, -1, -1], "right": [3, -1, 4, -1, -1],
                                   "value": [0.0, 1.0, 0.0, 2.0, 3.0]}]})  # fmt: skip
    assert "not after it" in COMPILED.unfit(backwards)
    with pytest.raises(ValueError):
        COMPILED.ForestScorer(backwards)
    scorer = backwards.scorer()
    assert getattr(scorer, "__self__", None) is None  # the Python fallback
    rows = [[0.1], [0.3], [0.9]]
    assert scorer(rows) == [backwards.probability(row) for row in rows]
    assert backwards.probability([0.1]) == 1.0 / (1.0 + math.exp(-1.0))


# -- rows in C and the decision on them -------------------------------------------------------------


@needs_compiled
def test_feature_rows_hold_the_rows_as_the_python_lists_do() -> None:
    rows = COMPILED.FeatureRows(3, 4)
    assert len(rows) == 3 and rows.tolist() == [[0.0] * 4] * 3
    rows.set_columns([[1.5, -0.0], [2.0, 3.0], [0.25, 1e300]], 1)
    assert repr(rows.tolist()) == repr([[0.0, 1.5, -0.0, 0.0], [0.0, 2.0, 3.0, 0.0], [0.0, 0.25, 1e300, 0.0]])
    view = memoryview(rows)
    assert (view.shape, view.format, view.c_contiguous) == ((3, 4), "d", True)
    view[2, 3] = 7.0
    assert rows.value(2, 3) == 7.0
    assert bytes(rows) == struct.pack("12d", *(v for row in rows.tolist() for v in row))  # a plain buffer too
    with pytest.raises(IndexError):
        rows.value(3, 0)
    with pytest.raises(ValueError):
        rows.set_columns([[1.0]] * 3, 4)  # past the last column
    with pytest.raises(ValueError):
        rows.set_columns([[1.0]] * 2, 0)  # a row short
    with pytest.raises(ValueError):
        rows.site_columns([], [], [], {}, 0, None, 0.0, 0.0, 0)  # five columns from 0 do not fit in 4
    with pytest.raises(BufferError):
        rows.reshape(2)  # a view is out
    del view
    for count in (2, 0, 5000, 1):  # fewer, none, many (past what is kept), few again: fresh rows each time
        rows.reshape(count)
        assert len(rows) == count and rows.tolist() == [[0.0] * 4] * count
        if count:
            rows.set_columns([[float(i)] * 4 for i in range(count)], 0)
            assert rows.value(count - 1, 3) == float(count - 1)
    with pytest.raises(ValueError):
        rows.reshape(-1)


@needs_compiled
@settings(derandomize=True, max_examples=100, deadline=None)
@SITE_SEGMENTS
def test_the_site_columns_are_the_site_rows(
    segs: list[tuple[int, int, int]], seen: int, matched: list[int] | None
) -> None:
    count = 6
    keys, dfs, lengths, lines, window, log_seen, warm = _site_inputs(segs, seen)
    rows = COMPILED.FeatureRows(count, 8)
    rows.site_columns(keys, lengths, lines, dfs, window, matched, log_seen, warm, 2)
    want = COMPILED.site_rows(keys, lengths, lines, dfs, count, window, matched, log_seen, warm)
    assert repr([row[2:7] for row in rows.tolist()]) == repr(want)
    assert all(row[:2] == [0.0, 0.0] and row[7] == 0.0 for row in rows.tolist())


@functools.cache
def _shipped_forest() -> Forest:
    """The shipped model, read once: reading it for each of 150 examples took 20 s of the suite."""
    return load_forest()


#: Values the rules of ``combined.decide`` compare against (and some around them).
RULE_VALUES = st.sampled_from([0.0, -0.0, 1.0, 0.5, 0.49, 0.99, 0.2, 0.21, 0.29, 0.3, 0.9, 0.95, math.nan,
                               math.log1p(3), math.log1p(3) / 4, 0.4, 3.0, math.log1p(10),
                               0.02, 0.0199, -1.0])  # fmt: skip


@needs_compiled
@settings(derandomize=True, max_examples=150, deadline=None)
@given(
    st.lists(st.lists(RULE_VALUES, min_size=16, max_size=16), max_size=30),
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
    st.integers(0, 2**32),
    st.sampled_from([0.9, 2.0, 0.5]),
    st.sampled_from([combined.KEEP_WEIGHT, combined.PRODUCT_KEEP_WEIGHT, 0.0]),
)
def test_the_compiled_decision_is_decide_on_the_same_rows(
    rules: list[list[float]], thresholds: list[float], seed: int, site_df: float, keep_weight: float
) -> None:
    model = _shipped_forest()
    scorer = model.scorer()
    compiled_scorer: Any = getattr(scorer, "__self__", None)
    rng = random.Random(seed)
    rows: list[list[float]] = []
    for values in rules:
        if rows and rng.random() < 0.3:  # a line like an earlier one: equal probabilities, one group at the cut
            rows.append(list(rng.choice(rows)))
            continue
        row = [rng.choice([0.0, 1.0, rng.random(), rng.uniform(-3, 30)]) for _ in model.features]
        for column, value in zip(combined._COLUMNS[:-1], values, strict=True):  # the rules' columns
            row[column] = value
        row[combined._LOG_CHARS] = math.log1p(rng.randrange(0, 200))  # the line's size to the cut
        if rng.random() < 0.3:  # new text on a known site, the cut's margin (and the keep of a product page or
            # a site that shows code) in play
            row[combined._PAGES_SEEN], row[combined._SITE_DF], row[combined._IN_LCS] = 1.0, 0.0, 0.0
            row[combined._LINK_DENSITY] = row[combined._UNDER_PRE] = 0.0
        rows.append(row)
    if rng.random() < 0.5:  # the page declares a product: a column of the page, the same on every line
        for row in rows:
            row[combined._KIND_PRODUCT] = 1.0
    elif rng.random() < 0.5:  # no product, and its site shows code (a column of the page too), or just too little
        share = rng.choice([combined.CODE_SITE, 0.3, 0.0199])
        for row in rows:
            row[combined._KIND_PRODUCT], row[combined._SITE_CODE] = 0.0, share
    table = COMPILED.FeatureRows(3, len(model.features))
    table.set_columns([[1.0] * len(model.features)] * 3, 0)
    COMPILED.decide_rows(table, compiled_scorer, 0.5, site_df, combined._COLUMNS, LIMITS)
    table.reshape(len(rows))  # an earlier page's rows and probabilities are not read again
    table.set_columns(rows, 0)
    # One table asked again with other thresholds.
    for threshold in thresholds:
        limits = combined._limits(keep_weight)  # a shop's product page's lean, or the others'
        got = COMPILED.decide_rows(table, compiled_scorer, threshold, site_df, combined._COLUMNS, limits)
        assert got == combined.decide(rows, scorer, threshold, site_df, keep_weight)


@needs_compiled
def test_the_compiled_decision_refuses_rows_of_another_width() -> None:
    scorer: Any = load_forest().scorer()
    with pytest.raises(ValueError):
        COMPILED.decide_rows(COMPILED.FeatureRows(2, 3), scorer.__self__, 0.5, 0.9, combined._COLUMNS,
                             LIMITS)  # fmt: skip
    rows = COMPILED.FeatureRows(2, len(combined.FEATURES))
    with pytest.raises(IndexError, match="no column"):  # a rule's column outside the rows
        COMPILED.decide_rows(rows, scorer.__self__, 0.5, 0.9, (*combined._COLUMNS[:-1], 10_000), LIMITS)


@needs_compiled
@settings(derandomize=True, max_examples=12, deadline=None)
@given(st.lists(_html(), min_size=2, max_size=8))
def test_feature_rows_are_the_python_features_page_after_page(bodies: list[str]) -> None:
    config = DetemplateConfig()
    fast = CombinedEvidence(config, memory_store(config))
    with python_only():
        slow = CombinedEvidence(config, memory_store(config))
    kept = None
    for n, html in enumerate(bodies + bodies):
        url = f"https://example.com/docs/page{n % 3}.html"
        pages = [ParsedPage.of(url, html, parse_html(html), config) for _ in range(2)]
        kept = fast.feature_rows(pages[0], kept if n % 2 else None)  # new rows, or the last page's again
        with python_only():
            want = slow.features(pages[1])
        assert repr(kept.tolist()) == repr(want)  # bit-identical floats


_SHARE_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 0.1, 0.2, 0.5, 1.0, math.log1p(3), math.log1p(40), 800.0]),
)


@needs_compiled
@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.lists(_SHARE_VALUES, min_size=8, max_size=8), max_size=12))
def test_the_compiled_page_shares_are_the_python_ones(values: list[list[float]]) -> None:
    width = len(combined.FEATURES)
    rows = [[0.0] * width for _ in values]
    for row, picked in zip(rows, values, strict=True):
        for column, value in zip(combined._SHARE_COLUMNS, picked, strict=True):
            row[column] = value
    kept = COMPILED.FeatureRows(len(rows), width)
    kept.set_columns(rows, 0)
    got = COMPILED.page_shares(kept, combined._SHARE_COLUMNS, combined.NEW_DF)
    want = combined.page_shares(rows)
    assert repr(got) == repr(want)  # bit-identical floats, or both None
    assert got is None or all(math.isfinite(x) for x in got)


@needs_compiled
def test_the_compiled_page_shares_refuse_a_column_outside_the_rows() -> None:
    rows = COMPILED.FeatureRows(2, len(combined.FEATURES))
    with pytest.raises(IndexError, match="no column"):
        COMPILED.page_shares(rows, (*combined._SHARE_COLUMNS[:-1], 10_000), combined.NEW_DF)
