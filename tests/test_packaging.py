"""What the package declares: one version, the dependencies it imports, a description that renders off the repository.

The sdist and the wheel themselves are built and installed by ``scripts/check_dist.sh`` (run by ``.ci/run``).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

import scrapy_detemplate

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
# Import names of optional dependencies whose distribution is named otherwise, for when they are not installed.
ALIASES = {"readability": "readability-lxml", "sklearn": "scikit-learn"}
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string (``"scrapy-redis>=0.9"`` -> ``scrapy-redis``)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _imported_distributions() -> dict[str, set[str]]:
    """Distributions whose modules the package imports (anywhere, lazily too), with the modules importing them."""
    top_levels = importlib.metadata.packages_distributions()
    found: dict[str, set[str]] = {}
    for path in (ROOT / "scrapy_detemplate").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "scrapy_detemplate":
                    continue
                for dist in top_levels.get(top, [ALIASES.get(top, top)]):
                    found.setdefault(_name(dist), set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_the_version_has_one_source_and_the_installed_metadata_agrees():
    assert "version" not in PROJECT and "version" in PROJECT["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "scrapy_detemplate.__version__"}
    assert scrapy_detemplate.__version__ == importlib.metadata.version("scrapy-detemplate")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## (\S+)", changelog, re.MULTILINE)
    assert first and first.group(1) == scrapy_detemplate.__version__  # the changelog's latest entry is this one


def test_every_declared_dependency_is_imported_and_every_import_is_declared():
    imported = _imported_distributions()
    required = {_name(r) for r in PROJECT["dependencies"]}
    optional = {_name(r) for extra in PROJECT["optional-dependencies"].values() for r in extra}
    assert not {d for d in required if d not in imported}, "declared but never imported"
    undeclared = {d: sorted(where) for d, where in imported.items() if d not in required | optional}
    assert not undeclared, "imported but not declared"


def test_the_readme_renders_as_the_package_description():
    readme = re.sub(r"`[^`\n]*`", "", (ROOT / "README.md").read_text(encoding="utf-8"))  # code spans show text
    targets = re.findall(r"\]\(([^)\s]+)", readme) + re.findall(r"<img[^>]+src=[\"']([^\"']+)", readme)
    # A package index shows the README without the repository beside it: no links outside the repository
    # (what is beside a development checkout is named in plain text). The report's screenshots (issue 17 asks
    # for them in the README) are relative images: they must exist under docs/, which the sdist ships; an
    # index that renders the README without the files shows their alt text.
    images = [t for t in re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme) if "://" not in t]
    assert all(t.startswith("docs/") and (ROOT / t).is_file() for t in images), images
    assert "graft docs" in (ROOT / "MANIFEST.in").read_text()
    assert not [t for t in targets if t.startswith("../")], "link outside the repository"
    assert PROJECT["readme"] == "README.md"


def test_the_classifiers_name_the_framework_and_every_supported_python():
    classifiers = set(PROJECT["classifiers"])
    assert "Framework :: Scrapy" in classifiers
    low = int(PROJECT["requires-python"].removeprefix(">=3."))
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in range(low, 14)} <= classifiers
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("BSD 3-Clause License")
    assert PROJECT["license"] == "BSD-3-Clause" and PROJECT["license-files"] == ["LICENSE"]
