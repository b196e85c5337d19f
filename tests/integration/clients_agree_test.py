#!/usr/bin/env python3
"""Runs the cross-language scenario (client/README.md) through the C++, Python, Node, Go and Java
clients (those given) against one real collide-server and checks that all of them print the same
bytes, and that their answers are the ones the scenario's geometry gives; then runs each with
--numbers on 20,000 float32 values and edge cases, which all must print alike (the scenario's
numbers, in C++'s std::to_chars notation) and as text that reads back as the same float32.

Usage: clients_agree_test.py <collide-server> <name>=<command...> [<name>=<command...> ...]
Each command is split on spaces; `--address` and `--scene` are appended to it.
"""

import json
import os
import random
import shlex
import signal
import struct
import subprocess
import sys
import tempfile
import time

# Hit ids per query, and the distances the geometry gives where they are easy to state (a ray
# along the x axis meets box 5's face at x = -4.5, sphere 1 at x = -1, capsule 3 at x = 9.5; ...).
EXPECTED_IDS = {"a": [5, 1, 2, 3], "b": [4], "c": [1], "d": [2], "e": [5, 1, 2, 3]}
EXPECTED_DISTANCES = {("a", 5): 5.5, ("a", 1): 9.0, ("a", 3): 19.5, ("b", 4): 14.5,
                      ("c", 1): 8.75}


def start_server(server, data_dir):
    port_file = os.path.join(data_dir, "port")
    process = subprocess.Popen(
        [server, "--address=127.0.0.1:0", f"--port_file={port_file}",
         f"--data_dir={os.path.join(data_dir, 'data')}", "--log_level=warn"],
        stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"collide-server exited with {process.returncode}")
        if os.path.exists(port_file):
            with open(port_file) as f:
                text = f.read()
            if text.endswith("\n"):
                return process, int(text)
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("collide-server did not write its port file within 30 s")


def run_client(name, command, port):
    argv = shlex.split(command) + ["--address", f"127.0.0.1:{port}", "--scene",
                                   f"scenario-{name}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"{name}: {argv} exited with {done.returncode}:\n{done.stderr}")
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if [a["query"] for a in answers] != list("abcde"):
        raise AssertionError(f"{name}: expected answers to queries a..e, got:\n{done.stdout}")
    return done.stdout, answers


def number_inputs():
    """float32 bit patterns, as 8 hex digits a line: edge cases (zeros, subnormals, the largest,
    powers of two and ten, ties between two shortest decimals, the notation's switch points)
    and 20,000 random finite ones (seed 33)."""
    edges = [0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 1.17549435e-38, 3.4028235e38, 1.0, 2.0,
             0.5, 0.1, 9.0, 14.5, -7.376075e-07, 1703448.25, 390695.625, 16777216.0,
             16777218.0, 1e-4, 1.5e-5, 0.001, 1e5, 1e6, 123456.0, 1234567.0, 6528615424.0,
             1e21, 1e-7, 1234.5678]
    patterns = [struct.unpack("<I", struct.pack("<f", v))[0] for v in edges]
    patterns += [1 << k for k in range(31)]  # powers of two, subnormal to large
    rng = random.Random(33)
    while len(patterns) < len(edges) + 31 + 20000:
        bits = rng.getrandbits(32)
        if (bits >> 23) & 0xFF != 0xFF:  # not NaN or infinite
            patterns.append(bits)
    return patterns


def check_numbers(clients):
    """Every program prints the same text for each float32, and that text reads back as it."""
    patterns = number_inputs()
    stdin = "".join(f"{bits:08x}\n" for bits in patterns)
    outputs = {}
    for name, command in clients:
        done = subprocess.run(shlex.split(command) + ["--numbers"], input=stdin,
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise AssertionError(f"{name} --numbers exited with {done.returncode}:\n{done.stderr}")
        outputs[name] = done.stdout.splitlines()
        if len(outputs[name]) != len(patterns):
            raise AssertionError(f"{name} --numbers printed {len(outputs[name])} lines for "
                                 f"{len(patterns)} numbers")
    first_name = clients[0][0]
    for i, bits in enumerate(patterns):
        text = outputs[first_name][i]
        back = struct.unpack("<I", struct.pack("<f", float(text)))[0]
        if back != bits:
            raise AssertionError(f"{first_name} printed {bits:08x} as {text}, which reads back as "
                                 f"{back:08x} (seed 33)")
        for name, lines in outputs.items():
            if lines[i] != text:
                raise AssertionError(f"the float32 {bits:08x}: {name} prints {lines[i]}, "
                                     f"{first_name} {text} (seed 33)")
    return len(patterns)


def check_geometry(name, answers):
    for answer in answers:
        query = answer["query"]
        ids = [hit["body_id"] for hit in answer["hits"]]
        if ids != EXPECTED_IDS[query]:
            raise AssertionError(f"{name}: query {query} hit {ids}, expected {EXPECTED_IDS[query]}")
        for hit in answer["hits"]:
            want = EXPECTED_DISTANCES.get((query, hit["body_id"]))
            if want is not None and abs(hit["distance"] - want) > 1e-5:
                raise AssertionError(f"{name}: query {query} body {hit['body_id']} at distance "
                                     f"{hit['distance']}, expected {want}")


def main():
    server = sys.argv[1]
    clients = [arg.split("=", 1) for arg in sys.argv[2:]]
    with tempfile.TemporaryDirectory() as tmp:
        process, port = start_server(server, tmp)
        try:
            results = {name: run_client(name, command, port) for name, command in clients}
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    first_name = clients[0][0]
    first_text, first = results[first_name]
    check_geometry(first_name, first)
    for name, (text, answers) in results.items():
        if answers != first:
            for mine, theirs in zip(answers, first):
                if mine != theirs:
                    raise AssertionError(f"{name} and {first_name} disagree on query "
                                         f"{mine['query']}:\n{mine}\n{theirs}")
        # The same values, and the same bytes: separators, number notation, key order.
        for mine, theirs in zip(text.splitlines(), first_text.splitlines()):
            if mine != theirs:
                raise AssertionError(f"{name} and {first_name} print the same answer differently:"
                                     f"\n{mine}\n{theirs}")
        if text != first_text:
            raise AssertionError(f"{name} and {first_name} print different bytes:\n{text!r}\n"
                                 f"{first_text!r}")
    count = check_numbers(clients)
    print(f"clients agree byte for byte: {', '.join(results)}; "
          f"{sum(len(a['hits']) for a in first)} hits; {count} float32 values")


if __name__ == "__main__":
    main()
