"""TPS: the paper's examples, a literal Algorithm 3 as oracle, and the runner."""

from __future__ import annotations

from collections import Counter

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from scrapy_detemplate._html import find_body
from scrapy_detemplate.config import DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.methods.tps import (
    convertTreeToSequence,
    filterAlphabet,
    findSplit,
    isContent,
    isContentRegion,
    pruneDOMTree,
    retained_positions,
    searchRegion,
    segmentRegions,
)


def body_of(html: str) -> etree._Element:
    body = find_body(lxml.html.document_fromstring(html))
    assert body is not None
    return body


def tps_of(html: str):  # type: ignore[no-untyped-def]
    tps = convertTreeToSequence(body_of(html))
    assert tps is not None
    return tps


# -- the paper's examples ----------------------------------------------------

FIGURE_2 = "<html><body><table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table></body></html>"


def test_figure_2_sequence_alphabet_frequencies_and_thresholds() -> None:
    tps = tps_of(FIGURE_2)
    assert tps.symbols == [1, 2, 3, 4, 4, 3, 4, 4]  # TPS = (1, 2, 3, 4, 4, 3, 4, 4)
    assert tps.tag_path(tps.symbols[3]) == "body/table/tr/td"  # TP_4
    assert set(tps.symbols) == {1, 2, 3, 4}  # Σ (Definition 3.4)
    fs = Counter(tps.symbols)
    assert dict(fs) == {1: 1, 2: 1, 3: 2, 4: 4}  # FS (Definition 3.5)
    assert sorted(set(fs.values())) == [1, 2, 4]  # FT (Definition 3.6)
    # Definition 3.7: TPS[1..2] and TPS[3..8] are regions (disjoint alphabets).
    assert not set(tps.symbols[:2]) & set(tps.symbols[2:])


def test_figure_2_search_keeps_the_table_rows() -> None:
    tps = tps_of(FIGURE_2)
    assert searchRegion(tps.symbols) == (2, 8)  # (3, 4, 4, 3, 4, 4): the rows


def test_filter_alphabet_keeps_symbols_at_or_above_the_threshold() -> None:
    assert filterAlphabet([1, 2, 3, 4], {1: 1, 2: 1, 3: 2, 4: 4}, 2) == {3, 4}
    assert filterAlphabet([1, 2, 3, 4], {1: 1, 2: 1, 3: 2, 4: 4}, 5) == set()


def test_style_makes_paths_different() -> None:
    tps = tps_of("<body><p class='a  b'>x</p><p class='a b'>y</p><p style='color: red'>z</p><p>w</p></body>")
    assert tps.symbols == [1, 2, 2, 3, 4]
    assert tps.tag_path(2) == "body/p.a.b"


BR_DIVS = (
    "<html><body><br>"
    "<div>" + "<span class='region1'>one</span>" * 4 + "</div>"
    "<div>" + "<span class='region2'>two</span>" * 12 + "</div>"
    "<div>" + "<span class='region3'>three</span>" * 4 + "</div>"
    "<br></body></html>"
)


def test_br_div_example_needs_low_frequency_filtering() -> None:
    tps = tps_of(BR_DIVS)
    seq = tps.symbols
    # TPS = (1, 2, 3, 4..4, 3, 5..5, 3, 6..6, 2): body/br and body/div occur all along.
    assert seq == [1, 2, 3, *[4] * 4, 3, *[5] * 12, 3, *[6] * 4, 2]
    inner = seq[1:]
    # Without filtering no cut of (2, 3, 4, ..., 2) has disjoint alphabets...
    assert all(set(inner[:i]) & set(inner[i:]) for i in range(1, len(inner)))
    # ...but with the symbols of frequency below 4 filtered out, one has.
    kept = filterAlphabet(list(set(inner)), Counter(inner), 4)
    assert kept == {4, 5, 6}
    # The paper's one-sided margin splits after (br, div, 4 x region1); the
    # two-sided one already splits at threshold 3, before the closing div.
    assert findSplit(inner, 0, len(inner), two_sided=False) == 6
    assert findSplit(inner, 0, len(inner)) == 20
    start, end = searchRegion(seq)
    region = {tps.nodes[i].get("class") for i in range(start, end)}
    assert "region2" in region
    assert not region & {"region1", "region3"}
    # One-sided, (n - 2i)/n > 0.2 only ever cuts a prefix off: region3 stays.
    start, end = searchRegion(seq, two_sided=False)
    region = {tps.nodes[i].get("class") for i in range(start, end)}
    assert region >= {"region2", "region3"}
    assert "region1" not in region


