"""scrapy_detemplate.markdown: exact Markdown for a documentation page, structure read back by a
CommonMark parser, the words of the text output kept (a Hypothesis property), and bad input; and the
compiled walk (``scrapy_detemplate/_markdown.pyx``) against the Python renderer, ``==`` on edge cases,
deep trees and random HTML (``bench/check_compiled_markdown.py`` holds them equal on every corpus page)."""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from markdown_it import MarkdownIt

from scrapy_detemplate import DetemplateConfig, Detemplater, _compiled, _markdown_text
from scrapy_detemplate import markdown as markdown_module
from scrapy_detemplate._html import find_body, parse_html, visible_text
from scrapy_detemplate.markdown import to_markdown

MD = MarkdownIt("commonmark").enable("table")

DOC_PAGE = """<html><head><title>frobnicate: API</title><style>p {color: red}</style></head><body>
<div class="document">
<h1>The <code>frobnicate</code> module<a class="headerlink" href="#mod">¶</a></h1>
<p>Frobnicate <em>anything</em>, <strong>fast</strong>. See <a href="../guide.html">the guide</a>.</p>
<h2>Functions</h2>
<dl class="py function">
<dt class="sig sig-object py" id="frobnicate.run"><span class="sig-name descname">run</span>(<em class="sig-param">path</em>, <em class="sig-param">*</em>, <em class="sig-param">level=3</em>) &#x2192; int</dt>
<dd><p>Run the frobnicator on <code>path</code>; returns the exit status.</p>
<div class="highlight-python notranslate"><div class="highlight"><pre><span class="kn">from</span> <span class="nn">frobnicate</span> <span class="kn">import</span> <span class="n">run</span>
<span class="n">run</span><span class="p">(</span><span class="s2">"data/"</span><span class="p">,</span> <span class="n">level</span><span class="o">=</span><span class="mi">2</span><span class="p">)</span>
</pre></div></div>
</dd></dl>
<h2>Command line</h2>
<pre class="highlight"><code class="language-bash">frob --level 2 data/ | sort
frob --help
</code></pre>
<p>From JavaScript:</p>
<pre class="lang-js">const f = require("frob");
f.run(`data/`);</pre>
<h3>Options</h3>
<table class="docutils">
<thead><tr><th>Option</th><th>Default</th><th>Meaning</th></tr></thead>
<tbody>
<tr><td><code>--level</code></td><td>3</td><td><p>How hard to frobnicate.</p><p>Higher is slower.</p></td></tr>
<tr><td><code>--dry-run</code></td><td>off</td><td>Print what would change | nothing else</td></tr>
</tbody></table>
<h3>Steps</h3>
<ol>
<li>Install it:<ul><li>with <code>pip</code></li><li>from source<ul><li>needs a C compiler</li></ul></li></ul></li>
<li>Run <code>frob</code>.</li>
</ol>
<h2>Glossary</h2>
<dl>
<dt>frob</dt><dd>The verb: to tweak at random.</dd>
<dt>level</dt><dd><p>How much.</p><p>From 1 to 5.</p></dd>
</dl>
<blockquote><p>Frobnicate with care.</p></blockquote>
<p>Version 2.0 &#8212; <img src="/logo.png" alt="the frob logo"> 1_000 uses, 50% of 2*3 cases.</p>
</div>
</body></html>"""  # noqa: E501

EXPECTED = """\
# The `frobnicate` module¶

Frobnicate *anything*, **fast**. See the guide.

## Functions

run(*path*, *\\**, *level=3*) → int

: Run the frobnicator on `path`; returns the exit status.

```python
from frobnicate import run
run("data/", level=2)
```

## Command line

```bash
frob --level 2 data/ | sort
frob --help
```

From JavaScript:

```js
const f = require("frob");
f.run(`data/`);
```

### Options

| Option | Default | Meaning |
| --- | --- | --- |
| `--level` | 3 | How hard to frobnicate. Higher is slower. |
| `--dry-run` | off | Print what would change \\| nothing else |

### Steps

1. Install it:
   - with `pip`
   - from source
     - needs a C compiler
2. Run `frob`.

## Glossary

frob

: The verb: to tweak at random.

level

: How much.

From 1 to 5.

> Frobnicate with care.

Version 2.0 — ![the frob logo]() 1_000 uses, 50% of 2\\*3 cases."""


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def markdown_words(markdown: str) -> list[str]:
    """The words a CommonMark reader sees: the Markdown rendered, then its visible text (METRICS.md rules)."""
    return words(visible_text(parse_html("<html><body>" + MD.render(markdown) + "</body></html>")))


