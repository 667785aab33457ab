#!/usr/bin/env bash
# Shoal's main job on its embedded default: bring up examples/three-tier.yaml on real local
# processes (SQLite + the local provider), then ask one of its web nodes who it is.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
"$BIN/shoal" apply examples/three-tier.yaml
addr=$("$BIN/shoal" describe cluster shop -o json | "$BIN/python" -c \
  'import json,sys; print(next(n["address"] for n in json.load(sys.stdin)["nodes"] if n["name"] == "web-1"))')
echo
echo "\$ curl http://$addr/"
if command -v curl >/dev/null; then curl -s "http://$addr/"; else
  "$BIN/python" -c 'import sys,urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "http://$addr/"
fi
echo
# The commands above started this home's background Shoal; it also serves the dashboard.
status=$("$BIN/shoal" server status)
url=$(sed -n 's/.* Shoal at \([^ ]*\) .*/\1/p' <<<"$status" | head -1)
home=$(sed -n 's/.*; data in \(.*\)$/\1/p' <<<"$status" | head -1)
echo "Dashboard: $url/ui (sign in with the admin token in $home/admin-token)"
echo "The nodes keep running, kept as declared by the background Shoal (shoal server stop ends it)."
echo "Tear them down with: $BIN/shoal delete shop --wait"