# -- Algorithm 3 against a literal transcription -------------------------------


def literal_search_region(
    tps: list[int], margin: float, two_sided: bool, weights: list[int] | None, offset: int = 0
) -> tuple[int, int]:
    """Algorithm 3 line by line (1-based ``i``), recursion and all."""
    n = len(tps)
    alphabet: list[int] = []
    symbolCount: dict[int, int] = {}
    for symbol in tps:
        if symbol not in symbolCount:
            alphabet.append(symbol)
            symbolCount[symbol] = 0
        symbolCount[symbol] += 1
    thresholds = sorted(set(symbolCount.values()))
    regionFound = False
    t = 0
    i = 0
    while not regionFound:
        t += 1
        if t > len(thresholds):
            break
        currentAlphabet = filterAlphabet(alphabet, symbolCount, thresholds[t - 1])
        if len(currentAlphabet) < 2:
            break
        currentSymbolCount = dict(symbolCount)
        regionAlphabet: set[int] = set()
        for i in range(1, n + 1):  # i is read after the loop, as in the paper
            symbol = tps[i - 1]
            if symbol in currentAlphabet:
                regionAlphabet.add(symbol)
                currentSymbolCount[symbol] -= 1
                if currentSymbolCount[symbol] == 0:
                    currentAlphabet = currentAlphabet - {symbol}
                    if not currentAlphabet & regionAlphabet:
                        share = (n - 2 * i) / n
                        if currentAlphabet and (abs(share) if two_sided else share) > margin:
                            regionFound = True
                        break
    if regionFound:
        if weights is None:
            keep_suffix = i < n / 2
        else:
            head, tail = sum(weights[:i]), sum(weights[i:])
            keep_suffix = tail > head or (tail == head and i < n / 2)
        if keep_suffix:
            return literal_search_region(tps[i:], margin, two_sided, weights and weights[i:], offset + i)
        return literal_search_region(tps[:i], margin, two_sided, weights and weights[:i], offset)
    return offset, offset + n


sequences = st.lists(st.integers(1, 6), max_size=40)
margins = st.sampled_from([0.0, 0.1, 0.2, 0.5])


@settings(derandomize=True, max_examples=400, deadline=None)
@given(sequences, margins, st.booleans())
def test_search_region_matches_the_literal_algorithm(seq: list[int], margin: float, two_sided: bool) -> None:
    assert searchRegion(seq, margin, two_sided) == literal_search_region(seq, margin, two_sided, None)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 3)), max_size=40), margins)
def test_weighted_search_region_matches_the_literal_algorithm(pairs: list[tuple[int, int]], margin: float) -> None:
    seq = [s for s, _ in pairs]
    weights = [w for _, w in pairs]
    assert searchRegion(seq, margin, True, weights) == literal_search_region(seq, margin, True, weights)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(sequences, margins)
def test_a_reported_split_separates_filtered_alphabets(seq: list[int], margin: float) -> None:
    i = findSplit(seq, 0, len(seq), margin)
    if i is None:
        return
    counts = Counter(seq)
    n = len(seq)
    assert abs(n - 2 * i) / n > margin
    # Brute force: some threshold leaves a non-empty prefix and suffix with disjoint alphabets.
    assert any(
        {s for s in seq[:i] if counts[s] >= f}
        and {s for s in seq[i:] if counts[s] >= f}
        and not {s for s in seq[:i] if counts[s] >= f} & {s for s in seq[i:] if counts[s] >= f}
        for f in set(counts.values())
    )


def literal_segments(tps: list[int], offset: int = 0) -> list[tuple[int, int]]:
    """Every region: the first cut of the literal Algorithm 3 with no margin, both sides recursed."""
    cut = literal_first_cut(tps)
    if cut is None:
        return [(offset, offset + len(tps))]
    return literal_segments(tps[:cut], offset) + literal_segments(tps[cut:], offset + cut)


