#!/usr/bin/env bash
# `docker compose config` on docker/compose.yaml: Compose's own validation of the file against
# its schema (it needs the Compose CLI plugin, not a running engine). Skipped, with the reason,
# where the plugin is not installed (as on the build machines).
# Usage: compose_config_test.sh <repository root>
set -euo pipefail
if ! command -v docker >/dev/null 2>&1; then
  echo "SKIPPED: no docker command here, so Compose cannot validate docker/compose.yaml"
  exit 77
fi
if ! docker compose version >/dev/null 2>&1; then
  echo "SKIPPED: the docker command has no compose plugin here ('docker compose version' fails)"
  exit 77
fi
docker compose -f "$1/docker/compose.yaml" config --quiet
echo "docker compose config accepts docker/compose.yaml"
