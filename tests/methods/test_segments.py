from __future__ import annotations

import itertools
import json
import math

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_detemplate.config import DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.methods.segments import (
    LogisticExpiry,
    SegmentTable,
    living_time,
    outermost_template_elements,
    pack_table,
    segment,
    segment_key,
    template_blocks,
    template_lines,
    unpack_table,
)
from scrapy_detemplate.store import MemoryStore


def _seg(html: str):  # type: ignore[no-untyped-def]
    return segment(lxml.html.document_fromstring(html))


# -- segmentation -------------------------------------------------------------


def test_segments_split_at_tags_and_comments() -> None:
    _, seg = _seg("<html><body><div><p>one <b>two</b> three<!-- c -->four<?pi x?>five</p></div></body></html>")
    expected = [segment_key("body/div/p", t) for t in ("one", "three", "four", "five")]
    expected.insert(1, segment_key("body/div/p/b", "two"))
    assert seg.keys == expected
    assert seg.lengths == [3, 3, 5, 4, 4]


def test_same_text_under_another_path_is_another_segment() -> None:
    _, a = _seg("<html><body><div><p>Home</p></div></body></html>")
    _, b = _seg("<html><body><nav><p>Home</p></nav></body></html>")
    _, c = _seg("<html><body><div><p>  Home\n</p></div></body></html>")
    assert a.keys != b.keys
    assert a.keys == c.keys  # white space is folded, as in the visible text


def test_blocks_are_innermost_layout_elements() -> None:
    lines, seg = _seg(
        "<html><body>top<div>a<span>b</span><ul><li>c</li></ul>d</div><table><tr><td>e</td></tr></table></body></html>"
    )
    tags = [seg.block_elements[b].tag for b in seg.blocks]
    assert tags == ["body", "div", "div", "ul", "div", "td"]
    parents = {seg.block_elements[i].tag: seg.block_parents[i] for i in range(len(seg.block_elements))}
    assert parents["body"] == -1
    assert seg.block_elements[parents["ul"]].tag == "div"
    assert seg.block_elements[parents["td"]].tag == "table"
    assert [lines[i].text for i in sorted(set(seg.lines))] == ["top", "ab", "c", "d", "e"]


def test_deep_page_does_not_recurse() -> None:
    html = "<html><body>" + "<div><span>x</span>" * 240 + "</div>" * 240 + "</body></html>"
    _, seg = _seg(html)
    assert len(seg.keys) == 240
    assert len(set(seg.keys)) == 240  # each under a longer path


# -- table expansion ------------------------------------------------------------


def test_df_counts_each_page_once() -> None:
    table = SegmentTable(tb=0)
    assert table.expand(["a", "b", "a"]) == {"a": 1, "b": 1}
    assert table.expand(["a"]) == {"a": 2}
    assert table.expand(["b", "c", "c"]) == {"b": 2, "c": 1}
    assert table.clock == 3
    assert table.live_entries() == {"a": (2, 2), "b": (2, 3), "c": (1, 3)}


def test_injected_clock_continues() -> None:
    table = SegmentTable({}, 41, tb=0)
    table.expand(["a"])
    assert table.live_entries() == {"a": (1, 42)}


# -- detection ------------------------------------------------------------------


def test_block_ratio_by_length_and_strictly_above() -> None:
    _, seg = _seg(
        "<html><body><div><p>menu</p><p>x</p></div><div><p>aaaaaaa</p><p>bbb</p></div><div><p>story</p></div>"
        "</body></html>"
    )
    keys = seg.keys
    dfs = {keys[0]: 5, keys[1]: 1, keys[2]: 9, keys[3]: 1, keys[4]: 4}
    blocks = template_blocks(seg, dfs, df_threshold=5, block_ratio=0.7)
    by_block = {seg.blocks[i]: blocks[seg.blocks[i]] for i in range(len(keys))}
    # 4/5 = 0.8 > 0.7; 7/10 = 0.7 is not above 0.7; 0/5.
    assert list(by_block.values()) == [True, False, False]
    assert template_blocks(seg, dfs, df_threshold=5, block_ratio=0.69)[seg.blocks[2]]
    assert not template_blocks(seg, dfs, df_threshold=6, block_ratio=0.7)[seg.blocks[0]]


