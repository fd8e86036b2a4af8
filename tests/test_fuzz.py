"""Fuzzing: hostile pages, encodings, headers and JSONL streams through every method and ``clean``.

What must hold whatever comes in: ``Detemplater.process()`` never raises and
answers every page within a (very generous) time bound, with text that is valid
UTF-8; ``clean`` writes exactly one valid UTF-8 JSON line per input line and
exits 0, or 1 when a line was not a page; the items of a site's first page that
wait for its next pages are each let go once, within the wait.

Examples are derandomized (the same inputs on every run) and few by default, so
the suite stays within about a minute; ``DETEMPLATE_FUZZ_EXAMPLES=5000`` runs that
many examples per test (seeded differently: set ``DETEMPLATE_FUZZ_SEED`` too to
vary them), e.g. ``DETEMPLATE_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py``.
"""

from __future__ import annotations

import base64
import codecs
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from scrapy.http import Headers

from scrapy_detemplate import PASSTHROUGH_REASONS, CleanResult, DetemplateConfig, Detemplater
from scrapy_detemplate.cli import main
from scrapy_detemplate.runners import RUNNERS
from scrapy_detemplate.runners.combined import drop_copies

METHODS = sorted(RUNNERS)
#: Examples per test: small by default (CI), many with DETEMPLATE_FUZZ_EXAMPLES.
EXAMPLES = int(os.environ.get("DETEMPLATE_FUZZ_EXAMPLES", "0"))
#: A bound on one page's wall time, far above any real page's cost (milliseconds): it catches
#: runaway work (a quadratic blow-up, a loop), not slowness; the machine may be busy.
PAGE_SECONDS = 10.0


def fuzz(default: int, share: float = 1.0) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Hypothesis settings: ``default`` derandomized examples, or ``share`` of the env's count."""
    big = EXAMPLES > 0
    chosen = settings(
        max_examples=max(default, int(EXAMPLES * share)) if big else default,
        derandomize=not big,
        deadline=None,  # timing is asserted per page, with PAGE_SECONDS
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )

    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        test = chosen(test)
        return seed(int(os.environ.get("DETEMPLATE_FUZZ_SEED", "0")))(test) if big else test

    return decorate


# -- hostile HTML ---------------------------------------------------------------------------------

TAGS = [
    "html", "head", "body", "title", "meta", "div", "p", "span", "a", "ul", "ol", "li", "table", "tr", "td",
    "th", "tbody", "nav", "header", "footer", "main", "article", "section", "aside", "h1", "h2", "pre", "code",
    "br", "hr", "img", "form", "select", "option", "textarea", "script", "style", "noscript", "template",
    "iframe", "svg", "math", "frameset", "frame", "b", "i", "font", "center", "object", "xmp", "plaintext",
    "title", "base", "link", "input", "label", "button", "dl", "dt", "dd", "blockquote", "x-custom", "öä",
]  # fmt: skip
SPECIALS = [
    "<!--", "-->", "<!-- c -->", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<!doctype", "<?xml version='1.0'?>",
    "<?xml version='1.0' encoding='utf-16'?>", "<?php echo 1 ?>", "&#0;", "&#xD800;", "&#1114112;", "&nbsp",
    "&amp;", "&#x1F600;", "</body>", "</html>", "<body>", "<html>", "<", ">", "</", "<>", "\x00", "\r", "\x0c",
    "\u2028", "\ufeff", "\ufffd", "\U0001f600", "<p", "<a href='", '"', "'", "=", "<br/>", "</p></p></div>",
    "<script>", "</script>", "<style>", "<textarea>", "<title>", "<table><tr><td>", "<select><option>",
]  # fmt: skip
CHARSETS = [
    "utf-8", "UTF-8", "utf8", "utf-16", "utf-16le", "utf-16be", "utf-32", "latin-1", "iso-8859-1", "cp1252",
    "windows-1251", "koi8-r", "shift_jis", "euc-jp", "gb18030", "big5", "iso-2022-jp", "utf-7", "x-user-defined",
    "ascii", "bogus", "", '"utf-8"', "utf-8; q=1", "\u00e9", "cp037", "hz", "mac-roman",
]  # fmt: skip
CODECS = ["utf-8", "utf-16-le", "utf-16-be", "utf-32", "cp1252", "latin-1", "shift_jis", "gb18030", "koi8-r", "cp037"]
BOMS = [b"", b"", b"", codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE]

