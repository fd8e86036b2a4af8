# Sourced by the scripts: a project virtualenv in .venv with the package installed.
# Needs only a Python >= 3.10 with venv and the package registries.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[${EXTRAS:-}]" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import scrapy_detemplate" # fail here, clearly, if the install did not work
