"""The learned lexicon of class, id and itemprop names (``methods/names.py``) and its columns."""

from __future__ import annotations

import json
import math
import shutil
from array import array
from html import escape
from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from lxml import etree

from scrapy_detemplate import DetemplateConfig, Detemplater
from scrapy_detemplate import _compiled as _compiled_modules
from scrapy_detemplate._html import parse_html, visible_lines
from scrapy_detemplate.methods import names
from scrapy_detemplate.runners import combined
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
    for row in names.page_columns(_lines(), names.KnownNames(lexicon)):
        assert len(row) == len(names.NAME_FEATURES) and all(map(math.isfinite, row))


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(-6, 6), min_size=12, max_size=12))
def test_the_runners_columns_are_the_trainings(values: list[float]) -> None:
    """``page_columns`` (per element, from its parent's; the runner) gives what ``columns`` of
    ``line_names`` gives (the training), whatever the lexicon's numbers, with what it keeps."""
    seen = sorted({n for chain in names.line_names(_lines()) for level in chain for n in level})
    lexicon = dict(zip(seen, values, strict=False))
    lines = _lines()
    for columns_of in (names.page_columns, names._page_columns_py):
        known = names.KnownNames(lexicon)
        for _ in range(2):  # the second page reads what the first one kept
            assert columns_of(lines, known) == [names.columns(chain, lexicon) for chain in names.line_names(lines)]


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


# ---------------------------------------------------------------- the compiled walk (``_names.pyx``)

compiled = names._compiled
_site = combined._compiled
needs_compiled = pytest.mark.skipif(compiled is None, reason="the compiled name columns are not built here")


def test_the_compiled_name_columns_are_built_and_loaded_where_a_c_compiler_is() -> None:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: the install skips the extension and the columns are computed in Python")
    assert compiled is not None, _compiled_modules.status().get("scrapy_detemplate.methods._names")
    assert compiled.MOST_KNOWN == names.MOST_KNOWN


_WORDS = ["menu", "Item", "site", "footer", "nav", "x", "ab", "h2", "Post", "body", "caf\u00e9", "\u00c9t\u00e9", "1a"]
_JOINS = ["", "-", "_", ":", "/", "--", " ", "\t", "\u00a0", "\x1c"]
_value = st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_JOINS)), max_size=5).map(
    lambda parts: "".join(w + j for w, j in parts)
)
_element = st.fixed_dictionaries({}, optional={"class": _value, "id": _value, "itemprop": _value})


@st.composite
def _pages(draw: st.DrawFn) -> str:
    """A page of nested elements with generated class, id and itemprop values (ASCII or not,
    camelCase, separators, white space ``str.split`` knows), text in and after them."""
    out = ["<html><body>"]
    depth = 0
    for _ in range(draw(st.integers(1, 25))):
        move = draw(st.sampled_from(["open", "open", "close", "text"]))
        if move == "open":
            attrs = draw(_element)
            tag = draw(st.sampled_from(["div", "span", "p", "li", "section", "body"]))
            out.append(f"<{tag}" + "".join(f' {k}="{escape(v)}"' for k, v in attrs.items()) + ">t")
            depth += 1
        elif move == "close" and depth:
            out.append("</div>tail")
            depth -= 1
        else:
            out.append("<br>w<!-- c -->x")
    return "".join(out) + "</body></html>"


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(page=_pages(), values=st.lists(st.floats(-6, 6), min_size=40, max_size=40), drop=st.integers(1, 4))
@example(  # a lexicon holding 0.0 and -0.0 for two names of one element (found by CI's draw)
    page='<html><body><div class="menumenumenu">t<div class="Item">t<div class="menumenumenumenu">t'
    '<div class="menumenu menu" id="menu Itemmenu" itemprop="menu">t</body></html>',
    values=[-0.0 if i == 13 else 0.0 for i in range(40)],
    drop=1,
)
def test_the_compiled_columns_are_the_pythons_on_any_page(page: str, values: list[float], drop: int) -> None:
    """Compiled and Python walks give the same floats, and both what the training's
    ``columns(line_names)`` gives; a lexicon knows some of the page's names (every ``drop``-th
    is left out), equal values included (the first of equal values is kept, as ``min`` does)."""
    root = parse_html(page)
    assume(root is not None)
    lines = visible_lines(root)
    seen = sorted({n for chain in names.line_names(lines) for level in chain for n in level})
    lexicon = {n: values[i % len(values)] if i % 7 else 0.5 for i, n in enumerate(seen) if i % (drop + 1)}
    expected = [names.columns(chain, lexicon) for chain in names.line_names(lines)]
    fast_known, slow_known = names.KnownNames(lexicon), names.KnownNames(lexicon)
    for _ in range(2):  # the second time with what each kept
        fast = compiled.page_columns(lines, fast_known)
        assert fast is not None, "handed back to Python"
        assert _bits(fast) == _bits(expected)
        assert names._page_columns_py(lines, slow_known) == expected
        rows = _rows(len(lines), 3 + len(names.NAME_FEATURES) + 2)
        assert compiled.page_columns_into(lines, fast_known, rows, 3)
        written = rows.tolist()
        assert [row[3:7] for row in written] == expected
        assert all(row[:3] == [0.0] * 3 and row[7:] == [0.0] * 2 for row in written)


