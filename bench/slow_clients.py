#!/usr/bin/env python3
"""How long an ordinary request to each of collide-server's HTTP listeners takes while slow
clients hold connections to it.

Starts the given collide-server with /metrics and the viewer on 127.0.0.1 (port 0), opens
--sockets connections to each listener that send a request's header one byte a second (each
one reopened as soon as the server closes it, so that --sockets stay open throughout), and
then, every --interval seconds for --seconds, times a plain GET /metrics and a plain
GET /viewer/api/scenes on new connections (a request that gets no answer in --timeout seconds
counts as the timeout). Prints the time to the complete answer: median and worst, per
listener, plus how many slow connections the server closed.

  bench/slow_clients.py build/server/collide-server --sockets 100
"""

import argparse
import os
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SLOW_REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000 + b"\r\n\r\n"


def wait_for_file(path, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read()
            if text.endswith("\n"):
                return int(text)
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"no {path} within {seconds} s")


class SlowClients(threading.Thread):
    """Keeps `count` connections to each port, each sending one header byte a second."""

    def __init__(self, ports, count):
        super().__init__(daemon=True)
        self.ports = ports
        self.count = count
        self.selector = selectors.DefaultSelector()
        self.sockets = {}  # socket -> (port, bytes sent)
        self.closed_by_server = 0
        self.stop = False

    def open_one(self, port):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        self.sockets[s] = [port, 0]
        self.selector.register(s, selectors.EVENT_READ)

    def close_one(self, s):
        self.selector.unregister(s)
        port = self.sockets.pop(s)[0]
        s.close()
        return port

    def run(self):
        for port in self.ports:
            for _ in range(self.count):
                self.open_one(port)
        next_tick = time.monotonic()
        while not self.stop:
            timeout = max(0.0, next_tick - time.monotonic())
            for key, _ in self.selector.select(timeout):
                s = key.fileobj
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if not data:  # the server closed it (or answered it): reopen
                    self.closed_by_server += 1
                    self.open_one(self.close_one(s))
            if time.monotonic() >= next_tick:
                next_tick += 1.0
                for s, state in list(self.sockets.items()):
                    if state[1] < len(SLOW_REQUEST):
                        try:
                            s.send(SLOW_REQUEST[state[1]:state[1] + 1])
                            state[1] += 1
                        except OSError:
                            pass
        for s in list(self.sockets):
            self.close_one(s)


def timed_get(port, path, timeout):
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(max(0.01, timeout - (time.monotonic() - start)))
            s.sendall(f"GET {path} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
            answer = b""
            while True:
                s.settimeout(max(0.01, timeout - (time.monotonic() - start)))
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
        ok = answer.startswith(b"HTTP/1.1 200") or answer.startswith(b"HTTP/1.0 200")
        return time.monotonic() - start, ok
    except OSError:
        return timeout, False


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("server", help="the collide-server binary")
    parser.add_argument("--sockets", type=int, default=100, help="slow connections per listener")
    parser.add_argument("--seconds", type=float, default=20, help="how long to measure")
    parser.add_argument("--interval", type=float, default=1, help="seconds between requests")
    parser.add_argument("--timeout", type=float, default=8, help="a request's longest wait")
    parser.add_argument("--flag", action="append", default=[], help="another server flag")
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="collide-slow-")
    files = {name: os.path.join(scratch, name) for name in ("port", "metrics", "viewer")}
    server = subprocess.Popen(
        [args.server, "--address=127.0.0.1:0", f"--data_dir={scratch}/data", "--log_level=warn",
         f"--port_file={files['port']}", "--metrics_address=127.0.0.1:0",
         f"--metrics_port_file={files['metrics']}", "--viewer_address=127.0.0.1:0",
         f"--viewer_port_file={files['viewer']}"] + args.flag,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_file(files["port"])
        ports = {"metrics": wait_for_file(files["metrics"]),
                 "viewer": wait_for_file(files["viewer"])}
        paths = {"metrics": "/metrics", "viewer": "/viewer/api/scenes"}
        for name, port in ports.items():
            elapsed, ok = timed_get(port, paths[name], args.timeout)
            print(f"{name}: idle answer in {elapsed * 1000:.1f} ms ({'ok' if ok else 'FAILED'})")
        slow = SlowClients(list(ports.values()), args.sockets)
        slow.start()
        time.sleep(2)  # every slow connection open and started
        times = {name: [] for name in ports}
        failures = {name: 0 for name in ports}
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            for name, port in ports.items():
                elapsed, ok = timed_get(port, paths[name], args.timeout)
                times[name].append(elapsed)
                failures[name] += not ok
            time.sleep(args.interval)
        slow.stop = True
        slow.join()
        print(f"{args.sockets} slow connections per listener, {len(times['metrics'])} requests "
              f"each over {args.seconds:.0f} s; slow connections closed by the server: "
              f"{slow.closed_by_server}")
        for name in ports:
            t = times[name]
            print(f"{name}: median {statistics.median(t) * 1000:.1f} ms, worst "
                  f"{max(t) * 1000:.1f} ms, unanswered within {args.timeout:g} s: {failures[name]}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
