"""The compiled tree walks (``scrapy_detemplate/_tree.pyx``) against the Python ones they replace.

``visible_lines``, ``tree_size_and_depth`` (the engine's ``count_nodes`` and ``deeper_than``) and the
engine's removal: ``==`` on hand-made edge cases and on random HTML, and the module built where a C
compiler is.  ``bench/check_compiled_tree.py`` holds them equal on every corpus page.
"""

from __future__ import annotations

import copy
import shutil
import sys

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from scrapy_detemplate import _compiled, _html, engine
from scrapy_detemplate._html import count_nodes, deeper_than, find_body, parse_html
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.runners import ParsedPage, Verdict

compiled = _html._tree
needs_compiled = pytest.mark.skipif(compiled is None, reason="scrapy_detemplate._tree is not built here")


def test_the_compiled_tree_walks_are_built_and_loaded_where_a_c_compiler_is() -> None:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: the install skips the extension and the walks run in Python")
    assert compiled is not None and engine._tree is compiled, (
        f"scrapy_detemplate/_tree was not built or not loaded ({_compiled.status().get('scrapy_detemplate._tree')}):"
        " reinstall (pip install -e .) and read setup.py's output"
    )
    assert _compiled.status()["scrapy_detemplate._tree"] == ""


@needs_compiled
def test_the_line_text_splits_on_what_python_splits_on() -> None:
    assert compiled is not None
    assert set(compiled.WHITESPACE) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert set(compiled.WHITESPACE) == {chr(c) for c in range(sys.maxunicode + 1) if len(f"a{chr(c)}b".split()) == 2}


# -- visible lines --------------------------------------------------------------------------------

EDGE_CASES = [
    "",
    "<p>x</p>",
    "<html><body></body></html>",
    "<html><body>only text</body></html>",
    "<html><body>  \n  </body></html>",
    "<html><body><div>a <b>b</b> c<br>d<br/><br>e</div>tail</body></html>",
    "<html><body><p>one</p><p>two <span>three</span></p> four <ul><li>five<li>six</ul></body></html>",
    "<html><body><script>var x</script>after<style>p{}</style><!-- c -->c tail<?pi x?>pi tail</body></html>",
    "<html><body><noscript><p>no</p></noscript><template><p>t</p></template>n t</body></html>",
    "<html><body><p>a\xa0\xa0b\u2003c\u3000d\x85e\x1cf\u200bg\ufeffh\u180ei\u2028j</p></body></html>",
    "<html><body><p>\xa0</p><p>\u3000 \u2003</p><p>x\u202f</p></body></html>",
    "<html><body><p>日本語の テキスト</p><div>Ünïcödé <i>text</i>!</div></body></html>",
    "<html><body><p>&amp; &lt;b&gt; &nbsp; &copy; &#x2003;x&#160;y</p></body></html>",
    "<html><body><table><tr><td>a</td><td>b</td></tr><tr><td>c<td>d</table></body></html>",
    "<html><body><div><div><div><span><a href='/'>deep</a></span></div></div></div></body></html>",
    "<html><body><p>a<br>   <br>b</p><hr>c<img src=x>d</body></html>",
    "<html><head><title>T</title></head><body><h1>Title</h1><nav><a>Home</a> | <a>News</a></nav></body></html>",
    "<html><body><custom-tag>x</custom-tag><fb:like>y</fb:like><svg><text>z</text></svg></body></html>",
    "<html><body><pre>  keep\n  lines  </pre><textarea>t  a</textarea></body></html>",
    "<html><body><p>a<!--c--><!--d-->b</p></body></html>",
    "<html><body></body></html><p>after the end</p>",
    "<body><p>no html element</p></body>",
    "<html><body><p>x\x0cy\x0bz</p><p>\t\r\n</p></body></html>",
]


def python_lines(root: etree._Element | None) -> list[_html.Line]:
    return _html._visible_lines_py(root)


@needs_compiled
@pytest.mark.parametrize("html", EDGE_CASES)
def test_compiled_lines_equal_the_python_ones_on_edge_cases(html: str) -> None:
    assert compiled is not None
    root = parse_html(html)
    assert compiled.visible_lines(root) == python_lines(root)


