"""Features, SITELEVEL(theta) labels and the shipped classifier (Sections 5.1-5.2)."""

from __future__ import annotations

import json

import lxml.html
import pytest

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.methods.templateness import (
    FEATURES,
    TemplatenessModel,
    build_table,
    label_nodes,
    load_model,
    node_hashes,
    sitelevel_templates,
)

ARTICLE = (
    "The council voted on Tuesday to approve the new budget, which raises spending on parks, schools and "
    "transport. Officials said the plan would take effect next spring, after a final reading in March. "
)
PAGE = """<html><head><title>Council approves new city budget</title></head><body>
<div id="nav"><ul><li><a href="/">Home page link</a></li><li><a href="/news">World news link</a></li>
<li><a href="/sport">Sports section link</a></li><li><a href="/arts">Arts and culture link</a></li>
<li><a href="/opinion">Opinion columns link</a></li><li><a href="/weather">Local weather link</a></li>
<li><a href="http://other.org/x">Partner site link</a></li></ul></div>
<div class="article"><h1>Council approves new city budget</h1><p>{body}</p><p>{body}</p><p>{body}</p><p>{body}</p></div>
<div id="footer">Copyright 2024 Example News Company <a href="/about">About us and contact</a></div>
</body></html>"""


def table_for(html: str, url: str = "http://example.com/a/1.html", min_chars: int = 20):
    return build_table(lxml.html.document_fromstring(html), url, min_chars=min_chars)


def feature(table, element_id: str, name: str) -> float:
    for el, row in zip(table.elements, table.features, strict=True):
        if el.get("id") == element_id or el.get("class") == element_id:
            return row[FEATURES.index(name)]
    raise KeyError(element_id)


def test_features_separate_menu_from_article():
    table = table_for(PAGE.format(body=ARTICLE))
    assert feature(table, "nav", "anchor_frac") > 0.9
    assert feature(table, "article", "anchor_frac") == 0.0
    assert feature(table, "nav", "links_per_word") > feature(table, "article", "links_per_word")
    assert feature(table, "nav", "intra_frac") == pytest.approx(6 / 7)
    assert feature(table, "article", "title_cover") == 1.0
    assert feature(table, "nav", "start") == 0.0
    assert feature(table, "footer", "end") == pytest.approx(1.0)
    assert feature(table, "article", "text_share") > 0.7
    assert feature(table, "nav", "cls_template") == 1.0
    assert feature(table, "article", "cls_content") == 1.0


def test_small_nodes_are_hidden_and_rolled_into_their_parent():
    table = table_for("<html><body><div><p>tiny</p><p>also tiny</p><p>" + "long text " * 5 + "</p></div></body></html>")
    tags = [el.tag for el in table.elements]
    assert tags == ["body", "div", "p"]  # the two short <p> are hidden
    assert table.weight[1] == 3.0  # the div counts as itself plus its two hidden children
    assert table.parent == [-1, 0, 1]
    hidden = table.elements[1][0]
    assert table.owner[hidden] == 1


def test_deep_page_does_not_recurse():
    html = "<html><body>" + "<div>" * 240 + "deep text " * 5 + "</div>" * 240 + "</body></html>"
    table = table_for(html)
    assert len(table.elements) > 100
    assert all(p < i for i, p in enumerate(table.parent))


def test_node_bound_keeps_text_counted():
    html = "<html><body>" + "<p>paragraph number text here</p>" * 50 + "</body></html>"
    table = build_table(lxml.html.document_fromstring(html), "", min_chars=5, max_nodes=10)
    assert len(table.elements) == 10
    assert table.page_chars == 50 * len("paragraphnumbertexthere")


def test_sitelevel_labels_repeated_blocks_and_mostly_template_parents():
    pages = [lxml.html.document_fromstring(PAGE.format(body=f"Story number {i}. " + ARTICLE)) for i in range(5)]
    hashes = [node_hashes(p) for p in pages]
    templates = sitelevel_templates([h.values() for h in hashes], theta=0.1)
    table = build_table(pages[0], "http://example.com/", min_chars=20)
    labels = dict(zip((el.get("id") or el.get("class") or el.tag for el in table.elements),
                      label_nodes(table, hashes[0], templates), strict=True))  # fmt: skip
    assert labels["nav"] == 1 and labels["footer"] == 1
    assert labels["article"] == 0 and labels["body"] == 0


