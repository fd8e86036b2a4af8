"""PAGELEVEL at crawl time: score each DOM node, smooth, drop template segments.

Page-level and stateless: it works from the first page of a site and needs no
store, so other runners can use it as their fallback while they learn::

    fallback = IsotonicRunner(config, store)
    verdict = fallback.run(page)
"""

from __future__ import annotations

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods.isotonic import quantize, smooth
from scrapy_detemplate.methods.templateness import NodeTable, TemplatenessModel, build_table, load_model
from scrapy_detemplate.runners.base import ParsedPage, Verdict, unusable_model
from scrapy_detemplate.store import StateStore

#: Scored nodes smoothed at most; larger pages are smoothed on coarser score levels.
MAX_SMOOTHED_NODES = 20_000


class IsotonicRunner:
    """Templateness classifier (``isotonic_model``, default the shipped one),
    regularized tree isotonic smoothing (``isotonic_smooth``), and a threshold
    (``isotonic_threshold``) on the smoothed scores.

    With smoothing, the template is the outermost nodes whose smoothed score
    reaches the threshold (whole segments, ``template_elements``).  Without
    ("Basic"), every node is judged alone: a text line is template when most
    of its characters belong to nodes (hidden children included) at or above
    the threshold (``template_lines``).  A page judged template from the body
    down is left whole (``detail="all_template"``).
    """

    name = "isotonic"

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        del store  # page-level: no state
        try:
            self.model: TemplatenessModel = load_model(config.isotonic_model or None)
        except (OSError, ValueError) as exc:  # at start-up, naming the setting, not a bare traceback
            raise unusable_model("DETEMPLATE_ISOTONIC_MODEL", config.isotonic_model, "train", exc) from exc
        self._smooth = config.isotonic_smooth
        self._threshold = config.isotonic_threshold
        self._penalty = config.isotonic_penalty
        self._min_chars = config.isotonic_min_chars
        self._levels = config.isotonic_levels

    def scores(self, page: ParsedPage) -> tuple[NodeTable, list[float], list[float]]:
        """The page's scored nodes, classifier scores ``x`` and smoothed scores ``y``."""
        table = build_table(page.root, page.url, min_chars=self._min_chars)
        if not table.elements:
            return table, [], []
        x = quantize(self.model.score(table.features), self._levels)
        if not self._smooth:
            return table, x, x
        if len(x) > MAX_SMOOTHED_NODES:  # bound the O(n * levels) smoothing
            x = quantize(x, 10)
        # Section 5.3: gamma_i = c * A / A_i, with visible characters for the area.
        total = max(table.page_chars, 1)
        gamma = [self._penalty * total / max(c, 1) for c in table.chars]
        return table, x, smooth(table.parent, x, gamma, table.weight).y

    def run(self, page: ParsedPage) -> Verdict:
        table, _, y = self.scores(page)
        if not y:
            return Verdict(detail="no_nodes")
        t = self._threshold
        if y[0] >= t:
            return Verdict(detail="all_template")
        if self._smooth:
            parent = table.parent
            segments = tuple(table.elements[i] for i in range(1, len(y)) if y[i] >= t > y[parent[i]])
            return Verdict(template_elements=segments) if segments else Verdict(detail="no_template")
        lines = _template_lines(page, table, [s >= t for s in y])
        return Verdict(template_lines=lines) if lines else Verdict(detail="no_template")


def _template_lines(page: ParsedPage, table: NodeTable, template: list[bool]) -> frozenset[int]:
    """Lines whose characters mostly belong to template nodes (Basic, unsmoothed)."""
    out = set()
    owner = table.owner
    for index, line in enumerate(page.lines):
        yes = no = 0
        for el, is_tail in line.slots:
            holder = el.getparent() if is_tail else el
            k = owner.get(holder) if holder is not None else None
            text = (el.tail if is_tail else el.text) or ""
            size = len(text.strip()) or 1
            if k is not None and template[k]:
                yes += size
            else:
                no += size
        if yes > no:
            out.add(index)
    return frozenset(out)