@needs_compiled
def test_compiled_lines_of_nothing_and_of_a_tree_without_body() -> None:
    assert compiled is not None
    assert compiled.visible_lines(None) == []
    assert compiled.visible_lines(etree.fromstring("<div><p>x</p></div>")) == []


@needs_compiled
def test_a_body_given_as_root_and_built_trees_give_the_python_lines() -> None:
    assert compiled is not None
    root = parse_html("<html><body><div>a<p>b</p>c</div>d</body></html>")
    assert root is not None
    body = find_body(root)
    assert compiled.visible_lines(body) == python_lines(body)
    built = etree.Element("body")
    etree.SubElement(built, "p").text = "one"
    div = etree.SubElement(built, "div")
    div.text, div.tail = "", "tail"
    etree.SubElement(div, "span").text = "two"
    built.append(etree.Comment("c"))
    built[-1].tail = " three "
    assert compiled.visible_lines(built) == python_lines(built)
    assert [line.text for line in compiled.visible_lines(built)] == ["one", "two", "tail three"]


@needs_compiled
def test_an_element_in_a_namespace_is_named_as_the_python_walk_names_it() -> None:
    assert compiled is not None
    body = etree.Element("body")
    p = etree.SubElement(body, "{urn:x}p")
    p.text = "namespaced"
    etree.SubElement(body, "div").text = "plain"
    lines = compiled.visible_lines(body)
    assert lines == python_lines(body)
    assert lines[0].path == "body/{urn:x}p"


@needs_compiled
def test_the_compiled_lines_hold_the_same_elements_and_flags() -> None:
    assert compiled is not None
    root = parse_html("<html><body><div>a <b>b</b> c<br>d</div></body></html>")
    lines = compiled.visible_lines(root)
    assert [(line.text, line.path) for line in lines] == [("a b c", "body/div"), ("d", "body/div")]
    div = root.find(".//div")
    b, br = div[0], div[1]
    assert lines[0].slots == [(div, False), (b, False), (b, True)]
    assert lines[1].slots == [(br, True)]
    assert all(isinstance(flag, bool) for line in lines for _, flag in line.slots)


# Random HTML: nesting of the tags the walk treats differently, with text, entities, Unicode whitespace.
TAGS = ("a", "p", "div", "li", "ul", "td", "tr", "table", "span", "br", "nav", "script", "style", "b", "h2")
WORDS = ("Home", "news", "日本", "Ünï", "&amp;", "&nbsp;", "&#8195;", "\xa0", "\u2003", "\u3000", "\x85", " ", "\n",
         "\t", "x\x1fy", "a  b", "", "&lt;p&gt;", "\u200b", "\ufeff")  # fmt: skip
ATTRS = ("", " class='menu nav'", " id='main'", " class='a b' id='x'", " href='/a?b=1&amp;c=2'")


@st.composite
def texts(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.sampled_from(WORDS), max_size=4)))


@st.composite
def fragments(draw: st.DrawFn, depth: int = 0) -> str:
    out = [draw(texts())]
    for _ in range(draw(st.integers(0, 4 if depth < 4 else 0))):
        kind = draw(st.sampled_from(("element",) * 6 + ("comment", "pi", "text")))
        if kind == "comment":
            out.append(f"<!--{draw(texts())}-->")
        elif kind == "pi":
            out.append("<?php echo 1 ?>")
        elif kind == "text":
            out.append(draw(texts()))
        else:
            tag = draw(st.sampled_from(TAGS))
            attrs = draw(st.sampled_from(ATTRS))
            if tag == "br":
                out.append("<br>")
            else:
                out.append(f"<{tag}{attrs}>{draw(fragments(depth + 1))}</{tag}>")
        out.append(draw(texts()))
    return "".join(out)


@st.composite
def pages(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(("", "<head><title>T</title></head>", "<head><meta charset='utf-8'></head>")))
    prefix = draw(st.sampled_from(("", "<!DOCTYPE html>", "<!-- top -->", "<?xml-stylesheet x?>")))
    return f"{prefix}<html>{head}<body>{draw(fragments())}</body></html>{draw(st.sampled_from(('', '<!-- end -->')))}"


