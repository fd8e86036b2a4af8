#!/usr/bin/env bash
# The whole test suite: install (with the test extra), lint, type-check, test.
EXTRAS="test" source "$(dirname "$0")/_venv.sh"
echo "== ruff"; .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== mypy"; .venv/bin/mypy
echo "== pytest"; exec .venv/bin/python -m pytest "$@"