def test_template_elements_never_hide_content_in_nested_blocks() -> None:
    # The outer table's own text is all template, but a cell inside holds content.
    lines, seg = _seg(
        "<html><body><center>Site name<table><tr><td><div>Story text</div></td></tr></table>"
        "<div>Footer</div></center><div>Menu</div></body></html>"
    )
    dfs = {k: 1 for k in seg.keys}
    story = seg.keys[1]
    for key in seg.keys:
        if key != story:
            dfs[key] = 5
    blocks = template_blocks(seg, dfs)
    elements = outermost_template_elements(seg, blocks)
    assert sorted(el.text_content() for el in elements) == ["Footer", "Menu"]
    assert [lines[i].text for i in sorted(template_lines(seg, blocks))] == ["Site name", "Footer", "Menu"]


_TAGS = ["div", "ul", "section", "nav", "span"]


@st.composite
def _html_trees(draw: st.DrawFn) -> str:
    """Random nested markup: node i hangs under a random earlier node (deep trees are likely)."""
    nodes = draw(
        st.lists(
            st.tuples(st.integers(0, 99), st.sampled_from(_TAGS), st.sampled_from(["", "", "a", "bb"])), max_size=14
        )
    )
    children: dict[int, list[int]] = {}
    for i, (parent, _, _) in enumerate(nodes, start=1):
        children.setdefault(parent % i, []).append(i)

    def render(i: int) -> str:
        inner = "".join(render(c) for c in children.get(i, []))
        if i == 0:
            return inner
        _, tag, text = nodes[i - 1]
        return f"<{tag}>{text}{inner}</{tag}>"

    return render(0)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(body=_html_trees(), flags=st.lists(st.booleans(), min_size=40, max_size=40))
def test_template_elements_and_lines_match_brute_force(body: str, flags: list[bool]) -> None:
    lines, seg = _seg(f"<html><body>{body}<div>x</div></body></html>")
    is_template = flags[: len(seg.block_elements)]
    elements = outermost_template_elements(seg, is_template)
    index = {el: i for i, el in enumerate(seg.block_elements)}

    def pure(el) -> bool:  # type: ignore[no-untyped-def]
        inside = {index[d] for d in el.iter() if d in index}
        return is_template[index[el]] and all(is_template[b] for b in seg.blocks if b in inside)

    expected = [
        el
        for el in seg.block_elements
        if el.tag != "body"
        and pure(el)
        and not any(pure(a) for a in el.iterancestors() if a.tag != "body" and a in index)
    ]
    assert elements == expected
    by_line: dict[int, list[bool]] = {}
    for block, line in zip(seg.blocks, seg.lines, strict=True):
        by_line.setdefault(line, []).append(is_template[block])
    assert template_lines(seg, is_template) == {line for line, t in by_line.items() if all(t)}
    assert set(seg.lines) == set(range(len(lines)))


# -- shrinkage: logistic expiry ----------------------------------------------------


def test_living_time_is_the_reconstructed_logistic() -> None:
    tb, n, r = 10, 20.0, 0.5
    assert living_time(1, tb, n, r) == tb
    values = [living_time(df, tb, n, r) for df in range(1, 60)]
    assert all(a < b for a, b in itertools.pairwise(values))
    assert values[-1] < tb * n and values[-1] > tb * n - 1e-3
    assert living_time(3, tb, n, r) == pytest.approx(tb * n / (1 + (n - 1) * math.exp(-2 * r)))


@pytest.mark.parametrize(("tb", "n", "r"), [(20, 50.0, 0.5), (3, 10.0, 0.05), (7, 1.0, 1.0), (5, 9.0, 0.0)])
def test_expiry_spans_are_ceilings_of_t_and_saturate(tb: int, n: float, r: float) -> None:
    expiry = LogisticExpiry(tb, n, r, cache=50)
    for df in [*range(1, 120), 10**6, 2**24 - 1]:
        assert expiry.span(df) == math.ceil(living_time(df, tb, n, r) - 1e-9)
    assert expiry.span(1) == tb