def literal_first_cut(tps: list[int]) -> int | None:
    """Lines 4-38 of Algorithm 3 with every cut accepted: the first ``i`` or ``None``."""
    n = len(tps)
    symbolCount = Counter(tps)
    for threshold in sorted(set(symbolCount.values())):
        currentAlphabet = filterAlphabet(list(symbolCount), symbolCount, threshold)
        if len(currentAlphabet) < 2:
            return None
        currentSymbolCount = dict(symbolCount)
        regionAlphabet: set[int] = set()
        for i in range(1, n + 1):
            symbol = tps[i - 1]
            if symbol in currentAlphabet:
                regionAlphabet.add(symbol)
                currentSymbolCount[symbol] -= 1
                if currentSymbolCount[symbol] == 0:
                    currentAlphabet = currentAlphabet - {symbol}
                    if not currentAlphabet & regionAlphabet:
                        if currentAlphabet:
                            return i
                        break
    return None


@settings(derandomize=True, max_examples=400, deadline=None)
@given(sequences)
def test_segment_regions_match_the_literal_recursion(seq: list[int]) -> None:
    regions = segmentRegions(seq)
    assert regions == literal_segments(seq)
    # The regions tile the sequence, in order.
    assert [p for a, b in regions for p in range(a, b)] == list(range(len(seq)))


def test_segment_regions_of_the_br_div_example() -> None:
    tps = tps_of(BR_DIVS)
    classes = [{tps.nodes[i].get("class") for i in range(a, b)} - {None} for a, b in segmentRegions(tps.symbols)]
    assert {"region1"} in classes and {"region2"} in classes and {"region3"} in classes


def test_is_content_region() -> None:
    assert isContentRegion(prose=100, link_text=20, page_prose=1000, min_share=0.05)
    assert not isContentRegion(prose=100, link_text=200, page_prose=1000, min_share=0.05)  # a link list
    assert not isContentRegion(prose=10, link_text=0, page_prose=1000, min_share=0.05)  # a crumb
    assert not isContentRegion(prose=0, link_text=0, page_prose=0, min_share=0.0)


# -- Algorithm 5 against brute force ------------------------------------------------


@st.composite
def trees(draw: st.DrawFn) -> tuple[etree._Element, list[bool]]:
    size = draw(st.integers(1, 25))
    parents = [draw(st.integers(0, i - 1)) for i in range(1, size)]
    tags = draw(st.lists(st.sampled_from(["div", "p", "span", "a"]), min_size=size, max_size=size))
    body = etree.Element("body")
    made = [body]
    for i, parent in enumerate(parents, 1):
        made.append(etree.SubElement(made[parent], tags[i]))
    retained = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    return body, retained


@settings(derandomize=True, max_examples=200, deadline=None)
@given(trees())
def test_prune_dom_tree_drops_exactly_the_maximal_subtrees_without_retained_nodes(
    case: tuple[etree._Element, list[bool]],
) -> None:
    body, retained = case
    tps = convertTreeToSequence(body)
    assert tps is not None
    keep = {tps.nodes[i] for i, r in enumerate(retained) if r}

    def holds(el: etree._Element) -> bool:
        return any(x in keep for x in el.iter())

    expected = {el for el in body.iter() if el is not body and not holds(el) and holds(el.getparent())}
    assert set(pruneDOMTree(tps, retained)) == expected


def test_retained_positions_and_complement() -> None:
    assert retained_positions(5, (1, 3)) == [False, True, True, False, False]
    assert retained_positions(5, (1, 3), complement=True) == [True, False, False, True, True]


def test_deep_page_is_walked_without_recursion() -> None:
    html = "<body>" + "<div>" * 3000 + "x" + "</div>" * 3000 + "</body>"
    tps = tps_of(html)
    assert len(tps) > 250
    # A chain: every symbol occurs once, so each pass peels one element off.
    assert searchRegion(tps.symbols) == literal_search_region(tps.symbols, 0.2, True, None) == (len(tps) - 2, len(tps))


def test_max_nodes_bounds_the_sequence() -> None:
    assert convertTreeToSequence(body_of("<body>" + "<p>x</p>" * 50 + "</body>"), max_nodes=10) is None


