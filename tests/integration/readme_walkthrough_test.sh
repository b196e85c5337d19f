#!/usr/bin/env bash
# Runs the README's walkthrough against a fresh collide-server: the `collide ...` lines of the
# ```sh blocks between <!-- walkthrough:start --> and <!-- walkthrough:end -->, in order, each
# block's output compared with the ```text block that follows it, and the final raycast checked
# to name the expected body and distance.
#   readme_walkthrough_test.sh <collide-server> <collide> <README.md>
set -euo pipefail
server=$1
cli=$2
readme=$3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/collide-walkthrough-XXXXXX")
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 200); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "readme walkthrough: $*" >&2
  exit 1
}

# The walkthrough's blocks, one file each: NN.sh (commands) and NN.text (expected output).
awk -v dir="$tmp" '
  /<!-- walkthrough:start -->/ { inside = 1; next }
  /<!-- walkthrough:end -->/ { inside = 0; next }
  !inside { next }
  /^```sh[[:space:]]*$/ { n++; file = sprintf("%s/%02d.sh", dir, n); printf "" > file; next }
  /^```text[[:space:]]*$/ { file = sprintf("%s/%02d.text", dir, n); printf "" > file; next }
  /^```[[:space:]]*$/ { file = ""; next }
  file != "" { print >> file }
' "$readme"
ls "$tmp"/*.sh >/dev/null 2>&1 || fail "no \`\`\`sh block between the walkthrough markers of $readme"

"$server" --address=127.0.0.1:0 --port_file="$tmp/port" --data_dir="$tmp/data" \
  --log_level=warn >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
  if [ -s "$tmp/port" ]; then break; fi
  kill -0 "$server_pid" 2>/dev/null || fail "collide-server exited: $(cat "$tmp/server.log")"
  sleep 0.1
done
[ -s "$tmp/port" ] || fail "collide-server wrote no port file within 20 s"
export COLLIDE_ADDRESS="127.0.0.1:$(tr -d '[:space:]' <"$tmp/port")"

# Paths in the commands (an OBJ file) are relative to the README's folder, the repository root.
cd "$(dirname "$readme")"
last_command=
last_output=
for block in "$tmp"/*.sh; do
  output="${block%.sh}.out"
  : >"$output"
  while IFS= read -r line; do
    [ -n "${line// /}" ] || continue
    case "$line" in
      "collide "*) ;;
      *) fail "not a collide command in the walkthrough: $line" ;;
    esac
    read -ra words <<<"$line"
    echo "\$ $line"
    if ! "$cli" "${words[@]:1}" >"$tmp/one.out" 2>"$tmp/one.err"; then
      cat "$tmp/one.err" >&2
      fail "\"$line\" failed"
    fi
    cat "$tmp/one.out"
    cat "$tmp/one.out" >>"$output"
    last_command=$line
    last_output=$(cat "$tmp/one.out")
  done <"$block"
  expected="${block%.sh}.text"
  if [ -f "$expected" ] && ! diff -u "$expected" "$output" >&2; then
    fail "the output of $(basename "$block" .sh) differs from the README's (above: - README, + got)"
  fi
done

# The final command casts a ray and hits the ball, moved to z = 8, at distance 7.5.
case "$last_command" in
  "collide raycast "*) ;;
  *) fail "the walkthrough should end with a raycast, not: $last_command" ;;
esac
grep -q "^  body 1  distance 7.5  " <<<"$last_output" ||
  fail "the final raycast should hit body 1 at distance 7.5, got: $last_output"
echo "readme walkthrough: ok"
