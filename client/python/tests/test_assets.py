"""Level geometry from Python against a real collide-server: meshes and heightfields uploaded
from any buffer or iterable (numpy arrays too when numpy is installed), placed by bodies, hit by
rays that name their triangle, read back, listed and deleted; the request's own checks and the
server's errors with their field paths; the asyncio client's upload."""

from __future__ import annotations

from array import array
import asyncio
import struct
import unittest

import grpc

import collide
import collide.aio
from collide import Body, BodyKind, CollideError, Heightfield, Mesh, Pose, Raycast
from collide import _assets as assets
from server_process import ServerTestCase

# A wall 4 wide (x from -2 to 2) and 4 high (z from 0 to 4) in the plane y = 0, its front facing
# -y: triangles (0 2 1) and (0 3 2).
WALL_VERTICES = [-2, 0, 0, -2, 0, 4, 2, 0, 4, 2, 0, 0]
WALL_INDICES = [0, 2, 1, 0, 3, 2]


class Crc32cTest(unittest.TestCase):

    def test_known_answers(self) -> None:
        # RFC 3720, B.4: 32 zero bytes and "123456789".
        self.assertEqual(assets.crc32c(bytes(32)), 0x8A9136AA)
        self.assertEqual(assets.crc32c(b"123456789"), 0xE3069283)
        # Extending equals the whole.
        self.assertEqual(assets.crc32c(b"6789", assets.crc32c(b"12345")), 0xE3069283)


class RequestsTest(unittest.TestCase):

    def test_every_buffer_kind_sends_the_same_values(self) -> None:
        forms = [
            WALL_VERTICES,
            [float(v) for v in WALL_VERTICES],
            array("f", WALL_VERTICES),
            array("d", WALL_VERTICES),
            struct.pack("<12f", *WALL_VERTICES),
            memoryview(array("f", WALL_VERTICES)),
        ]
        try:
            import numpy  # noqa: F401 (optional)
            forms.append(numpy.array(WALL_VERTICES, dtype=numpy.float64).reshape(4, 3))
            forms.append(numpy.array(WALL_VERTICES, dtype=numpy.float32))
        except ImportError:
            pass
        sent = []
        for form in forms:
            messages = list(assets.mesh_requests("s", "wall", form, array("I", WALL_INDICES)))
            self.assertEqual(len(messages), 4)  # header, vertices, indices, trailer
            sent.append([m.SerializeToString() for m in messages])
        for other in sent[1:]:
            self.assertEqual(other, sent[0])

    def test_the_trailer_counts_and_checksums_what_the_chunks_carry(self) -> None:
        messages = list(assets.mesh_requests("s", "wall", WALL_VERTICES, WALL_INDICES,
                                             chunk_values=5))
        header, chunks, trailer = messages[0], messages[1:-1], messages[-1].trailer
        self.assertEqual(header.scene, "s")
        self.assertEqual(header.header.mesh.vertex_count, 4)
        self.assertEqual(header.header.mesh.index_count, 6)
        # 12 floats in chunks of 5: 3 chunks; 6 indices: 2.
        self.assertEqual(len(chunks), 5)
        self.assertEqual(trailer.chunk_count, 5)
        self.assertEqual((trailer.vertex_count, trailer.index_count), (4, 6))
        data = struct.pack("<12f", *WALL_VERTICES) + struct.pack("<6I", *WALL_INDICES)
        self.assertEqual(trailer.crc32c, assets.crc32c(data))

    def test_values_that_do_not_fit_are_refused_before_sending(self) -> None:
        with self.assertRaisesRegex(ValueError, r"indices\[1\]: not a uint32"):
            assets.mesh_requests("s", "m", WALL_VERTICES, [0, -1, 2])
        with self.assertRaisesRegex(ValueError, r"indices\[0\]: not an integer"):
            assets.mesh_requests("s", "m", WALL_VERTICES, [0.5, 1, 2])
        with self.assertRaisesRegex(ValueError, "vertices: 4 floats, not 3 per vertex"):
            assets.mesh_requests("s", "m", [0, 0, 0, 1], [0, 0, 0])
        with self.assertRaisesRegex(TypeError, "vertices: numbers expected"):
            assets.mesh_requests("s", "m", ["a", "b", "c"], [0, 0, 0])


