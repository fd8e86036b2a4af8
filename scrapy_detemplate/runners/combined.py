"""The combined method: page-level and site-level evidence for every line.

Per page, each visible line gets the page-level features of
:mod:`scrapy_detemplate.methods.density` (main container, line shape) and
site-level ones: the document frequency of its segments on the site's earlier
pages (the segment table of Wang et al., via :class:`SegmentsRunner`), and
whether it is in the Sandwich LCS with its directory peer (via
:class:`SandwichRunner`).  Boosted trees trained on gold text
(:mod:`scrapy_detemplate.train_combined`) turn them into a probability of being
content; lines below the threshold are template.  Site evidence only adds to
page evidence, so the first page of a site is already cleaned.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods.density import FEATURES as PAGE_FEATURES
from scrapy_detemplate.methods.density import line_features
from scrapy_detemplate.methods.forest import Forest
from scrapy_detemplate.runners.base import ParsedPage, Verdict, unusable_model
from scrapy_detemplate.runners.sandwich import SandwichRunner
from scrapy_detemplate.runners.segments import SegmentsRunner
from scrapy_detemplate.store import StateStore

SITE_FEATURES = ("site_df", "in_sandwich_lcs", "has_peer", "log_pages_seen", "site_df_when_warm")
FEATURES = (*PAGE_FEATURES, *SITE_FEATURES)
_WARM_DF = FEATURES.index("site_df_when_warm")
_LINK_DENSITY, _IN_CONTAINER, _LOG_WORDS = (FEATURES.index(f) for f in ("link_density", "in_container", "log_words"))
_MENU_WORDS = math.log1p(3)
#: How many earlier pages of a site the DF share is taken over, at most.
DF_WINDOW = 20


def load_forest(path: str = "") -> Forest:
    """The model at ``path``, or the one shipped in the package (``ValueError``
    or ``OSError`` when the file is missing, unreadable or not a model)."""
    if path:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    else:
        data = json.loads(resources.files("scrapy_detemplate.data").joinpath("combined_model.json").read_text())
    forest = Forest(data)
    if forest.features != FEATURES:
        raise ValueError(f"model {path or '(shipped)'} was trained on other features than this version computes")
    return forest


class CombinedEvidence:
    """Computes :data:`FEATURES` for the lines of pages taken in crawl order."""

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        self._sandwich = SandwichRunner(dataclasses.replace(config, sandwich_unit="text"), store)
        self._segments = SegmentsRunner(dataclasses.replace(config, segments_first_pages="none"), store)

    def features(self, page: ParsedPage) -> list[list[float]]:
        """Feature vectors of the page's lines; updates the site state (one call per page)."""
        title = page.root.findtext(".//title") or ""
        rows = line_features(page.root, page.lines, title)
        _, _, matched = self._sandwich.observe(page)
        seg, dfs, clock = self._segments.observe(page)
        seen = clock - 1  # earlier pages of the site
        line_df = [0] * len(page.lines)
        for key, line in zip(seg.keys, seg.lines, strict=True):
            line_df[line] = max(line_df[line], dfs.get(key, 1) - 1)
        in_lcs = set(matched or ())
        window = min(seen, DF_WINDOW)
        warm = min(1.0, seen / 5)
        for i, row in enumerate(rows):
            share = min(line_df[i] / window, 1.0) if window else 0.0
            row += [share, 1.0 if i in in_lcs else 0.0, 0.0 if matched is None else 1.0, math.log1p(seen) / 4,
                    share * warm]  # fmt: skip
        return rows


class CombinedRunner:
    name = "combined"

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        self._evidence = CombinedEvidence(config, store)
        try:
            forest = load_forest(config.combined_model)
        except (OSError, ValueError) as exc:  # at start-up, naming the setting, not a bare traceback
            raise unusable_model("DETEMPLATE_COMBINED_MODEL", config.combined_model, "train-combined", exc) from exc
        self._probability = forest.compiled()
        self._threshold = config.combined_threshold
        self._site_df = config.combined_site_df

    def run(self, page: ParsedPage) -> Verdict:
        template = decide(self._evidence.features(page), self._probability, self._threshold, self._site_df)
        if not template:
            return Verdict(detail="all_content")
        if len(template) == len(page.lines):
            return Verdict(detail="all_template")  # keep the page whole rather than return nothing
        return Verdict(template_lines=template)


def decide(
    rows: list[list[float]], probability: Callable[[list[float]], float], threshold: float, site_df: float
) -> frozenset[int]:
    """The template lines: below ``threshold`` probability of content, or decided outright.

    Two kinds of line are template whatever the trees say.  Site evidence is
    decisive when it is overwhelming: a line that stood on nearly every earlier
    page of the site (after a few pages).  And a menu entry: a line of at most
    three words, all of it link text, outside the page's main container.  (The
    trees, weighted by words, care little about one-word lines; this rule changes
    no content F1 in cross-validation and leaves no stray menu words behind.)
    """
    return frozenset(
        i
        for i, row in enumerate(rows)
        if row[_WARM_DF] >= site_df
        or (row[_LINK_DENSITY] >= 0.99 and not row[_IN_CONTAINER] and row[_LOG_WORDS] <= _MENU_WORDS)
        or probability(row) < threshold
    )
