from __future__ import annotations

import gzip
import math

import pytest

from scrapy_detemplate.evaluation import Summary, bag, below_keep_all, failed_pages, read_manifest, score_page


def test_tokens_are_unicode_lowercase_words():
    assert bag("Ünïcode, WORDS words_2!") == {"ünïcode": 1, "words": 1, "words_2": 1}


def test_page_scores_follow_the_definitions():
    score = score_page(extracted="a b c x", gold="a b c d", visible="a b c d x y")
    assert score.precision == pytest.approx(0.75)
    assert score.recall == pytest.approx(0.75)
    assert score.f1 == pytest.approx(0.75)
    assert score.removal == pytest.approx(0.5)  # x leaked, y removed
    assert not score.failed


def test_empty_sides():
    assert score_page("", "", "").f1 == 1.0
    assert score_page("", "gold", "gold other").f1 == 0.0
    assert score_page("", "gold", "gold other").removal == 1.0


def test_site_macro_weighs_sites_equally():
    summary = Summary()
    summary.add("a", score_page("x", "x", "x"))
    summary.add("a", score_page("x", "x", "x"))
    summary.add("b", score_page("y", "x", "x y"))
    assert summary.macro()["f1"] == pytest.approx(0.5)
    assert summary.micro()["f1"] == pytest.approx(2 / 3)


def test_sites_below_keeping_every_line_are_named_worst_first_and_the_margin_is_allowed():
    words = [f"w{k}" for k in range(20)]
    gold, visible = " ".join(words), " ".join(["menu", "home", *words])
    summary, keep_all = Summary(), Summary()
    for site, kept in [
        ("kept whole", visible),  # F1 40/42, as keeping every line
        ("within the margin", " ".join(["menu", "home", *words[1:]])),  # 38/41: 0.026 below
        ("lost two words", " ".join(["menu", "home", *words[2:]])),  # 36/40: 0.052 below
        ("lost much", " ".join(words[:3])),  # 6/23
        ("menu left out", gold),  # 1.0, above keeping every line
    ]:
        summary.add(site, score_page(kept, gold, visible))
        keep_all.add(site, score_page(visible, gold, visible))
    below = below_keep_all(summary, keep_all)
    assert [site for site, _, _ in below] == ["lost much", "lost two words"]
    assert below[1][1:] == (pytest.approx(36 / 40), pytest.approx(40 / 42))
    assert [site for site, _, _ in below_keep_all(summary, keep_all, margin=0.06)] == ["lost much"]
    every = [site for site, _, _ in below_keep_all(summary, keep_all, margin=-math.inf)]
    assert every == ["lost much", "lost two words", "within the margin", "kept whole", "menu left out"]


def test_failed_pages_tell_content_lost_from_a_page_whose_gold_is_small():
    words = [f"w{k}" for k in range(20)]
    gold, visible = " ".join(words), " ".join(["menu", "home", *words])
    menus = " ".join(f"m{k}" for k in range(60))
    summary, keep_all = Summary(), Summary()
    for site, kept, page in [
        ("kept whole", visible, visible),  # 40/42: not failed
        ("lost much", " ".join(words[:3]), visible),  # recall 3/20: failed, the whole text passes
        ("small gold", visible + " " + menus, visible + " " + menus),  # precision 20/82, recall 1: failed, as the whole
        ("small gold", " ".join(["menu", "home", *words[:4]]), visible + " " + menus),  # P 4/6, R 4/20
    ]:
        summary.add(site, score_page(kept, gold, page))
        keep_all.add(site, score_page(page, gold, page))
    assert failed_pages(summary, keep_all) == (3, 1, 2)


def test_manifest_pages_may_be_gzipped_and_a_page_without_site_or_url_is_a_site_of_its_own(tmp_path):
    (tmp_path / "a.html.gz").write_bytes(gzip.compress(b"<html><body><p>gzipped words</p></body></html>"))
    (tmp_path / "a.gold.txt").write_text("gzipped words")
    (tmp_path / "m.jsonl").write_text(
        '{"site": "", "url": "", "html": "a.html.gz", "gold": "a.gold.txt", '
        '"page_type": "forum", "source_name": "x/1"}\n'
    )
    (page,) = read_manifest(tmp_path / "m.jsonl")
    assert b"gzipped words" in page.body and page.kind == "forum"
    assert page.site == "x/1" and page.url.startswith("http://")


def test_page_types_are_scored_apart_and_pages_without_one_are_left_out():
    summary = Summary()
    summary.add("a", score_page("x", "x", "x"), "forum")
    summary.add("b", score_page("y", "x", "x y"), "forum")
    summary.add("c", score_page("y", "x", "x y"), "product")
    summary.add("d", score_page("x", "x", "x"))
    assert sorted(summary.kinds) == ["forum", "product"]
    assert summary.kind_means("forum")["f1"] == pytest.approx(0.5)
    assert summary.kind_means("product")["f1"] == 0.0


def test_methods_run_together_score_as_each_run_alone():
    # Every page goes through each engine in turn: the engines, which learn from the pages before, must
    # see what each sees run alone, and the page's gold and visible text count the same for every one.
    import docsite
    import forumsite

    from scrapy_detemplate.config import DetemplateConfig
    from scrapy_detemplate.evaluation import CorpusPage, run_method, run_methods

    pages = [CorpusPage("docs.test", p.url, p.body, "\n".join(p.content)) for p in docsite.site(3)[:12]]
    pages += [CorpusPage("forum.test", p.url, p.body, "\n".join(p.posts)) for p in forumsite.site(5)[:12]]
    configs = [DetemplateConfig(method=m) for m in ("combined", "segments", "sandwich", "rtdm", "none")]
    together = run_methods(configs, pages)
    for config, summary in zip(configs, together, strict=True):
        alone = run_method(config, pages)
        unclocked = [[s.f1, s.precision, s.recall, s.removal] for scores in summary.sites.values() for s in scores]
        assert unclocked == [[s.f1, s.precision, s.recall, s.removal] for ss in alone.sites.values() for s in ss]
    assert together[0].macro()["f1"] != together[-1].macro()["f1"]  # the methods differ on these pages