@needs_compiled
@settings(derandomize=True, max_examples=200, deadline=None)
@given(pages())
def test_compiled_lines_equal_the_python_ones_on_random_html(html: str) -> None:
    assert compiled is not None
    root = parse_html(html)
    assert compiled.visible_lines(root) == python_lines(root)


# -- the engine's size checks ---------------------------------------------------------------------


def assert_same_checks(root: etree._Element) -> None:
    assert compiled is not None
    nodes, levels, noscripts = compiled.tree_size_and_depth(root)
    assert (nodes, levels, noscripts) == _html._tree_size_and_depth_py(root)
    assert noscripts == int(root.xpath("count(//noscript)"))
    assert nodes == count_nodes(root)
    assert not deeper_than(root, levels + 1)
    if levels:
        assert deeper_than(root, levels) and deeper_than(root, 1)


@needs_compiled
@pytest.mark.parametrize("html", [html for html in EDGE_CASES if html])
def test_compiled_size_and_depth_are_the_xpath_checks_on_edge_cases(html: str) -> None:
    root = parse_html(html)
    assert root is not None
    assert_same_checks(root)
    body = find_body(root)
    if body is not None and len(body):
        assert_same_checks(body[0])  # of the whole document, as the XPath reads it


@needs_compiled
def test_compiled_size_and_depth_count_comments_and_pis_and_not_text_or_the_doctype() -> None:
    assert compiled is not None
    root = parse_html("<!DOCTYPE html><!-- a --><html><body><p>x<!-- b --><?pi y?></p>text</body></html>")
    assert root is not None
    assert compiled.tree_size_and_depth(root) == (6, 3, 0)  # html, body, p, two comments, one PI; no noscript
    assert_same_checks(root)


@needs_compiled
def test_compiled_size_and_depth_count_every_noscript_and_no_other_element() -> None:
    assert compiled is not None
    html = "<html><body><nav>n</nav><noscript><p>a</p><noscript>b</noscript></noscript><noscriptx/></body></html>"
    root = parse_html(html)
    assert root is not None
    assert compiled.tree_size_and_depth(root)[2] == 2
    assert_same_checks(root)


@needs_compiled
def test_compiled_depth_of_a_deep_tree_and_a_copied_subtree() -> None:
    root = parse_html("<html><body>" + "<div>" * 300 + "x" + "</div>" * 300 + "</body></html>")
    assert root is not None
    assert_same_checks(root)
    assert_same_checks(copy.deepcopy(find_body(root)))  # a copy is a document of its own


@needs_compiled
@settings(derandomize=True, max_examples=100, deadline=None)
@given(pages())
def test_compiled_size_and_depth_are_the_xpath_checks_on_random_html(html: str) -> None:
    root = parse_html(html)
    assert root is not None
    assert_same_checks(root)


def test_the_engine_passes_too_large_and_too_deep_pages_through() -> None:
    deep = "<html><body>" + "<div>" * 30 + "x" + "</div>" * 30 + "</body></html>"
    det = engine.Detemplater(DetemplateConfig(method="sandwich", max_depth=33))
    assert det.process("http://ex.com/a", deep.encode()).reason != "too_deep"  # 32 levels: html, body, 30 divs
    det = engine.Detemplater(DetemplateConfig(method="sandwich", max_depth=32))
    assert det.process("http://ex.com/a", deep.encode()).reason == "too_deep"
    nodes = count_nodes(parse_html(deep))  # type: ignore[arg-type]
    det = engine.Detemplater(DetemplateConfig(method="sandwich", max_nodes=nodes - 1))
    assert det.process("http://ex.com/a", deep.encode()).reason == "too_large"
    det = engine.Detemplater(DetemplateConfig(method="sandwich", max_nodes=nodes))
    assert det.process("http://ex.com/a", deep.encode()).reason != "too_large"


# -- removal --------------------------------------------------------------------------------------


