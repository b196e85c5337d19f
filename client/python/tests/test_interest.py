"""The Python clients' interest streams (blocking and asyncio) against a real collide-server:
full sets then deltas as bodies move, observers added, changed and removed on the open stream,
errors with field paths, the reopened stream after a server restart (resubscribed, full sets
again), and the end of the stream when the scene is deleted."""

from __future__ import annotations

import asyncio
import signal
import unittest

import grpc

import collide.aio
from collide import (Body, CollideError, Durability, InterestMessage, Observer, Pose,
                     SceneOptions, Sphere, ViewCone)
from server_process import ServerProcess, ServerTestCase


def bodies():
    return [Body(i, Sphere(0.5), Pose((3.0 * i, 0.0, 0.0))) for i in range(1, 7)]


def until_applied(interest, count: int) -> None:
    """Reads until `count` of the stream's messages are in effect."""
    for message in interest:
        applied = (message.snapshot or message.update).requests_applied
        if applied >= count:
            return


class InterestTest(ServerTestCase):
    """Each test uses its own scene."""

    def test_full_sets_then_deltas_then_changes_on_the_open_stream(self) -> None:
        scene = "players"
        self.client.create_scene(scene, SceneOptions(durability=Durability.NONE))
        self.client.upsert_bodies(scene, bodies())
        observers = [Observer(10, 10.0, 12.0, max_relevant=2),
                     Observer(11, 4.0, attached_to=1),
                     Observer(12, 100.0, attached_to=99)]
        with self.client.interest(scene, observers) as interest:
            first = next(interest)
            self.assertIsInstance(first, InterestMessage)
            self.assertFalse(first.snapshot.resync)
            self.assertFalse(first.reconnected)
            self.assertEqual(first.snapshot.sets, {10: [1, 2], 11: [2], 12: []})
            self.assertEqual(interest.sets, {10: {1, 2}, 11: {2}, 12: set()})
            with self.client.update_writer(scene) as writer:
                ack = writer.send(moves=([1, 5], [15.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
                                                  0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])).result(10)
            update = next(interest).update
            self.assertEqual(update.version, ack.version)
            self.assertEqual(interest.sets[10], {2, 5})
            self.assertEqual(interest.sets[11], {4, 6})
            deltas = {d.observer_id: d for d in update.deltas}
            self.assertEqual((deltas[10].entered, deltas[10].left), ([5], [1]))
            # Changed, added and removed on the open stream.
            cone = ViewCone((-1.0, 0.0, 0.0), 0.5)
            interest.upsert([Observer(10, 1.0, max_relevant=2), Observer(13, 7.0, cone=cone)])
            interest.remove([12])
            until_applied(interest, 3)
            self.assertEqual(interest.sets[10], {5})
            self.assertEqual(interest.sets[13], set())  # everything is behind it
            self.assertNotIn(12, interest.sets)
            self.client.delete_scene(scene)
            with self.assertRaises(CollideError) as caught:
                next(interest)
            self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_a_bad_observer_ends_the_stream_with_its_field_path(self) -> None:
        scene = "bad"
        self.client.create_scene(scene, SceneOptions(durability=Durability.NONE))
        with self.client.interest(scene, [Observer(1, 5.0, 4.0)]) as interest:
            with self.assertRaises(CollideError) as caught:
                next(interest)
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(caught.exception.field_path, "messages[0].observers[0].leave_radius")
        with self.client.interest(scene, [Observer(1, 5.0)]) as interest:
            next(interest)
            interest.upsert([Observer(2, float("nan"))])
            with self.assertRaises(CollideError) as caught:
                next(interest)
        self.assertEqual(caught.exception.field_path, "messages[1].observers[0].enter_radius")


class InterestReconnectTest(unittest.TestCase):
    """A server of its own, restarted under the stream."""

    def test_the_stream_reopens_after_a_restart_with_every_observer(self) -> None:
        server = ServerProcess()
        self.addCleanup(server.close)
        client = server.client()
        self.addCleanup(client.close)
        client.create_scene("world")  # durable: it survives the restart
        client.upsert_bodies("world", [Body(1, Sphere(1.0), Pose((1.0, 0.0, 0.0))),
                                       Body(2, Sphere(1.0), Pose((50.0, 0.0, 0.0)))])
        with client.interest("world", [Observer(7, 5.0)]) as interest:
            next(interest)
            interest.upsert([Observer(8, 100.0)])
            until_applied(interest, 2)
            self.assertEqual(interest.sets, {7: {1}, 8: {1, 2}})
            server.stop(signal.SIGKILL)
            server.restart_same_port()
            message = next(interest)
            self.assertTrue(message.reconnected)
            self.assertEqual(message.snapshot.sets, {7: [1], 8: [1, 2]})
            self.assertEqual(message.snapshot.requests_applied, 1)
            self.assertGreaterEqual(interest.reconnects, 1)


class AioInterestTest(unittest.IsolatedAsyncioTestCase):
    """collide.aio.Interest: the same stream on asyncio."""

    async def test_full_sets_deltas_changes_and_a_reopened_stream(self) -> None:
        server = ServerProcess()
        self.addCleanup(server.close)
        blocking = server.client()
        self.addCleanup(blocking.close)
        blocking.create_scene("world")
        blocking.upsert_bodies("world", bodies())
        async with collide.aio.Client(server.address) as client:
            async with client.interest("world", [Observer(10, 10.0, 12.0, max_relevant=2)]) \
                    as interest:
                first = await interest.__anext__()
                self.assertEqual(first.snapshot.sets, {10: [1, 2]})
                await client.upsert_bodies("world", [Body(5, Sphere(0.5), Pose((0.5, 0, 0)))])
                update = (await interest.__anext__()).update
                self.assertEqual([(d.entered, d.left) for d in update.deltas], [([5], [2])])
                self.assertEqual(interest.sets, {10: {1, 5}})
                await interest.upsert([Observer(11, 1.0)])
                await interest.remove([10])
                async for message in interest:
                    if (message.snapshot or message.update).requests_applied >= 3:
                        break
                self.assertEqual(interest.sets, {11: {5}})
                # A restart under the stream: it reopens and resubscribes observer 11 alone.
                await asyncio.to_thread(server.stop, signal.SIGKILL)
                await asyncio.to_thread(server.restart_same_port)
                message = await interest.__anext__()
                self.assertTrue(message.reconnected)
                self.assertEqual(message.snapshot.sets, {11: [5]})
            with self.assertRaises(CollideError) as caught:
                async with client.interest("nowhere", [Observer(1, 1.0)]) as missing:
                    await missing.__anext__()
            self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)


if __name__ == "__main__":
    unittest.main()
