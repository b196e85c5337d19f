#!/usr/bin/env bash
# bench/update_phases.py on a log of known lines: it keeps the rpc and op count asked for, and
# prints each phase's median, percentiles and largest value; it fails on a log without a line.
# Usage: update_phases_test.sh <source root>
set -u
script=$1/bench/update_phases.py
python=/usr/bin/python3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{
  echo '[2026-11-30 14:00:00.000] [collide] [info] created scene "arena"'
  for i in 1 2 3 4 5 6 7 8 9 10; do
    echo "[2026-11-30 14:00:0$((i % 10)).000] [collide] [warning] slow update: rpc UpdateStream, scene \"arena\", 10000 ops, version $i, $i.000 ms (parse 0.$i, convert 0.100, writer wait 0.000, validate 0.200, log 0.200, apply $i.500, observers 0.100, acknowledgement 0.050)"
  done
  # Not counted: another rpc, a small batch, a refused one of another rpc.
  echo '[2026-11-30 14:00:11.000] [collide] [warning] slow update: rpc UpsertBodies, scene "arena", 10000 ops, version 11, 99.000 ms (parse 0.000, convert 9.000, writer wait 0.000, validate 0.200, log 0.200, apply 80.000, observers 0.100, acknowledgement 9.500)'
  echo '[2026-11-30 14:00:12.000] [collide] [warning] slow update: rpc UpdateStream, scene "arena", 10 ops, version 12, 50.000 ms (parse 0.100, convert 0.100, writer wait 0.000, validate 0.200, log 0.200, apply 49.000, observers 0.100, acknowledgement 0.300)'
} >"$dir/log"
out=$("$python" "$script" "$dir/log" --rpc UpdateStream --min_ops 1000) || { echo "failed: $out"; exit 1; }
status=0
expect() {
  if ! grep -qxE "$1" <<<"$out"; then
    echo "expected a line matching: $1"
    status=1
  fi
}
expect '10 writes of rpc UpdateStream \(at least 1000 ops\), milliseconds'
expect 'apply +5\.500 +9\.500 +9\.500 +10\.500  10'
expect 'parse +0\.400 +0\.800 +0\.800 +0\.900  10'
expect 'acknowledgement +0\.050 +0\.050 +0\.050 +0\.050  10'
expect 'total +5\.000 +9\.000 +9\.000 +10\.000  10'
# The phases in the order logged, the total last.
order=$(sed -n '3,$p' <<<"$out" | awk '{print $1}' | tr '\n' ' ')
[ "$order" = "parse convert writer validate log apply observers acknowledgement total " ] ||
  { echo "phase order: $order"; status=1; }
if "$python" "$script" "$dir/log" --rpc RemoveBodies >/dev/null 2>&1; then
  echo "a log without a RemoveBodies line must fail"
  status=1
fi
[ $status -eq 0 ] || echo "$out"
exit $status