try:
    import numpy
except ImportError:  # numpy is optional; scripts/ installs Debian's python3-numpy
    numpy = None


@unittest.skipIf(numpy is None, "numpy is not installed")
class NumpyRequestsTest(unittest.TestCase):
    """numpy arrays of every integer and floating dtype and either byte order send their values,
    as the same floats and uint32s a list sends; arrays that are not C-contiguous and dtypes that
    are not numbers are refused before anything is sent."""

    def sent(self, vertices, indices) -> list:
        return [m.SerializeToString()
                for m in assets.mesh_requests("s", "wall", vertices, indices)]

    def test_every_numeric_dtype_and_byte_order_sends_the_values(self) -> None:
        want = self.sent(WALL_VERTICES, WALL_INDICES)
        for dtype in ("<f4", ">f4", "<f8", ">f8", "f2", "i1", "i2", "<i4", ">i4", "i8"):
            vertices = numpy.array(WALL_VERTICES, dtype=dtype).reshape(4, 3)
            self.assertEqual(self.sent(vertices, WALL_INDICES), want, dtype)
        for dtype in ("u1", "i1", "<u2", ">u2", "<u4", ">u4", "i4", "u8", "i8", "f4", "f8"):
            indices = numpy.array(WALL_INDICES, dtype=dtype).reshape(2, 3)
            self.assertEqual(self.sent(WALL_VERTICES, indices), want, dtype)
        # Heightfields: float64 heights in a 2-D grid, uint8 hole bits.
        grid = numpy.arange(9, dtype=numpy.float64).reshape(3, 3) / 4
        from_numpy = [m.SerializeToString() for m in assets.heightfield_requests(
            "s", "g", 3, 3, grid, 1.0, 1.0, numpy.array([0b1000], dtype=numpy.uint8),
            assets.DEFAULT_CHUNK_VALUES)]
        from_lists = [m.SerializeToString() for m in assets.heightfield_requests(
            "s", "g", 3, 3, [v / 4 for v in range(9)], 1.0, 1.0, bytes([0b1000]),
            assets.DEFAULT_CHUNK_VALUES)]
        self.assertEqual(from_numpy, from_lists)

    def test_float32_is_read_in_place_without_a_conversion(self) -> None:
        vertices = numpy.array(WALL_VERTICES, dtype=numpy.float32)
        self.assertEqual(assets._flat(vertices, "f", "vertices").tobytes(), vertices.tobytes())
        indices = numpy.array(WALL_INDICES, dtype=numpy.uint32)
        self.assertEqual(assets._flat(indices, "I", "indices").tobytes(), indices.tobytes())

    def test_non_contiguous_arrays_and_non_numbers_are_refused(self) -> None:
        block = numpy.array(WALL_VERTICES * 2, dtype=numpy.float32).reshape(8, 3)
        for label, strided in (("every other row", block[::2]), ("a transpose", block.T),
                               ("two columns", block[:, :2])):
            with self.assertRaisesRegex(ValueError, "vertices: a C-contiguous array expected",
                                        msg=label):
                assets.mesh_requests("s", "m", strided, WALL_INDICES)
        # A contiguous copy of the same rows is taken.
        self.assertEqual(self.sent(numpy.ascontiguousarray(block[:4]), WALL_INDICES),
                         self.sent(WALL_VERTICES, WALL_INDICES))
        for bad in (numpy.array([True, False, True]), numpy.array([1 + 2j, 0, 0]),
                    numpy.array(["a", "b", "c"]), numpy.array([None, 1, 2], dtype=object)):
            with self.assertRaisesRegex(TypeError, "vertices: numbers expected", msg=str(bad.dtype)):
                assets.mesh_requests("s", "m", bad, [0, 0, 0])

    def test_indices_that_are_not_uint32_are_refused_by_their_position(self) -> None:
        with self.assertRaisesRegex(ValueError, r"indices\[1\]: not a uint32"):
            assets.mesh_requests("s", "m", WALL_VERTICES, numpy.array([0, -1, 2], dtype=numpy.int32))
        with self.assertRaisesRegex(ValueError, r"indices\[2\]: not a uint32"):
            assets.mesh_requests("s", "m", WALL_VERTICES, numpy.array([0, 1, 2**40]))
        with self.assertRaisesRegex(ValueError, r"indices\[0\]: not an integer"):
            assets.mesh_requests("s", "m", WALL_VERTICES, numpy.array([0.5, 1, 2]))