def tokens(markdown: str, kind: str) -> int:
    return sum(1 for t in MD.parse(markdown) if t.type == kind)


def render(html: str, url: str = "http://docs.ex.com/api/frob.html", **config: object):
    return Detemplater(DetemplateConfig(method="none", markdown=True, **config)).process(url, html)  # type: ignore[arg-type]


def test_documentation_page_gives_the_expected_markdown():
    result = render(DOC_PAGE)
    assert result.markdown == EXPECTED
    assert markdown_words(result.markdown) == words(result.text)


def test_markdown_read_back_has_the_structure_of_the_kept_html():
    markdown = render(DOC_PAGE).markdown
    root = parse_html(DOC_PAGE)
    assert tokens(markdown, "fence") == len(root.xpath("//pre")) == 3
    assert tokens(markdown, "table_open") == len(root.xpath("//table")) == 1
    assert tokens(markdown, "heading_open") == len(root.xpath("//h1|//h2|//h3")) == 6
    assert tokens(markdown, "list_item_open") == len(root.xpath("//li")) == 5
    assert tokens(markdown, "tr_open") == 3
    infos = [t.info for t in MD.parse(markdown) if t.type == "fence"]
    assert infos == ["python", "bash", "js"]


def test_rendered_only_when_asked():
    plain = Detemplater(DetemplateConfig(method="none")).process("http://ex.com/", DOC_PAGE)
    assert plain.markdown == "" and plain.text
    assert DetemplateConfig(markdown_field="md").renders_markdown
    assert render(DOC_PAGE).markdown


def test_cleaned_page_markdown_has_no_template():
    engine = Detemplater(DetemplateConfig(method="sandwich", markdown=True))
    page = (
        "<html><body><nav><ul><li>Home</li><li>News</li></ul></nav><h1>{0}</h1><p>{0} story</p>"
        "<footer>(c) Example</footer></body></html>"
    )
    engine.process("http://ex.com/a/1", page.format("First"))
    result = engine.process("http://ex.com/a/2", page.format("Second"))
    assert result.status == "cleaned"
    assert result.markdown == "# Second\n\nSecond story"
    assert markdown_words(result.markdown) == words(result.text)


def test_links_keep_absolute_targets_when_asked():
    html = '<p>See <a href="../guide.html#x">the <b>guide</b></a> and <img src="/i.png" alt="logo">.</p>'
    assert to_markdown(parse_html(html), base_url="http://ex.com/a/b.html") == "See the **guide** and ![logo]()."
    linked = to_markdown(parse_html(html), base_url="http://ex.com/a/b.html", links=True)
    assert linked == "See [the **guide**](http://ex.com/guide.html#x) and ![logo](http://ex.com/i.png)."
    result = render(html, url="http://ex.com/a/b.html", markdown_links=True)
    assert result.markdown == linked and markdown_words(linked) == words(result.text)


def test_markup_never_splits_or_joins_words():
    html = "<p>foo<b>bar</b> <i> baz </i>qu<code>u</code>x <em>a</em>.<strong>b</strong>_c</p>"
    markdown = to_markdown(parse_html(html))
    assert markdown == "foobar *baz* qu`u`x *a*.**b**\\_c"
    assert markdown_words(markdown) == words(visible_text(parse_html(html))) == ["foobar", "baz", "quux", "a", "b_c"]


# -- bad input ---------------------------------------------------------------------


def test_page_without_body_gives_no_markdown_and_no_exception():
    result = render("<html><head><title>T</title></head></html>")
    assert result.status == "passthrough" and result.markdown == ""
    assert to_markdown(None) == ""
    assert to_markdown(etree.fromstring("<div>only <b>a</b> fragment</div>")) == "only **a** fragment"