#: Any code point, lone surrogates included (str input can hold them).
any_text = st.text(st.characters(blacklist_categories=()), max_size=40)
words = st.text(st.sampled_from("abc xyz\n\t.é"), min_size=1, max_size=30)
attribute = st.tuples(
    st.sampled_from(
        ["class", "id", "href", "style", "charset", "http-equiv", "content", "x", "on\u00e9", "itemprop", ""]
    ),
    st.one_of(
        words, any_text, st.integers(0, 100_000).map(lambda n: "v" * n), st.sampled_from([*CHARSETS, "reviewBody"])
    ),
    st.sampled_from(['"', "'", ""]),
)


def render_attrs(attrs: list[tuple[str, str, str]]) -> str:
    return "".join(f" {name}={quote}{value}{quote}" if name else f" {value}" for name, value, quote in attrs)


def render(node: Any) -> str:
    if isinstance(node, str):
        return node
    tag, attrs, children, ending = node
    inner = "".join(render(child) for child in children)
    end = {"close": f"</{tag}>", "open": "", "stray": f"</{tag}></{tag}>", "wrong": "</div>"}[ending]
    return f"<{tag}{render_attrs(attrs)}>{inner}{end}"


leaf = st.one_of(
    words,
    any_text,
    st.sampled_from(SPECIALS),
    st.tuples(st.sampled_from(["div", "b", "span", "td", "li"]), st.integers(0, 3000)).map(
        lambda t: f"<{t[0]}>" * t[1] + "deep" + f"</{t[0]}>" * (t[1] // 2)  # deep, half unclosed
    ),
    st.integers(0, 150).map(lambda n: "".join(f"<p>paragraph {i} of a longer page</p>" for i in range(n))),
    # A shop's declared product and customer reviews (the combined method drops the lines they match):
    # some the page's own paragraphs, some any text, some strings that never close.
    st.lists(st.one_of(st.integers(0, 150).map(lambda i: f"paragraph {i} of a longer page"), words, any_text)).map(
        lambda reviews: (
            '<script type="application/ld+json">{"@type": "Product", "review": ['
            + ", ".join(f'{{"reviewBody": {json.dumps(r)}}}' for r in reviews)
            + "]}</script>"
        )
    ),
    st.sampled_from(['"reviewBody": "', '"reviewBody":"\\', '{"@type": "Product"}', '"Question"']),
    # A page's declared questions and answers (kept whatever the trees say).
    st.lists(st.one_of(st.integers(0, 150).map(lambda i: f"paragraph {i} of a longer page"), words, any_text)).map(
        lambda texts: (
            '<script type="application/ld+json">{"@type": "FAQPage", "mainEntity": ['
            + ", ".join(
                f'{{"@type": "Question", "name": {json.dumps(t)}, "acceptedAnswer": {{"text": {json.dumps(t)}}}}}'
                for t in texts
            )
            + "]}</script>"
        )
    ),
)
tree = st.recursive(
    leaf,
    lambda children: st.tuples(
        st.sampled_from(TAGS),
        st.lists(attribute, max_size=3),
        st.lists(children, max_size=5),
        st.sampled_from(["close", "close", "open", "stray", "wrong"]),
    ),
    max_leaves=30,
)
html_text = st.one_of(
    tree.map(render),
    st.lists(tree.map(render), max_size=6).map("".join),
    st.tuples(tree.map(render), st.sampled_from(["", "<html><body>", "<html><head><title>t</title></head><body>"])).map(
        lambda t: t[1] + t[0]
    ),
)


@st.composite
def html_bytes(draw: st.DrawFn) -> bytes:
    """A page as bytes: any codec, a declared charset that may lie, a BOM that may lie, stray bytes."""
    html = draw(html_text)
    meta = draw(st.one_of(st.none(), st.sampled_from(CHARSETS)))
    if meta is not None:
        declarations = [f"<meta charset='{meta}'>", f'<meta http-equiv=Content-Type content="text/html;charset={meta}"']
        html = draw(st.sampled_from(["", "<html><head>"])) + draw(st.sampled_from(declarations)) + html
    codec = draw(st.sampled_from(CODECS))
    errors = "surrogatepass" if codec.startswith("utf") and draw(st.booleans()) else "replace"
    body = draw(st.sampled_from(BOMS)) + html.encode(codec, errors)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.binary(max_size=64)) + body[at:]
    return body


content_type = st.one_of(
    st.sampled_from(["text/html", "TEXT/HTML", "application/xhtml+xml", "text/plain", "image/png", "", "text/html;"]),
    st.tuples(st.sampled_from(["text/html", "application/xhtml+xml", "text/html "]), st.sampled_from(CHARSETS)).map(
        lambda t: f"{t[0]}; charset={t[1]}"
    ),
    any_text,
)


