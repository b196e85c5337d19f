"""The resilient update writer against a real collide-server, including server restarts and a
replicated scene's owner refusing writes UNAVAILABLE while NATS is stopped."""

from __future__ import annotations

import signal
import threading
import time
import unittest

import grpc

from collide import (BatchRejectedError, Body, CollideError, Durability, Pose, PoseColumns, Remove,
                     SceneOptions, SetFilter, SetPose, Sphere, Upsert, Vec3)
from nats_process import NO_NATS_SERVER, NatsProcess, find_nats_server, replication_flags
from server_process import ServerProcess

BODIES = 10


def move_of(batch: int):
    """The move batch number `batch` makes: body batch % BODIES to (batch, -batch, 0.5)."""
    body = batch % BODIES + 1
    return [body], [float(batch), float(-batch), 0.5, 0.0, 0.0, 0.0, 1.0]


class UpdateWriterTest(unittest.TestCase):

    def setUp(self) -> None:
        self.server = ServerProcess()
        self.client = self.server.client()

    def tearDown(self) -> None:
        self.client.close()
        self.server.close()

    def test_batches_are_acknowledged_in_order(self) -> None:
        self.client.create_scene("s")
        with self.client.update_writer("s", client_id=77, first_sequence=10) as writer:
            self.assertEqual(writer.client_id, 77)
            created = writer.send([Upsert(Body(i, Sphere(1))) for i in range(1, 4)])
            moved = writer.send([SetPose(1, Pose((1, 2, 3)))],
                                moves=PoseColumns([2, 3], [5, 0, 0, 0, 0, 0, 1,
                                                           6, 0, 0, 0, 0, 0, 1]))
            filtered = writer.send([SetFilter(3, 4, 4), Remove(2)])
            acks = [f.result(10) for f in (created, moved, filtered)]
            self.assertEqual(writer.next_sequence, 13)
        self.assertEqual([a.client_sequence for a in acks], [10, 11, 12])
        self.assertEqual([a.version for a in acks], [1, 2, 3])
        self.assertTrue(all(a.durable and not a.duplicate for a in acks))
        self.assertEqual(writer.version, 3)
        bodies = self.client.get_bodies("s").bodies
        self.assertEqual([b.id for b in bodies], [1, 3])
        self.assertEqual(bodies[0].pose.position, Vec3(1, 2, 3))
        self.assertEqual(bodies[1].pose.position, Vec3(6, 0, 0))
        self.assertEqual((bodies[1].category, bodies[1].mask), (4, 4))

    def test_a_random_client_id_is_chosen(self) -> None:
        self.client.create_scene("s")
        with self.client.update_writer("s") as a, self.client.update_writer("s") as b:
            self.assertNotEqual(a.client_id, 0)
            self.assertNotEqual(a.client_id, b.client_id)

    def test_rejected_batches_surface_with_field_paths(self) -> None:
        self.client.create_scene("s")
        writer = self.client.update_writer("s")
        writer.send([Upsert(Body(1, Sphere(1)))])
        bad_move = writer.send(moves=([1, 5], [0, 0, 0, 0, 0, 0, 1] * 2))
        bad_rotation = writer.send([SetPose(1, Pose((0, 0, 0), (0, 0, 0, 0.5)))])
        good = writer.send(moves=([1], [3, 0, 0, 0, 0, 0, 1]))
        self.assertEqual(good.result(10).version, 2)
        with self.assertRaises(BatchRejectedError) as first:
            bad_move.result(10)
        self.assertEqual(first.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(first.exception.field_path, "moves.ids[1]")
        self.assertEqual(first.exception.sequence, 2)
        with self.assertRaises(BatchRejectedError) as second:
            bad_rotation.result(10)
        self.assertEqual(second.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(second.exception.field_path, "ops[0].set_pose.pose.rotation")
        # flush raises the first rejection not yet raised by flush, then is clean.
        with self.assertRaises(BatchRejectedError) as flushed:
            writer.flush(10)
        self.assertEqual(flushed.exception.sequence, 2)
        writer.close(10)
        self.assertEqual(self.client.get_scene("s").stats.version, 2)
        with self.assertRaises(CollideError) as closed:
            writer.send([Remove(1)])
        self.assertEqual(closed.exception.code, grpc.StatusCode.FAILED_PRECONDITION)

    def test_a_resent_batch_is_acknowledged_as_duplicate(self) -> None:
        self.client.create_scene("s")
        with self.client.update_writer("s", client_id=5) as writer:
            writer.send([Upsert(Body(1, Sphere(1)))])
            writer.send(moves=([1], [1, 0, 0, 0, 0, 0, 1]))
        # Another writer with the same id replays sequence 2: not applied again.
        with self.client.update_writer("s", client_id=5, first_sequence=2) as replay:
            ack = replay.send(moves=([1], [9, 0, 0, 0, 0, 0, 1])).result(10)
            fresh = replay.send(moves=([1], [4, 0, 0, 0, 0, 0, 1])).result(10)
        self.assertTrue(ack.duplicate)
        self.assertEqual(ack.version, 2)
        self.assertFalse(fresh.duplicate)
        self.assertEqual(fresh.version, 3)
        self.assertEqual(self.client.get_bodies("s").bodies[0].pose.position, Vec3(4, 0, 0))

    def test_a_batch_for_an_unknown_scene_is_rejected_with_the_scene_path(self) -> None:
        with self.client.update_writer("missing") as writer:
            future = writer.send([Remove(1)])
            with self.assertRaises(BatchRejectedError) as rejected:
                writer.flush(10)
        self.assertEqual(rejected.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(rejected.exception.field_path, "scene")
        self.assertIs(future.exception(), rejected.exception)

    def mark_moving(self, scene: str, destination: str = "", clear: bool = False) -> None:
        """Marks `scene` as moving to `destination` (or clears the mark): the server answers its
        batches with Error.moved_to, as a follower of a replicated scene does."""
        from collide._pb import pb, pb_grpc
        with grpc.insecure_channel(self.server.address) as channel:
            pb_grpc.CollideStub(channel).SetSceneMoving(
                pb.SetSceneMovingRequest(scene=scene, destination=destination, clear=clear),
                timeout=10)

    def test_a_batch_answered_with_moved_to_is_resent_until_it_applies(self) -> None:
        self.client.create_scene("s")
        writer = self.client.update_writer("s", backoff_max=0.1)
        first = writer.send([Upsert(Body(1, Sphere(1)))])
        self.assertEqual(first.result(10).version, 1)
        self.mark_moving("s", "10.0.0.4:50051")
        moved = writer.send([SetPose(1, Pose((5, 0, 0)))])
        added = writer.send([Upsert(Body(2, Sphere(1)))])
        give_up = time.monotonic() + 10
        while writer.redirected < 2 and time.monotonic() < give_up:
            time.sleep(0.02)
        self.assertGreaterEqual(writer.redirected, 2)
        self.assertFalse(moved.done())
        self.assertFalse(added.done())
        self.assertEqual(self.client.get_scene("s").stats.version, 1)
        # The mark cleared (the server writes the scene again): the batches apply there, once.
        self.mark_moving("s", clear=True)
        writer.flush(20)
        acks = [moved.result(0), added.result(0)]
        self.assertEqual([a.client_sequence for a in acks], [2, 3])
        self.assertEqual([a.version for a in acks], [2, 3])
        self.assertFalse(any(a.duplicate for a in acks))
        writer.close(10)
        self.assertGreaterEqual(writer.reconnects, 2)
        self.assertEqual(self.client.get_scene("s").stats.version, 3)
        bodies = self.client.get_bodies("s").bodies
        self.assertEqual([b.id for b in bodies], [1, 2])
        self.assertEqual(bodies[0].pose.position, Vec3(5, 0, 0))

    def test_a_writer_redirected_for_too_long_fails_naming_the_server(self) -> None:
        self.client.create_scene("s")
        self.mark_moving("s", "10.0.0.4:50051")
        writer = self.client.update_writer("s", backoff_max=0.1, reconnect_timeout=1)
        future = writer.send([Upsert(Body(1, Sphere(1)))])
        with self.assertRaises(CollideError) as caught:
            writer.flush(20)
        self.assertNotIsInstance(caught.exception, BatchRejectedError)
        self.assertEqual(caught.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(caught.exception.moved_to, "10.0.0.4:50051")
        self.assertIn("moved to 10.0.0.4:50051", str(caught.exception))
        self.assertIs(future.exception(0), caught.exception)
        self.assertGreaterEqual(writer.redirected, 2)
        self.assertEqual(self.client.get_scene("s").stats.version, 0)

    def test_every_batch_is_applied_once_across_a_server_kill(self) -> None:
        self.client.create_scene("s")
        total = 300
        acked = []
        writer = self.client.update_writer("s", max_pending=total)
        writer.send([Upsert(Body(i, Sphere(0.5), Pose((0, 0, 0)))) for i in range(1, BODIES + 1)])

        killed = threading.Event()

        def send_all() -> None:
            for batch in range(1, total):
                if batch == total // 2:
                    killed.wait()  # the second half goes out while the server is down
                future = writer.send(moves=move_of(batch))
                future.add_done_callback(lambda f: acked.append(f))
                time.sleep(0.002)

        sender = threading.Thread(target=send_all)
        sender.start()
        give_up = time.monotonic() + 30
        while len(acked) < total // 3 and time.monotonic() < give_up:
            time.sleep(0.005)
        self.assertGreaterEqual(len(acked), total // 3)
        self.assertEqual(self.server.stop(signal.SIGKILL), -signal.SIGKILL)
        killed.set()
        # Batches sent from here on cannot be acknowledged before the restart: some are pending
        # then, and are resent after the reconnect (ordering, whatever the machine's load).
        give_up = time.monotonic() + 30
        while writer.next_sequence <= total // 2 + 10 and time.monotonic() < give_up:
            time.sleep(0.005)
        self.assertGreater(writer.pending, 0)
        self.server.restart_same_port()
        sender.join()
        writer.flush(60)
        writer.close(10)

        self.assertGreaterEqual(writer.reconnects, 1)
        self.assertEqual(len(acked), total - 1)
        acks = [f.result() for f in acked]
        self.assertEqual(sorted(a.client_sequence for a in acks), list(range(2, total + 1)))
        info = self.client.get_scene("s")
        self.assertEqual(info.stats.version, total)
        bodies = self.client.get_bodies("s").bodies
        for body in bodies:
            last = max(b for b in range(1, total) if b % BODIES + 1 == body.id)
            self.assertEqual(body.pose.position, Vec3(last, -last, 0.5), body.id)

    def test_flush_fails_when_the_server_does_not_come_back(self) -> None:
        self.client.create_scene("s")
        # 5 s: the send right after the kill must come before the writer gives up, even on a
        # loaded machine; the test waits that long for the failure.
        writer = self.client.update_writer("s", reconnect_timeout=5.0)
        writer.send([Upsert(Body(1, Sphere(1)))]).result(10)
        self.server.stop(signal.SIGKILL)
        pending = writer.send([Remove(1)])
        with self.assertRaises(CollideError) as failed:
            writer.flush(30)
        self.assertEqual(failed.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertIs(pending.exception(), failed.exception)
        with self.assertRaises(CollideError):
            writer.send([Remove(1)])
        writer.cancel()

    def test_leaving_the_block_by_an_exception_cancels_the_stream(self) -> None:
        self.client.create_scene("s")
        with self.assertRaises(KeyError):
            with self.client.update_writer("s") as writer:
                writer.send([Upsert(Body(1, Sphere(1)))]).result(10)
                raise KeyError("boom")
        with self.assertRaises(CollideError):
            writer.send([Remove(1)])


class ReplicatedUpdateWriterTest(unittest.TestCase):
    """The writer against a collide-server whose replicated scene's owner answers UNAVAILABLE
    while its lease has run out (a real nats-server, stopped for a while)."""

    def setUp(self) -> None:
        binary = find_nats_server()
        if binary is None:
            self.skipTest(NO_NATS_SERVER)
        self.nats = NatsProcess(binary)
        self.addCleanup(self.nats.close)
        self.server = ServerProcess(extra_flags=replication_flags(self.nats.url))
        self.addCleanup(self.server.close)
        self.client = self.server.client()
        self.addCleanup(self.client.close)

    def create_replicated(self, scene: str) -> None:
        """Creates `scene` with durability REPLICATED, again while the server answers
        UNAVAILABLE (it may still be connecting to NATS)."""
        give_up = time.monotonic() + 20
        while True:
            try:
                self.client.create_scene(scene, SceneOptions(durability=Durability.REPLICATED))
                return
            except CollideError as error:
                if error.code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > give_up:
                    raise
                time.sleep(0.1)

    def test_batches_refused_unavailable_by_an_owner_whose_lease_ran_out_are_resent(self) -> None:
        self.create_replicated("r")
        version = self.client.get_scene("r").stats.version
        writer = self.client.update_writer("r", backoff_initial=0.01, backoff_max=0.1,
                                           reconnect_timeout=30)
        total = 150
        futures = []
        for i in range(total):
            # NATS stops answering for 1.8 s: the 600 ms lease runs out and the owner refuses
            # writes UNAVAILABLE until the bucket renews it.
            if i == 30:
                self.nats.stop()
            if i == 120:
                self.nats.resume()
            futures.append(writer.send([Upsert(Body(1 + i, Sphere(0.5), Pose((1 + i, 0, 0))))]))
            time.sleep(0.02)
        try:
            writer.close(30)
        except BatchRejectedError:
            pass  # reported below, with every other rejected batch
        rejected = [f"{f.exception().sequence}: {f.exception()}" for f in futures
                    if f.done() and f.exception() is not None]
        self.assertEqual(rejected, [], self.server.logs())
        self.assertEqual(sum(1 for f in futures if f.done() and f.exception() is None), total)
        self.assertGreaterEqual(writer.unavailable, 1,
                                "no batch was sent while the lease had run out")
        # Each batch applied once: one version each.
        self.assertEqual(self.client.get_scene("r").stats.version, version + total)
        ids = {b.id for b in self.client.get_bodies("r").bodies}
        self.assertEqual(sorted(set(range(1, total + 1)) - ids), [])


if __name__ == "__main__":
    unittest.main()
