#!/usr/bin/env bash
# The whole test suite: install (with the test extra), lint, type-check, test.
EXTRAS="test" source "$(dirname "$0")/_venv.sh"
# The Redis tests need a redis-server (they start their own on 127.0.0.1), the report's browser tests a
# headless Chromium (Debian's chromium). Installed when missing, as root on Debian: a failed install stops
# the run here with apt-get's output. Where nothing can install them (not root, no apt-get), their tests
# are skipped, each saying so.
_apt_updated=""
_need() {  # _need PACKAGE WHAT-NEEDS-IT COMMAND...: installs PACKAGE unless one of the commands exists
  local package=$1 what=$2 command
  shift 2
  for command in "$@"; do
    if command -v "$command" >/dev/null 2>&1; then return 0; fi
  done
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "$package is missing and cannot be installed here (not root on Debian): $what will be skipped"
    return 0
  fi
  echo "== installing $package"
  local log
  log=$(mktemp)
  if ! { { [ -n "$_apt_updated" ] || apt-get update -qq; } \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "scripts/test.sh: installing $package failed (apt-get's output above); $what need it" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  _apt_updated=1
}
_need redis-server "the Redis tests" redis-server
_need chromium "the report's browser tests" chromium chromium-browser
echo "== ruff"; .venv/bin/ruff check .; .venv/bin/ruff format --check .
echo "== mypy"; .venv/bin/mypy
echo "== pytest"; exec .venv/bin/python -m pytest "$@"
