"""Export files: the messages of ExportScene (collide.v1.SceneExportMessage) stored in order, in
the formats the C++ client and the `collide` CLI read and write (client/cpp/export_file.h):

- "pb": length-delimited protobuf, each message preceded by its length as a varint (compact and
  fast);
- "jsonl": one JSON object per line, the proto3 JSON form of each message with the proto's field
  names ({"header": {...}}, {"chunk": {"bodies": [...]}}, {"trailer": {...}}).

A file written here imports with `collide scene import`, and one written by `collide scene
export` imports with Client.import_scene.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Iterator, Optional, Union

from google.protobuf import json_format

from collide._pb import pb

__all__ = ["FORMATS", "ExportFileWriter", "guess_format", "read_export_file"]

# The formats, by name.
FORMATS = ("pb", "jsonl")

# The largest message a file may hold (the C++ reader's limit: a chunk is about 1 MiB).
MAX_MESSAGE_BYTES = 64 << 20

Path = Union[str, "os.PathLike[str]"]


def check_format(format: str) -> str:
    """`format` if it is "pb" or "jsonl"; ValueError otherwise."""
    if format not in FORMATS:
        raise ValueError(f"format: expected pb or jsonl, got {format!r}")
    return format


def guess_format(first_bytes: bytes) -> str:
    """The format of a file starting with `first_bytes`: a JSON line starts with `{"`, which no
    delimited message does."""
    return "jsonl" if first_bytes[:2] == b'{"' else "pb"


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class ExportFileWriter:
    """Appends export messages to a binary file object in one format."""

    def __init__(self, out: BinaryIO, format: str = "pb") -> None:
        self._out = out
        self.format = check_format(format)

    def write(self, message: "pb.SceneExportMessage") -> None:
        if self.format == "jsonl":
            line = json_format.MessageToJson(message, preserving_proto_field_name=True,
                                             indent=None)
            self._out.write(line.encode("utf-8") + b"\n")
            return
        data = message.SerializeToString()
        self._out.write(_varint(len(data)))
        self._out.write(data)


def _read_pb(f: BinaryIO) -> Iterator["pb.SceneExportMessage"]:
    index = 0
    while True:
        length = 0
        for i in range(6):
            byte = f.read(1)
            if not byte:
                if i == 0:
                    return
                raise ValueError(f"message {index}: the file ends inside its length")
            if i == 5:
                raise ValueError(f"message {index}: a bad length")
            length |= (byte[0] & 0x7F) << (7 * i)
            if not byte[0] & 0x80:
                break
        if length > MAX_MESSAGE_BYTES:
            raise ValueError(f"message {index}: {length} bytes, over the limit of "
                             f"{MAX_MESSAGE_BYTES}")
        data = f.read(length)
        if len(data) != length:
            raise ValueError(f"message {index}: the file ends inside the message")
        message = pb.SceneExportMessage()
        try:
            message.ParseFromString(data)
        except Exception as error:  # protobuf's DecodeError
            raise ValueError(f"message {index}: not an export message ({error})") from None
        yield message
        index += 1


def _read_jsonl(f: BinaryIO) -> Iterator["pb.SceneExportMessage"]:
    index = 0
    for line in f:
        if not line.strip():
            continue
        message = pb.SceneExportMessage()
        try:
            json_format.Parse(line.decode("utf-8"), message)
        except (json_format.ParseError, UnicodeDecodeError) as error:
            raise ValueError(f"message {index}: not a JSON export message ({error})") from None
        yield message
        index += 1


def read_export_file(path: Path,
                     format: Optional[str] = None) -> Iterator["pb.SceneExportMessage"]:
    """The messages of the export file at `path`, one at a time (the file is read as they are
    taken, so memory stays bounded by one message). `format`: "pb", "jsonl" or None to guess it
    from the first bytes (a bad name raises ValueError at once). Iterating raises ValueError
    naming the message (`message 3: ...`) that does not parse, OSError when the file cannot be
    read."""
    if format is not None:
        check_format(format)
    return _read_file(path, format)


def _read_file(path: Path, format: Optional[str]) -> Iterator["pb.SceneExportMessage"]:
    with open(path, "rb") as f:
        if format is None:
            format = guess_format(f.read(2))
            f.seek(0)
        yield from (_read_jsonl(f) if format == "jsonl" else _read_pb(f))
