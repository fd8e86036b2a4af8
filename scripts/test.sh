#!/usr/bin/env bash
# The whole test suite: install (with the test extra), lint, type-check, test.
EXTRAS="test" source "$(dirname "$0")/_venv.sh"
# The Redis tests need a redis-server (they start their own on 127.0.0.1); install it if we can.
if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing redis-server"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) >/dev/null 2>&1 \
      || echo "could not install redis-server: the Redis tests will be skipped"
  else
    echo "redis-server is missing and cannot be installed here: the Redis tests will be skipped"
  fi
fi
# The report's browser tests need a headless Chromium (Debian's chromium); install it if we can.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing chromium"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
      || echo "could not install chromium: the report's browser tests will be skipped"
  else
    echo "chromium is missing and cannot be installed here: the report's browser tests will be skipped"
  fi
fi
echo "== ruff"; .venv/bin/ruff check .; .venv/bin/ruff format --check .
echo "== mypy"; .venv/bin/mypy
echo "== pytest"; exec .venv/bin/python -m pytest "$@"
