"""Tokens, roles and scene prefixes (the server's --token_file) through the Python client."""

from __future__ import annotations

import signal
import unittest

import grpc

from collide import (BatchRejectedError, Body, CollideError, Query, Raycast, Remove, Sphere,
                     Upsert)
from server_process import ServerProcess

TOKENS = """\
# token role [prefixes]
admin-token admin
writer-token writer
reader-token reader

game-reader reader game-
game-writer writer game-,arena-
"""


class AuthTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        # Class cleanups run even when the set-up fails half way (tearDownClass does not), so no
        # server outlives a failed set-up.
        cls.server = ServerProcess(token_file_contents=TOKENS)
        cls.addClassCleanup(cls.server.close)
        cls.admin = cls.server.client("admin-token")
        cls.addClassCleanup(cls.admin.close)
        for scene in ("game-1", "other"):
            cls.admin.create_scene(scene)
            cls.admin.upsert_bodies(scene, [Body(1, Sphere(1))])

    def assertCode(self, code: grpc.StatusCode, call, *args, **kwargs) -> CollideError:
        with self.assertRaises(CollideError) as raised:
            call(*args, **kwargs)
        self.assertEqual(raised.exception.code, code, raised.exception.message)
        return raised.exception

    def test_calls_without_a_known_token_are_unauthenticated(self) -> None:
        with self.server.client() as anonymous, self.server.client("wrong") as wrong:
            for client in (anonymous, wrong):
                self.assertCode(grpc.StatusCode.UNAUTHENTICATED, client.list_scenes)
                self.assertCode(grpc.StatusCode.UNAUTHENTICATED, client.raycast, "other",
                                Raycast((0, 0, 0), (1, 0, 0), 1))

    def test_roles_allow_their_rpcs_only(self) -> None:
        ray = Raycast((-5, 0, 0), (1, 0, 0), 10)
        with self.server.client("reader-token") as reader, \
                self.server.client("writer-token") as writer:
            self.assertEqual([h.body_id for h in reader.raycast("other", ray).hits], [1])
            self.assertEqual(reader.get_bodies("other").bodies[0].id, 1)
            self.assertCode(grpc.StatusCode.PERMISSION_DENIED, reader.upsert_bodies, "other",
                            [Body(2, Sphere(1))])
            self.assertCode(grpc.StatusCode.PERMISSION_DENIED, writer.create_scene, "new")
            self.assertCode(grpc.StatusCode.PERMISSION_DENIED, writer.delete_scene, "other")
            written = writer.upsert_bodies("other", [Body(2, Sphere(1))])
            self.assertGreater(written.version, 1)
            writer.remove_bodies("other", [2])
            # A reader's update stream is refused as a whole: final, not retried. The stream opens
            # with the writer, so the refusal may be found before the send (which raises it) or
            # after (the batch's Future and flush carry it); both are the contract, and
            # WriterRefusalTest pins the second order down.
            stream = reader.update_writer("other")
            try:
                sent = stream.send([Remove(1)])
            except CollideError as refused:
                failure = refused
            else:
                failure = self.assertCode(grpc.StatusCode.PERMISSION_DENIED, stream.flush, 30)
                self.assertIs(sent.exception(30), failure)
            self.assertEqual(failure.code, grpc.StatusCode.PERMISSION_DENIED)
            self.assertEqual(stream.reconnects, 0, failure)
            self.assertCode(grpc.StatusCode.PERMISSION_DENIED, stream.send, [Remove(1)])
            stream.cancel()

    def test_prefixes_limit_the_scenes_a_token_reaches(self) -> None:
        with self.server.client("game-reader") as game, \
                self.server.client("game-writer") as game_writer:
            self.assertEqual([s.name for s in game.list_scenes()], ["game-1"])
            self.assertCode(grpc.StatusCode.PERMISSION_DENIED, game.get_scene, "other")
            with game.query_stream("game-1") as stream:
                answer = stream.query([Query(Raycast((-5, 0, 0), (1, 0, 0), 10))])
                self.assertEqual([h.body_id for h in answer.results[0].hits], [1])
            with game.query_stream("other") as stream:
                self.assertCode(grpc.StatusCode.PERMISSION_DENIED, stream.query,
                                [Query(Raycast((-5, 0, 0), (1, 0, 0), 10))])
            with game_writer.update_writer("game-1") as writer:
                self.assertFalse(writer.send([Upsert(Body(5, Sphere(1)))]).result(10).duplicate)
            with self.assertRaises(BatchRejectedError) as rejected:
                with game_writer.update_writer("other") as writer:
                    writer.send([Upsert(Body(5, Sphere(1)))])
            self.assertEqual(rejected.exception.code, grpc.StatusCode.PERMISSION_DENIED)
        self.assertEqual(self.admin.get_bodies("other", [5]).missing_ids, [5])
        self.assertEqual(self.admin.get_bodies("game-1", [5]).bodies[0].id, 5)



class WriterRefusalTest(unittest.TestCase):
    """The update writer's contract on a final failure, without a race deciding the outcome.

    The writer finds a refusal on its background thread. A batch sent before then is kept and
    its Future fails with the refusal; flush raises it; every send after it raises it. The writer
    is opened while the server is down, so that nothing can refuse its stream before the first
    send: the order is fixed, not left to the scheduler."""

    def test_a_refused_stream_fails_the_batches_sent_before_and_every_later_call(self) -> None:
        server = ServerProcess(token_file_contents=TOKENS)
        try:
            with server.client("admin-token") as admin:
                admin.create_scene("other")
                version = admin.get_scene("other").stats.version
            server.stop(signal.SIGKILL)
            with server.client("reader-token") as reader:
                writer = reader.update_writer("other", reconnect_timeout=600)
                sent = writer.send([Upsert(Body(7, Sphere(1)))])
                self.assertEqual(writer.pending, 1)
                server.restart_same_port()
                with self.assertRaises(CollideError) as flushed:
                    writer.flush(60)
                self.assertEqual(flushed.exception.code, grpc.StatusCode.PERMISSION_DENIED)
                # The writer fails the batch's Future just after flush sees the failure.
                self.assertEqual(sent.exception(30).code, grpc.StatusCode.PERMISSION_DENIED)
                with self.assertRaises(CollideError) as later:
                    writer.send([Upsert(Body(7, Sphere(1)))])
                self.assertEqual(later.exception.code, grpc.StatusCode.PERMISSION_DENIED)
                self.assertEqual(writer.reconnects, 0)
                writer.cancel()
            with server.client("admin-token") as admin:
                self.assertEqual(admin.get_scene("other").stats.version, version)
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main()
