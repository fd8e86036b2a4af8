"""The learned lexicon of class, id and itemprop names (``methods/names.py``) and its columns."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from scrapy_detemplate import DetemplateConfig, Detemplater
from scrapy_detemplate._html import parse_html, visible_lines
from scrapy_detemplate.methods import names
from scrapy_detemplate.runners.combined import _NAMES_AT, FEATURES, model_names
from scrapy_detemplate.train_combined import NAME_FOLDS, PageLines, _first_pages_named, _fold

PAGE = """<html><body>
<div class="site-header"><ul class="menu"><li class="menu-item"><a href="/">Home</a></li></ul></div>
<main id="mainContent"><div class="entry-content post"><p itemprop="articleBody">The story itself.</p></div></main>
<footer class="site-footer">Copyright</footer>
</body></html>"""


def _lines() -> list[Any]:
    root = parse_html(PAGE)
    assert root is not None
    return visible_lines(root)


def test_an_element_gives_whole_names_their_word_parts_and_itemprop() -> None:
    el = etree.fromstring('<div class="entry-content Post" id="mainContent" itemprop="articleBody"/>')
    assert names.element_names(el) == (
        "c:entry-content", "c:post", "i:maincontent", "p:articlebody",
        "w:content", "w:entry", "w:main", "w:post",
    )  # fmt: skip


def test_a_line_has_its_ancestors_names_nearest_first_up_to_the_body() -> None:
    by_text = {line.text: chain for line, chain in zip(_lines(), names.line_names(_lines()), strict=True)}
    assert by_text["The story itself."] == (
        ("p:articlebody",),
        ("c:entry-content", "c:post", "w:content", "w:entry", "w:post"),
        ("i:maincontent", "w:content", "w:main"),
    )
    assert by_text["Home"][0] == () and by_text["Home"][1] == ("c:menu-item", "w:item", "w:menu")
    assert by_text["Copyright"] == (("c:site-footer", "w:footer", "w:site"),)


def test_columns_nearest_least_most_and_how_many_are_known() -> None:
    chain = (("a", "b"), (), ("c", "x"))
    assert names.columns(chain, {"a": 1.0, "b": 3.0, "c": -2.0}) == [2.0, -2.0, 3.0, 3.0]
    assert names.columns(chain, {"c": -2.0}) == [-2.0, -2.0, -2.0, 1.0]
    assert names.columns(chain, {}) == [0.0, 0.0, 0.0, 0.0]
    many = tuple((f"n{i}",) for i in range(30))
    assert names.columns(many, {f"n{i}": 0.5 for i in range(30)})[3] == names.MOST_KNOWN


def test_a_lexicon_is_the_log_odds_of_site_votes_of_enough_sites() -> None:
    votes = [{"menu": 0.0, "post": 1.0}] * 9 + [{"menu": 0.0}]
    lexicon = names.lexicon(votes, min_sites=10)
    assert set(lexicon) == {"menu"}  # post: nine sites only
    assert lexicon["menu"] == round(math.log(0.5 / 10.5), 4)
    assert names.lexicon(votes, min_sites=9)["post"] == round(math.log(9.5 / 0.5), 4)


def test_a_site_votes_the_gold_share_of_the_words_under_each_name() -> None:
    chain_a = (("a",), ("b",))
    chain_b = (("b",),)
    votes = names.site_votes([[1, 0]], [[3.0, 1.0]], [[chain_a, chain_b]])
    assert votes == {"a": 1.0, "b": 0.75}


def _page(site: str, first: bool, label: int, chain: names.LineNames) -> PageLines:
    row = [0.0] * len(FEATURES)
    row[FEATURES.index("log_pages_seen")] = 0.0 if first else 0.5
    return PageLines("c", site, [row], [label], [1.0], ["x"], "", "", "", [chain])


def test_a_training_line_is_never_scored_by_a_lexicon_its_own_site_voted_in() -> None:
    # each site shows a name of its own and a shared one; its one line is gold on odd sites
    pages = [_page(f"s{i}", True, i % 2, ((f"only-{i}", "shared"),)) for i in range(60)]
    first, lexicon = _first_pages_named(pages)
    assert "shared" in lexicon and not any(k.startswith("only-") for k in lexicon)
    assert len(first) == 60
    values = set()
    for page in first:
        fold = _fold(f"names/c/{page.site}", NAME_FOLDS)
        others = [{"shared": float(i % 2)} for i in range(60) if _fold(f"names/c/s{i}", NAME_FOLDS) != fold]
        nearest, least, most, known = page.rows[0][_NAMES_AT:]
        assert known == 1.0 and nearest == least == most == names.lexicon(others)["shared"]
        values.add(nearest)
    assert len(values) > 1  # each fold its own: the other folds' sites, never the whole lexicon
    # a later page of a site is no training line of the first-page trees: its columns stay 0.0
    pages.append(_page("s0", False, 1, (("shared",),)))
    first, _ = _first_pages_named(pages)
    assert len(first) == 60 and pages[-1].rows[0][_NAMES_AT:] == [0.0] * len(names.NAME_FEATURES)


def test_the_shipped_model_has_a_lexicon() -> None:
    lexicon = model_names(json.loads((_model_path()).read_text()))
    assert len(lexicon) > 1000 and lexicon["c:footer"] < -2 and lexicon["c:menu-item"] < -2


def _model_path() -> Any:
    from importlib import resources

    return resources.files("scrapy_detemplate.data").joinpath("combined_model.json")


@pytest.mark.parametrize(
    "bad", [[1, 2], {"x": "y"}, {"x": math.inf}, {"x": math.nan}, {"x": 10**400}, {"x": True}, "names"]
)
def test_a_model_with_bad_names_is_refused_with_a_value_error(bad: object) -> None:
    with pytest.raises(ValueError, match="names"):
        model_names({"names": bad}, "m.json")


@settings(max_examples=100, deadline=None)
@given(lexicon=st.dictionaries(st.text(max_size=12), st.floats(allow_nan=False, allow_infinity=False)))
def test_any_lexicon_gives_finite_columns(lexicon: dict[str, float]) -> None:
    for row in names.page_columns(_lines(), lexicon):
        assert len(row) == len(names.NAME_FEATURES) and all(map(math.isfinite, row))


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(-6, 6), min_size=12, max_size=12))
def test_the_runners_columns_are_the_trainings(values: list[float]) -> None:
    """``page_columns`` (per element, from its parent's; the runner) gives what ``columns`` of
    ``line_names`` gives (the training), whatever the lexicon's numbers, with a kept ``stats``."""
    known = sorted({n for chain in names.line_names(_lines()) for level in chain for n in level})
    lexicon = dict(zip(known, values, strict=False))
    lines = _lines()
    stats: names.OwnStats = {}
    for _ in range(2):  # the second page reads the triples' stats the first one kept
        assert names.page_columns(lines, lexicon, stats) == [
            names.columns(chain, lexicon) for chain in names.line_names(lines)
        ]


def test_the_name_columns_move_a_first_page_only(tmp_path: Any) -> None:
    """A model whose lexicon calls ``site-footer`` content keeps the footer on a site's first page
    only if its first-page trees read the names: here a one-split model on ``names_known``."""
    data = json.loads(_model_path().read_text())
    model = {
        "features": list(FEATURES),
        "base": 0.0,
        "rate": 1.0,
        "trees": [{"feature": [_NAMES_AT + 3, -2, -2], "threshold": [0.5, 0.0, 0.0], "left": [1, -1, -1],
                   "right": [2, -1, -1], "value": [0.0, -5.0, 5.0]}],
        "names": {"c:site-footer": 3.0},
    }  # fmt: skip
    assert data["features"] == model["features"]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    engine = Detemplater(DetemplateConfig(combined_model=str(path)))
    first = engine.process("http://ex.com/a/1", PAGE.encode())
    assert "Copyright" in first.text and "The story itself." not in first.text
    second = engine.process("http://ex.com/a/2", PAGE.replace("story", "tale").encode())
    # no names read on a later page: every line scores -5, all template, so the page is kept whole
    assert "Copyright" in second.text and "The tale itself." in second.text
