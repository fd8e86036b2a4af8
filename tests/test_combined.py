from __future__ import annotations

import json

import pytest

from scrapy_detemplate import DetemplateConfig, Detemplater, InvalidSetting
from scrapy_detemplate._html import parse_html, visible_lines
from scrapy_detemplate.runners.combined import FEATURES, load_forest
from scrapy_detemplate.train_combined import line_labels

STORY = " ".join(["The council met on Tuesday, and the vote on the bridge passed, after a long debate."] * 3)
PAGE = """<html><head><title>{title} | Example</title></head><body>
<div id="nav"><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li></ul></div>
<div class="article"><h1>{title}</h1><p>{story}</p><p>{story}</p></div>
<div id="footer"><a href="/about">About us</a> | <a href="/terms">Terms of use</a></div>
</body></html>"""  # noqa: E501


def test_shipped_model_matches_the_features_this_version_computes():
    assert load_forest().features == FEATURES


def test_the_first_page_of_a_site_is_already_cleaned():
    result = Detemplater().process("http://ex.com/a/1", PAGE.format(title="Bridge vote passes", story=STORY).encode())
    assert result.method == "combined" and result.status == "cleaned"
    assert "Bridge vote passes" in result.text and STORY in result.text
    assert "Terms of use" not in result.text and "Sport" not in result.text


def test_a_model_for_other_features_is_refused(tmp_path):
    model = tmp_path / "m.json"
    model.write_text(json.dumps({"features": ["x"], "base": 0, "rate": 1, "trees": []}))
    with pytest.raises(ValueError, match="other features"):
        Detemplater(DetemplateConfig(combined_model=str(model)))


def test_threshold_must_be_a_probability():
    with pytest.raises(InvalidSetting, match="DETEMPLATE_COMBINED_THRESHOLD"):
        DetemplateConfig(combined_threshold=1.5)


def test_labels_follow_the_gold_text():
    lines = visible_lines(parse_html("<body><p>Home</p><p>the vote on the bridge passed today</p><p>Bridge</p></body>"))
    assert line_labels(lines, "After debate the vote on the bridge passed today. Bridge") == [0, 1, 1]


def test_a_line_on_nearly_every_earlier_page_of_the_site_is_template():
    notice = "This story was produced with support from our readers, and we thank every one of them, always."
    engine = Detemplater()
    for n in range(7):
        story = STORY.replace("Tuesday", f"day {n}")
        html = PAGE.format(title=f"Vote number {n}", story=story).replace("</p></div>", f"</p><p>{notice}</p></div>")
        result = engine.process(f"http://ex.com/a/{n}", html.encode())
    assert story in result.text
    assert notice not in result.text
    off = Detemplater(DetemplateConfig(combined_site_df=2.0))
    for n in range(7):
        html = PAGE.format(title=f"Vote number {n}", story=STORY.replace("Tuesday", f"day {n}"))
        kept = off.process(f"http://ex.com/a/{n}", html.replace("</p></div>", f"</p><p>{notice}</p></div>").encode())
    assert notice in kept.text  # without the override the page evidence keeps it
