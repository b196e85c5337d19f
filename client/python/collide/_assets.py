"""Level geometry uploads (UploadAsset) built from arrays: any object with the buffer protocol
(array.array, memoryview; bytes, bytearray and other byte buffers hold the little-endian 32-bit
values themselves), a numpy array of any integer or floating dtype and shape (8-bit ones and
either byte order included: always its values; no numpy needed to import this module) or any
iterable of numbers, converted to float32 vertices or heights and uint32 indices; then the
header, the chunks and the trailer with its counts and CRC-32C (collide.proto, "Level
geometry"). The blocking and asyncio clients send these requests.

Arrays are read in place, never copied behind the caller's back: a buffer or numpy array that is
not C-contiguous (a strided slice, a transpose) is refused with ValueError (numpy's
ascontiguousarray makes the copy when that is what is wanted); a numpy array of booleans,
complex numbers or objects is refused with TypeError."""

from __future__ import annotations

from array import array
import sys
from typing import Any, Iterator, List, Optional

from collide._pb import pb

# Values per AssetChunk list: 4 bytes each, about 1 MiB per chunk (well under the server's
# --max_message_bytes).
DEFAULT_CHUNK_VALUES = 1 << 18


def _flat_numpy(data: Any, typecode: str, what: str) -> Any:
    """A numpy array's values: an array of `typecode` when its dtype is that type already (read
    in place), else its values as a list for _flat to convert. Duck-typed: numpy is not
    imported."""
    dtype = data.dtype
    if dtype.kind not in "iuf":
        raise TypeError(f"{what}: numbers expected, got a numpy array of {dtype}")
    if not data.flags["C_CONTIGUOUS"]:
        raise ValueError(f"{what}: a C-contiguous array expected (numpy.ascontiguousarray "
                         "copies one)")
    exact = dtype.kind == ("f" if typecode == "f" else "u") and dtype.itemsize == 4
    if exact and dtype.isnative:
        out = array(typecode)
        out.frombytes(memoryview(data).cast("B"))
        return out
    return data.reshape(-1).tolist()


def _flat(data: Any, typecode: str, what: str) -> array:
    """`data` as a flat array of `typecode` ("f": float32, "I": uint32); values that do not fit
    raise ValueError naming `what`."""
    if hasattr(data, "dtype") and hasattr(data, "flags") and hasattr(data, "reshape"):
        values = _flat_numpy(data, typecode, what)
        if isinstance(values, array):
            return values
        data = values
    try:
        view = memoryview(data)
    except TypeError:
        view = None
    if view is not None:
        if not view.c_contiguous:
            raise ValueError(f"{what}: a C-contiguous buffer expected")
        fmt = view.format.lstrip("@=<")
        if fmt in ("B", "b", "c"):
            # Plain bytes: the values themselves, little-endian 32-bit.
            if view.nbytes % 4 != 0:
                raise ValueError(f"{what}: {view.nbytes} bytes, not a whole number of 32-bit "
                                 "values")
            out = array(typecode)
            out.frombytes(view.cast("B") if view.ndim != 1 or view.format != "B" else view)
            if sys.byteorder != "little":
                out.byteswap()
            return out
        if view.ndim != 1 or fmt != view.format:
            view = view.cast("B").cast(fmt) if view.nbytes > 0 else view.cast("B")
        if fmt == typecode and view.itemsize == array(typecode).itemsize:
            out = array(typecode)
            out.frombytes(view.cast("B"))
            return out
        values = view.tolist()
    else:
        values = data
    try:
        if typecode == "I":
            out = array("I")
            for index, value in enumerate(values):
                if isinstance(value, float):
                    if not value.is_integer():
                        raise ValueError(f"{what}[{index}]: not an integer: {value!r}")
                    value = int(value)
                if not 0 <= value <= 0xFFFFFFFF:
                    raise ValueError(f"{what}[{index}]: not a uint32: {value!r}")
                out.append(value)
            return out
        return array("f", values)
    except TypeError as error:
        raise TypeError(f"{what}: numbers expected ({error})") from None
    except OverflowError as error:
        raise ValueError(f"{what}: {error}") from None


def _little_endian(values: array) -> bytes:
    if sys.byteorder == "little":
        return values.tobytes()
    swapped = array(values.typecode, values)
    swapped.byteswap()
    return swapped.tobytes()


