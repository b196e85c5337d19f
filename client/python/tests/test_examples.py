"""The Python example programs (the cross-language scenario, the arena) against a real server."""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
import unittest

import collide.model
from server_process import ServerProcess

SOURCE_DIR = os.environ.get(
    "COLLIDE_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
SCENARIO = os.path.join(SOURCE_DIR, "client", "python", "examples", "scenario.py")
ARENA = os.path.join(SOURCE_DIR, "examples", "arena", "python", "arena.py")


def is_float32_text(value: float) -> bool:
    """True when `value` is the shortest decimal of a float32 (as the clients print them)."""
    as_float32 = struct.unpack("f", struct.pack("f", value))[0]
    return float(collide.model.float32_text(as_float32)) == value


class ExamplesTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ServerProcess()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.close()

    def run_program(self, *args: str) -> str:
        done = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                              timeout=120, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_the_scenario_prints_one_json_line_per_query(self) -> None:
        out = self.run_program(SCENARIO, "--address", self.server.address, "--scene", "sc")
        lines = [json.loads(line) for line in out.splitlines()]
        self.assertEqual([line["query"] for line in lines], ["a", "b", "c", "d", "e"])
        for line in lines:
            self.assertEqual(list(line), ["query", "version", "hits"])
            self.assertEqual(line["version"], 1)
            for hit in line["hits"]:
                self.assertEqual(list(hit), ["body_id", "distance", "point", "normal", "depth",
                                             "start_overlapping"])
                for number in [hit["distance"], hit["depth"], *hit["point"], *hit["normal"]]:
                    self.assertTrue(is_float32_text(number), number)
        hits = {line["query"]: line["hits"] for line in lines}
        ids = {name: [h["body_id"] for h in value] for name, value in hits.items()}
        self.assertEqual(ids, {"a": [5, 1, 2, 3], "b": [4], "c": [1], "d": [2],
                               "e": [5, 1, 2, 3]})
        # Closed forms for the spheres, capsule and axis-aligned box (the rotated box is the
        # C++ engine's business; the cross-language test compares it between clients).
        expected = {
            "a": {5: 5.5, 1: 9.0, 3: 19.5},
            "b": {4: 14.5},
            "c": {1: 8.75},
            "e": {5: 10 - 4.5 - math.sqrt(0.4**2 - 0.3**2),
                  1: 10 - math.sqrt(1.4**2 - 0.8**2),
                  3: 20 - 0.9},
        }
        for name, distances in expected.items():
            for hit in hits[name]:
                if hit["body_id"] in distances:
                    self.assertAlmostEqual(hit["distance"], distances[hit["body_id"]], delta=1e-4)
        self.assertGreater(hits["d"][0]["depth"], 0)
        # The scenario deleted its scene.
        with self.server.client() as client:
            self.assertNotIn("sc", [s.name for s in client.list_scenes()])

    def test_the_arena_runs_its_tick_loop(self) -> None:
        out = self.run_program(ARENA, "--address", self.server.address, "--scene", "arena",
                               "--ticks", "20", "--bodies", "200", "--rays", "20", "--casts",
                               "5", "--lag_ticks", "2", "--quiet")
        self.assertTrue(out.startswith("arena (python): 20 ticks at 60 Hz, 200 bodies"), out)
        self.assertIn("p99", out)


if __name__ == "__main__":
    unittest.main()
