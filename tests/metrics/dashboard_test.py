"""The Grafana dashboard (docs/grafana/collide-dashboard.json) against a real server and Prometheus.

Starts collide-server with --metrics_address on port 0 and Debian's `prometheus` on a free port
scraping it every second, runs a little traffic, waits for a scrape, and checks that the
dashboard is valid JSON, that every metric its queries and template variables name is in the
server's exposition, and that Prometheus's query API accepts every query (with the dashboard's
variables given values). The exact counts are checked by integration/Prometheus.

Environment (ctest sets it): COLLIDE_SERVER (the binary), PYTHONPATH (the client package),
COLLIDE_SOURCE_DIR, PROMETHEUS (the prometheus binary).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request
from typing import List, Optional, Set

SOURCE_DIR = os.environ.get("COLLIDE_SOURCE_DIR", "")
sys.path.insert(0, os.path.join(SOURCE_DIR, "client", "python", "tests"))

from collide import Body, Pose, Raycast, Sphere  # noqa: E402
from server_process import ServerProcess  # noqa: E402

DASHBOARD = os.path.join(SOURCE_DIR, "docs", "grafana", "collide-dashboard.json")

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout: float = 10) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


class Prometheus:
    """A prometheus process scraping `target` every second, its storage in a temporary dir."""

    def __init__(self, binary: str, target: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="collide-prom-")
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: collide\n"
                    f"    static_configs:\n      - targets: ['{target}']\n")
        self._log = open(os.path.join(self.dir, "prometheus.log"), "wb")
        self.process: Optional[subprocess.Popen] = None
        # A free port can be taken between the probe and prometheus's bind: pick another then.
        for _ in range(5):
            self.port = free_port()
            self.process = subprocess.Popen(
                [binary, f"--config.file={config}",
                 f"--storage.tsdb.path={os.path.join(self.dir, 'data')}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                stdout=self._log, stderr=self._log)
            if self._wait_ready():
                return
            self.process.kill()
            self.process.wait()
            if "address already in use" not in self.logs():
                break
        raise RuntimeError(f"prometheus did not start: {self.logs()}")

    def _wait_ready(self) -> bool:
        give_up = time.monotonic() + 30
        while time.monotonic() < give_up:
            if self.process.poll() is not None:
                return False
            try:
                http_get(f"http://127.0.0.1:{self.port}/-/ready", timeout=1)
                return True
            except OSError:
                time.sleep(0.1)
        return False

    def logs(self) -> str:
        self._log.flush()
        with open(os.path.join(self.dir, "prometheus.log"), encoding="utf-8",
                  errors="replace") as f:
            return f.read()

    def api(self, path: str, **params: str) -> dict:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        try:
            body = http_get(url)
        except urllib.error.HTTPError as e:  # 400 for a bad expression: the body says why
            body = e.read()
        return json.loads(body)

    def query(self, expr: str, at: Optional[float] = None) -> List[dict]:
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        answer = self.api("query", **params)
        if answer.get("status") != "success":
            raise AssertionError(f"{expr}: {answer}")
        return answer["data"]["result"]

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def metric_names(expr: str) -> Set[str]:
    """The metric names an expression reads (identifiers followed by `{`, `[` or used bare)."""
    without_strings = re.sub(r'"[^"]*"', '""', expr)
    without_labels = re.sub(r"\{[^}]*\}", "{}", without_strings)
    without_ranges = re.sub(r"\[[^\]]*\]", "[]", without_labels)
    words = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", without_ranges))
    keywords = {"sum", "by", "without", "rate", "irate", "increase", "histogram_quantile",
                "time", "avg", "max", "min", "count", "le", "on", "ignoring", "group_left",
                "group_right", "and", "or", "unless", "label_values", "topk", "bottomk",
                "offset", "bool", "delta", "deriv", "abs", "clamp_min", "clamp_max"}
    grouping = set()
    for labels in re.findall(r"(?:by|without)\s*\(([^)]*)\)", without_ranges):
        grouping.update(l.strip() for l in labels.split(","))
    return {w for w in words if w not in keywords and w not in grouping}


def exposition_families(text: str) -> Set[str]:
    """The series names of a text exposition, with histogram families under their base names."""
    names = set()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
        names.add(name)
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix):
                names.add(name[: -len(suffix)])
    return names


class DashboardTest(unittest.TestCase):
    def setUp(self) -> None:
        prometheus = os.environ.get("PROMETHEUS", "")
        if not prometheus or not os.access(prometheus, os.X_OK):
            self.fail("set PROMETHEUS to the prometheus binary (scripts/setup.sh installs it)")
        self.metrics_dir = tempfile.mkdtemp(prefix="collide-metrics-")
        port_file = os.path.join(self.metrics_dir, "metrics_port")
        self.server = ServerProcess(extra_flags=["--metrics_address=127.0.0.1:0",
                                                 f"--metrics_port_file={port_file}"])
        with open(port_file, encoding="utf-8") as f:
            self.metrics_port = int(f.read().strip())
        self.client = self.server.client()
        self.prometheus = Prometheus(prometheus, f"127.0.0.1:{self.metrics_port}")

    def tearDown(self) -> None:
        self.client.close()
        self.prometheus.close()
        self.server.close()
        shutil.rmtree(self.metrics_dir, ignore_errors=True)

    def test_every_dashboard_query_is_accepted_and_names_only_exposed_metrics(self):
        # Some traffic, so that the rpc and query series have samples.
        self.client.create_scene("dash")
        self.client.upsert_bodies("dash", [Body(1, Sphere(0.5), Pose((2, 0, 0)))])
        self.client.raycast("dash", Raycast((-5, 0, 0), (1, 0, 0), 100))
        started = time.time()
        give_up = time.monotonic() + 30
        while True:
            up = self.prometheus.query('timestamp(up{job="collide"})')
            if up and float(up[0]["value"][1]) > started:
                at = float(up[0]["value"][1])
                break
            self.assertLess(time.monotonic(), give_up, "prometheus scraped nothing")
            time.sleep(0.2)
        self.assertEqual(float(self.prometheus.query('up{job="collide"}', at)[0]["value"][1]), 1)

        # The dashboard: valid JSON, every query accepted by Prometheus, every metric it names
        # present in the exposition.
        exposition = http_get(f"http://127.0.0.1:{self.metrics_port}/metrics").decode()
        families = exposition_families(exposition)
        with open(DASHBOARD, encoding="utf-8") as f:
            dashboard = json.load(f)
        exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
        self.assertGreater(len(exprs), 20)
        for variable in dashboard["templating"]["list"]:
            if variable["type"] == "query":
                # label_values(metric, label): the metric must exist.
                names = {re.match(r"label_values\((\w+),", variable["query"]).group(1)}
                self.assertTrue(names <= families, f"{variable['query']}: {names - families}")
        for expr in exprs:
            names = metric_names(expr)
            self.assertTrue(names, expr)
            self.assertTrue(names <= families, f"{expr}: not exposed: {names - families}")
            concrete = (expr.replace("$__rate_interval", "1m").replace("$instance", ".*")
                        .replace("$scene", ".*"))
            self.prometheus.query(concrete, at)  # raises on a bad expression

    def test_the_documented_alert_rules_copy_as_they_are_and_name_exposed_metrics(self):
        # docs/SERVER.md's rules block, taken from the Markdown source as a reader copies it.
        with open(os.path.join(SOURCE_DIR, "docs", "SERVER.md"), encoding="utf-8") as f:
            text = f.read()
        section = text[text.index("### What to alert on"):]
        rules = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
        path = os.path.join(self.metrics_dir, "rules.yml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(rules)
        promtool = os.path.join(os.path.dirname(os.environ["PROMETHEUS"]), "promtool")
        checked = subprocess.run([promtool, "check", "rules", path], capture_output=True,
                                 text=True, timeout=60)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        exposition = http_get(f"http://127.0.0.1:{self.metrics_port}/metrics").decode()
        families = exposition_families(exposition) | {"up"}
        exprs = re.findall(r"^\s+expr: (.*?)(?:\s+#.*)?$", rules, re.M)
        self.assertGreaterEqual(len(exprs), 10)
        for expr in exprs:
            names = metric_names(expr)
            self.assertTrue(names <= families, f"{expr}: not exposed: {names - families}")


if __name__ == "__main__":
    unittest.main()
