#!/usr/bin/env bash
# docker/entrypoint.sh with the real collide-server and collide-health-probe, outside a
# container: COLLIDE_<NAME> variables become --<name> flags (the server listens where
# COLLIDE_ADDRESS says, writes COLLIDE_PORT_FILE, keeps its data in COLLIDE_DATA_DIR), arguments
# follow them and win, an unknown variable stops the server, the CLI's COLLIDE_TOKEN in the same
# environment is left alone (the server starts), the entrypoint's list of the clients' variables
# agrees with what the CLI reads, and a first argument that is not a flag runs as a command.
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
  grep -q "durability=none" "$dir/err" || fail "COLLIDE_DURABILITY=none was not passed: $(cat "$dir/err")"
  # --log_level=info (the argument) won over COLLIDE_LOG_LEVEL=off: the start-up line is logged.
  grep -q "starting: address=127.0.0.1:0" "$dir/err" || fail "the argument did not override the variable"
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

# 4. The CLI's variables in the same environment: COLLIDE_TOKEN is no server flag and is left
#    alone (it once became --token and stopped the server); COLLIDE_ADDRESS still maps.
"${clean_env[@]}" COLLIDE_ADDRESS=127.0.0.1:0 COLLIDE_PORT_FILE="$dir/port4" \
  COLLIDE_DATA_DIR="$dir/data4" COLLIDE_TOKEN=secret "$entrypoint" >"$dir/out4" 2>"$dir/err4" &
server_pid=$!
for _ in $(seq 200); do
  [ -s "$dir/port4" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ ! -s "$dir/port4" ]; then
  fail "with COLLIDE_TOKEN set the server did not start: $(cat "$dir/err4")"
else
  port=$(cat "$dir/port4")
  if ! probe=$(collide-health-probe --address="127.0.0.1:$port" --timeout=5s); then
    fail "with COLLIDE_TOKEN set the probe did not report SERVING: $probe"
  fi
  # (The start-up line lists token_file, empty; the token itself must appear nowhere.)
  if grep -qE "secret|--token[^_]" "$dir/err4"; then
    fail "the server was told about the token: $(cat "$dir/err4")"
  fi
  kill -TERM "$server_pid"
  status=0
  wait "$server_pid" || status=$?
  [ $status -eq 0 ] || fail "the server exited $status after SIGTERM"
fi
server_pid=""

# 5. The entrypoint's CLIENT_VARIABLES are exactly the COLLIDE_ variables the CLI reads that are no
#    server flag (so a variable the CLI gains is not mistaken for a misspelt flag, and the list
#    names nothing the server would take).
server_flags=$({ collide-server --helpfull 2>&1 || true; } | sed -nE 's/^ {2,6}--([a-z0-9_]+) \(.*/\1/p' | sort)
[ -n "$server_flags" ] || fail "no flags in collide-server --helpfull"
cli_only=()
while IFS= read -r name; do
  flag=${name#COLLIDE_}
  grep -qx "${flag,,}" <<<"$server_flags" || cli_only+=("$name")
done < <(grep -rhoE 'EnvOr\("COLLIDE_[A-Z0-9_]+"|getenv\("COLLIDE_[A-Z0-9_]+"' "$1/client/cli" |
         grep -oE 'COLLIDE_[A-Z0-9_]+' | LC_ALL=C sort -u)
listed=$(sed -nE 's/^CLIENT_VARIABLES=\((.*)\)$/\1/p' "$entrypoint" | tr ' ' '\n' | LC_ALL=C sort)
[ "$listed" = "$(printf '%s\n' "${cli_only[@]}" | LC_ALL=C sort)" ] ||
  fail "entrypoint CLIENT_VARIABLES ($listed) is not the CLI's non-server variables (${cli_only[*]})"

if [ $failures -gt 0 ]; then
  echo "$failures problem(s) in docker/entrypoint.sh"
  exit 1
fi
echo "docker/entrypoint.sh: variables map to flags, arguments win, the CLI's variables are left alone, commands pass through"
