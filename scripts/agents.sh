#!/usr/bin/env bash
# Installs Heat's real in-guest agent chain for the local provider and the tests, reproducibly,
# from PyPI: os-collect-config, os-refresh-config and os-apply-config into their own virtualenv
# (they bring OpenStack clients Shoal does not want in its own), and heat-agents' hooks, which
# ship only in its sdist (each image build copies them out of the source tree), extracted into
# one directory laid out like a guest's: hooks/<group>, bin/heat-config-notify, the
# os-refresh-config scripts and the os-apply-config templates. Nothing is vendored in the repo.
#
# Usage: scripts/agents.sh [VENV]   (default .venv; installs into VENV/agents and
#                                    VENV/share/heat-agents)
set -euo pipefail

OCC=os-collect-config==14.1.0
ORC=os-refresh-config==14.1.0
OAC=os-apply-config==14.1.0
HEAT_AGENTS_VERSION=13.0.0
# The `ansible` hook's tool, so a second hook runs for real (the others need daemons or tools
# this machine has not: docker, puppet, salt, chef).
ANSIBLE=ansible-core==2.19.14
# The `docker-compose` hook's tool, talking the Docker API to the node's podman socket
# (docs/containers.md says why this one and not podman-compose). It has its own virtualenv:
# it needs docker-py 6 and requests < 2.32, and PyYAML 5 (built with Cython < 3), none of which
# the agents' own venv wants.
COMPOSE="docker-compose==1.29.2 docker==6.1.3 requests==2.31.0"

venv=${1:-.venv}
agents="$venv/agents"
compose="$venv/agents-compose"
share="$venv/share/heat-agents"
py=${PY:-python3}

rm -rf "$agents" "$share" "$compose"
"$py" -m venv "$agents"
"$agents/bin/pip" install --quiet --upgrade pip
# PyYAML and requests: imported by heat-config, its hooks and heat-config-notify.
"$agents/bin/pip" install --quiet "$OCC" "$ORC" "$OAC" "$ANSIBLE" PyYAML requests

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv "$compose"
echo 'cython<3' >"$tmp/build-constraints.txt"
PIP_CONSTRAINT="$tmp/build-constraints.txt" "$compose/bin/pip" install --quiet $COMPOSE
"$agents/bin/pip" download --quiet --no-deps --no-binary :all: \
  "heat-agents==$HEAT_AGENTS_VERSION" -d "$tmp"
tar -xzf "$tmp/heat_agents-$HEAT_AGENTS_VERSION.tar.gz" -C "$tmp"
src="$tmp/heat_agents-$HEAT_AGENTS_VERSION"

mkdir -p "$share/hooks" "$share/bin"
# What each element's install.d does on an image: hook-<group>.py becomes hooks/<group>.
for hook in "$src"/heat-config-*/install.d/hook-*.py; do
  group=$(basename "$hook" .py)
  install -m 0755 "$hook" "$share/hooks/${group#hook-}"
done
install -m 0755 "$src/heat-config/bin/heat-config-notify" "$share/bin/heat-config-notify"
install -m 0755 "$src/heat-config/bin/heat-config-rebuild-deployed" \
  "$share/bin/heat-config-rebuild-deployed"
cp -r "$src/heat-config/os-refresh-config" "$share/os-refresh-config"
# The container hooks' own os-refresh-config scripts: docker-compose's writes each
# deployment's docker-compose.yml (and kills removed projects), kubelet's the Pod manifests.
for element in docker-compose kubelet; do
  install -m 0755 "$src/heat-config-$element/os-refresh-config/configure.d/50-heat-config-$element" \
    "$share/os-refresh-config/configure.d/"
done
cp -r "$src/heat-config/os-apply-config" "$share/os-apply-config"
chmod 0755 "$share"/os-refresh-config/configure.d/*
echo "$HEAT_AGENTS_VERSION" >"$share/VERSION"
touch "$agents/.installed"