def test_ragged_rows_make_a_padded_grid():
    html = (
        "<table><tr><th>a</th></tr><tr><td>1</td><td>2</td><td>3</td></tr><tr><td rowspan=2>x</td><td>y</td></tr>"
        "<tr><td colspan=2>z</td></tr></table>"
    )
    markdown = to_markdown(parse_html(html))
    assert markdown == "| a |  |  |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n| x | y |  |\n|  | z |  |"
    assert tokens(markdown, "table_open") == 1 and tokens(markdown, "td_open") == 9


def test_table_that_cannot_be_a_grid_says_so_and_keeps_every_cell():
    html = (
        "<table><tr><td><h2>Side</h2></td><td><table><tr><td>in</td></tr><tr><td>ner</td></tr></table></td></tr>"
        "<tr><td>a</td><td>b</td></tr></table>"
    )
    markdown = to_markdown(parse_html(html))
    assert markdown.startswith("<!-- table of 2 rows x 2 columns, not a grid")
    assert "## Side" in markdown and "| in |\n| --- |\n| ner |" in markdown
    assert markdown_words(markdown) == ["side", "in", "ner", "a", "b"]


def test_ten_thousand_deep_nesting():
    root = etree.Element("html")
    el = etree.SubElement(root, "body")
    for n in range(10_000):
        el = etree.SubElement(el, ("div", "blockquote", "ul", "b")[n % 4])
        el.text = f"w{n} "
    markdown = to_markdown(root)
    assert markdown_words(markdown) == [f"w{n}" for n in range(10_000)]
    deep = "<html><body>" + "<div>" * 10_000 + "deep" + "</div>" * 10_000 + "</body></html>"
    result = render(deep)
    assert result.status == "passthrough" and result.reason == "too_deep"


def test_pre_holding_a_fence_of_backticks():
    code = "```python\nprint('hi')\n```\n````\nmore"
    html = "<pre class='language-markdown'>" + code.replace("<", "&lt;") + "</pre>"
    markdown = to_markdown(parse_html(html))
    assert markdown.startswith("`````markdown\n")
    fences = [t for t in MD.parse(markdown) if t.type == "fence"]
    assert len(fences) == 1 and fences[0].content == code + "\n" and fences[0].info == "markdown"


def test_markdown_metacharacters_in_text_are_escaped():
    text = "*not em* _nor_ __this__ # no heading | no | table [no](link) <b>x</b> &amp; `tick` \\ 1. no list"
    html = (
        "<p>" + text.replace("&", "&amp;").replace("<", "&lt;") + "</p><p>- no item<br>+ nor<br>=====<br>> no quote</p>"
    )
    markdown = to_markdown(parse_html(html))
    parsed = [t.type for t in MD.parse(markdown)]
    assert parsed == ["paragraph_open", "inline", "paragraph_close"] * 2
    assert not any(
        t.type in ("em_open", "strong_open", "link_open", "code_inline", "html_inline", "hardbreak")
        for block in MD.parse(markdown)
        for t in block.children or []
        if t.type != "hardbreak"
    )
    assert markdown_words(markdown) == words(visible_text(parse_html(html)))
    assert visible_text(parse_html(MD.render(markdown))).split() == visible_text(parse_html(html)).split()


# -- property: the words of the Markdown are the words of the text output -------------

# Characters and pieces that Markdown reads as markup when left alone, next to words and not.
_ALPHABET = [
    *"ab Z9 _*#|[]\\`<>&-+=.!~:()\n\t\u00a0é—1",
    "1. ",
    "- ",
    "# ",
    "```",
    "&amp;",
    "&lt;",
    "&copy;",
    "a*b*c",
    "x_y_",
    "_z_",
    "**w**",
    "`v`",
    "[t](u)",
    "<i>",
    "\\*",
    "a\\",
    "~~s~~",
    "| c |",
]
_TEXT = st.lists(st.sampled_from(_ALPHABET), max_size=8).map("".join)
_VOID = st.sampled_from(["<br>", "<hr>", '<img src="i.png" alt="an * image">', "<img src=x.png>", "<!-- c -->"])
_TAGS = [
    "p",
    "div",
    "span",
    "b",
    "strong",
    "i",
    "em",
    "code",
    "kbd",
    "a",
    "h1",
    "h3",
    "ul",
    "ol",
    "li",
    "dl",
    "dt",
    "dd",
    "table",
    "tr",
    "td",
    "th",
    "thead",
    "pre",
    "blockquote",
    "section",
    "script",
    "sup",
    "label",
]