def test_text_pieces_belong_with_the_preceding_element() -> None:
    tps = tps_of("<body>lead<div><a href='#'>menu</a> after<!-- c --> tail</div></body>")
    body, div = tps.nodes[0], tps.nodes[1]
    a = tps.nodes[2]
    comment = div[1]
    assert tps.locate(body, False) == (0, False)
    assert tps.locate(a, False) == (2, True)  # link text
    assert tps.locate(a, True) == (2, False)  # " after" follows the link, outside it
    assert tps.locate(comment, True) == (2, False)


# -- Algorithm 6 and the runner -----------------------------------------------------


def test_is_content_compares_prose_outside_links() -> None:
    assert not isContent(region_text=300, region_link_text=290, rest_text=200, rest_link_text=0)
    assert isContent(region_text=300, region_link_text=0, rest_text=500, rest_link_text=450)


NEWS = (
    "<html><body><div class='nav'><ul>"
    + "".join(f"<li><a href='/s{k}'>Section {k}</a></li>" for k in range(12))
    + "</ul></div><div class='article'><h1>The headline</h1>"
    "<p>The first paragraph of the story, long enough to be prose.</p>"
    "<p>The second paragraph of the story goes on and on about it.</p></div>"
    "<div class='footer'><p>Copyright notice</p></div></body></html>"
)


def clean(html: str, **cfg: object) -> tuple[str, str]:
    result = Detemplater(DetemplateConfig(method="tps", **cfg)).process("http://ex.com/a", html)  # type: ignore[arg-type]
    return result.reason, result.text


def test_region_of_links_is_swapped_for_its_complement() -> None:
    reason, text = clean(NEWS, tps_select="size")
    assert reason == "complement"
    assert "Section 3" not in text
    assert "The first paragraph" in text and "The headline" in text


def test_without_algorithm_6_the_largest_region_is_kept_even_if_it_is_the_menu() -> None:
    reason, text = clean(NEWS, tps_select="size", tps_complement=False)
    assert reason == "region"
    assert "Section 3" in text
    assert "The first paragraph" not in text


def test_following_text_drills_into_the_prose() -> None:
    reason, text = clean(NEWS, tps_select="text")
    assert reason == "region"
    assert "Section 3" not in text
    assert "The second paragraph" in text
    # The headline is its own region before the paragraphs, and lighter: it goes.
    assert "The headline" not in text


def test_segments_keep_every_prose_region() -> None:
    reason, text = clean(NEWS)  # the default: tps_select="segments"
    assert reason == "segments"
    assert "Section 3" not in text
    assert "The headline" in text and "The second paragraph" in text


def test_segments_with_a_high_share_keep_only_the_main_prose() -> None:
    _, text = clean(NEWS, tps_min_share=0.5)
    assert "The second paragraph" in text
    assert "Copyright notice" not in text


def test_page_without_a_region_is_unchanged() -> None:
    reason, text = clean("<html><body><p>Just one paragraph.</p></body></html>")
    assert reason == "no_region"
    assert text == "Just one paragraph."


def test_run_leaves_the_page_tree_alone() -> None:
    from scrapy_detemplate.runners.base import ParsedPage
    from scrapy_detemplate.runners.tps import TpsRunner
    from scrapy_detemplate.store import MemoryStore

    root = lxml.html.document_fromstring(NEWS)
    before = lxml.html.tostring(root)
    page = ParsedPage("http://ex.com/a", "ex.com", "ex.com/", NEWS, root)
    verdict = TpsRunner(DetemplateConfig(method="tps"), MemoryStore()).run(page)
    assert verdict.template_lines and verdict.template_elements
    assert lxml.html.tostring(root) == before


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tps_margin", 1.0),
        ("tps_margin", -0.1),
        ("tps_complement", "yes"),
        ("tps_max_nodes", 0),
        ("tps_select", "largest"),
        ("tps_min_share", 2.0),
    ],
)
def test_bad_settings_are_refused(field: str, value: object) -> None:
    with pytest.raises(InvalidSetting):
        DetemplateConfig(method="tps", **{field: value})  # type: ignore[arg-type]


def test_settings_from_text() -> None:
    cfg = DetemplateConfig.from_settings({"DETEMPLATE_TPS_MARGIN": "0.3", "DETEMPLATE_TPS_COMPLEMENT": "off"})
    assert cfg.tps_margin == 0.3
    assert cfg.tps_complement is False