def _bits(rows: Any) -> list[list[str]]:
    """Each float of ``rows`` to its last bit, but for the sign of a zero: 0.0 and -0.0 are one number
    to every split of the trees (``x <= threshold``).  Of equal values each walk keeps the first it
    meets, and they meet a line's elements in opposite orders: the training's ``columns`` from the
    line's own element up, the runner's walks (compiled and Python alike) from the outermost down,
    memoised.  A lexicon holding both zeros gives one -0.0 where the other gives 0.0."""
    return [[(v + 0.0).hex() for v in row] for row in rows]


def _rows(n: int, width: int) -> Any:
    """The runner's C rows (``_site.FeatureRows``), else an array of doubles of that shape."""
    if _site is not None:
        return _site.FeatureRows(n, width)
    return memoryview(array("d", [0.0] * max(n * width, 1))).cast("B").cast("d", (max(n, 1), width))


@needs_compiled
def test_an_attribute_that_is_not_ascii_is_read_by_python_and_kept() -> None:
    page = '<html><body><div class="caf\u00e9-menu"><p class="menu">Text</p></div></body></html>'
    lines = visible_lines(parse_html(page))
    lexicon = {"w:menu": -2.0, "c:menu": -1.0, "c:caf\u00e9-menu": 1.0}
    known = names.KnownNames(lexicon)
    assert compiled.page_columns(lines, known) == [[-1.5, -2.0, 1.0, 4.0]]  # c:menu, w:menu; then the div's two
    assert list(known.triples) == ["caf\u00e9-menu\0\0"]  # the ASCII element is not asked of Python
    assert known.classes == {"caf\u00e9-menu": ("c:caf\u00e9-menu", "w:menu")}


@needs_compiled
def test_the_compiled_columns_refuse_rows_of_the_wrong_shape() -> None:
    lines = _lines()
    known = names.KnownNames({"w:menu": -2.0})
    with pytest.raises(ValueError, match="room"):
        compiled.page_columns_into(lines, known, _rows(len(lines), 5), 3)
    with pytest.raises(ValueError, match="room"):
        compiled.page_columns_into(lines, known, _rows(len(lines) + 1, 8), 0)
    if _site is not None:
        assert compiled.page_columns_into([], known, _rows(0, 4), 0)


def test_what_a_runner_keeps_is_forgotten_when_it_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(names, "STATS_AT_MOST", 2)
    known = names.KnownNames({"c:a": 1.0})
    for value in ("a", "b", "c"):
        known.own(f"{value}\0\0")
    assert len(known.triples) == 3
    names.page_columns(_lines(), known)
    assert len(known.triples) <= 2 and len(known.classes) <= 2


def test_the_runners_rows_get_the_python_walks_columns_where_the_compiled_one_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``names.page_columns_into`` writes the same columns with the compiled walk and, where it is
    not built, with the Python walk through ``set_columns``."""

    class Rows:
        def __init__(self) -> None:
            self.written: tuple[list[list[float]], int] | None = None

        def set_columns(self, rows: list[list[float]], at: int) -> None:
            self.written = (rows, at)

    lines = _lines()
    lexicon = {"w:menu": -2.0, "c:site-footer": -3.0, "p:articlebody": 2.5}
    expected = [names.columns(chain, lexicon) for chain in names.line_names(lines)]
    monkeypatch.setattr(names, "_compiled", None)
    rows = Rows()
    names.page_columns_into(lines, names.KnownNames(lexicon), rows, 7)
    assert rows.written == (expected, 7)
    if compiled is not None and _site is not None:
        monkeypatch.setattr(names, "_compiled", compiled)
        c_rows = _rows(len(lines), 11)
        names.page_columns_into(lines, names.KnownNames(lexicon), c_rows, 7)
        assert [row[7:] for row in c_rows.tolist()] == expected
