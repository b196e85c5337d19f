#!/usr/bin/env python3
"""Where collide-server's writes spent their time, from its slow-update lines.

Reads a server log written with --slow_update_ms (0.000001 logs every write that reaches the
store) and prints, per phase of the lines (parse, convert, writer wait, validate, log, apply,
observers, acknowledgement, and the total), the median, the 90th and 99th percentiles and the
largest value in milliseconds, over the lines of one rpc and at least --min_ops operations.

  collide-server --slow_update_ms=0.000001 ... 2> server.log
  bench/update_phases.py server.log --rpc UpdateStream --min_ops 1000
"""

import argparse
import re
import sys

LINE = re.compile(r'slow update: rpc (\w+), scene "[^"]*", (\d+) ops, ([^,]+), ([0-9.]+) ms \((.*)\)$')


def percentile(values, p):
    """The value at rank p (0 to 1) of the sorted values, nearest rank below."""
    ordered = sorted(values)
    return ordered[int(p * (len(ordered) - 1))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="the server's log (stderr)")
    parser.add_argument("--rpc", default="UpdateStream", help="the rpc whose lines count")
    parser.add_argument("--min_ops", type=int, default=0, help="only writes of this many ops or more")
    args = parser.parse_args()

    phases = {}
    order = []
    count = 0
    with open(args.log, encoding="utf-8", errors="replace") as log:
        for line in log:
            match = LINE.search(line.rstrip("\n"))
            if match is None or match.group(1) != args.rpc or int(match.group(2)) < args.min_ops:
                continue
            count += 1
            values = [("total", float(match.group(4)))]
            for part in match.group(5).split(", "):
                name, _, value = part.rpartition(" ")
                values.append((name, float(value)))
            for name, value in values:
                if name not in phases:
                    phases[name] = []
                    order.append(name)
                phases[name].append(value)
    if count == 0:
        print(f"no slow-update lines of rpc {args.rpc} with at least {args.min_ops} ops", file=sys.stderr)
        return 1
    print(f"{count} writes of rpc {args.rpc} (at least {args.min_ops} ops), milliseconds")
    print(f"{'phase':16s} {'p50':>8s} {'p90':>8s} {'p99':>8s} {'max':>8s}  writes")
    for name in order[1:] + order[:1]:
        values = phases[name]
        print(f"{name:16s} {percentile(values, 0.5):8.3f} {percentile(values, 0.9):8.3f} "
              f"{percentile(values, 0.99):8.3f} {max(values):8.3f}  {len(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
