"""The optional compiled walk of RTDM-TD removal (``scrapy_detemplate.methods._walk``).

Its results are tested with the rest of RTDM-TD (``test_rtdm.py`` runs every
test with it and without it); here: that it is built where it can be, and its
fingerprint.
"""

from __future__ import annotations

import shutil

import pytest
from lxml import etree

from scrapy_detemplate import _compiled
from scrapy_detemplate._html import find_body, parse_html
from scrapy_detemplate.methods import rtdm


def test_the_compiled_walk_is_built_and_loaded_where_a_c_compiler_is() -> None:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: the install skips the extension and removal walks in Python")
    assert rtdm._compiled_walk is not None, (
        "scrapy_detemplate/methods/_walk was not built or not loaded: reinstall (pip install -e .) and read "
        "setup.py's output"
    )


@pytest.mark.skipif(rtdm._compiled_walk is None, reason="the compiled walk is not built here")
def test_a_walk_built_against_another_lxml_is_not_used_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    assert rtdm.compiled_walk() == (True, "")
    monkeypatch.setattr(_compiled, "_STATUS", dict(_compiled._STATUS))  # this load's verdict stays in this test
    monkeypatch.setattr(rtdm.etree, "LXML_VERSION", (1, 2, 0, 0))  # as after an lxml upgrade
    walk, why = rtdm._load_compiled_walk()
    assert walk is None and "lxml 1.2 runs" in why


def body(html: str) -> etree._Element:
    root = parse_html(f"<html><body>{html}</body></html>")
    assert root is not None
    found = find_body(root)
    assert found is not None
    return found


@pytest.mark.skipif(rtdm._compiled_walk is None, reason="the compiled walk is not built here")
def test_the_compiled_fingerprint_counts_elements_and_hashes_the_text() -> None:
    fingerprint = rtdm._compiled_walk.fingerprint
    pages = [
        "<ul id='m'><li><a href='/a'>Home</a></li><!-- x --><li>News <b>today</b></li></ul>",
        "<ul class='other'><li><a href='/b'>Home</a></li><li>News <i>today</i></li></ul>",  # same text and shape
        "<ul id='m'><li><a href='/a'>Home</a></li><li>News <b>today</b><br></li></ul>",  # one element more
        "<ul id='m'><li><a href='/a'>Home</a></li><li>News <b>Today</b></li></ul>",  # other text
    ]
    ul = [body(page)[0] for page in pages]
    assert [fingerprint(el)[0] for el in ul] == [int(el.xpath("count(descendant::*)")) for el in ul]
    assert fingerprint(ul[0]) == fingerprint(ul[1])
    assert fingerprint(ul[0]) != fingerprint(ul[2])
    assert fingerprint(ul[0]) != fingerprint(ul[3])
    tail = body("<div><p>a</p>b</div>tail")[0]
    assert fingerprint(tail) == fingerprint(body("<div><p>a</p>b</div>other tail")[0])  # its own tail is out