def _element(args: tuple[str, list[str]]) -> str:
    tag, children = args
    attrs = ' href="/x?a=(1)"' if tag == "a" else ' class="language-py"' if tag == "pre" else ""
    return f"<{tag}{attrs}>{''.join(children)}</{tag}>"


_HTML = st.recursive(
    _TEXT | _VOID,
    lambda inner: st.tuples(st.sampled_from(_TAGS), st.lists(inner, max_size=4)).map(_element),
    max_leaves=40,
)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.lists(_HTML, min_size=1, max_size=4), st.booleans())
def test_words_of_the_markdown_are_the_words_of_the_text(fragments, links):
    html = "<html><body>" + "".join(fragments) + "</body></html>"
    result = render(html, url="http://ex.com/a/b.html", markdown_links=links)
    assert markdown_words(result.markdown) == words(result.text), result.markdown


# -- the compiled walk (scrapy_detemplate/_markdown.pyx) against the Python renderer ---------------

compiled = markdown_module._walk
needs_compiled = pytest.mark.skipif(compiled is None, reason="scrapy_detemplate._markdown is not built here")


def both(root: etree._Element | None, **kwargs: Any) -> tuple[str, str]:
    """The Markdown of ``root`` from the compiled walk and from the Python renderer alone."""
    return to_markdown(root, **kwargs), markdown_module._to_markdown_py(root, **kwargs)


def test_the_compiled_walk_is_built_and_loaded_where_a_c_compiler_is() -> None:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: the install skips the extension and Markdown is rendered in Python")
    assert compiled is not None and markdown_module._compiled_renderer is not None, (
        f"scrapy_detemplate/_markdown was not built or not loaded "
        f"({_compiled.status().get('scrapy_detemplate._markdown')}): reinstall (pip install -e .)"
    )
    assert _compiled.status()["scrapy_detemplate._markdown"] == ""
    # The elements it dispatches on as blocks are blocks for the Python renderer too.
    assert {"pre", "li", "blockquote", "table", "dl", "hr", *markdown_module._HEADINGS, *markdown_module._LISTS} <= (
        markdown_module.BLOCK_TAGS
    )


