#!/usr/bin/env bash
# The lowest supported versions: install the package and its test extra with constraints-min.txt
# (every declared floor pinned) into a fresh venv of the oldest supported Python, then run the whole
# test suite but the quality gate: its floors are the figures measured with the newest versions
# (the last run at the lowest ones, and why one floor moves there: README, "Packaging").
# Not part of CI (8 to 13 minutes on two cores):
#
#   PYTHON=python3.10 bash scripts/check_min_versions.sh [CONSTRAINTS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3.10}
CONSTRAINTS=$(realpath "${1:-constraints-min.txt}")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/detemplate-min.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$PYTHON" -m venv "$TMP/venv"
_pip() { "$TMP/venv/bin/python" -m pip --disable-pip-version-check "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }; }
_pip install --quiet --upgrade pip
_pip install --quiet -c "$CONSTRAINTS" ".[redis,test]"
"$TMP/venv/bin/python" -m pip list --disable-pip-version-check 2>/dev/null \
  | grep -i -E "^(scrapy|twisted|lxml|rapidfuzz|w3lib|itemadapter|parsel|redis) " || true
"$TMP/venv/bin/python" --version
# The installed package, not the source tree: run pytest's script (no cwd on sys.path) from the repository.
# Scrapy 2.13's get_crawler needs an installed reactor: scripts/_reactor_plugin.py installs one first.
PYTHONPATH="$(pwd)/scripts" "$TMP/venv/bin/pytest" -q -p no:cacheprovider -p _reactor_plugin \
  -o addopts="-ra --import-mode=importlib" \
  --ignore=tests/test_quality_gate.py tests
