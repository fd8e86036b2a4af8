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
# in STAMP, and the installed package is this tree's with every compiled module loading. Then only the
# requirements of extras not installed yet are installed. Anything else (a changed .pyx, a new
# dependency, a deleted .so, an lxml the modules were not built against, no C compiler) installs the
# package again, as before.
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
_extra_requirements() {  # the requirements of the extras named (installed metadata: the same lists pip reads)
  .venv/bin/python -I -c '
import importlib.metadata, re, sys
for requirement in importlib.metadata.requires("scrapy-detemplate") or []:
    name, _, marker = requirement.partition(";")
    extra = re.search(r"extra\s*==\s*[\x22\x27]([^\x22\x27]+)", marker)
    if extra and extra.group(1) in sys.argv[1:]:
        print(name.strip())' "$@"
}
INPUTS=$(_build_inputs)
WANTED=$(tr ',' '\n' <<<"${EXTRAS:-}" | sed '/^$/d' | sort -u)
HAVE=""
if [ -f "$STAMP" ] && [ "$(head -n1 "$STAMP")" = "$INPUTS" ] && _this_build_loads; then
  HAVE=$(tail -n +2 "$STAMP" | sort -u)
  MISSING=$(comm -23 <(printf '%s\n' "$WANTED" | sed '/^$/d') <(printf '%s\n' "$HAVE" | sed '/^$/d'))
  if [ -n "$MISSING" ]; then
    echo "== the package is installed from this tree already; installing the extras' requirements: $MISSING"
    REQUIREMENTS=$(_extra_requirements $MISSING)
    if [ -n "$REQUIREMENTS" ]; then  # an extra the package does not declare has none
      mapfile -t REQUIREMENTS <<<"$REQUIREMENTS"
      _quiet_pip install --quiet "${REQUIREMENTS[@]}"
    fi
    HAVE=$(printf '%s\n%s\n' "$HAVE" "$MISSING" | sed '/^$/d' | sort -u)
  fi
else
  rm -f "$STAMP"
  _quiet_pip install --quiet -e "$TARGET"
  HAVE=$WANTED
fi
# Fail here, clearly, if the install did not work (-I: not the source tree beside us, the installed package).
.venv/bin/python -I -c "import scrapy_detemplate"
printf '%s\n%s\n' "$INPUTS" "$HAVE" | sed '/^$/d' >"$STAMP"