COMPILED_EDGE_CASES = [
    DOC_PAGE,
    "",
    "<p>x</p>",
    "<html><body></body></html>",
    "<html><body>  \n  </body></html>",
    '<p>See <a href="../guide.html#x">the <b>guide</b></a> and <img src="/i.png" alt="logo">.</p>',
    '<p><a href="#top">top</a> <a href="javascript:x()">js</a> <a href=" data:x ">d</a> <a>none</a> '
    '<a href="http://[::1">bad</a> <a href="/a b(c)|d">e</a><img src="data:x" alt="i"><img alt=" a  b "></p>',
    "<p>foo<b>bar</b> <i> baz </i>qu<code>u</code>x <em>a</em>.<strong>b</strong>_c</p>",
    "<p><b><i>both</i></b> <b>in <b>bold</b></b> <i>x<i>y</i></i> <b> </b> a<b>b</b>c <b>x<br>y</b></p>",
    "<p>*not em* _nor_ __this__ # no heading | no | table [no](link) &lt;b&gt;x&lt;/b&gt; &amp;amp; `tick` \\ 1. no</p>"
    "<p>- no item<br>+ nor<br>=====<br>&gt; no quote<br>1) x<br>12345678901. y</p>",
    "<p>a&amp;\n</p><p>b\\\n</p><p>&amp;x &amp;# &amp; \\* \\\\ \\a x_y_ _z_ a__b 1_000 é_é ٣_٣</p>",
    "<p>\ufdd0 sentinels \ufdd1 in \ufdd2 text \ufdd3\ufdd4</p><pre>\ufdd2x</pre><code>\ufdd4</code>",
    "<pre>  \n\t\n  keep\r\n  lines\r  </pre><pre>   </pre><pre></pre><pre>a<br>b<div>c</div>\n</pre>",
    "<pre>\t\n\n x</pre><pre>\r\n\ty</pre><table><tr><td colspan=5000>wide</td><td rowspan=99>r</td></tr>"
    "<tr><td colspan='-3'>n</td></tr></table>",
    "<pre class='language-markdown'>```python\nprint('hi')\n```\n````\nmore</pre>",
    "<div class='highlight-none'><pre>x</pre></div><div class='lang-default'><div><pre>y</pre></div></div>"
    "<pre><code class='language-source-rust'>z</code></pre><pre><!--c--><code class='lang-c'>w</code></pre>",
    "<h1>The <code>frob</code> <a>¶</a></h1><h2> </h2><h3>a<br>b</h3><h6><b>x</b></h6><hr>",
    "<ul><li>a<li>b<ul><li>c</ul><li></ul><ol start='7'><li>x<li>y</ol><ol start='x'><li>z</ol>"
    "<ol start=' 1_0 '><li>q</ol><ol start='99999999999999'><li>r</ol><menu><li>m</menu>",
    "<ul><ul><li>first a list</li></ul><li>item</li>stray <b>text</b><p>para</p><ol><li>sub</ol></ul>",
    "<li>an item alone</li><ul><li><p>one</p><p>two</p><pre>code</pre><ul><li>deep</li></ul></li></ul>",
    "<blockquote><p>q</p><blockquote>deeper</blockquote><ul><li>l</li></ul></blockquote><blockquote> </blockquote>",
    "<dl><dt>term</dt><dd>def</dd><div><dt>t2</dt><dd><p>p1</p><p>p2</p></dd></div>text<dd></dd><dt></dt>"
    "<p>other</p><!-- c --><script>x</script></dl>",
    "<table><tr><th>a</th></tr><tr><td>1</td><td>2</td><td>3</td></tr><tr><td rowspan=2>x</td><td>y</td></tr>"
    "<tr><td colspan=2>z</td></tr></table>",
    "<table><caption>Cap <b>tion</b></caption><thead><tr><th>h|1</th><th><h2>in</h2></th></tr></thead>"
    "<tbody><tr><td><code>a|b</code></td><td><pre>one line</pre></td></tr><tr><td colspan='x'>c</td>"
    "<td rowspan='0'>d</td><td colspan=' 3 '>e</td></tr></tbody><tfoot><tr><td>f</td></tr></tfoot></table>",
    "<table><tr><td><h2>Side</h2></td><td><table><tr><td>in</td></tr><tr><td>ner</td></tr></table></td></tr>"
    "<tr><td>a</td><td>b</td></tr></table>",
    "<table>text<tr><td>a</td><td>b</td></tr></table><table><tr><td>a</td>x<td>b</td></tr></table>"
    "<table><tr><td>a</td><td><pre>two\nlines</pre></td></tr></table><table><tr><td>only</td></tr></table>"
    "<table><tbody>t<tr><td>a</td><td>b</td></tr></tbody><colgroup><col></colgroup><div>shows</div></table>"
    "<table><tr><td>a</td><td>b</td></tr><script>x</script><tr></tr><tr><td rowspan=3>r</td></tr></table>",
    "<p>a<!-- c -->b<?pi x?>c<script>s</script>d<style>p{}</style></p><noscript><p>no</p></noscript>",
    "<p>日本語の テキスト</p><div>Ünïcödé <i>text</i>!\xa0\u3000x\u2028y</div>",
    "<div><span>inline <div>block in inline</div> after</span><b>bold <p>around a block</p></b></div>",
    "<p>x<br>  <br>y</p><p><br></p><div>a<br/>b</div><h2>h<br>x</h2><td>c<br>d</td>",
]


@needs_compiled
@pytest.mark.parametrize("html", COMPILED_EDGE_CASES)
@pytest.mark.parametrize("links", [False, True])
def test_compiled_markdown_equals_the_python_on_edge_cases(html: str, links: bool) -> None:
    fast, slow = both(parse_html(html), base_url="http://ex.com/a/b.html", links=links)
    assert fast == slow


@needs_compiled
def test_compiled_walk_of_nothing_of_fragments_and_of_what_it_hands_to_python() -> None:
    assert both(None) == ("", "")
    fragment = etree.fromstring("<div>only <b>a</b> fragment</div>")
    assert both(fragment) == ("only **a** fragment",) * 2
    # A namespaced element or an entity reference: the Python renderer, with its result.
    root = parse_html("<html><body><p>a</p></body></html>")
    body = find_body(root)
    assert body is not None and compiled is not None and compiled.plain(body)
    etree.SubElement(body, "{urn:x}p").text = "namespaced"
    assert not compiled.plain(body)
    assert both(root) == ("a\n\nnamespaced",) * 2
    root = parse_html("<html><body><p>a</p><pre>x</pre></body></html>")
    pre = root.find(".//pre")
    assert pre is not None
    pre.append(etree.Entity("amp"))
    assert not compiled.plain(find_body(root))  # type: ignore[arg-type]
    fast, slow = both(root)
    assert fast == slow


