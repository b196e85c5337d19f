#!/usr/bin/env bash
# docker/entrypoint.sh with the real collide-server and collide-health-probe, outside a
# container: COLLIDE_<NAME> variables become --<name> flags (the server listens where
# COLLIDE_ADDRESS says, writes COLLIDE_PORT_FILE, keeps its data in COLLIDE_DATA_DIR), arguments
# follow them and win, an unknown variable stops the server, and a first argument that is not a
# flag runs as a command.
# Usage: entrypoint_test.sh <repository root> <directory of collide-server and the probe>
set -euo pipefail
entrypoint=$1/docker/entrypoint.sh
export PATH="$2:$PATH"
dir=$(mktemp -d "${TMPDIR:-/tmp}/collide-entrypoint-XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Only the variables of each case: the test's own environment may hold other COLLIDE_ names.
clean_env=(env -i "PATH=$PATH" "HOME=${HOME:-/}")

# 1. Configured by environment only; an argument overrides a variable (--log_level).
"${clean_env[@]}" COLLIDE_ADDRESS=127.0.0.1:0 COLLIDE_PORT_FILE="$dir/port" \
  COLLIDE_DATA_DIR="$dir/data" COLLIDE_LOG_LEVEL=off COLLIDE_DURABILITY=none \
  "$entrypoint" --log_level=info >"$dir/out" 2>"$dir/err" &
server_pid=$!
for _ in $(seq 200); do
  [ -s "$dir/port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ ! -s "$dir/port" ]; then
  fail "the server did not write COLLIDE_PORT_FILE: $(cat "$dir/err")"
else
  port=$(cat "$dir/port")
  if ! probe=$(collide-health-probe --address="127.0.0.1:$port" --timeout=5s); then
    fail "the probe did not report SERVING: $probe"
  fi
  [ -d "$dir/data" ] || fail "COLLIDE_DATA_DIR was not used"
  grep -q "durability none" "$dir/err" || fail "COLLIDE_DURABILITY=none was not passed: $(cat "$dir/err")"
  # --log_level=info (the argument) won over COLLIDE_LOG_LEVEL=off: the start-up line is logged.
  grep -q "starting: address 127.0.0.1:0" "$dir/err" || fail "the argument did not override the variable"
  kill -TERM "$server_pid"
  status=0
  wait "$server_pid" || status=$?
  [ $status -eq 0 ] || fail "the server exited $status after SIGTERM (exec'd, so the signal reached it)"
fi
server_pid=""

# 2. An unknown variable is an unknown flag: the server refuses to start.
status=0
"${clean_env[@]}" COLLIDE_ADDRESS=127.0.0.1:0 COLLIDE_DATA_DIR="$dir/data2" COLLIDE_NO_SUCH_FLAG=1 \
  "$entrypoint" >"$dir/out2" 2>&1 || status=$?
[ $status -ne 0 ] || fail "COLLIDE_NO_SUCH_FLAG did not stop the server"
grep -q "no_such_flag" "$dir/out2" || fail "the error does not name the flag: $(cat "$dir/out2")"

# 3. A command runs as it is, without the mapping (the variable would be an unknown probe flag).
status=0
out=$("${clean_env[@]}" COLLIDE_DURABILITY=none "$entrypoint" collide-health-probe \
        --address=127.0.0.1:1 --timeout=1s 2>&1) || status=$?
[ $status -eq 1 ] || fail "the probe command exited $status, not 1: $out"
[[ $out == *"health check failed"* ]] || fail "the command did not run as given: $out"

if [ $failures -gt 0 ]; then
  echo "$failures problem(s) in docker/entrypoint.sh"
  exit 1
fi
echo "docker/entrypoint.sh: variables map to flags, arguments win, commands pass through"
