"""TPS at crawl time: one page at a time, no site state.

``DETEMPLATE_TPS_SELECT`` picks what is kept:

* ``size``: the paper's main region (Algorithm 3 keeps the longer part at each split);
* ``text``: the same search keeping, at each split, the part with more prose;
* ``segments`` (default): every region of the page (:func:`segmentRegions`), and
  the ones that pass :func:`isContentRegion` are kept.

With ``size`` and ``text``, ``DETEMPLATE_TPS_COMPLEMENT`` (Algorithm 6) keeps the
complement when the region fails :func:`isContent`.
"""

from __future__ import annotations

from scrapy_detemplate._html import find_body
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods.tps import (
    TagPathSequence,
    convertTreeToSequence,
    isContent,
    isContentRegion,
    pruneDOMTree,
    retained_positions,
    searchRegion,
    segmentRegions,
)
from scrapy_detemplate.runners.base import ParsedPage, Verdict
from scrapy_detemplate.store import StateStore

#: A piece of visible text: (line number, position it belongs with, characters, link text?).
Piece = tuple[int, int, int, bool]


class TpsRunner:
    """The verdict names both the text lines outside the kept positions
    (``template_lines``: a line goes when most of its characters lie outside) and
    the subtrees that hold no kept element (``template_elements``, Algorithm 5),
    so text and empty structure (images, spacers) go together.  A text piece
    belongs with the element that precedes it in document order.
    """

    name = "tps"

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        del store  # a single-page method
        self._margin = config.tps_margin
        self._two_sided = config.tps_two_sided
        self._complement = config.tps_complement
        self._max_nodes = config.tps_max_nodes
        self._select = config.tps_select
        self._min_share = config.tps_min_share

    def run(self, page: ParsedPage) -> Verdict:
        body = find_body(page.root)
        if body is None:
            return Verdict(detail="no_body")
        tps = convertTreeToSequence(body, self._max_nodes)
        if tps is None:
            return Verdict(detail="too_large")
        pieces = _pieces(tps, page)
        if self._select == "segments":
            retained, detail = self._segments(tps, pieces)
        else:
            retained, detail = self._main_region(tps, pieces)
        if retained is None:
            return Verdict(detail=detail)
        per_line = [[0, 0] for _ in page.lines]  # characters kept, removed
        for number, position, size, _ in pieces:
            per_line[number][0 if retained[position] else 1] += size
        template = frozenset(i for i, (kept, removed) in enumerate(per_line) if removed > kept)
        elements = tuple(pruneDOMTree(tps, retained))
        if not template and not elements:
            return Verdict(detail="no_region")
        return Verdict(template_lines=template, template_elements=elements, detail=detail)

    def _main_region(self, tps: TagPathSequence, pieces: list[Piece]) -> tuple[list[bool] | None, str]:
        weights: list[float] | None = None
        if self._select == "text":
            weights = [0.0] * len(tps)
            for _, position, size, is_link in pieces:
                if not is_link:
                    weights[position] += size
        start, end = searchRegion(tps.symbols, self._margin, self._two_sided, weights)
        if end - start == len(tps):
            return None, "no_region"
        text = [0, 0]  # region, rest
        links = [0, 0]
        for _, position, size, is_link in pieces:
            side = 0 if start <= position < end else 1
            text[side] += size
            if is_link:
                links[side] += size
        complement = self._complement and not isContent(text[0], links[0], text[1], links[1])
        retained = retained_positions(len(tps), (start, end), complement)
        return retained, "complement" if complement else "region"

    def _segments(self, tps: TagPathSequence, pieces: list[Piece]) -> tuple[list[bool] | None, str]:
        regions = segmentRegions(tps.symbols)
        if len(regions) < 2:
            return None, "no_region"
        region_of = [0] * len(tps)
        for k, (start, end) in enumerate(regions):
            region_of[start:end] = [k] * (end - start)
        prose = [0] * len(regions)
        links = [0] * len(regions)
        for _, position, size, is_link in pieces:
            (links if is_link else prose)[region_of[position]] += size
        page_prose = sum(prose)
        keep = [isContentRegion(prose[k], links[k], page_prose, self._min_share) for k in range(len(regions))]
        if not any(keep):
            return None, "no_content_region"
        return [keep[k] for k in region_of], "segments"


def _pieces(tps: TagPathSequence, page: ParsedPage) -> list[Piece]:
    """The page's text pieces, each with the sequence position it belongs with."""
    pieces: list[Piece] = []
    for number, line in enumerate(page.lines):
        for el, is_tail in line.slots:
            where = tps.locate(el, is_tail)
            piece = el.tail if is_tail else el.text
            size = len(piece.strip()) if piece else 0
            if where is not None and size:
                pieces.append((number, where[0], size, where[1]))
    return pieces