@needs_compiled
def test_compiled_walk_of_ten_thousand_deep_nesting() -> None:
    for tags in (("div", "blockquote", "ul", "b"), ("dl", "div"), ("table", "tr", "td"), ("li", "ol", "code")):
        root = etree.Element("html")
        el = etree.SubElement(root, "body")
        for n in range(10_000):
            el = etree.SubElement(el, tags[n % len(tags)])
            el.text = f"w{n} "
        fast, slow = both(root)
        assert fast == slow and len(fast.split()) >= 10_000


@needs_compiled
def test_compiled_pre_fences_outgrow_the_backticks_inside() -> None:
    for code in ("```python\nprint('hi')\n```\n````\nmore", "`", "a ``` b `````` c", "````"):
        html = "<pre class='language-markdown'>" + code + "</pre><p><code>" + code + "</code></p>"
        fast, slow = both(parse_html(html))
        assert fast == slow
        assert fast.startswith("`" * max(3, 1 + max(map(len, re.findall("`+", code)))) + "markdown\n")


_META_TEXT = st.text(alphabet=st.sampled_from([*"ab1_ \\`*[]<|~&#\t\n-+=>.)!é٣\u3000\xa0\r", *"\ufdd0\ufdd4"]))


@needs_compiled
@settings(derandomize=True, max_examples=500, deadline=None)
@given(_META_TEXT, st.booleans())
def test_compiled_escaping_and_code_spans_equal_the_python_ones(text: str, in_table: bool) -> None:
    assert compiled is not None
    assert compiled.escape(text) == _markdown_text.esc(text)
    assert compiled.code_span(text, in_table) == _markdown_text.code_span(text, in_table)


_EMPHASIS_TEXT = st.text(alphabet=st.sampled_from([*"ab1_ *.\n\u3000é", *"\ufdd0\ufdd1\ufdd2\ufdd3\ufdd4"]))


@needs_compiled
@settings(derandomize=True, max_examples=500, deadline=None)
@given(_EMPHASIS_TEXT)
def test_compiled_emphasis_equals_the_python(text: str) -> None:
    assert compiled is not None
    # The compiled walk strips what EDGE_SPACE holds: white space and the hard break.
    assert set(_markdown_text.EDGE_SPACE) == {chr(c) for c in range(0x3001) if chr(c).isspace()} | {"\ufdd4"}
    assert compiled.resolve(text) == _markdown_text.resolve(text)


_MORE_TAGS = [*_TAGS, "dl", "div", "caption", "tbody", "ol", "h2", "br", "tt", "samp", "noscript", "center"]


def _element_with_attrs(args: tuple[str, list[str], int]) -> str:
    tag, children, n = args
    attrs = {
        "a": ' href="/x?a=(1)"',
        "pre": ' class="language-py"',
        "td": (' colspan="2"', ' rowspan="3"', ' colspan="x"', "")[n % 4],
        "ol": ' start="3"',
        "code": ' class="lang-c"',
    }.get(tag, "")
    return f"<{tag}{attrs}>{''.join(children)}</{tag}>"


_MORE_HTML = st.recursive(
    _TEXT | _VOID,
    lambda inner: st.tuples(st.sampled_from(_MORE_TAGS), st.lists(inner, max_size=4), st.integers(0, 3)).map(
        _element_with_attrs
    ),
    max_leaves=50,
)


@needs_compiled
@settings(derandomize=True, max_examples=500, deadline=None)
@given(st.lists(_MORE_HTML, min_size=1, max_size=4), st.booleans())
def test_compiled_markdown_equals_the_python_on_random_html(fragments: list[str], links: bool) -> None:
    html = "<html><body>" + "".join(fragments) + "</body></html>"
    fast, slow = both(parse_html(html), base_url="http://ex.com/a/b.html", links=links)
    assert fast == slow
