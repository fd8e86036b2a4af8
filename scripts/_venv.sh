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

# A second script in the same checkout (demo.sh, then test.sh) does not compile the extensions again
# (about 50 s on two cores). The install is kept when .venv holds this tree's build already: the hash of
# what the build reads (setup.py, pyproject.toml, every .pyx and .pxd) is the one the last install kept
# in STAMP, and the installed package is this tree's with every compiled module loading. Then pip is
# asked only for the extras, by the installed package's name: it installs what they need and leaves the
# package as it is. Anything else (a changed .pyx, a new dependency, a deleted .so, an lxml the modules
# were not built against, no C compiler) installs the package again, as before.
STAMP=.venv/.scrapy-detemplate-install
_build_inputs() {
  { cat setup.py pyproject.toml; find scrapy_detemplate \( -name "_*.pyx" -o -name "*.pxd" \) | LC_ALL=C sort | xargs cat; } \
    | sha256sum | cut -d" " -f1
}
_this_build_loads() {  # the package is this tree's, and every compiled module is built and loads
  .venv/bin/python -I -c '
import os, sys
import scrapy_detemplate
from scrapy_detemplate import _compiled, markdown  # with the two below, these load every compiled module
from scrapy_detemplate.methods import rtdm
from scrapy_detemplate.runners import combined
status = _compiled.status()
ours = os.path.realpath(scrapy_detemplate.__file__).startswith(os.path.realpath(sys.argv[1]) + os.sep)
sys.exit(0 if ours and status and not any(status.values()) else 1)' "$PWD" >/dev/null 2>&1
}
INPUTS=$(_build_inputs)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$INPUTS" ] && _this_build_loads; then
  if [ -n "${EXTRAS:-}" ]; then
    _quiet_pip install --quiet "scrapy-detemplate[${EXTRAS}]"
  fi
else
  rm -f "$STAMP"
  _quiet_pip install --quiet -e "$TARGET"
fi
# Fail here, clearly, if the install did not work (-I: not the source tree beside us, the installed package).
.venv/bin/python -I -c "import scrapy_detemplate"
echo "$INPUTS" >"$STAMP"