def _latin1ish(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@st.composite
def headers(draw: st.DrawFn) -> Any:
    """Headers in every shape ``process()`` is handed: dicts, Scrapy's Headers, pairs; str or bytes."""
    values = draw(st.lists(content_type, min_size=1, max_size=3))
    name = draw(st.sampled_from(["Content-Type", "content-type", "CONTENT-TYPE", " Content-Type", "X-Other"]))
    shape = draw(st.sampled_from(["none", "str", "bytes", "scrapy", "pairs", "list", "empty"]))
    if shape == "none":
        return None
    if shape == "str":
        return {name: values[-1], "Server": "x"}
    if shape == "bytes":
        return {_latin1ish(name): _latin1ish(values[-1])}
    if shape == "scrapy":
        return Headers({name: [v.encode("utf-8", "replace") for v in values]})
    if shape == "pairs":
        return [(name, v) for v in values]
    if shape == "list":
        return {name: values}
    return {}


def check(result: object, seconds: float) -> None:
    assert isinstance(result, CleanResult)
    assert seconds < PAGE_SECONDS, f"{seconds:.1f} s for one page"
    assert result.status in ("cleaned", "unchanged", "passthrough")
    if result.status == "passthrough":
        assert result.reason in PASSTHROUGH_REASONS
        assert result.reason != "error", "an unexpected failure inside the engine (see the log)"
    data = json.dumps(result.as_dict(), ensure_ascii=False)
    data.encode("utf-8")  # no lone surrogate in any field
    for line in result.template_lines:
        assert isinstance(line, str)


def timed(engine: Detemplater, url: str, body: Any, **kw: Any) -> CleanResult:
    start = time.perf_counter()
    result = engine.process(url, body, **kw)
    check(result, time.perf_counter() - start)
    return result


_ENGINES: dict[str, Detemplater] = {}


def engine_for(method: str) -> Detemplater:
    """One engine per method for the whole run: its state grows over examples, as in a crawl."""
    if method not in _ENGINES:
        _ENGINES[method] = Detemplater(DetemplateConfig(method=method))
    return _ENGINES[method]


# -- process(): every method ----------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@fuzz(default=12)
@given(pages=st.lists(st.tuples(html_bytes(), headers()), min_size=1, max_size=3), directory=st.integers(0, 3))
def test_hostile_html_bytes_and_headers_never_raise(method, pages, directory):
    engine = engine_for(method)
    for number, (body, head) in enumerate(pages):
        timed(engine, f"http://fuzz.example/{directory}/{number}", body, headers=head)


@pytest.mark.parametrize("method", METHODS)
@fuzz(default=8)
@given(pages=st.lists(html_text, min_size=1, max_size=3))
def test_hostile_html_text_with_surrogates_never_raises(method, pages):
    engine = engine_for(method)
    for number, html in enumerate(pages):
        timed(engine, f"http://fuzz.example/str/{number}", html)


any_body = st.one_of(
    st.binary(max_size=2000),
    st.binary(max_size=200).map(bytearray),
    st.binary(max_size=200).map(memoryview),
    any_text,
    st.none(),
    st.integers(),
    st.lists(st.integers(), max_size=3),
    st.floats(),
)


@fuzz(default=25)
@given(body=any_body, head=st.one_of(headers(), st.integers(), st.text(max_size=5), st.lists(st.integers())))
def test_any_body_and_any_headers_never_raise_for_any_method(body, head):
    for method in METHODS:
        timed(engine_for(method), "http://fuzz.example/any/1", body, headers=head)


# -- first pages: items wait for their site's next pages ----------------------------------------

GOOD_PAGE = (
    "<html><body><nav>Home | News | Sport</nav><p>Story {}: the council met on Tuesday and spoke "
    "at length about the harbour.</p><footer>(c) Example News</footer></body></html>"
)


@st.composite
def first_page_events(draw: st.DrawFn) -> list[tuple[int, int, Any, Any, bool, float]]:
    """Pages of four sites in any order, hostile or not: (site, path, body, headers, yields an item,
    seconds on the clock before it comes)."""
    body = st.one_of(st.integers(0, 50).map(lambda n: GOOD_PAGE.format(n).encode()), html_bytes())
    event = st.tuples(
        st.integers(0, 3), st.integers(0, 4), body, st.one_of(st.just({"Content-Type": "text/html"}), headers()),
        st.booleans(), st.sampled_from([0.0, 0.0, 1.0, 4.0, 11.0]),
    )  # fmt: skip
    return draw(st.lists(event, min_size=1, max_size=12))


@fuzz(default=25)
@given(events=first_page_events(), peers=st.integers(1, 3))
def test_first_pages_let_every_item_go_once_within_the_wait_whatever_the_pages(events, peers):
    """Whatever pages come (hostile bodies and headers, repeats, other sites), no call raises, each
    waiting item is let go exactly once (a Deferred called twice raises) and never later than
    the wait, the bounds hold, and an item keeps its other fields with text in its own."""
    from scrapy import Request

    from scrapy_detemplate._crawler import META_KEY
    from scrapy_detemplate._firstpages import FirstPages

    clock = [0.0]
    wait = 10.0
    refilled: list[CleanResult] = []

    def refill(item: dict[str, Any], result: CleanResult, fields: list[str]) -> None:
        check(result, 0.0)
        refilled.append(result)
        for field in fields:
            item[field] = result.text

    engine = Detemplater()
    pages = FirstPages(engine, wait, refill, peers=peers, limit=2, limit_bytes=4000, clock=lambda: clock[0])
    pages.awaited = True
    held: list[tuple[dict[str, Any], Any, float]] = []  # item, its Deferred, when it began to wait
    queued: list[Any] = []  # requests on their way: which first page goes first past the limit
    for site, path, body, head, yields, seconds in events:
        clock[0] += seconds
        pages.expire()
        url = f"http://site{site}.example/{path}"
        queued.append(Request(f"http://site{(site + path) % 4}.example/next"))
        pages.scheduled(queued[-1])
        if not yields and queued:
            pages.arrived(queued.pop(0))
        key = engine.config.site_key(url)
        first = pages.first(key)
        request = Request(url)
        result = timed(engine, url, body, headers=head)
        request.meta[META_KEY] = result
        source = (url, body if isinstance(body, bytes) else b"", head)
        pages.cleaned(key, request, source, result, first)
        assert pages.waiting <= 2
        if yields:
            item = {"url": url, "content": result.text}
            if pages.hold(request.meta[META_KEY], item, ["content"]):
                done = pages.waiter(item)
                assert done is not None and not done.called
                held.append((item, done, clock[0]))
        for _, done, since in held:
            assert done.called or clock[0] - since < wait
    clock[0] += wait
    pages.expire()
    assert all(done.called for _, done, _ in held)  # the wait ended for all, before the crawl closed
    pages.let_all_go("closed")
    assert (pages.waiting, pages.waiting_items) == (0, 0)
    for item, _, _ in held:
        assert set(item) == {"url", "content"} and isinstance(item["content"], str)
    assert len(refilled) <= len(held)


# -- clean: JSONL streams -------------------------------------------------------------------------


def _page_line(draw: st.DrawFn) -> bytes:
    page: dict[str, Any] = {"url": draw(st.one_of(st.just("http://fuzz.example/c/1"), any_text))}
    if draw(st.booleans()):
        page["html"] = draw(html_text)
    else:
        page["html_b64"] = base64.b64encode(draw(html_bytes())).decode()
    if draw(st.booleans()):
        page["headers"] = {"Content-Type": draw(content_type)}
    return json.dumps(page, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")


def _broken_line(draw: st.DrawFn) -> bytes:
    good = _page_line(draw)
    kind = draw(st.sampled_from(["cut", "bytes", "latin1", "types", "deep", "b64", "json"]))
    if kind == "cut":
        return good[: draw(st.integers(0, max(0, len(good) - 1)))]
    if kind == "bytes":
        return draw(st.binary(max_size=80)).replace(b"\n", b"")
    if kind == "latin1":
        return b'{"url": "http://fuzz.example/c/1", "html": "caf\xe9 <p>x</p>"}'
    if kind == "types":
        field = draw(st.sampled_from(["url", "html", "html_b64", "headers"]))
        value = draw(st.one_of(st.none(), st.integers(), st.lists(st.integers(), max_size=2), st.booleans()))
        return json.dumps({"url": "http://fuzz.example/c/1", "html": "<p>x</p>", field: value}).encode()
    if kind == "deep":
        depth = draw(st.integers(1, 200_000))
        return b"[" * depth + b"]" * draw(st.integers(0, depth))
    if kind == "b64":
        return json.dumps({"url": "u", "html_b64": draw(st.text(max_size=20))}).encode()
    return json.dumps(draw(st.one_of(st.integers(), st.lists(st.text(max_size=3)), st.text(max_size=5)))).encode()


@st.composite
def jsonl_stream(draw: st.DrawFn) -> bytes:
    """A JSONL stream: pages, broken lines, blank lines, a BOM, CRLF, no final newline."""
    lines = []
    for kind in draw(st.lists(st.sampled_from(["page", "page", "broken", "blank"]), min_size=1, max_size=6)):
        if kind == "page":
            lines.append(_page_line(draw))
        elif kind == "broken":
            lines.append(_broken_line(draw))
        else:
            lines.append(draw(st.sampled_from([b"", b" ", b"\t", b"\r"])))
    data = draw(st.sampled_from([b"\n", b"\r\n"])).join(lines)
    if draw(st.booleans()):
        data += b"\n"
    if draw(st.booleans()):
        data = codecs.BOM_UTF8 + data
    return data


def input_lines(data: bytes) -> int:
    """How many lines a reader sees in ``data`` (a last line without newline counts)."""
    return len(io.BytesIO(data).readlines())


def check_output(data: bytes, out: bytes, status: int) -> None:
    lines = out.decode("utf-8").split("\n")
    assert lines[-1] == "", "every output line ends with a newline"
    results = [json.loads(line) for line in lines[:-1]]
    assert len(results) == input_lines(data), "one output line per input line"
    assert all(r["status"] in ("cleaned", "unchanged", "passthrough", "blank", "error") for r in results)
    assert all(r["reason"] != "error" for r in results), "an unexpected failure inside the engine"
    assert status == (1 if any(r["status"] == "error" for r in results) else 0)


@fuzz(default=20)
@given(data=jsonl_stream(), method=st.sampled_from(METHODS))
def test_clean_answers_every_jsonl_line_with_one_utf8_json_line(data, method):
    sink = io.BytesIO()
    start = time.perf_counter()
    status = main(["clean", "--method", method], stdin=io.BytesIO(data), stdout=sink)
    assert time.perf_counter() - start < PAGE_SECONDS * max(1, input_lines(data))
    check_output(data, sink.getvalue(), status)


@fuzz(default=2, share=0.02)  # a process start per example
@given(data=jsonl_stream())
def test_clean_as_a_real_process_answers_every_line(data):
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy_detemplate", "clean"], input=data, capture_output=True, timeout=300
    )
    assert "Traceback" not in proc.stderr.decode("utf-8", "replace")
    check_output(data, proc.stdout, proc.returncode)


#: Line texts drawn from a few words, so that runs repeat often; two of them in Chinese and one in Thai (no
#: spaces: a page written without spaces counts a pair of CJK characters or four Thai ones as a word,
#: another page one word a line).
COPY_TEXTS = (
    "a b c d e f g h i j", "k l m n o p", "q r s", "t", "u v w x y z", "大桥工程今天通过了市议会的投票", "首页",
    "สะพานใหม่ผ่านการลงมติของสภาเมือง",
)  # fmt: skip
copy_texts = st.lists(st.sampled_from(COPY_TEXTS), max_size=60)


@fuzz(default=200)
@given(
    texts=copy_texts,
    template=st.frozensets(st.integers(0, 59), max_size=10),
    inside=st.frozensets(st.integers(0, 59)),
    code=st.frozensets(st.integers(0, 59), max_size=5),
)
def test_a_copy_goes_only_where_its_text_stays_earlier(texts, template, inside, code):
    template = frozenset(i for i in template if i < len(texts))
    out = drop_copies(texts, template, inside.__contains__, code.__contains__)
    assert template <= out <= frozenset(range(len(texts)))
    kept = [i for i in range(len(texts)) if i not in out]
    for i in out - template:  # every line dropped as a copy is still in the text, kept earlier
        assert any(j < i and texts[j] == texts[i] for j in kept), (texts, template, i)


class _CountedLines(list[str]):
    """A page's line texts that count how often a line is read."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        self.reads += 1
        return super().__getitem__(index)


def test_a_page_of_two_long_equal_halves_is_read_in_linear_time():
    half = [f"line {n} of a long page, one of many" for n in range(2_000)]
    kept_first, template_first = _CountedLines(half + half), _CountedLines(half + half)
    assert drop_copies(kept_first, frozenset(), lambda i: False, lambda i: False) == frozenset(range(2_000, 4_000))
    assert drop_copies(template_first, frozenset({5}), lambda i: False, lambda i: False) == {5}
    # Counted, not timed: a walk that looked at a run's tail again would read each line about 2,000 times.
    assert kept_first.reads < 10 * 4_000 and template_first.reads < 10 * 4_000, (kept_first.reads, template_first.reads)