def test_sitelevel_needs_two_pages():
    assert sitelevel_templates([[b"a", b"b"]], theta=0.1) == set()
    assert sitelevel_templates([[b"a"], [b"a"], [b"b"]], theta=0.5) == {b"a"}


def test_shipped_model_loads_and_scores_menu_above_article():
    model = load_model()
    assert model.features == FEATURES
    table = table_for(PAGE.format(body=ARTICLE))
    scores = dict(zip((el.get("id") or el.get("class") or el.tag for el in table.elements),
                      model.score(table.features), strict=True))  # fmt: skip
    assert scores["nav"] > 0.5 > scores["article"]
    assert all(0.0 <= s <= 1.0 for s in scores.values())


def test_model_json_round_trip_and_rejects_mismatched_features(tmp_path):
    model = load_model()
    again = TemplatenessModel.from_json(json.loads(json.dumps(model.to_json())))
    assert again.models == model.models
    bad = model.to_json()
    bad["features"] = ["only_one"]
    with pytest.raises(ValueError, match="features"):
        TemplatenessModel.from_json(bad)
    with pytest.raises(ValueError, match="not a templateness model"):
        TemplatenessModel.from_json({"features": list(FEATURES)})


@pytest.mark.parametrize("smooth", [True, False])
def test_runner_removes_menu_and_keeps_article(smooth):
    det = Detemplater(DetemplateConfig(method="isotonic", isotonic_smooth=smooth))
    result = det.process("http://example.com/a/1.html", PAGE.format(body=ARTICLE).encode())
    assert result.status == "cleaned"
    assert result.text.count("council voted") == 4  # the whole article
    assert "World news link" not in result.text
    assert "Copyright" not in result.text


def test_smoothed_scores_are_monotone_and_segments_are_outermost():
    from scrapy_detemplate.runners.base import ParsedPage
    from scrapy_detemplate.runners.isotonic import IsotonicRunner
    from scrapy_detemplate.store import MemoryStore

    html = PAGE.format(body=ARTICLE)
    page = ParsedPage("http://example.com/", "example.com", "example.com/", html, lxml.html.document_fromstring(html))
    runner = IsotonicRunner(DetemplateConfig(method="isotonic"), MemoryStore())
    table, x, y = runner.scores(page)
    assert len(x) == len(y) == len(table.elements)
    assert all(y[i] >= y[p] for i, p in enumerate(table.parent) if p >= 0)  # constraint (1)
    segments = runner.run(page).template_elements
    assert segments
    ancestors = {a for el in segments for a in el.iterancestors()}
    assert not ancestors & set(segments)


def test_runner_leaves_page_that_is_all_template():
    det = Detemplater(DetemplateConfig(method="isotonic", isotonic_threshold=0.0))
    result = det.process("http://example.com/a/1.html", PAGE.format(body=ARTICLE).encode())
    assert result.status == "unchanged"
    assert result.reason == "all_template"


def test_runner_does_not_modify_a_given_tree():
    tree = lxml.html.document_fromstring(PAGE.format(body=ARTICLE))
    before = lxml.html.tostring(tree)
    Detemplater(DetemplateConfig(method="isotonic")).process("http://example.com/", tree=tree)
    assert lxml.html.tostring(tree) == before


@pytest.mark.parametrize(
    ("field", "value"),
    [("isotonic_threshold", 1.5), ("isotonic_penalty", -1.0), ("isotonic_levels", 0), ("isotonic_smooth", "yes")],
)
def test_bad_settings_are_rejected(field, value):
    from scrapy_detemplate.config import InvalidSetting

    with pytest.raises(InvalidSetting):
        DetemplateConfig(method="isotonic", **{field: value})
