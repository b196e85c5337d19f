"""The Python client's Watch against a real collide-server: the starting snapshot, a fast body
swept through a thin fence (enter then exit in one update), contacts, errors with field paths,
and the end of the stream when the scene is deleted."""

from __future__ import annotations

import unittest

import grpc

from collide import (Body, Box, CollideError, ContactPair, ContactWatch, Durability, Fence,
                     FenceContents, Pose, SceneOptions, Sphere, Vec3, WatchEvent, WatchEventKind,
                     WatchMessage, WatchSnapshot, WatchUpdate)
from server_process import ServerTestCase


class WatchTest(ServerTestCase):
    """Each test uses its own scene."""

    def test_a_fast_body_crossing_a_thin_fence_enters_and_exits_in_one_update(self) -> None:
        scene = "sweep"
        self.client.create_scene(scene, SceneOptions(durability=Durability.NONE))
        self.client.upsert_bodies(scene, [
            Body(1, Sphere(0.05), Pose((-50.0, 0.5, 0.0))),
            Body(2, Sphere(0.5), Pose((10.0, 0.0, 5.0))),
            Body(3, Sphere(0.5), Pose((10.8, 0.0, 5.0)))])
        with self.client.watch(scene, [Fence(7, Box((0.01, 2.0, 2.0)))],
                               [ContactWatch(5)]) as watch:
            first = next(watch)
            self.assertIsInstance(first, WatchMessage)
            self.assertIsNone(first.update)
            self.assertIsInstance(first.snapshot, WatchSnapshot)
            self.assertFalse(first.snapshot.resync)
            self.assertEqual([f.fence_id for f in first.snapshot.fences], [7])
            self.assertEqual(list(first.snapshot.fences[0].body_ids), [])
            self.assertEqual(first.snapshot.fences, [FenceContents(7, [])])
            self.assertEqual(first.snapshot.contacts, [ContactPair(5, 2, 3)])
            self.assertEqual([(p.body_id, p.other_body_id) for p in first.snapshot.contacts],
                             [(2, 3)])
            with self.client.update_writer(scene) as writer:
                ack = writer.send(moves=([1], [50.0, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0])).result(10)
                update = next(watch).update
                self.assertIsInstance(update, WatchUpdate)
                self.assertEqual(update.version, ack.version)
                self.assertEqual([(e.kind, e.fence_id, e.body_id) for e in update.events],
                                 [(WatchEventKind.ENTER, 7, 1),
                                  (WatchEventKind.EXIT, 7, 1)])
                self.assertAlmostEqual(update.events[0].point.x, -0.01, places=4)
                self.assertAlmostEqual(update.events[0].normal.x, -1.0, places=5)
                self.assertIsInstance(update.events[0], WatchEvent)
                self.assertIsInstance(update.events[0].point, Vec3)
                self.assertIsNone(update.events[1].point)
                self.assertIsNone(update.events[1].normal)
                writer.send(moves=([3], [20.0, 0.0, 5.0, 0.0, 0.0, 0.0, 1.0])).result(10)
                update = next(watch).update
                self.assertEqual([(e.kind, e.contact_id, e.body_id, e.other_body_id)
                                  for e in update.events],
                                 [(WatchEventKind.CONTACT_END, 5, 2, 3)])
            self.client.delete_scene(scene)
            with self.assertRaises(CollideError) as caught:
                next(watch)
            self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_a_bad_fence_fails_with_its_field_path(self) -> None:
        scene = "bad"
        self.client.create_scene(scene, SceneOptions(durability=Durability.NONE))
        watch = self.client.watch(scene, [Fence(1, Sphere(1.0)), Fence(2, Sphere(-1.0))])
        with self.assertRaises(CollideError) as caught:
            next(watch)
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertTrue(caught.exception.message.startswith("fences[1].shape.sphere.radius: "),
                        caught.exception.message)


if __name__ == "__main__":
    unittest.main()
