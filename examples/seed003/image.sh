#!/usr/bin/env bash
# Makes the example's image without a registry: Debian's static busybox and its applet links as
# a root filesystem, imported once into the local provider's image store of $SHOAL_HOME
# (`shoal image import`, admin). Needs `apt-get install -y podman runc busybox-static`.
set -euo pipefail
shoal=${SHOAL:-.venv/bin/shoal}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/tmp" "$root/www"
cp /usr/bin/busybox "$root/bin/busybox"
for applet in sh httpd echo mkdir sleep cat ls; do ln -s busybox "$root/bin/$applet"; done
echo busybox >"$root/www/index.html"
"$shoal" image import "$root" --name localhost/busybox:shoal