@pytest.mark.parametrize("sweep_every", [1, 2, 5])
def test_segment_expires_exactly_at_t_df(sweep_every: int) -> None:
    # Tb = 3: seen once on page 1, T(1) = 3, so it can be re-seen up to page 4.
    table = SegmentTable(tb=3, n=10.0, r=1.0, sweep_every=sweep_every)
    table.expand(["a", "b"])  # page 1
    table.shrink()
    for _ in range(2):  # pages 2, 3
        table.expand(["x"])
        table.shrink()
    assert table.df("a") == 1
    assert table.expand(["a"]) == {"a": 2}  # page 4 = 1 + T(1): still alive, DF 2
    table.shrink()
    assert table.df("b") == 0  # deleted at the end of page 4
    assert "b" not in table.entries or sweep_every != 1
    assert table.expand(["b"]) == {"b": 1}  # page 5: a new segment again


def test_reseen_before_expiry_keeps_living() -> None:
    table = SegmentTable(tb=2, n=1.0, r=0.0, sweep_every=1)  # T(df) = 2 for every DF
    for page in range(1, 30):
        keys = ["kept"] + (["gap"] if page % 3 == 0 else [])
        dfs = table.expand(keys)
        table.shrink()
        assert dfs["kept"] == page
        if page % 3 == 0 and page > 3:
            assert dfs["gap"] == 1  # 3 pages apart > T = 2: forgotten each time
    assert set(table.entries) == {"kept"}


def test_expiry_off_keeps_everything() -> None:
    table = SegmentTable(tb=0, sweep_every=1)
    for page in range(100):
        table.expand([f"k{page}"])
        table.shrink()
    assert len(table.entries) == 100


class _Oracle:
    """Brute force: delete every expired segment at the end of every page."""

    def __init__(self, tb: int, n: float, r: float) -> None:
        self.tb, self.n, self.r = tb, n, r
        self.clock = 0
        self.table: dict[str, tuple[int, int]] = {}

    def page(self, keys: list[str]) -> dict[str, int]:
        self.clock += 1
        for key in set(keys):
            df = self.table[key][0] + 1 if key in self.table else 1
            self.table[key] = (df, self.clock)
        out = {key: self.table[key][0] for key in keys}
        if self.tb:
            for key, (df, last) in list(self.table.items()):
                # "When a text segment doesn't appear for t, it will be removed."
                if self.clock - last >= math.ceil(living_time(df, self.tb, self.n, self.r) - 1e-9):
                    del self.table[key]
        return out


@settings(derandomize=True, max_examples=150, deadline=None)
@given(
    pages=st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=6), max_size=60),
    tb=st.integers(0, 6),
    n=st.floats(1.0, 8.0),
    r=st.floats(0.0, 2.0),
    sweep_every=st.integers(1, 7),
)
def test_table_matches_brute_force(pages: list[list[str]], tb: int, n: float, r: float, sweep_every: int) -> None:
    oracle = _Oracle(tb, n, r)
    table = SegmentTable(tb=tb, n=n, r=r, sweep_every=sweep_every)
    held_bound: set[str] = set()  # live at the last sweep, plus every key seen since
    for keys in pages:
        assert table.expand(keys) == oracle.page(keys)
        table.shrink()
        held_bound.update(keys)
        live = table.live_entries()
        assert live == oracle.table
        assert set(live) <= set(table.entries) <= held_bound
        if tb and table.clock % sweep_every == 0:
            assert set(table.entries) == set(live)
            held_bound = set(live)


def test_pack_round_trip() -> None:
    table = SegmentTable(tb=0)
    for page in range(5):
        table.expand([segment_key("body", str(i)) for i in range(page, page + 3)])
    data = pack_table(table.entries)
    assert len(data) == 16 * len(table.entries)
    assert unpack_table(data) == table.entries


