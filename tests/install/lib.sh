# Shared by the install tests (sourced): a temporary directory, collide-server started on port 0,
# and the clean-up that stops it. The sourcing script sets `test_name` first and, when it has
# more to undo, defines `extra_cleanup`, which runs before the directory is removed.

tmp=$(mktemp -d "${TMPDIR:-/tmp}/collide-${test_name// /-}-XXXXXX")
server_pid=

# SIGTERM, then SIGKILL after 10 s, to the server started by start_server (if it still runs).
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 200); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=
}

cleanup() {
  stop_server
  if declare -F extra_cleanup >/dev/null; then extra_cleanup; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "$test_name: $*" >&2
  exit 1
}
step() { echo "== $*"; }

# start_server PORT_FILE LOG COMMAND...: runs COMMAND (a collide-server given
# --port_file=PORT_FILE) in the background, waits up to 20 s for the port file, and sets
# server_pid and address (127.0.0.1:port).
start_server() {
  local port_file=$1 log=$2
  shift 2
  "$@" >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 200); do
    if [ -s "$port_file" ]; then break; fi
    kill -0 "$server_pid" 2>/dev/null || fail "collide-server exited: $(cat "$log")"
    sleep 0.1
  done
  [ -s "$port_file" ] || fail "collide-server wrote no port file within 20 s"
  address="127.0.0.1:$(tr -d '[:space:]' <"$port_file")"
}