class AssetsTest(ServerTestCase):

    def test_a_mesh_is_uploaded_placed_hit_by_triangle_listed_and_deleted(self) -> None:
        self.client.create_scene("assets-mesh")
        up = self.client.upload_mesh("assets-mesh", "wall", array("f", WALL_VERTICES),
                                     WALL_INDICES)
        self.assertFalse(up.already_present)
        self.assertEqual((up.asset.name, up.asset.kind, up.asset.triangle_count),
                         ("wall", "mesh", 2))
        self.assertEqual(len(up.asset.sha256), 64)
        self.assertEqual(up.asset.bounds_min, collide.Vec3(-2, 0, 0))
        self.assertEqual(up.asset.bounds_max, collide.Vec3(2, 0, 4))
        again = self.client.upload_mesh("assets-mesh", "wall", WALL_VERTICES, WALL_INDICES)
        self.assertTrue(again.already_present)
        self.assertEqual(again.asset.sha256, up.asset.sha256)

        self.client.upsert_bodies("assets-mesh", [
            Body(7, Mesh("wall", 2.0), Pose((0, 5, 0)), kind=BodyKind.STATIC)])
        # The wall scaled by 2 spans x in [-4, 4], z in [0, 8] at y = 5; (3, 1) lies in
        # triangle 1, (-3, 7) in triangle 0; seen from -y both are front faces.
        hit = self.client.raycast("assets-mesh", Raycast((3, 0, 1), (0, 1, 0), 100)).hits[0]
        self.assertEqual((hit.body_id, hit.triangle, hit.back_face), (7, 1, False))
        self.assertAlmostEqual(hit.distance, 5.0, places=5)
        self.assertEqual(hit.normal, collide.Vec3(0, -1, 0))
        hit = self.client.raycast("assets-mesh", Raycast((-3, 10, 7), (0, -1, 0), 100)).hits[0]
        self.assertEqual((hit.body_id, hit.triangle, hit.back_face), (7, 0, True))
        body = self.client.get_bodies("assets-mesh", [7]).bodies[0]
        self.assertEqual(body.shape, Mesh("wall", 2.0))

        [listed] = self.client.list_assets("assets-mesh")
        self.assertEqual((listed.name, listed.body_count), ("wall", 1))
        with self.assertRaises(CollideError) as used:
            self.client.delete_asset("assets-mesh", "wall")
        self.assertEqual(used.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(used.exception.field_path, "name")
        self.client.remove_bodies("assets-mesh", [7])
        self.client.delete_asset("assets-mesh", "wall")
        self.assertEqual(self.client.list_assets("assets-mesh"), [])

    def test_a_heightfield_with_holes_is_uploaded_and_placed(self) -> None:
        self.client.create_scene("assets-field")
        # 3 x 3 samples, 2 x 2 cells, cell 3 (i = 1, j = 1) a hole.
        up = self.client.upload_heightfield("assets-field", "ground", 3, 3, [0.0] * 9,
                                            spacing_x=2.0, spacing_z=2.0, holes=bytes([0b1000]))
        self.assertEqual((up.asset.kind, up.asset.triangle_count), ("heightfield", 8))
        self.client.upsert_bodies("assets-field", [
            Body(1, Heightfield("ground"), kind=BodyKind.STATIC)])
        down = (0, -1, 0)
        hit = self.client.raycast("assets-field", Raycast((1, 5, 1), down, 100)).hits[0]
        self.assertEqual(hit.body_id, 1)
        self.assertIn(hit.triangle, (0, 1))
        self.assertAlmostEqual(hit.distance, 5.0, places=4)
        # Through the hole: no hit.
        self.assertEqual(self.client.raycast("assets-field", Raycast((3, 5, 3), down, 100)).hits,
                         [])
        self.assertEqual(self.client.get_bodies("assets-field", [1]).bodies[0].shape,
                         Heightfield("ground", 1.0))

    def test_bad_content_is_refused_with_its_path_and_nothing_is_stored(self) -> None:
        self.client.create_scene("assets-bad")
        bad = list(WALL_VERTICES)
        bad[4] = float("nan")
        with self.assertRaises(CollideError) as nan:
            self.client.upload_mesh("assets-bad", "wall", bad, WALL_INDICES)
        self.assertEqual(nan.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(nan.exception.field_path, "vertices[1]")
        with self.assertRaises(CollideError) as index:
            self.client.upload_mesh("assets-bad", "wall", WALL_VERTICES, [0, 1, 0xFFFFFFFF])
        self.assertEqual(index.exception.field_path, "indices[2]")
        with self.assertRaises(CollideError) as name:
            self.client.upload_mesh("assets-bad", "no spaces", WALL_VERTICES, WALL_INDICES)
        self.assertEqual(name.exception.field_path, "header.name")
        with self.assertRaises(CollideError) as missing:
            self.client.upsert_bodies("assets-bad", [Body(1, Mesh("none"))])
        self.assertEqual(missing.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(self.client.list_assets("assets-bad"), [])

    @unittest.skipIf(numpy is None, "numpy is not installed")
    def test_numpy_arrays_upload_and_a_nan_is_refused_by_its_path(self) -> None:
        self.client.create_scene("assets-numpy")
        vertices = numpy.array(WALL_VERTICES, dtype=numpy.float64).reshape(4, 3)
        indices = numpy.array(WALL_INDICES, dtype=numpy.int64).reshape(2, 3)
        up = self.client.upload_mesh("assets-numpy", "wall", vertices, indices)
        self.assertEqual(up.asset.triangle_count, 2)
        # The same content from lists: the same asset, already present.
        again = self.client.upload_mesh("assets-numpy", "wall", WALL_VERTICES, WALL_INDICES)
        self.assertTrue(again.already_present)
        self.assertEqual(again.asset.sha256, up.asset.sha256)
        rows, columns = 4, 5
        heights = (numpy.arange(rows * columns, dtype=numpy.float32).reshape(rows, columns) / 2)
        field = self.client.upload_heightfield("assets-numpy", "ground", rows, columns, heights)
        self.assertEqual(field.asset.triangle_count, 2 * (rows - 1) * (columns - 1))
        self.client.upsert_bodies("assets-numpy", [
            Body(1, Heightfield("ground"), Pose((100, 0, 0)), kind=BodyKind.STATIC)])
        # Sample (2, 3) is at local (3, heights[2, 3], 2).
        hit = self.client.raycast("assets-numpy", Raycast((103, 50, 2), (0, -1, 0), 100)).hits[0]
        self.assertAlmostEqual(hit.distance, 50 - float(heights[2, 3]), places=2)
        bad = heights.copy()
        bad[1, 2] = numpy.nan
        with self.assertRaises(CollideError) as nan:
            self.client.upload_heightfield("assets-numpy", "bad", rows, columns, bad)
        self.assertEqual(nan.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(nan.exception.field_path, "heights[7]")
        self.assertEqual([a.name for a in self.client.list_assets("assets-numpy")],
                         ["ground", "wall"])

    def test_the_asyncio_client_uploads_as_the_blocking_one(self) -> None:
        self.client.create_scene("assets-aio")

        async def run():
            client = collide.aio.Client(self.server.address)
            try:
                up = await client.upload_mesh("assets-aio", "wall", WALL_VERTICES, WALL_INDICES)
                listed = await client.list_assets("assets-aio")
                await client.delete_asset("assets-aio", "wall")
                return up, listed
            finally:
                await client.close()

        up, listed = asyncio.run(run())
        self.assertEqual(up.asset.triangle_count, 2)
        self.assertEqual([a.name for a in listed], ["wall"])
        self.assertEqual(self.client.list_assets("assets-aio"), [])


if __name__ == "__main__":
    unittest.main()
