#!/usr/bin/env bash
# Entrypoint of the collide-server image: configuration by environment.
#
# Every environment variable COLLIDE_<NAME>=<value> becomes the flag --<name>=<value> of
# collide-server (<name> lower-cased: COLLIDE_DATA_DIR=/data gives --data_dir=/data), in
# alphabetical order, before the container's arguments; a flag given as an argument wins (for
# a repeated flag, the last value counts). An unknown name stops collide-server with
# "Unknown command line flag". `collide-server --help` lists the flags.
#
# When the first argument does not start with "-" it is a command, run as it is without the
# mapping (for example `collide-health-probe --address=...` or `collide --help`).
set -euo pipefail

if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  exec "$@"
fi

flags=()
while IFS= read -r name; do
  suffix=${name#COLLIDE_}
  if [[ ! $suffix =~ ^[A-Z0-9_]+$ ]]; then
    echo "collide-entrypoint: $name is not COLLIDE_ followed by [A-Z0-9_]" >&2
    exit 2
  fi
  flags+=("--${suffix,,}=${!name}")
done < <(compgen -e | grep '^COLLIDE_' | LC_ALL=C sort || true)

exec collide-server "${flags[@]}" "$@"
