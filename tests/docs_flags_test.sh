#!/usr/bin/env bash
# Every flag collide-server has (as its --help lists them) has its row in docs/SERVER.md's flag
# table, and every request limit (a ServiceLimits field: server/service_options.h's
# COLLIDE_SERVICE_LIMITS, each a flag) its row in docs/SECURITY.md's limits table.
# Usage: docs_flags_test.sh <collide-server> <source root>
set -u
server=$1
root=$2
status=0
flags=$("$server" --help 2>&1 | sed -nE 's/^    --([a-z0-9_]+) .*/\1/p')
if [ -z "$flags" ]; then
  echo "docs: no flags in $server --help"
  exit 1
fi
count=0
for flag in $flags; do
  count=$((count + 1))
  if ! grep -qE "^\| [^|]*\`--${flag}\`" "$root/docs/SERVER.md"; then
    echo "docs: --$flag has no row in docs/SERVER.md's flag table"
    status=1
  fi
done
limits=$(sed -n '/^#define COLLIDE_SERVICE_LIMITS/,/^$/p' "$root/server/service_options.h" |
           sed -nE 's/^ *X\([a-z0-9_]+, ([a-z0-9_]+),.*/\1/p')
if [ -z "$limits" ]; then
  echo "docs: no limits in server/service_options.h"
  exit 1
fi
for limit in $limits; do
  if ! echo "$flags" | grep -qx "$limit"; then
    echo "docs: the limit $limit is not a flag of collide-server"
    status=1
  fi
  if ! grep -qE "^\|.*\`--${limit}\`" "$root/docs/SECURITY.md"; then
    echo "docs: --$limit has no row in docs/SECURITY.md's limits table"
    status=1
  fi
done
[ $status -eq 0 ] && echo "docs: $count flags in SERVER.md, $(echo "$limits" | wc -l) limits in SECURITY.md"
exit $status