def removal_both(html: str, template_lines: frozenset[int], element_picks: list[int]) -> None:
    """The compiled removal, and the clean tree, against the Python ones for one verdict."""
    assert compiled is not None
    trees = []
    for _ in range(2):
        root = parse_html(html)
        assert root is not None
        page = ParsedPage.of("http://ex.com/a", html, root, DetemplateConfig())
        page._lines = python_lines(root)
        everything = list(root.iter())
        elements = tuple(everything[k % len(everything)] for k in element_picks)
        trees.append((page, Verdict(template_lines=template_lines, template_elements=elements)))
    (page, verdict), (twin, twin_verdict) = trees
    fast = engine._removal(page, verdict)
    slow = engine._removal_py(page, verdict)
    assert fast == slow
    if all(isinstance(el.tag, str) for el in verdict.template_elements):  # a comment takes no mark
        assert _outcome(engine.mark_template, page, verdict) == _outcome(
            _python_only, engine.mark_template, twin, twin_verdict
        )
    clean = lxml.html.tostring(engine.remove_template(page, verdict), encoding="unicode")
    clean_py = lxml.html.tostring(_python_only(engine.remove_template, twin, twin_verdict), encoding="unicode")
    assert clean == clean_py


def _outcome(function, *args):  # type: ignore[no-untyped-def]
    try:
        return function(*args)
    except ValueError as exc:
        return type(exc), str(exc)


def _python_only(function, *args):  # type: ignore[no-untyped-def]
    saved = engine._tree
    engine._tree = None
    try:
        return function(*args)
    finally:
        engine._tree = saved


@needs_compiled
@pytest.mark.parametrize("html", [html for html in EDGE_CASES if "<body" in html])
def test_compiled_removal_equals_the_python_one_on_edge_cases(html: str) -> None:
    root = parse_html(html)
    count = len(python_lines(root))
    for template in (frozenset(), frozenset(range(count)), frozenset(range(0, count, 2)), frozenset(range(1, count))):
        removal_both(html, template, [])
        removal_both(html, template, [3, 5])


@needs_compiled
def test_compiled_removal_drops_the_outermost_emptied_element_and_keeps_its_tail() -> None:
    html = "<html><body><nav><ul><li><a>Home</a></li><li>News</li></ul></nav>tail<p>content</p></body></html>"
    root = parse_html(html)
    assert root is not None
    page = ParsedPage.of("http://ex.com/a", html, root, DetemplateConfig())
    lines = page.lines
    verdict = Verdict(template_lines=frozenset(i for i, line in enumerate(lines) if line.text in ("Home", "News")))
    blank, dropped = engine._removal(page, verdict)
    assert [el.tag for el in dropped] == ["nav"]
    assert blank == [(root.find(".//a"), False), (root.findall(".//li")[1], False)]
    removal_both(html, verdict.template_lines, [])
    removal_both(html, frozenset(), [4])  # the <li>s' <ul> picked as a template element, no lines


@needs_compiled
def test_template_elements_outside_the_body_and_the_body_itself_change_nothing_else() -> None:
    html = "<html><head><title>T</title></head><body><p>a</p><div><p>b</p></div></body></html>"
    everything = list(parse_html(html).iter())  # type: ignore[union-attr]
    for pick in range(len(everything)):
        removal_both(html, frozenset(), [pick])
        removal_both(html, frozenset({0}), [pick, pick])


@needs_compiled
@settings(derandomize=True, max_examples=150, deadline=None)
@given(pages(), st.lists(st.integers(0, 60), max_size=8), st.lists(st.integers(0, 200), max_size=4))
def test_compiled_removal_equals_the_python_one_on_random_html(
    html: str, template: list[int], elements: list[int]
) -> None:
    removal_both(html, frozenset(template), elements)


# -- combined's table rows ------------------------------------------------------------------------

