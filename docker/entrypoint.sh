#!/usr/bin/env bash
# Entrypoint of the collide-server image: configuration by environment.
#
# An environment variable COLLIDE_<NAME>=<value> whose <name> (lower-cased) is a flag of
# collide-server becomes --<name>=<value> (COLLIDE_DATA_DIR=/data gives --data_dir=/data), in
# alphabetical order, before the container's arguments; a flag given as an argument wins (for a
# repeated flag, the last value counts). The server's flags are those `collide-server --helpfull`
# lists. The variables of collide's other programs (CLIENT_VARIABLES: the `collide` CLI's
# COLLIDE_TOKEN) are left alone, so one environment can serve both; any other COLLIDE_ name stops
# the entrypoint as an unknown flag would stop the server (a misspelt flag is not ignored).
#
# When the first argument does not start with "-" it is a command, run as it is without the
# mapping (for example `collide-health-probe --address=...` or `collide --help`).
set -euo pipefail

# COLLIDE_ variables read by collide's clients and not by the server (COLLIDE_ADDRESS, read by the
# CLI too, is also a server flag). tests/docker/entrypoint_test.sh checks this list against the CLI.
CLIENT_VARIABLES=(COLLIDE_TOKEN)

if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  exec "$@"
fi

# The flags collide-server accepts: the "    --<name> (" lines of its --helpfull (which exits 1
# after printing them).
help=$(collide-server --helpfull 2>&1 || true)
declare -A server_flags=()
while IFS= read -r flag; do
  server_flags[$flag]=1
done < <(sed -nE 's/^ {2,6}--([a-z0-9_]+) \(.*/\1/p' <<<"$help")
if [ ${#server_flags[@]} -eq 0 ]; then
  echo "collide-entrypoint: no flags in the output of collide-server --helpfull: $help" >&2
  exit 2
fi

flags=()
while IFS= read -r name; do
  [ -n "$name" ] || continue
  suffix=${name#COLLIDE_}
  if [[ ! $suffix =~ ^[A-Z0-9_]+$ ]]; then
    echo "collide-entrypoint: $name is not COLLIDE_ followed by [A-Z0-9_]" >&2
    exit 2
  fi
  flag=${suffix,,}
  if [ -n "${server_flags[$flag]:-}" ]; then
    flags+=("--$flag=${!name}")
  elif [[ " ${CLIENT_VARIABLES[*]} " != *" $name "* ]]; then
    echo "collide-entrypoint: $name: Unknown command line flag '$flag' of collide-server" \
         "(collide-server --help lists them)" >&2
    exit 2
  fi
done < <(compgen -e | grep '^COLLIDE_' | LC_ALL=C sort || true)

exec collide-server "${flags[@]}" "$@"
