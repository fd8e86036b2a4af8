from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(EXAMPLE))
sys.path.insert(0, str(ROOT / "tests"))  # generated sites shared by tests (docsite)


@pytest.fixture
def page() -> str:
    """A small page with a template around one paragraph: ``page.format(body=...)``."""
    return (
        "<html><head><title>T</title></head><body>"
        "<header><a href='/'>Example Site</a> <a href='/news/'>News</a></header>"
        "<nav><ul><li><a href='/a'>Alpha</a></li><li><a href='/b'>Beta</a></li></ul></nav>"
        "<main><h1>{title}</h1><p>{body}</p></main>"
        "<footer><p>Copyright Example</p></footer>"
        "</body></html>"
    )
