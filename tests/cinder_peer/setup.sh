#!/bin/sh
# Creates a venv with real Cinder 29.0.0 (same OpenStack cycle as nova 34.0.0).
# serve.py needs the cinder wheel plus `fixtures` (cinder/tests/fake_driver.py
# imports cinder/tests/unit/utils.py, which imports it); SQLAlchemy is pinned
# below 2.1 like the nova peer venv.
# Usage: setup.sh [VENV_DIR]   (default: /tmp/cinder-venv)
# ~20-30 s with a warm pip cache, ~320 MB.
set -e
venv=${1:-/tmp/cinder-venv}
start=$(date +%s)
log=$(mktemp)
pipq() {
    "$venv/bin/pip" install -q "$@" >"$log" 2>&1 || { cat "$log"; exit 1; }
}
python3 -m venv "$venv"
pipq --upgrade pip wheel setuptools
pipq cinder==29.0.0 fixtures "SQLAlchemy<2.1"
rm -f "$log"
# fail early if the fake driver or the paste config is missing
"$venv/bin/python" -W ignore -c "import cinder.tests.fake_driver" 2>/dev/null
test -f "$venv/etc/cinder/api-paste.ini"
echo "ok: $venv $(du -sh "$venv" | cut -f1) in $(( $(date +%s) - start )) s"
