"""The asyncio client (collide.aio) against a real collide-server: every unary rpc, every query
kind, the update writer (acks, rejections, a server restart, writes refused UNAVAILABLE by a
replicated scene's owner), the query stream and a watch, with the answers and the errors checked
against the blocking client's for the same calls."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import signal
import unittest

import grpc

import collide
import collide.aio
from collide import (Aabb, AabbQuery, BatchRejectedError, Body, Box, Capsule, CollideError,
                     ContactWatch, Durability, Fence, Filter, Mode, Overlap, PointQuery, Pose,
                     Query, Raycast, Remove, SceneOptions, SetFilter, SetPose, Sphere, SphereCast,
                     Upsert, Vec3, WatchEventKind)
from nats_process import NO_NATS_SERVER, NatsProcess, find_nats_server, replication_flags
from server_process import ServerProcess

NAN = float("nan")


def settled(stats: collide.ServerStats) -> dict:
    """The server's counters without those that move on their own after a call returns (the
    fsync lag, bytes not yet written, the watch evaluation's backlog and working state, uptime
    and resident memory), for comparing two reads."""
    fields = dataclasses.asdict(stats)
    for moving in ("sync_lag_us", "max_sync_lag_us", "outbound_bytes", "watch_contents",
                   "watch_queued_bytes", "watch_backlog_bytes", "uptime_seconds",
                   "resident_memory_bytes"):
        del fields[moving]
    return fields


class AioTestCase(unittest.IsolatedAsyncioTestCase):
    """One server for the class, a blocking client of it, and an asyncio client per test (in
    the test's event loop); each test uses its own scenes."""

    server: ServerProcess
    blocking: collide.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ServerProcess()
        cls.addClassCleanup(cls.server.close)
        cls.blocking = cls.server.client()
        cls.addClassCleanup(cls.blocking.close)

    async def asyncSetUp(self) -> None:
        # The tests call the blocking client and start servers inside the loop on purpose: no
        # reports of slow steps from the loop's debug mode (its other checks stay on).
        asyncio.get_running_loop().slow_callback_duration = 60.0
        self.client = collide.aio.Client(self.server.address)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def assertRaisesLikeBlocking(self, code: grpc.StatusCode, path, name: str, *args,
                                       **kwargs) -> CollideError:
        """Calls method `name` on both clients: each raises CollideError `code`, with the field
        path `path` (None: no check), and the two errors agree."""
        with self.assertRaises(CollideError) as blocking:
            getattr(self.blocking, name)(*args, **kwargs)
        with self.assertRaises(CollideError) as aio:
            await getattr(self.client, name)(*args, **kwargs)
        self.assertIs(type(aio.exception), type(blocking.exception))
        self.assertEqual(aio.exception.code, code, aio.exception.message)
        self.assertEqual((aio.exception.code, aio.exception.message, aio.exception.field_path),
                         (blocking.exception.code, blocking.exception.message,
                          blocking.exception.field_path))
        if path is not None:
            self.assertEqual(aio.exception.field_path, path, aio.exception.message)
        return aio.exception


class AioClientTest(AioTestCase):

    async def test_scenes_are_created_listed_read_and_deleted(self) -> None:
        options = SceneOptions(fat_margin=0.25, max_bodies=500, durability=Durability.NONE,
                               history_ticks=8)
        info = await self.client.create_scene("aio-scenes-a", options)
        self.assertEqual(info.name, "aio-scenes-a")
        self.assertEqual(info.options, options)
        self.assertEqual(info.stats.version, 0)
        await self.client.create_scene("aio-scenes-b")
        self.assertEqual(await self.client.get_scene("aio-scenes-b"),
                         self.blocking.get_scene("aio-scenes-b"))
        scenes = await self.client.list_scenes()
        self.assertEqual(scenes, self.blocking.list_scenes())
        self.assertIn("aio-scenes-a", [s.name for s in scenes])
        await self.assertRaisesLikeBlocking(grpc.StatusCode.ALREADY_EXISTS, "scene",
                                            "create_scene", "aio-scenes-a")
        await self.assertRaisesLikeBlocking(grpc.StatusCode.INVALID_ARGUMENT,
                                            "options.fat_margin", "create_scene",
                                            "aio-scenes-c", SceneOptions(fat_margin=NAN))
        self.assertIsNone(await self.client.delete_scene("aio-scenes-a"))
        await self.assertRaisesLikeBlocking(grpc.StatusCode.NOT_FOUND, "scene", "get_scene",
                                            "aio-scenes-a")

    async def test_bodies_round_trip(self) -> None:
        scene = "aio-bodies"
        await self.client.create_scene(scene)
        bodies = [Body(7, Sphere(1.5), Pose(Vec3(1, 2, 3))),
                  Body(8, Box((1, 0.5, 2)), Pose((5, 0, 0), (0, 0, math.sqrt(0.5),
                                                             math.sqrt(0.5))),
                       category=2, mask=6, user_data=2**63 + 5),
                  Body(9, Capsule(0.5, 1.0), Pose((10, 0, 0)), kind=collide.BodyKind.STATIC)]
        written = await self.client.upsert_bodies(scene, bodies)
        self.assertEqual((written.version, written.durable), (1, True))
        got = await self.client.get_bodies(scene, [9, 42, 7])
        self.assertEqual(([b.id for b in got.bodies], got.missing_ids), ([9, 7], [42]))
        everything = await self.client.get_bodies(scene)
        self.assertEqual(everything, self.blocking.get_bodies(scene))
        self.assertEqual(everything.bodies[1].user_data, 2**63 + 5)
        self.assertEqual(everything.bodies[2].shape, Capsule(0.5, 1.0))
        removed = await self.client.remove_bodies(scene, [8])
        self.assertEqual(removed.version, 2)
        await self.assertRaisesLikeBlocking(grpc.StatusCode.NOT_FOUND, "ids[1]", "remove_bodies",
                                            scene, [7, 8])
        self.assertEqual((await self.client.get_scene(scene)).stats.body_count, 2)

    async def test_bad_input_raises_what_the_blocking_client_raises(self) -> None:
        scene = "aio-bad-input"
        await self.client.create_scene(scene)
        invalid = grpc.StatusCode.INVALID_ARGUMENT
        ray = Raycast((0, 0, 0), (1, 0, 0), 10)
        cases = [
            ("bodies[0].shape.sphere.radius", "upsert_bodies", scene, [Body(1, Sphere(NAN))]),
            ("bodies[1].pose.position", "upsert_bodies", scene,
             [Body(1, Sphere(1)), Body(2, Sphere(1), Pose((0, math.inf, 0)))]),
            ("bodies[0].pose.rotation", "upsert_bodies", scene,
             [Body(1, Sphere(1), Pose((0, 0, 0), (0, 0, 0, 0)))]),
            ("ray.origin", "raycast", scene, Raycast((NAN, 0, 0), (1, 0, 0), 10)),
            ("ray.max_distance", "raycast", scene, Raycast((0, 0, 0), (1, 0, 0), -1)),
            ("cast.radius", "sphere_cast", scene, SphereCast((0, 0, 0), (1, 0, 0), 10, NAN)),
            ("overlap.shape.box.half_extents", "overlap", scene,
             Overlap(Box((1, 1, -math.inf)))),
        ]
        for path, name, *args in cases:
            with self.subTest(path=path):
                await self.assertRaisesLikeBlocking(invalid, path, name, *args)
        await self.assertRaisesLikeBlocking(invalid, "max_hits", "raycast", scene, ray,
                                            mode=Mode.ALL, max_hits=1_000_000)
        await self.assertRaisesLikeBlocking(grpc.StatusCode.OUT_OF_RANGE, "at_tick", "raycast",
                                            scene, ray, at_tick=2**64 - 1)
        await self.assertRaisesLikeBlocking(grpc.StatusCode.NOT_FOUND, "scene", "raycast",
                                            "aio-no-such-scene", ray)
        # The default deadline, and a per-call one.
        async with collide.aio.Client(self.server.address, timeout=0.2) as short:
            with self.assertRaises(CollideError) as waited:
                await short.raycast(scene, ray, min_version=5)
            self.assertEqual(waited.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
            self.assertEqual((await short.raycast(scene, ray, timeout=5)).version, 0)
        self.assertEqual((await self.client.get_scene(scene)).stats.version, 0)

    async def test_every_unary_query_answers_as_the_blocking_client(self) -> None:
        scene = "aio-queries"
        await self.client.create_scene(scene)
        rng = random.Random(77)
        centers = [(rng.uniform(-20, 20), rng.uniform(-20, 20), rng.uniform(-20, 20))
                   for _ in range(200)]
        await self.client.upsert_bodies(scene, [
            Body(i + 1, Sphere(rng.uniform(0.2, 2.0)), Pose(c), category=1 << (i % 3))
            for i, c in enumerate(centers)])
        hits = 0
        for _ in range(30):
            origin = (rng.uniform(-25, 25), rng.uniform(-25, 25), rng.uniform(-25, 25))
            target = rng.choice(centers)  # aimed at a body: most queries hit something
            direction = tuple(b - a for a, b in zip(origin, target))
            options = dict(mode=rng.choice(list(Mode)), filter=Filter(mask=rng.choice([1, 3, 7])))
            ray = Raycast(origin, direction, 60.0)
            cast = SphereCast(origin, direction, 60.0, rng.choice([0.0, 0.5]))
            shape = Overlap(Sphere(rng.uniform(1, 6)), Pose(origin))
            for name, query, extra in [("raycast", ray, {}), ("sphere_cast", cast, {}),
                                       ("overlap", shape, {"detail": True})]:
                got = await getattr(self.client, name)(scene, query, **options, **extra)
                self.assertEqual(got, getattr(self.blocking, name)(scene, query, **options,
                                                                    **extra))
                hits += len(got.hits)
        self.assertGreater(hits, 30)  # the queries do hit things
        # Answers the geometry gives.
        await self.client.upsert_bodies(scene, [Body(1000, Sphere(1), Pose((0, 100, 0)))])
        ray = await self.client.raycast(scene, Raycast((-10, 100, 0), (1, 0, 0), 100))
        self.assertEqual([(h.body_id, h.distance) for h in ray.hits], [(1000, 9.0)])
        cast = await self.client.sphere_cast(scene, SphereCast((0, 110, 0), (0, -1, 0), 20, 0.5))
        self.assertEqual([(h.body_id, h.distance) for h in cast.hits], [(1000, 8.5)])
        detail = await self.client.overlap(scene, Overlap(Sphere(1.5), Pose((2, 100, 0))),
                                           detail=True)
        self.assertEqual([h.body_id for h in detail.hits], [1000])
        self.assertAlmostEqual(detail.hits[0].depth, 0.5, places=4)

    async def test_calls_run_concurrently_on_one_channel(self) -> None:
        scene = "aio-gather"
        await self.client.create_scene(scene)
        await self.client.upsert_bodies(scene, [Body(i, Sphere(0.5), Pose((2.0 * i, 0, 0)))
                                                for i in range(1, 21)])
        answers = await asyncio.gather(*[
            self.client.raycast(scene, Raycast((2.0 * i, 10, 0), (0, -1, 0), 20))
            for i in range(1, 21)])
        self.assertEqual([[h.body_id for h in a.hits] for a in answers],
                         [[i] for i in range(1, 21)])

    async def test_server_stats_match_the_blocking_clients(self) -> None:
        stats = await self.client.server_stats()
        self.assertIsInstance(stats, collide.ServerStats)
        self.assertEqual(settled(stats), settled(self.blocking.server_stats()))
        self.assertTrue(stats.writable)
        self.assertEqual(stats.write_error, "")
        self.assertEqual(stats.scenes, len(await self.client.list_scenes()))


class AioStreamsTest(AioTestCase):

    async def test_the_update_writer_is_acknowledged_in_order(self) -> None:
        await self.client.create_scene("aio-writer")
        async with self.client.update_writer("aio-writer", client_id=77,
                                             first_sequence=10) as writer:
            self.assertEqual(writer.client_id, 77)
            created = await writer.send([Upsert(Body(i, Sphere(1))) for i in range(1, 4)])
            moved = await writer.send([SetPose(1, Pose((1, 2, 3)))],
                                      moves=collide.PoseColumns([2, 3], [5, 0, 0, 0, 0, 0, 1,
                                                                         6, 0, 0, 0, 0, 0, 1]))
            filtered = await writer.send([SetFilter(3, 4, 4), Remove(2)])
            acks = [await f for f in (created, moved, filtered)]
            self.assertEqual(writer.next_sequence, 13)
            self.assertEqual(writer.pending, 0)
        self.assertEqual([a.client_sequence for a in acks], [10, 11, 12])
        self.assertEqual([a.version for a in acks], [1, 2, 3])
        self.assertTrue(all(a.durable and not a.duplicate for a in acks))
        self.assertEqual(writer.version, 3)
        bodies = (await self.client.get_bodies("aio-writer")).bodies
        self.assertEqual([b.id for b in bodies], [1, 3])
        self.assertEqual(bodies[0].pose.position, Vec3(1, 2, 3))
        self.assertEqual((bodies[1].category, bodies[1].mask), (4, 4))
        # A replay under the same client id is acknowledged as a duplicate, not applied.
        async with self.client.update_writer("aio-writer", client_id=77,
                                             first_sequence=12) as replay:
            duplicate = await (await replay.send([Remove(3)]))
        self.assertTrue(duplicate.duplicate)
        self.assertEqual(duplicate.version, 3)
        self.assertEqual((await self.client.get_scene("aio-writer")).stats.body_count, 2)

    async def test_rejected_batches_surface_with_field_paths(self) -> None:
        await self.client.create_scene("aio-rejected")
        writer = self.client.update_writer("aio-rejected")
        await writer.send([Upsert(Body(1, Sphere(1)))])
        bad_move = await writer.send(moves=([1, 5], [0, 0, 0, 0, 0, 0, 1] * 2))
        bad_radius = await writer.send([Upsert(Body(2, Sphere(NAN)))])
        good = await writer.send(moves=([1], [3, 0, 0, 0, 0, 0, 1]))
        self.assertEqual((await good).version, 2)
        with self.assertRaises(BatchRejectedError) as first:
            await bad_move
        self.assertEqual((first.exception.code, first.exception.field_path,
                          first.exception.sequence), (grpc.StatusCode.NOT_FOUND, "moves.ids[1]", 2))
        with self.assertRaises(BatchRejectedError) as second:
            await bad_radius
        self.assertEqual((second.exception.code, second.exception.field_path),
                         (grpc.StatusCode.INVALID_ARGUMENT, "ops[0].upsert.shape.sphere.radius"))
        # The blocking writer rejects the same batch with the same error.
        with self.blocking.update_writer("aio-rejected") as blocking_writer:
            blocking_rejected = blocking_writer.send([Upsert(Body(2, Sphere(NAN)))]).exception(10)
            with self.assertRaises(BatchRejectedError):
                blocking_writer.flush(10)
        self.assertEqual((blocking_rejected.code, blocking_rejected.message),
                         (second.exception.code, second.exception.message))
        # flush raises the first rejection not yet raised by flush, then is clean.
        with self.assertRaises(BatchRejectedError) as flushed:
            await writer.flush(10)
        self.assertEqual(flushed.exception.sequence, 2)
        await writer.close(10)
        self.assertEqual((await self.client.get_scene("aio-rejected")).stats.version, 2)
        with self.assertRaises(CollideError) as closed:
            await writer.send([Remove(1)])
        self.assertEqual(closed.exception.code, grpc.StatusCode.FAILED_PRECONDITION)

    async def test_leaving_the_block_by_an_exception_cancels_the_writer(self) -> None:
        await self.client.create_scene("aio-cancel")
        with self.assertRaises(KeyError):
            async with self.client.update_writer("aio-cancel") as writer:
                await (await writer.send([Upsert(Body(1, Sphere(1)))]))
                raise KeyError("boom")
        with self.assertRaises(CollideError):
            await writer.send([Remove(1)])

    async def test_every_batch_is_applied_once_across_a_server_restart(self) -> None:
        server = ServerProcess()
        self.addCleanup(server.close)
        async with collide.aio.Client(server.address) as client:
            await client.create_scene("s")
            writer = client.update_writer("s", max_pending=1000)
            await (await writer.send([Upsert(Body(i, Sphere(0.5))) for i in range(1, 11)]))
            before = [await writer.send(moves=([i % 10 + 1], [float(i), 0, 0, 0, 0, 0, 1]))
                      for i in range(1, 50)]
            await asyncio.gather(*before)
            self.assertEqual(server.stop(signal.SIGKILL), -signal.SIGKILL)
            # Sent while the server is down: pending until it is back, then resent.
            after = [await writer.send(moves=([i % 10 + 1], [float(i), 0, 0, 0, 0, 0, 1]))
                     for i in range(50, 100)]
            self.assertGreater(writer.pending, 0)
            await asyncio.get_running_loop().run_in_executor(None, server.restart_same_port)
            await writer.flush(60)
            await writer.close(10)
            acks = [f.result() for f in before + after]
            self.assertGreaterEqual(writer.reconnects, 1)
            self.assertEqual([a.client_sequence for a in acks], list(range(2, 101)))
            self.assertEqual((await client.get_scene("s")).stats.version, 100)
            for body in (await client.get_bodies("s")).bodies:
                last = max(i for i in range(1, 100) if i % 10 + 1 == body.id)
                self.assertEqual(body.pose.position, Vec3(last, 0, 0), body.id)

    async def test_a_batch_answered_with_moved_to_is_resent_until_it_applies(self) -> None:
        from collide._pb import pb, pb_grpc

        def mark(clear: bool) -> None:
            with grpc.insecure_channel(self.server.address) as channel:
                pb_grpc.CollideStub(channel).SetSceneMoving(
                    pb.SetSceneMovingRequest(scene="aio-moved",
                                             destination="" if clear else "10.0.0.4:50051",
                                             clear=clear), timeout=10)

        await self.client.create_scene("aio-moved")
        writer = self.client.update_writer("aio-moved", backoff_max=0.1)
        self.assertEqual((await (await writer.send([Upsert(Body(1, Sphere(1)))]))).version, 1)
        mark(clear=False)
        moved = await writer.send([SetPose(1, Pose((5, 0, 0)))])
        added = await writer.send([Upsert(Body(2, Sphere(1)))])
        for _ in range(500):
            if writer.redirected >= 2:
                break
            await asyncio.sleep(0.02)
        self.assertGreaterEqual(writer.redirected, 2)
        self.assertFalse(moved.done())
        self.assertEqual((await self.client.get_scene("aio-moved")).stats.version, 1)
        mark(clear=True)
        await writer.flush(20)
        acks = [moved.result(), added.result()]
        self.assertEqual([a.version for a in acks], [2, 3])
        self.assertFalse(any(a.duplicate for a in acks))
        await writer.close(10)
        self.assertEqual((await self.client.get_scene("aio-moved")).stats.version, 3)
        bodies = (await self.client.get_bodies("aio-moved")).bodies
        self.assertEqual([b.id for b in bodies], [1, 2])
        self.assertEqual(bodies[0].pose.position, Vec3(5, 0, 0))

    async def test_flush_fails_when_the_server_does_not_come_back(self) -> None:
        server = ServerProcess()
        self.addCleanup(server.close)
        async with collide.aio.Client(server.address) as client:
            await client.create_scene("s")
            # The send after the kill comes before the writer can give up: the loop runs nothing
            # else between the two.
            writer = client.update_writer("s", reconnect_timeout=2.0)
            await (await writer.send([Upsert(Body(1, Sphere(1)))]))
            server.stop(signal.SIGKILL)
            pending = await writer.send([Remove(1)])
            with self.assertRaises(CollideError) as failed:
                await writer.flush(30)
            self.assertEqual(failed.exception.code, grpc.StatusCode.UNAVAILABLE)
            self.assertIs(pending.exception(), failed.exception)
            with self.assertRaises(CollideError):
                await writer.send([Remove(1)])
            await writer.cancel()

    async def test_batches_refused_unavailable_by_an_owner_whose_lease_ran_out_are_resent(
            self) -> None:
        binary = find_nats_server()
        if binary is None:
            self.skipTest(NO_NATS_SERVER)
        nats = NatsProcess(binary)
        self.addCleanup(nats.close)
        server = ServerProcess(extra_flags=replication_flags(nats.url))
        self.addCleanup(server.close)
        async with collide.aio.Client(server.address) as client:
            # Again while UNAVAILABLE: the server may still be connecting to NATS.
            give_up = asyncio.get_running_loop().time() + 20
            while True:
                try:
                    await client.create_scene("r", SceneOptions(durability=Durability.REPLICATED))
                    break
                except CollideError as error:
                    if (error.code != grpc.StatusCode.UNAVAILABLE
                            or asyncio.get_running_loop().time() > give_up):
                        raise
                    await asyncio.sleep(0.1)
            version = (await client.get_scene("r")).stats.version
            writer = client.update_writer("r", backoff_initial=0.01, backoff_max=0.1,
                                          reconnect_timeout=30)
            total = 150
            futures = []
            for i in range(total):
                # NATS stops answering for 1.8 s: the 600 ms lease runs out and the owner
                # refuses writes UNAVAILABLE until the bucket renews it.
                if i == 30:
                    nats.stop()
                if i == 120:
                    nats.resume()
                futures.append(await writer.send(
                    [Upsert(Body(1 + i, Sphere(0.5), Pose((1 + i, 0, 0))))]))
                await asyncio.sleep(0.02)
            try:
                await writer.close(30)
            except BatchRejectedError:
                pass  # reported below, with every other rejected batch
            rejected = [f"{f.exception().sequence}: {f.exception()}" for f in futures
                        if f.done() and f.exception() is not None]
            self.assertEqual(rejected, [], server.logs())
            self.assertEqual(sum(1 for f in futures if f.done() and f.exception() is None),
                             total)
            self.assertGreaterEqual(writer.unavailable, 1,
                                    "no batch was sent while the lease had run out")
            # Each batch applied once: one version each.
            self.assertEqual((await client.get_scene("r")).stats.version, version + total)
            ids = {b.id for b in (await client.get_bodies("r")).bodies}
            self.assertEqual(sorted(set(range(1, total + 1)) - ids), [])

    async def test_the_query_stream_answers_every_query_kind_in_order(self) -> None:
        scene = "aio-stream"
        await self.client.create_scene(scene)
        await self.client.upsert_bodies(scene, [Body(1, Sphere(1), Pose((0, 0, 0))),
                                                Body(2, Box((1, 1, 1)), Pose((5, 0, 0)))])
        queries = [
            Query(Raycast((-10, 0, 0), (1, 0, 0), 100), mode=Mode.ALL, request_id=11),
            Query(SphereCast((5, 10, 0), (0, -1, 0), 100, 0.5), request_id=12),
            Query(Overlap(Sphere(0.5), Pose((5.5, 0, 0))), mode=Mode.ALL, detail=True,
                  request_id=13),
            Query(PointQuery((0, 3, 0), 2.5), mode=Mode.ALL, request_id=14),
            Query(AabbQuery(Aabb((-2, -2, -2), (4.5, 2, 2))), mode=Mode.ALL, request_id=15),
            Query(Raycast((0, 0, 0), (NAN, 0, 0), 1), request_id=16),
        ]
        async with self.client.query_stream(scene) as stream:
            futures = [await stream.submit(queries) for _ in range(3)]
            gathered = await asyncio.gather(*[stream.query(queries) for _ in range(3)])
            answers = [await f for f in futures] + list(gathered)
            with self.assertRaises(CollideError) as too_many:
                await stream.query([queries[0]] * 20000)
            self.assertEqual((too_many.exception.code, too_many.exception.field_path),
                             (grpc.StatusCode.RESOURCE_EXHAUSTED, "queries"))
            again = await stream.query(queries[:1], min_version=1)  # the stream goes on
        with self.blocking.query_stream(scene) as blocking_stream:
            blocking_answer = blocking_stream.query(queries)
        for answer in answers:
            self.assertEqual(answer.version, 1)
            self.assertEqual(len(answer.results), len(queries))
            for got, want in zip(answer.results, blocking_answer.results):
                self.assertEqual((got.request_id, got.hits, got.truncated),
                                 (want.request_id, want.hits, want.truncated))
        results = answers[0].results
        self.assertEqual([r.request_id for r in results], [11, 12, 13, 14, 15, 16])
        self.assertEqual([h.body_id for h in results[0].hits], [1, 2])
        self.assertEqual([(h.body_id, h.distance) for h in results[1].hits], [(2, 8.5)])
        self.assertEqual([h.body_id for h in results[2].hits], [2])
        self.assertEqual([(h.body_id, h.distance) for h in results[3].hits], [(1, 2.0)])
        self.assertEqual(sorted(h.body_id for h in results[4].hits), [1, 2])
        self.assertIsNone(results[0].error)
        self.assertEqual((results[5].error.code, results[5].error.field_path),
                         (grpc.StatusCode.INVALID_ARGUMENT, "queries[5].raycast.direction"))
        self.assertEqual(results[5].error.message, blocking_answer.results[5].error.message)
        self.assertEqual([h.body_id for h in again.results[0].hits], [1, 2])

    async def test_the_query_stream_rejects_an_unknown_scene_per_batch(self) -> None:
        async with self.client.query_stream("aio-no-such-scene") as stream:
            with self.assertRaises(CollideError) as rejected:
                await stream.query([Query(Raycast((0, 0, 0), (1, 0, 0), 1))])
        self.assertEqual((rejected.exception.code, rejected.exception.field_path),
                         (grpc.StatusCode.NOT_FOUND, "scene"))

    async def test_a_watch_receives_the_events_of_a_batch(self) -> None:
        scene = "aio-watch"
        await self.client.create_scene(scene, SceneOptions(durability=Durability.NONE))
        await self.client.upsert_bodies(scene, [
            Body(1, Sphere(0.05), Pose((-50.0, 0.5, 0.0))),
            Body(2, Sphere(0.5), Pose((10.0, 0.0, 5.0))),
            Body(3, Sphere(0.5), Pose((10.8, 0.0, 5.0)))])
        async with self.client.watch(scene, [Fence(7, Box((0.01, 2.0, 2.0)))],
                                     [ContactWatch(5)]) as watch:
            first = await watch.__anext__()
            self.assertIsNone(first.update)
            self.assertEqual(first.snapshot.fences, [collide.FenceContents(7, [])])
            self.assertEqual(first.snapshot.contacts, [collide.ContactPair(5, 2, 3)])
            async with self.client.update_writer(scene) as writer:
                ack = await (await writer.send(
                    moves=([1], [50.0, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0])))
                async for message in watch:
                    update = message.update
                    break
                self.assertEqual(update.version, ack.version)
                self.assertEqual([(e.kind, e.fence_id, e.body_id) for e in update.events],
                                 [(WatchEventKind.ENTER, 7, 1), (WatchEventKind.EXIT, 7, 1)])
                self.assertAlmostEqual(update.events[0].point.x, -0.01, places=4)
                await (await writer.send(moves=([3], [20.0, 0.0, 5.0, 0.0, 0.0, 0.0, 1.0])))
                update = (await watch.__anext__()).update
                self.assertEqual([(e.kind, e.contact_id, e.body_id, e.other_body_id)
                                  for e in update.events],
                                 [(WatchEventKind.CONTACT_END, 5, 2, 3)])
            await self.client.delete_scene(scene)
            with self.assertRaises(CollideError) as ended:
                await watch.__anext__()
            self.assertEqual(ended.exception.code, grpc.StatusCode.NOT_FOUND)

    async def test_a_watch_fails_and_cancels_as_the_blocking_one(self) -> None:
        scene = "aio-watch-errors"
        await self.client.create_scene(scene, SceneOptions(durability=Durability.NONE))
        fences = [Fence(1, Sphere(1.0)), Fence(2, Sphere(NAN))]
        with self.assertRaises(CollideError) as blocking:
            next(self.blocking.watch(scene, fences))
        with self.assertRaises(CollideError) as aio:
            await self.client.watch(scene, fences).__anext__()
        self.assertEqual((aio.exception.code, aio.exception.field_path),
                         (grpc.StatusCode.INVALID_ARGUMENT, "fences[1].shape.sphere.radius"))
        self.assertEqual(aio.exception.message, blocking.exception.message)
        watch = self.client.watch(scene, [Fence(1, Sphere(1.0))])
        await watch.__anext__()  # the snapshot

        async def cancel_soon() -> None:
            await asyncio.sleep(0)
            watch.cancel()

        canceller = asyncio.ensure_future(cancel_soon())
        with self.assertRaises(CollideError) as cancelled:
            await watch.__anext__()
        await canceller
        self.assertEqual(cancelled.exception.code, grpc.StatusCode.CANCELLED)

    async def test_server_stats_count_the_open_streams(self) -> None:
        server = ServerProcess()
        self.addCleanup(server.close)
        async with collide.aio.Client(server.address) as client:
            await client.create_scene("a")
            await client.create_scene("b")
            idle = await client.server_stats()
            self.assertEqual((idle.scenes, idle.watch_streams, idle.update_streams,
                              idle.query_streams, idle.streams_opened), (2, 0, 0, 0, 0))
            async with client.watch("a", [Fence(1, Sphere(1.0))]) as watch, \
                    client.query_stream("a") as stream, client.update_writer("b") as writer:
                await watch.__anext__()
                await stream.query([Query(PointQuery((0, 0, 0)))])
                await (await writer.send([Upsert(Body(1, Sphere(1)))]))
                busy = await client.server_stats()
                self.assertEqual((busy.watch_streams, busy.update_streams, busy.query_streams,
                                  busy.streams_opened, busy.watch_fences), (1, 1, 1, 3, 1))
                with server.client() as blocking:
                    self.assertEqual(settled(blocking.server_stats()), settled(busy))


class AioAuthTest(unittest.IsolatedAsyncioTestCase):

    async def asyncSetUp(self) -> None:
        asyncio.get_running_loop().slow_callback_duration = 60.0

    async def test_tokens_and_roles_apply_as_in_the_blocking_client(self) -> None:
        server = ServerProcess(token_file_contents="admin-token admin\nreader-token reader\n")
        self.addCleanup(server.close)
        async with collide.aio.Client(server.address, token="admin-token") as admin, \
                collide.aio.Client(server.address, token="reader-token") as reader, \
                collide.aio.Client(server.address) as anonymous:
            self.assertEqual(admin.metadata("x"), (("authorization", "Bearer admin-token"),
                                                   (collide.SCENE_HEADER, "x")))
            await admin.create_scene("s")
            self.assertEqual((await admin.server_stats()).scenes, 1)
            self.assertEqual([s.name for s in await reader.list_scenes()], ["s"])
            for client, call, code in [
                    (anonymous, anonymous.list_scenes(), grpc.StatusCode.UNAUTHENTICATED),
                    (reader, reader.server_stats(), grpc.StatusCode.PERMISSION_DENIED),
                    (reader, reader.upsert_bodies("s", [Body(1, Sphere(1))]),
                     grpc.StatusCode.PERMISSION_DENIED)]:
                with self.assertRaises(CollideError) as denied:
                    await call
                self.assertEqual(denied.exception.code, code, denied.exception.message)
            with server.client("reader-token") as blocking_reader:
                with self.assertRaises(CollideError) as blocking_denied:
                    blocking_reader.server_stats()
            self.assertEqual(blocking_denied.exception.code, grpc.StatusCode.PERMISSION_DENIED)


if __name__ == "__main__":
    unittest.main()