TABLE_CASES = [
    "<table><tr><td>int</td><td>the count</td></tr><tr><td>str</td><td>a name</td></tr></table>",
    "<table><tr><td>a</td><td><table><tr><td>inner</td></tr></table></td></tr></table>",
    "<table><tr><td>a<br>b</td><td>c <b>d</b> e</td></tr></table><p>after</p>",
    "<table><tbody><tr><th>Name</th><th>Type</th></tr><tr><td>x</td><td>int</td></tr></tbody></table>",
    "<table>" + "<tr><td>" + "<p>l</p>" * 14 + "</td></tr>" + "</table>",  # more lines than a data row
    "<div><tr><td>stray row</td></tr></div><table><tr><td>x<!-- c -->y</td><td>z</td></tr></table>",
    "<table><tr><td><tr><td>nested row</td></tr></td><td>more</td></tr></table>",
]


def assert_same_rows(html: str, template: frozenset[int]) -> None:
    from scrapy_detemplate.runners import combined

    root = parse_html(html)
    lines = python_lines(root)
    template = frozenset(i for i in template if i < len(lines))
    fast = combined.keep_table_rows_whole(lines, template)
    assert fast == combined._keep_table_rows_whole_py(lines, template)
    if fast == template:
        assert fast is template  # as the Python function: the same set when nothing is kept


@needs_compiled
@pytest.mark.parametrize("table", TABLE_CASES)
def test_compiled_table_rows_equal_the_python_ones_on_edge_cases(table: str) -> None:
    html = f"<html><body><p>intro</p>{table}<p>end</p></body></html>"
    count = len(python_lines(parse_html(html)))
    for template in (
        frozenset(),
        frozenset(range(count)),
        frozenset(range(0, count, 2)),
        frozenset({1}),
        frozenset({2, 3}),
    ):
        assert_same_rows(html, template)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(pages(), st.lists(st.integers(0, 60), max_size=10))
def test_the_rows_measuring_keeps_whole_are_the_ones_the_crawl_keeps(html: str, template: list[int]) -> None:
    """``train-combined`` keeps a page's data rows whole from the rows ``table_rows`` found when the page
    was read (its tree is gone by the time it is cleaned): the same lines as the crawl's walk."""
    from scrapy_detemplate.runners import combined

    lines = python_lines(parse_html(html))
    rows = combined.table_rows(lines)
    for chosen in (frozenset(i for i in template if i < len(lines)), frozenset(range(len(lines)))):
        assert combined.keep_rows_whole(chosen, rows) == combined._keep_table_rows_whole_py(lines, chosen)


@pytest.mark.parametrize("table", TABLE_CASES)
def test_the_rows_measuring_keeps_whole_on_edge_cases(table: str) -> None:
    from scrapy_detemplate.runners import combined

    lines = python_lines(parse_html(f"<html><body><p>intro</p>{table}<p>end</p></body></html>"))
    rows = combined.table_rows(lines)
    for step in (1, 2, 3):
        for start in range(step):
            chosen = frozenset(range(start, len(lines), step))
            assert combined.keep_rows_whole(chosen, rows) == combined._keep_table_rows_whole_py(lines, chosen)


@needs_compiled
def test_compiled_table_rows_keep_a_data_row_whole_and_hand_namespaces_to_python() -> None:
    from scrapy_detemplate.runners import combined

    html = "<html><body><table><tr><td>int</td><td>the count of items</td></tr></table></body></html>"
    lines = python_lines(parse_html(html))
    assert combined.keep_table_rows_whole(lines, frozenset({0})) == frozenset()
    body = etree.Element("body")
    table = etree.SubElement(body, "{urn:x}table")
    row = etree.SubElement(table, "tr")
    for text in ("a", "b"):
        etree.SubElement(row, "td").text = text
    lines = python_lines(body)
    assert combined.keep_table_rows_whole(lines, frozenset({0})) == combined._keep_table_rows_whole_py(
        lines, frozenset({0})
    )


TABLE_TAGS = ("table", "tr", "td", "th", "tbody", "div", "p", "span", "br", "a")


@st.composite
def tables(draw: st.DrawFn, depth: int = 0) -> str:
    out = [draw(texts())]
    for _ in range(draw(st.integers(0, 4 if depth < 5 else 0))):
        tag = draw(st.sampled_from(TABLE_TAGS))
        if tag == "br":
            out.append("<br>")
        else:
            out.append(f"<{tag}>{draw(tables(depth + 1))}</{tag}>")
        out.append(draw(st.sampled_from(("", "x", " ", "<!-- c -->", "word"))))
    return "".join(out)


