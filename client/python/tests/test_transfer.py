"""Moving scenes with the Python client against a real collide-server: export_scene as an
iterator (bounded chunks, header first, trailer last), export_scene_to_file in both formats,
import_scene from messages and from files, all or nothing; a file written here imports with the
C++ CLI (`collide scene import`) and one the CLI exported imports here; bad arguments and bad
files get clear errors; the asyncio client does the same."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import grpc

import collide
import collide.aio
from collide import Body, BodyKind, Box, Capsule, CollideError, Pose, SceneOptions, Sphere
from collide import export_file
from server_process import ServerProcess

BODIES = 1000


def mixed_bodies(count: int):
    """Bodies of every shape and kind, with rotations, filters and user data."""
    bodies = []
    for i in range(count):
        shape = (Sphere(0.4 + 0.01 * (i % 7)) if i % 3 == 0
                 else Box((0.5, 0.3, 0.2 + 0.01 * (i % 5))) if i % 3 == 1
                 else Capsule(0.3, 0.5))
        pose = Pose(((i % 40) * 2.5, ((i // 40) % 40) * 2.5, (i // 1600) * 2.5), (0, 0.6, 0, 0.8))
        bodies.append(Body(1 + 3 * i, shape, pose, category=1 << (i % 4),
                           mask=0x0F if i % 5 == 0 else 0xFFFFFFFF, user_data=i * 1000003,
                           kind=BodyKind.STATIC if i % 4 == 0 else BodyKind.DYNAMIC))
    return bodies


def cli() -> str:
    path = os.environ.get("COLLIDE_CLI")
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError("set COLLIDE_CLI to the collide binary (ctest does)")
    return path


class TransferTestCase(unittest.TestCase):
    server: ServerProcess
    client: collide.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ServerProcess()
        cls.addClassCleanup(cls.server.close)
        cls.client = cls.server.client()
        cls.addClassCleanup(cls.client.close)
        cls.client.create_scene("src", SceneOptions(fat_margin=0.25, max_bodies=5000,
                                                    history_ticks=16))
        cls.client.upsert_bodies("src", mixed_bodies(BODIES))
        with cls.client.update_writer("src", client_id=42) as writer:
            for tick in range(3):
                writer.send(moves=([1, 4], [float(tick), 1, 2, 0, 0, 0, 1] * 2), tick=10 + tick)
            writer.flush()

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="collide-transfer-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def run_cli(self, *words: str) -> subprocess.CompletedProcess:
        return subprocess.run([cli(), f"--address={self.server.address}", *words],
                              capture_output=True, text=True, timeout=60)

    def assert_same_scene(self, copy: str, original: str = "src") -> None:
        a = self.client.get_scene(copy)
        b = self.client.get_scene(original)
        self.assertEqual(a.stats.version, b.stats.version)
        self.assertEqual(a.stats.tick, b.stats.tick)
        self.assertEqual(a.stats.body_count, b.stats.body_count)
        self.assertEqual(a.options, b.options)
        # Bit for bit: the same bodies in the same order.
        self.assertEqual(self.client.get_bodies(copy).bodies,
                         self.client.get_bodies(original).bodies)

    def assert_no_scene(self, name: str) -> None:
        with self.assertRaises(CollideError) as caught:
            self.client.get_scene(name)
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)


class ExportImportTest(TransferTestCase):

    def test_the_iterator_gives_a_header_bounded_chunks_and_a_trailer(self) -> None:
        messages = list(self.client.export_scene("src", max_bodies_per_chunk=100))
        self.assertTrue(messages[0].HasField("header"))
        self.assertTrue(messages[-1].HasField("trailer"))
        chunks = messages[1:-1]
        self.assertTrue(all(m.HasField("chunk") for m in chunks))
        self.assertTrue(all(len(m.chunk.bodies) <= 100 for m in chunks))
        self.assertEqual(sum(len(m.chunk.bodies) for m in chunks), BODIES)
        self.assertEqual(messages[-1].trailer.body_count, BODIES)
        self.assertEqual(messages[-1].trailer.chunk_count, len(chunks))
        header = messages[0].header
        self.assertEqual(header.scene, "src")
        self.assertEqual(header.version, self.client.get_scene("src").stats.version)
        self.assertEqual([(c.client_id, c.sequence) for c in header.clients], [(42, 3)])
        info = self.client.import_scene(messages, "copy-iter")
        self.assertEqual(info.name, "copy-iter")
        self.assert_same_scene("copy-iter")
        # From a generator, under the header's name on a scene replaced.
        info = self.client.import_scene((m for m in messages), "copy-iter", replace=True)
        self.assertEqual(info.stats.body_count, BODIES)

    def test_files_in_both_formats_round_trip_with_the_cli(self) -> None:
        for fmt in export_file.FORMATS:
            with self.subTest(format=fmt):
                # Python writes, the C++ CLI imports (guessing the format).
                path = os.path.join(self.dir, f"py.{fmt}")
                summary = self.client.export_scene_to_file("src", path, format=fmt)
                self.assertEqual((summary.scene, summary.body_count, summary.format),
                                 ("src", BODIES, fmt))
                with open(path, "rb") as f:
                    self.assertEqual(f.read(1) == b"{", fmt == "jsonl")
                done = self.run_cli("scene", "import", path, "--name", f"from-py-{fmt}")
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assert_same_scene(f"from-py-{fmt}")
                # The C++ CLI writes, Python imports (guessing the format, then told it).
                cpp_path = os.path.join(self.dir, f"cpp.{fmt}")
                done = self.run_cli("scene", "export", "src", cpp_path, f"--format={fmt}")
                self.assertEqual(done.returncode, 0, done.stderr)
                self.client.import_scene(cpp_path, f"from-cpp-{fmt}")
                self.assert_same_scene(f"from-cpp-{fmt}")
                self.client.import_scene(cpp_path, f"from-cpp-{fmt}", replace=True, format=fmt)
                # Both writers' files hold the same messages.
                self.assertEqual(list(export_file.read_export_file(path)),
                                 list(export_file.read_export_file(cpp_path)))

    def test_an_existing_name_is_refused_unless_replaced(self) -> None:
        messages = list(self.client.export_scene("src"))
        self.client.import_scene(messages, "taken")
        with self.assertRaises(CollideError) as caught:
            self.client.import_scene(messages, "taken")
        self.assertEqual(caught.exception.code, grpc.StatusCode.ALREADY_EXISTS)
        self.client.import_scene(messages, "taken", replace=True)

    def test_bad_arguments_get_clear_errors(self) -> None:
        for bad in (-1, 2**32, 2**64 - 1, True, 1.5, "4", None):
            with self.subTest(max_bodies_per_chunk=bad):
                with self.assertRaisesRegex(ValueError, "max_bodies_per_chunk"):
                    self.client.export_scene("src", max_bodies_per_chunk=bad)
        with self.assertRaisesRegex(ValueError, "format"):
            self.client.export_scene_to_file("src", os.path.join(self.dir, "x"), format="xml")
        with self.assertRaisesRegex(ValueError, "format"):
            self.client.import_scene(os.path.join(self.dir, "x"), "x", format="xml")
        for scene, code in (("nope", grpc.StatusCode.NOT_FOUND),
                            ("", grpc.StatusCode.INVALID_ARGUMENT),
                            ("../x", grpc.StatusCode.INVALID_ARGUMENT),
                            ("x" * 300, grpc.StatusCode.INVALID_ARGUMENT)):
            with self.subTest(scene=scene):
                with self.assertRaises(CollideError) as caught:
                    list(self.client.export_scene(scene))
                self.assertEqual(caught.exception.code, code)
                self.assertTrue(caught.exception.message.startswith("scene"),
                                caught.exception.message)
        with self.assertRaisesRegex(TypeError, "SceneExportMessage"):
            self.client.import_scene(["not a message"], "bad-items")
        self.assert_no_scene("bad-items")
        with self.assertRaises(FileNotFoundError):
            self.client.import_scene(os.path.join(self.dir, "missing.pb"), "missing")
        # No message at all: the server says the stream ended before its header.
        with self.assertRaises(CollideError) as caught:
            self.client.import_scene([], "empty")
        self.assertEqual(caught.exception.code, grpc.StatusCode.DATA_LOSS)
        self.assert_no_scene("empty")

    def test_a_damaged_file_imports_nothing(self) -> None:
        path = os.path.join(self.dir, "src.pb")
        self.client.export_scene_to_file("src", path, max_bodies_per_chunk=100)
        with open(path, "rb") as f:
            data = f.read()
        # Cut inside the fourth message: the messages before it were sent, nothing is imported.
        cut = os.path.join(self.dir, "cut.pb")
        with open(cut, "wb") as f:
            f.write(data[:len(data) // 3])
        with self.assertRaisesRegex(ValueError, r"^message \d+: the file ends inside"):
            self.client.import_scene(cut, "cut")
        self.assert_no_scene("cut")
        # A JSON line a person broke.
        jsonl = os.path.join(self.dir, "src.jsonl")
        self.client.export_scene_to_file("src", jsonl, format="jsonl")
        with open(jsonl, encoding="utf-8") as f:
            lines = f.read().splitlines()
        lines[2] = lines[2][:-5]
        broken = os.path.join(self.dir, "broken.jsonl")
        with open(broken, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        with self.assertRaisesRegex(ValueError, r"^message 2: not a JSON export message"):
            self.client.import_scene(broken, "broken")
        self.assert_no_scene("broken")
        # An edited body the server refuses, with its field path.
        with open(jsonl, encoding="utf-8") as f:
            text = re.sub(r'"radius":\s*', '"radius": -', f.read(), count=1)
        invalid = os.path.join(self.dir, "invalid.jsonl")
        with open(invalid, "w", encoding="utf-8") as f:
            f.write(text)
        with self.assertRaises(CollideError) as caught:
            self.client.import_scene(invalid, "invalid")
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("radius", caught.exception.message)
        self.assert_no_scene("invalid")

    def test_leaving_the_iteration_early_ends_the_export(self) -> None:
        stream = self.client.export_scene("src", max_bodies_per_chunk=10)
        self.assertTrue(next(stream).HasField("header"))
        stream.close()
        # The server lets the stream go.
        for _ in range(500):
            if self.client.server_stats().export_streams == 0:
                break
            time.sleep(0.02)
        self.assertEqual(self.client.server_stats().export_streams, 0)


class AioExportImportTest(TransferTestCase):

    def test_the_asyncio_client_exports_and_imports(self) -> None:
        asyncio.run(self.asyncio_round_trip())

    async def asyncio_round_trip(self) -> None:
        async with collide.aio.Client(self.server.address) as client:
            messages = [m async for m in client.export_scene("src", max_bodies_per_chunk=300)]
            self.assertEqual(messages, list(self.client.export_scene("src",
                                                                     max_bodies_per_chunk=300)))
            await client.import_scene(messages, "aio-list")
            self.assert_same_scene("aio-list")

            async def generate():
                for m in messages:
                    yield m

            await client.import_scene(generate(), "aio-gen")
            self.assert_same_scene("aio-gen")
            for fmt in export_file.FORMATS:
                path = os.path.join(self.dir, f"aio.{fmt}")
                summary = await client.export_scene_to_file("src", path, format=fmt)
                self.assertEqual(summary.body_count, BODIES)
                done = self.run_cli("scene", "import", path, "--name", f"aio-cli-{fmt}")
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assert_same_scene(f"aio-cli-{fmt}")
                await client.import_scene(path, f"aio-file-{fmt}")
                self.assert_same_scene(f"aio-file-{fmt}")
            with self.assertRaises(CollideError) as caught:
                [m async for m in client.export_scene("nope")]
            self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
            with self.assertRaises(CollideError) as caught:
                await client.import_scene(messages, "aio-list")
            self.assertEqual(caught.exception.code, grpc.StatusCode.ALREADY_EXISTS)
            with self.assertRaisesRegex(ValueError, "max_bodies_per_chunk"):
                client.export_scene("src", max_bodies_per_chunk=-1)
            with self.assertRaisesRegex(TypeError, "SceneExportMessage"):
                await client.import_scene([messages[0], 7], "aio-bad")
            self.assert_no_scene("aio-bad")


class MovedSceneTest(TransferTestCase):
    """A scene marked as moving (the mark `collide scene move` sets) shows where it goes in
    SceneInfo.moved_to, and every kind of write names that address in CollideError.moved_to."""

    def mark(self, scene: str, destination: str = "", clear: bool = False) -> None:
        from collide._pb import pb, pb_grpc
        with grpc.insecure_channel(self.server.address) as channel:
            pb_grpc.CollideStub(channel).SetSceneMoving(
                pb.SetSceneMovingRequest(scene=scene, destination=destination, clear=clear),
                timeout=10)

    def test_writes_to_a_moving_scene_name_its_destination(self) -> None:
        self.client.create_scene("moving")
        self.client.upsert_bodies("moving", [Body(1, Sphere(1), Pose((0, 0, 0)))])
        self.assertEqual(self.client.get_scene("moving").moved_to, "")
        self.mark("moving", "10.0.0.4:50051")
        self.assertEqual(self.client.get_scene("moving").moved_to, "10.0.0.4:50051")
        self.assertIn("10.0.0.4:50051",
                      [s.moved_to for s in self.client.list_scenes() if s.name == "moving"])
        with self.assertRaises(CollideError) as caught:
            self.client.upsert_bodies("moving", [Body(2, Sphere(1), Pose((3, 0, 0)))])
        self.assertEqual(caught.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(caught.exception.moved_to, "10.0.0.4:50051")
        self.assertIn("moved to 10.0.0.4:50051", caught.exception.message)
        # The update writer sends the batch again (the scene may come back, or a router send it
        # to the new server), and gives up after its reconnect_timeout with the answer.
        with self.assertRaises(CollideError) as refused:
            with self.client.update_writer("moving", backoff_max=0.1,
                                           reconnect_timeout=1) as writer:
                writer.send([collide.SetPose(1, Pose((1, 2, 3)))]).result(10)
        self.assertNotIsInstance(refused.exception, collide.BatchRejectedError)
        self.assertEqual(refused.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(refused.exception.moved_to, "10.0.0.4:50051")
        self.assertGreaterEqual(writer.redirected, 2)
        asyncio.run(self.asyncio_write_is_refused())
        # Reads go on; a cleared mark takes writes again, and errors then name no server.
        self.assertEqual(self.client.get_scene("moving").stats.body_count, 1)
        self.mark("moving", clear=True)
        self.assertEqual(self.client.get_scene("moving").moved_to, "")
        self.client.upsert_bodies("moving", [Body(2, Sphere(1), Pose((3, 0, 0)))])
        with self.assertRaises(CollideError) as caught:
            self.client.get_scene("no-such-scene")
        self.assertEqual(caught.exception.moved_to, "")

    async def asyncio_write_is_refused(self) -> None:
        async with collide.aio.Client(self.server.address) as client:
            self.assertEqual((await client.get_scene("moving")).moved_to, "10.0.0.4:50051")
            with self.assertRaises(CollideError) as caught:
                await client.upsert_bodies("moving", [Body(3, Sphere(1), Pose((6, 0, 0)))])
            self.assertEqual(caught.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
            self.assertEqual(caught.exception.moved_to, "10.0.0.4:50051")


if __name__ == "__main__":
    unittest.main()