def _crc32c_table() -> List[int]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC-32C (Castagnoli) of `data`, extending `crc` (pure Python: about 10 MB/s)."""
    table = _TABLE
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _check_name(name: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"name: a str expected, got {name!r}")


class UploadRequests:
    """The messages of one UploadAsset call: the header (with the scene), the chunks, the
    trailer. Iterable (blocking client) and asynchronously iterable (asyncio client)."""

    def __init__(self, scene: str, header, lists: List[tuple], chunk_values: int) -> None:
        if not isinstance(scene, str):
            raise TypeError(f"scene: a str expected, got {scene!r}")
        if isinstance(chunk_values, bool) or not isinstance(chunk_values, int) \
                or chunk_values < 1:
            raise ValueError(f"chunk_values: a positive integer, got {chunk_values!r}")
        self._scene = scene
        self._header = header
        # (AssetChunk field, array or bytes, CRC counts its bytes as sent).
        self._lists = lists
        self._chunk_values = chunk_values

    def _messages(self) -> Iterator:
        yield pb.UploadAssetRequest(scene=self._scene, header=self._header)
        crc = 0
        chunks = 0
        for field, values in self._lists:
            for start in range(0, len(values), self._chunk_values):
                part = values[start:start + self._chunk_values]
                chunk = pb.AssetChunk()
                if field == "holes":
                    chunk.holes = bytes(part)
                    crc = crc32c(bytes(part), crc)
                else:
                    getattr(chunk, field).extend(part)
                    crc = crc32c(_little_endian(part), crc)
                chunks += 1
                yield pb.UploadAssetRequest(chunk=chunk)
        trailer = pb.AssetTrailer(chunk_count=chunks, crc32c=crc)
        if self._header.HasField("mesh"):
            trailer.vertex_count = self._header.mesh.vertex_count
            trailer.index_count = self._header.mesh.index_count
        else:
            trailer.sample_count = self._header.heightfield.rows * self._header.heightfield.columns
            trailer.hole_bytes = sum(len(v) for f, v in self._lists if f == "holes")
        yield pb.UploadAssetRequest(trailer=trailer)

    def __iter__(self) -> Iterator:
        return self._messages()

    async def __aiter__(self):
        for message in self._messages():
            yield message


def mesh_requests(scene: str, name: str, vertices: Any, indices: Any,
                  chunk_values: int = DEFAULT_CHUNK_VALUES) -> UploadRequests:
    """An upload of a triangle mesh: `vertices` x, y, z per vertex (float32), `indices` three per
    triangle (uint32), each any buffer or iterable of numbers."""
    _check_name(name)
    floats = _flat(vertices, "f", "vertices")
    ints = _flat(indices, "I", "indices")
    if len(floats) % 3 != 0:
        raise ValueError(f"vertices: {len(floats)} floats, not 3 per vertex")
    header = pb.AssetHeader(name=name)
    header.mesh.vertex_count = len(floats) // 3
    header.mesh.index_count = len(ints)
    return UploadRequests(scene, header, [("vertices", floats), ("indices", ints)], chunk_values)


def heightfield_requests(scene: str, name: str, rows: int, columns: int, heights: Any,
                         spacing_x: float = 1.0, spacing_z: float = 1.0,
                         holes: Optional[Any] = None,
                         chunk_values: int = DEFAULT_CHUNK_VALUES) -> UploadRequests:
    """An upload of a heightfield: rows x columns heights, row-major (float32), the spacings
    between samples, and optionally its hole bits ((rows - 1) x (columns - 1) bits, cell c at bit
    c % 8 of byte c / 8; bytes or any buffer)."""
    _check_name(name)
    floats = _flat(heights, "f", "heights")
    header = pb.AssetHeader(name=name)
    header.heightfield.rows = rows
    header.heightfield.columns = columns
    header.heightfield.spacing_x = spacing_x
    header.heightfield.spacing_z = spacing_z
    lists: List[tuple] = [("heights", floats)]
    if holes is not None:
        header.heightfield.has_holes = True
        lists.append(("holes", bytes(memoryview(holes).cast("B"))))
    return UploadRequests(scene, header, lists, chunk_values)