@needs_compiled
@settings(derandomize=True, max_examples=200, deadline=None)
@given(tables(), st.frozensets(st.integers(0, 30), max_size=12))
def test_compiled_table_rows_equal_the_python_ones_on_random_tables(html: str, template: frozenset[int]) -> None:
    assert_same_rows(f"<html><body>{html}</body></html>", template)


# -- the end tags dropped before the parse ----------------------------------------------------------

EARLY_ENDS = [
    "",
    "<p>x</p></body></html>",
    "<p>x</body><p>after</p></HTML >\n",
    "</ BODY\t>< /body></bodyx></htm></html</body</body >>",
    "<</body></\u3000body\u2028></\x1cHtml\x85>",  # Unicode white space is \s too
    "</bOdY>é</html>’</body>\U0001f600</html>",  # 1-, 2- and 4-byte strings
    "\u013c</body>\u3c3c</html>\U00013c3c",  # characters holding a 0x3C byte that are not "<"
    "</body",
    "</",
    "<",
    "</body >x",
    "</\u0130tml></\u212aody></\u017fody>",  # no other letter folds to these
]


@needs_compiled
@pytest.mark.parametrize("html", EARLY_ENDS)
def test_compiled_early_ends_are_the_regex_ones_on_edge_cases(html: str) -> None:
    assert compiled.drop_early_ends(html) == _html._EARLY_END.sub("", html)


@needs_compiled
@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["<", "/", "</", "body", "BoDy", "html", "HTML", ">", " ", "\t", "\u3000", "\u2028",
                                 "x", "é", "\u013c", "\u3c3c", "\U0001f600", "\U00013c3c", "b", "h", "\u212a"]),
                max_size=30).map("".join))  # fmt: skip
def test_compiled_early_ends_are_the_regex_ones_on_random_text(html: str) -> None:
    got = compiled.drop_early_ends(html)
    assert got == _html._EARLY_END.sub("", html)
    if _html._EARLY_END.search(html) is None:
        assert got is html  # nothing to drop: no copy


@needs_compiled
@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x40) | st.sampled_from("\x7f\x85\u2028\ufffd\U0001f600")))
def test_compiled_control_count_is_the_regex_one(text: str) -> None:
    assert compiled.count_controls(text) == len(_html._CONTROL.findall(text))


# -- a page's dialogs ------------------------------------------------------------------------------

#: Elements that are dialogs, and near misses: role tokens, cases, blanks, other values, other attributes.
FURNITURE_OPENERS = (
    "<dialog>", "<dialog open>", "<div role='dialog'>", "<div role=' Dialog\n'>", "<section role='ALERTDIALOG'>",
    "<div aria-modal='true'>", "<div aria-modal=' TRUE '>", "<div aria-modal='false'>", "<div role='dialogs'>",
    "<div role='navigation dialog'>", "<div role=''>", "<div data-role='dialog'>", "<div role='dialog&#x131;'>",
    "<div role='d&#x131;alog'>", "<div class='modal dialog'>", "<aside role='alertdialog' aria-modal='true'>",
    "<footer role='contentinfo'>", "<div role=' ContentInfo\t'>", "<div role='contentinfos'>",
    "<div role='content&#x131;nfo'>", "<div role='contentinfo navigation'>", "<ul role='menu'>",
    "<div role=' MenuBar'>", "<li role='menuitem'>", "<div role='option'>", "<div role='listbox'>",
    "<span role='tooltip'>", "<div role='status'>", "<div role='menus'>", "<div data-nosnippet>",
    "<div data-nosnippet='false'>", "<div data-nosnippet='a&amp;b'>", "<div DATA-NOSNIPPET=''>",
    "<div data-nosnippets>", "<div nosnippet>",
)  # fmt: skip