# -- runner through the engine -------------------------------------------------------

PAGE = (
    "<html><body><nav><ul><li>Home</li><li>World news</li></ul></nav>"
    "<div><p>{}</p><p>Second paragraph number {}.</p></div><footer>Copyright Example</footer></body></html>"
)


def _run(config: DetemplateConfig, pages: int = 6, store: MemoryStore | None = None) -> list:  # type: ignore[type-arg]
    det = Detemplater(config, store)
    return [det.process(f"http://ex.com/news/{i}.html", PAGE.format(f"Story {i}", i).encode()) for i in range(pages)]


def test_runner_removes_template_blocks_after_threshold() -> None:
    results = _run(DetemplateConfig(method="segments", segments_first_pages="none"))
    assert [r.reason for r in results[:4]] == ["warming_up"] * 4
    assert all(r.status == "unchanged" for r in results[:4])
    assert results[4].status == results[5].status == "cleaned"
    assert results[5].text == "Story 5\nSecond paragraph number 5."
    assert "<nav>" not in results[5].html and "<footer>" not in results[5].html


def test_runner_falls_back_on_first_pages() -> None:
    results = _run(DetemplateConfig(method="segments"), pages=3)  # default: sandwich
    assert results[0].reason == "no_peer"
    assert results[1].status == "cleaned"
    assert results[1].text == "Story 1\nSecond paragraph number 1."


def test_runner_state_is_plain_data_per_site() -> None:
    store = MemoryStore()
    _run(DetemplateConfig(method="segments", segments_first_pages="none"), pages=3, store=store)
    state = store.get("segments", "ex.com")
    assert isinstance(state, dict) and state["clock"] == 3
    assert json.loads(json.dumps(state)) == state
    table = state["table"]
    assert isinstance(table, dict) and len(table) == 3 + 2 * 3  # menu and footer, then story and paragraph per page


def test_runner_cold_starts_on_corrupt_state() -> None:
    store = MemoryStore()
    store.set("segments", "ex.com", {"v": 1, "clock": "x"})
    results = _run(DetemplateConfig(method="segments", segments_first_pages="none"), pages=5, store=store)
    assert results[3].reason == "warming_up" and results[4].status == "cleaned"


def test_settings_are_validated() -> None:
    with pytest.raises(InvalidSetting, match="SEGMENTS_FIRST_PAGES"):
        DetemplateConfig(method="segments", segments_first_pages="segments")
    with pytest.raises(InvalidSetting, match="SEGMENTS_BLOCK_RATIO"):
        DetemplateConfig(segments_block_ratio=1.5)
    with pytest.raises(InvalidSetting, match="SEGMENTS_TB"):
        DetemplateConfig(segments_tb=-1)
    config = DetemplateConfig.from_settings({"DETEMPLATE_SEGMENTS_DF_THRESHOLD": "3", "DETEMPLATE_SEGMENTS_R": "0.2"})
    assert config.segments_df_threshold == 3 and config.segments_r == 0.2


def test_duplicate_pages_are_not_emptied() -> None:
    det = Detemplater(DetemplateConfig(method="segments", segments_first_pages="none"))
    body = PAGE.format("Same story", 1).encode()
    results = [det.process(f"http://ex.com/news/{i}.html", body) for i in range(6)]
    assert [r.reason for r in results[4:]] == ["all_template", "all_template"]
    assert results[5].text == "Home\nWorld news\nSame story\nSecond paragraph number 1.\nCopyright Example"


def test_mutual_fallbacks_do_not_recurse() -> None:
    config = DetemplateConfig(method="segments", segments_first_pages="rtdm")
    if not hasattr(config, "rtdm_meanwhile"):
        pytest.skip("no rtdm method here")
    config = DetemplateConfig(method="segments", segments_first_pages="rtdm", rtdm_meanwhile="segments")  # type: ignore[call-arg]
    assert _run(config, pages=2)[1].status in ("cleaned", "unchanged")
