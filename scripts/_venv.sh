# Sourced by the scripts: a project virtualenv in .venv with the package installed.
# Needs only a Python >= 3.10 with venv and the package registries.
# A failed install stops here with pip's own error: nothing below hides it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# What to install: the package alone, or with extras (EXTRAS="test", "redis,bench").
if [ -n "${EXTRAS:-}" ]; then
  TARGET=".[${EXTRAS}]"
else
  TARGET="."
fi
# pip's "WARNING: Location ..." lines (a pyenv Python) are noise; the filter's own status is ignored and,
# with pipefail, pip's exit status is the pipeline's.
_quiet_pip() {
  .venv/bin/python -m pip --disable-pip-version-check "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }
}
_quiet_pip install --quiet --upgrade pip
_quiet_pip install --quiet -e "$TARGET"
# Fail here, clearly, if the install did not work (-I: not the source tree beside us, the installed package).
.venv/bin/python -I -c "import scrapy_detemplate"