@st.composite
def furniture_pages(draw: st.DrawFn) -> str:
    """A page whose fragments stand in and around marked furniture (dialogs, landmarks, widgets), some
    nested, some with tails."""
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        opener = draw(st.sampled_from(FURNITURE_OPENERS))
        tag = opener[1:].split(">")[0].split()[0]
        inner = draw(fragments(2))
        if draw(st.booleans()):
            inner += f"{draw(st.sampled_from(FURNITURE_OPENERS))}nested {draw(texts())}</div>"
        parts.append(f"{draw(fragments(3))}{opener}{inner}</{tag}>{draw(texts())}")
    return f"<html><body>{''.join(parts)}</body></html>"


FURNITURE_CASES = [
    "<p>story</p><div role='dialog'><p>Your cart is empty</p></div><p>more story</p>",
    "<p>a</p><dialog><p>b</p>tail inside</dialog>tail after<p>c</p>",
    "<div role='DIALOG'><p>x</p><div role='dialog'><p>y</p></div>z</div><p>w</p>",
    "<div aria-modal='true'><p>sign in</p></div><div aria-modal='false'><p>kept</p></div>",
    "<p>no dialog at all</p><div role='navigation'><a href='/'>Home</a></div>",
    "<div role='dialog&#108;'><p>an entity in the value</p></div>",
    "<p>story</p><div role='contentinfo'><p>(c) 2026 Example Ltd</p><a href='/privacy'>Privacy</a></div>tail",
    "<div role='CONTENTINFO '><p>x</p></div><div role='contentinfo navigation'><p>kept</p></div>",
    "<ul role='menu'><li role='menuitem'>a</li></ul><div role='listbox'><p>kept</p><div role='option'>b</div></div>",
    "<div data-nosnippet><p>x</p></div><div data-nosnippet='a&amp;b'>y</div><div data-nosnippets>kept</div>",
    "<span role='tooltip'>tip</span><div role='status'>added</div><div role='statuses'>kept</div>",
]


def furniture_texts(html: str) -> list[str]:
    """The texts of the lines ``furniture_lines`` finds in ``html``, sorted; asserts the Python walk finds
    the same lines."""
    from scrapy_detemplate.runners import combined

    root = parse_html(html)
    lines = python_lines(root)
    found = combined.furniture_lines(lines, root)
    assert found == combined._furniture_lines_py(lines, root)
    return sorted(lines[i].text for i in found)


@needs_compiled
@pytest.mark.parametrize("body", FURNITURE_CASES)
def test_compiled_furniture_lines_equal_the_python_ones_on_edge_cases(body: str) -> None:
    furniture_texts(f"<html><body>{body}</body></html>")


@needs_compiled
@settings(derandomize=True, max_examples=300, deadline=None)
@given(furniture_pages())
def test_compiled_furniture_lines_equal_the_python_ones_on_random_html(html: str) -> None:
    furniture_texts(html)


def test_a_dialog_s_lines_are_the_lines_in_it_and_no_others() -> None:
    html = (
        "<html><body><p>The story, first paragraph.</p>"
        "<div role='dialog' aria-label='Cart'><p>Your cart is empty!</p><button>Checkout</button></div>"
        "<p>The story goes on.</p><dialog><p>Sign up for our newsletter</p></dialog>after the dialog"
        "<div aria-modal=' True'><p>Choose your country</p></div><div aria-modal='false'><p>Not modal</p></div>"
        "</body></html>"
    )
    assert furniture_texts(html) == sorted(
        ["Your cart is empty!", "Checkout", "Sign up for our newsletter", "Choose your country"]
    )


def test_the_footer_landmark_s_lines_are_the_lines_in_it_and_no_others() -> None:
    html = (
        "<html><body><p>The story, first paragraph.</p><footer><p>A story's own footer</p></footer>"
        "<div role='contentinfo'><p>(c) 2026 Example Ltd</p><nav><a href='/privacy'>Privacy</a></nav></div>"
        "after the footer<div role='contentinfo navigation'><p>Not a landmark this walk reads</p></div>"
        "</body></html>"
    )
    assert furniture_texts(html) == ["(c) 2026 Example Ltd", "Privacy"]
