"""The Python client's unary rpcs and query streams against a real collide-server."""

from __future__ import annotations

import math
import random
import signal
import threading
import unittest

import grpc

import collide
from collide import (Body, BodyKind, Box, Capsule, CollideError, Durability, Filter, Mode,
                     Overlap, PointQuery, Pose, Quat, Query, Raycast, SceneOptions, Sphere,
                     SphereCast, Vec3)
import oracle
from server_process import ServerProcess, ServerTestCase


def random_spheres(rng: random.Random, count: int):
    """[(id, center, radius)] scattered in a 40 m cube."""
    return [(i + 1, (rng.uniform(-20, 20), rng.uniform(-20, 20), rng.uniform(-20, 20)),
             rng.uniform(0.2, 2.0)) for i in range(count)]


def sphere_bodies(spheres):
    return [Body(i, Sphere(r), Pose(c)) for i, c, r in spheres]


class ClientTest(ServerTestCase):
    """Each test uses its own scene."""

    def assertRaisesCode(self, code: grpc.StatusCode, path: str):
        """A context manager checking a CollideError's code and that its message starts with
        `path` followed by ': '."""
        test = self

        class Check:
            def __enter__(self):
                return self

            def __exit__(self, exc_type, exc, traceback):
                test.assertIsNotNone(exc_type, f"no error, expected {code.name} {path}")
                test.assertTrue(issubclass(exc_type, CollideError), f"{exc_type}: {exc}")
                test.assertEqual(exc.code, code, exc.message)
                test.assertTrue(exc.message.startswith(path + ": "), exc.message)
                test.assertEqual(exc.field_path, path)
                return True

        return Check()

    def test_scenes_are_created_listed_read_and_deleted(self) -> None:
        options = SceneOptions(fat_margin=0.25, max_bodies=500, durability=Durability.NONE,
                               history_ticks=8)
        info = self.client.create_scene("scenes-a", options)
        self.assertEqual(info.name, "scenes-a")
        self.assertEqual(info.options, options)
        self.assertEqual(info.stats.version, 0)
        self.client.create_scene("scenes-b")
        with self.assertRaisesCode(grpc.StatusCode.ALREADY_EXISTS, "scene"):
            self.client.create_scene("scenes-a")
        names = [s.name for s in self.client.list_scenes()]
        self.assertIn("scenes-a", names)
        self.assertIn("scenes-b", names)
        self.assertEqual(names, sorted(names))
        got = self.client.get_scene("scenes-b")
        self.assertEqual(got.options.fat_margin, 0.10000000149011612)
        # Printed as the float32 it is: what was written, not the float32's exact expansion.
        self.assertEqual(repr(got.options.fat_margin), "0.1")
        self.assertIn("fat_margin=0.1,", repr(got.options))
        self.assertEqual(f"{got.options.fat_margin}", "0.1")
        self.assertEqual(got.stats.body_count, 0)
        self.client.delete_scene("scenes-a")
        with self.assertRaisesCode(grpc.StatusCode.NOT_FOUND, "scene"):
            self.client.get_scene("scenes-a")
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT, "options.fat_margin"):
            self.client.create_scene("scenes-c", SceneOptions(fat_margin=-1))

    def test_bodies_round_trip_with_every_property(self) -> None:
        scene = "bodies"
        self.client.create_scene(scene)
        half_turn_z = Quat(0, 0, math.sqrt(0.5), math.sqrt(0.5))
        bodies = [
            Body(7, Sphere(1.5), Pose(Vec3(1, 2, 3))),
            Body(8, Box((1, 0.5, 2)), Pose((5, 0, 0), half_turn_z), category=2, mask=6,
                 user_data=2**63 + 5),
            Body(9, Capsule(0.5, 1.0), Pose((10, 0, 0)), kind=BodyKind.STATIC),
        ]
        written = self.client.upsert_bodies(scene, bodies)
        self.assertEqual(written.version, 1)
        self.assertTrue(written.durable)
        got = self.client.get_bodies(scene, [9, 42, 7])
        self.assertEqual(got.version, 1)
        self.assertEqual([b.id for b in got.bodies], [9, 7])
        self.assertEqual(got.missing_ids, [42])
        everything = self.client.get_bodies(scene)
        self.assertEqual([b.id for b in everything.bodies], [7, 8, 9])
        box = everything.bodies[1]
        self.assertEqual(box.shape, Box(Vec3(1, 0.5, 2)))
        self.assertEqual(box.pose.position, Vec3(5, 0, 0))
        self.assertAlmostEqual(box.pose.rotation.z, math.sqrt(0.5), places=6)
        self.assertEqual((box.category, box.mask, box.user_data), (2, 6, 2**63 + 5))
        self.assertEqual(everything.bodies[0].category, 1)  # the default
        self.assertEqual(everything.bodies[2].kind, BodyKind.STATIC)
        self.assertEqual(everything.bodies[2].shape, Capsule(0.5, 1.0))
        removed = self.client.remove_bodies(scene, [8])
        self.assertEqual(removed.version, 2)
        self.assertEqual(self.client.get_scene(scene).stats.body_count, 2)
        with self.assertRaisesCode(grpc.StatusCode.NOT_FOUND, "ids[1]"):
            self.client.remove_bodies(scene, [7, 8])
        self.assertEqual(self.client.get_scene(scene).stats.version, 2)

    def test_bad_input_is_rejected_with_field_paths(self) -> None:
        scene = "bad-input"
        self.client.create_scene(scene)
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT,
                                   "bodies[1].shape.sphere.radius"):
            self.client.upsert_bodies(scene, [Body(1, Sphere(1)), Body(2, Sphere(-1))])
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT, "bodies[0].pose.rotation"):
            self.client.upsert_bodies(scene, [Body(1, Sphere(1), Pose((0, 0, 0), (0, 0, 0, 0)))])
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT, "bodies[1].id"):
            self.client.upsert_bodies(scene, [Body(1, Sphere(1)), Body(1, Sphere(2))])
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT, "ray.direction"):
            self.client.raycast(scene, Raycast((0, 0, 0), (0, 0, 0), 10))
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT, "ray.max_distance"):
            self.client.raycast(scene, Raycast((0, 0, 0), (1, 0, 0), -1))
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT, "cast.radius"):
            self.client.sphere_cast(scene, SphereCast((0, 0, 0), (1, 0, 0), 10, -0.5))
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT, "overlap.pose.rotation"):
            self.client.overlap(scene, Overlap(Sphere(1), Pose((0, 0, 0), (0, 0, 0, 2))))
        with self.assertRaisesCode(grpc.StatusCode.INVALID_ARGUMENT, "max_hits"):
            self.client.raycast(scene, Raycast((0, 0, 0), (1, 0, 0), 1), mode=Mode.ALL,
                                max_hits=1_000_000)
        with self.assertRaisesCode(grpc.StatusCode.NOT_FOUND, "scene"):
            self.client.raycast("no-such-scene", Raycast((0, 0, 0), (1, 0, 0), 1))
        self.assertEqual(self.client.get_scene(scene).stats.version, 0)

    def test_raycasts_and_sphere_casts_match_brute_force(self) -> None:
        scene = "casts"
        self.client.create_scene(scene)
        rng = random.Random(1234)
        spheres = random_spheres(rng, 300)
        self.client.upsert_bodies(scene, sphere_bodies(spheres))
        compared = 0
        for _ in range(60):
            origin = (rng.uniform(-25, 25), rng.uniform(-25, 25), rng.uniform(-25, 25))
            target = (rng.uniform(-10, 10), rng.uniform(-10, 10), rng.uniform(-10, 10))
            direction = oracle.sub(target, origin)
            radius = rng.choice([0.0, 0.3, 1.0])
            # A sphere cast against balls is a ray cast against balls grown by the radius.
            grown = [(i, c, r + radius) for i, c, r in spheres]
            want, ambiguous = oracle.raycast_all(origin, direction, 60.0, grown)
            got = self.client.sphere_cast(scene, SphereCast(origin, direction, 60.0, radius),
                                          mode=Mode.ALL, max_hits=4096)
            self.assertFalse(got.truncated)
            got_hits = [(h.body_id, h.distance) for h in got.hits if h.body_id not in ambiguous]
            self.assertEqual([i for i, _ in got_hits], [i for i, _ in want])
            for (_, got_distance), (_, want_distance) in zip(got_hits, want):
                self.assertAlmostEqual(got_distance, want_distance, delta=2e-3)
            compared += len(want)
            if radius == 0.0:
                ray = self.client.raycast(scene, Raycast(origin, direction, 60.0),
                                          mode=Mode.ALL, max_hits=4096)
                self.assertEqual([h.body_id for h in ray.hits if h.body_id not in ambiguous],
                                 [i for i, _ in want])
                closest = self.client.raycast(scene, Raycast(origin, direction, 60.0))
                if want and not ambiguous:
                    self.assertEqual([h.body_id for h in closest.hits], [want[0][0]])
                if not want and not ambiguous:
                    self.assertEqual(closest.hits, [])
        self.assertGreater(compared, 50)  # the rays do hit things

    def test_overlaps_match_brute_force_and_report_detail(self) -> None:
        scene = "overlaps"
        self.client.create_scene(scene)
        rng = random.Random(99)
        spheres = random_spheres(rng, 200)
        self.client.upsert_bodies(scene, sphere_bodies(spheres))
        for _ in range(40):
            center = (rng.uniform(-20, 20), rng.uniform(-20, 20), rng.uniform(-20, 20))
            radius = rng.uniform(0.5, 5)
            want, ambiguous = oracle.overlapping_spheres(center, radius, spheres)
            got = self.client.overlap(scene, Overlap(Sphere(radius), Pose(center)),
                                      max_hits=4096)
            self.assertEqual(sorted(h.body_id for h in got.hits if h.body_id not in ambiguous),
                             want)
        # Detail: a ball of radius 1.5 at x=2 against the unit ball at the origin: depth 0.5.
        self.client.upsert_bodies("overlaps", [Body(1000, Sphere(1), Pose((0, 100, 0)))])
        detail = self.client.overlap(scene, Overlap(Sphere(1.5), Pose((2, 100, 0))),
                                     detail=True)
        self.assertEqual([h.body_id for h in detail.hits], [1000])
        self.assertAlmostEqual(detail.hits[0].depth, 0.5, places=4)
        self.assertAlmostEqual(detail.hits[0].normal.x, 1.0, places=4)

    def test_filters_and_modes_select_hits(self) -> None:
        scene = "filters"
        self.client.create_scene(scene)
        self.client.upsert_bodies(scene, [
            Body(1, Sphere(1), Pose((0, 0, 0))),
            Body(2, Sphere(1), Pose((5, 0, 0)), category=2),
            Body(3, Sphere(1), Pose((10, 0, 0)), mask=0),
        ])
        ray = Raycast((-10, 0, 0), (1, 0, 0), 100)
        everything = self.client.raycast(scene, ray, mode=Mode.ALL)
        self.assertEqual([h.body_id for h in everything.hits], [1, 2])  # 3 masks every query
        self.assertEqual([h.distance for h in everything.hits], [9.0, 14.0])
        self.assertEqual(everything.hits[0].point, Vec3(-1, 0, 0))
        self.assertEqual(everything.hits[0].normal, Vec3(-1, 0, 0))
        only_two = self.client.raycast(scene, ray, mode=Mode.ALL, filter=Filter(mask=2))
        self.assertEqual([h.body_id for h in only_two.hits], [2])
        excluded = self.client.raycast(scene, ray, filter=Filter(excluded_ids=(1,)))
        self.assertEqual([h.body_id for h in excluded.hits], [2])
        truncated = self.client.raycast(scene, ray, mode=Mode.ALL, max_hits=1)
        self.assertTrue(truncated.truncated)
        self.assertEqual(len(truncated.hits), 1)
        anyone = self.client.raycast(scene, ray, mode=Mode.ANY)
        self.assertEqual(len(anyone.hits), 1)
        self.assertIn(anyone.hits[0].body_id, (1, 2))
        inside = self.client.sphere_cast(scene, SphereCast((0, 0, 0), (1, 0, 0), 1, 0.5))
        self.assertTrue(inside.hits[0].start_overlapping)
        self.assertEqual(inside.hits[0].distance, 0.0)

    def test_query_stream_answers_batches_in_order(self) -> None:
        scene = "stream"
        self.client.create_scene(scene)
        self.client.upsert_bodies(scene, [Body(1, Sphere(1), Pose((0, 0, 0))),
                                          Body(2, Box((1, 1, 1)), Pose((5, 0, 0)))])
        queries = [
            Query(Raycast((-10, 0, 0), (1, 0, 0), 100), mode=Mode.ALL, request_id=11),
            Query(SphereCast((5, 10, 0), (0, -1, 0), 100, 0.5), request_id=12),
            Query(Overlap(Sphere(0.5), Pose((5.5, 0, 0))), mode=Mode.ALL, detail=True,
                  request_id=13),
            Query(PointQuery((0, 3, 0), 2.5), mode=Mode.ALL, request_id=14),
            Query(collide.AabbQuery(collide.Aabb((-2, -2, -2), (4.5, 2, 2))), mode=Mode.ALL,
                  request_id=15),
            Query(Raycast((0, 0, 0), (0, 0, 0), 1), request_id=16),
        ]
        with self.client.query_stream(scene) as stream:
            futures = [stream.submit(queries) for _ in range(5)]
            answers = [f.result(10) for f in futures]
            with self.assertRaises(CollideError) as too_many:
                stream.query([queries[0]] * 20000)
            self.assertEqual(too_many.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertEqual(too_many.exception.field_path, "queries")
            # The stream goes on after a rejected batch.
            again = stream.query(queries[:1])
        for answer in answers + [again]:
            self.assertEqual(answer.version, 1)
        results = answers[0].results
        self.assertEqual([r.request_id for r in results], [11, 12, 13, 14, 15, 16])
        self.assertEqual([h.body_id for h in results[0].hits], [1, 2])
        self.assertEqual([(h.body_id, h.distance) for h in results[1].hits], [(2, 8.5)])
        self.assertEqual([h.body_id for h in results[2].hits], [2])
        self.assertGreater(results[2].hits[0].depth, 0)
        self.assertEqual([(h.body_id, h.distance) for h in results[3].hits], [(1, 2.0)])
        self.assertEqual(sorted(h.body_id for h in results[4].hits), [1, 2])
        self.assertIsNone(results[0].error)
        self.assertEqual(results[5].error.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(results[5].error.field_path, "queries[5].raycast.direction")
        self.assertEqual([h.body_id for h in again.results[0].hits], [1, 2])

    def test_query_stream_rejects_an_unknown_scene_per_batch(self) -> None:
        with self.client.query_stream("no-such-scene") as stream:
            with self.assertRaisesCode(grpc.StatusCode.NOT_FOUND, "scene"):
                stream.query([Query(Raycast((0, 0, 0), (1, 0, 0), 1))])

    def test_ticks_min_version_and_past_queries(self) -> None:
        scene = "ticks"
        self.client.create_scene(scene, SceneOptions(history_ticks=16))
        ray = Raycast((-10, 0, 0), (1, 0, 0), 100)
        with self.client.update_writer(scene) as writer:
            writer.send([collide.Upsert(Body(1, Sphere(1), Pose((0, 0, 0))))], tick=1)
            writer.send(moves=([1], [4, 0, 0, 0, 0, 0, 1]), tick=2)
            last = writer.send(moves=([1], [8, 0, 0, 0, 0, 0, 1]), tick=3)
            version = last.result(10).version
        self.assertEqual(version, 3)
        now = self.client.raycast(scene, ray, min_version=version)
        self.assertEqual(now.version, 3)
        self.assertEqual(now.hits[0].distance, 17.0)
        past = self.client.raycast(scene, ray, at_tick=1)
        self.assertEqual(past.hits[0].distance, 9.0)
        halfway = self.client.sphere_cast(scene, SphereCast((-10, 0, 0), (1, 0, 0), 100, 0),
                                          at_tick=2, tick_fraction=0.5)
        self.assertAlmostEqual(halfway.hits[0].distance, 15.0, places=4)
        overlap = self.client.overlap(scene, Overlap(Sphere(0.5), Pose((4, 0, 0))), at_tick=2)
        self.assertEqual([h.body_id for h in overlap.hits], [1])
        info = self.client.get_scene(scene)
        self.assertEqual(info.stats.tick, 3)
        self.assertLessEqual(info.stats.oldest_tick, 1)
        with self.client.query_stream(scene) as stream:
            answer = stream.query([Query(ray, at_tick=1), Query(ray, at_tick=2,
                                                                tick_fraction=0.25),
                                   Query(ray, at_tick=99)], min_version=3)
        self.assertEqual(answer.version, 3)
        self.assertEqual(answer.results[0].hits[0].distance, 9.0)
        self.assertAlmostEqual(answer.results[1].hits[0].distance, 14.0, places=4)
        self.assertEqual(answer.results[2].error.code, grpc.StatusCode.OUT_OF_RANGE)
        self.assertEqual(answer.results[2].error.field_path, "queries[2].at_tick")
        with self.assertRaisesCode(grpc.StatusCode.OUT_OF_RANGE, "at_tick"):
            self.client.raycast(scene, ray, at_tick=99)
        # A version the scene never reaches: the call's deadline ends the wait.
        with self.assertRaises(CollideError) as waited:
            self.client.raycast(scene, ray, min_version=1000, timeout=0.3)
        self.assertEqual(waited.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)

    def test_the_default_deadline_applies_and_can_be_overridden(self) -> None:
        scene = "deadline"
        self.client.create_scene(scene)
        with self.server.client(timeout=0.2) as short:
            with self.assertRaises(CollideError) as waited:
                short.raycast(scene, Raycast((0, 0, 0), (1, 0, 0), 1), min_version=5)
            self.assertEqual(waited.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
            self.assertEqual(short.raycast(scene, Raycast((0, 0, 0), (1, 0, 0), 1),
                                           timeout=5).version, 0)

    def test_server_stats_report_the_scenes_and_the_streams(self) -> None:
        # Its own server: no stream of another test is open (or still closing).
        server = ServerProcess()
        self.addCleanup(server.close)
        with server.client() as client:
            client.create_scene("stats")
            idle = client.server_stats()
            self.assertIsInstance(idle, collide.ServerStats)
            self.assertEqual((idle.scenes, idle.query_streams, idle.streams_opened), (1, 0, 0))
            self.assertTrue(idle.writable)
            self.assertEqual(idle.write_error, "")
            with client.query_stream("stats") as stream:
                stream.query([Query(PointQuery((0, 0, 0)))])
                busy = client.server_stats()
            self.assertEqual((busy.query_streams, busy.streams_opened), (1, 1))
            # The build, and the per-scene figures with their bound.
            self.assertEqual(idle.server_version, collide.__version__)
            self.assertIn(idle.build_type, ("Release", "Debug", "RelWithDebInfo", "MinSizeRel"))
            self.assertGreater(idle.resident_memory_bytes, 0)
            client.create_scene("stats-2")
            client.upsert_bodies("stats-2", [Body(1, Sphere(1)), Body(2, Sphere(1))])
            every = client.server_stats()
            self.assertEqual([s.name for s in every.scene_stats], ["stats", "stats-2"])
            self.assertIsInstance(every.scene_stats[1], collide.ServerSceneStats)
            self.assertEqual((every.scene_stats[1].body_count, every.scene_stats[1].version),
                             (2, 1))
            self.assertEqual(every.scenes_omitted, 0)
            for bound, listed in ((0, 0), (1, 1), (2**32 - 1, 2)):
                bounded = client.server_stats(max_scenes=bound)
                self.assertEqual(len(bounded.scene_stats), listed, bound)
                self.assertEqual(bounded.scenes_omitted, 2 - listed, bound)
            for bad in (-1, 2**32, float("nan"), True):
                with self.assertRaises(ValueError, msg=repr(bad)):
                    client.server_stats(max_scenes=bad)

    def test_every_scene_call_sends_the_scene_header(self) -> None:
        self.assertEqual(self.client.metadata("x"), ((collide.SCENE_HEADER, "x"),))
        self.assertEqual(self.client.metadata(), ())
        with self.server.client(token="t") as client:
            self.assertEqual(client.metadata("x"), (("authorization", "Bearer t"),
                                                    ("x-collide-scene", "x")))



class SlowHandshakeTest(unittest.TestCase):

    def test_a_server_slow_to_answer_the_connection_is_waited_for(self) -> None:
        # A stopped server: the kernel accepts the TCP connection, but the HTTP/2 handshake gets
        # no answer until the server resumes, a second later. The client's first call must wait
        # for it (gRPC's connection attempt may last 20 s) rather than fail with UNAVAILABLE, as it
        # did when the client cut each attempt at 100 ms: a loaded machine made that happen.
        server = ServerProcess()
        try:
            server.process.send_signal(signal.SIGSTOP)
            resume = threading.Timer(1.0, server.process.send_signal, (signal.SIGCONT,))
            try:
                with server.client() as client:
                    resume.start()
                    self.assertEqual(client.list_scenes(), [])
            finally:
                resume.cancel()
                server.process.send_signal(signal.SIGCONT)
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main()
