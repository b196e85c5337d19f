#!/usr/bin/env python3
"""Oversized request headers sent by a raw HTTP/2 client (no gRPC library) to a real collide-server.

gRPC 1.51's HTTP/2 layer holds a connection's header blocks to its limit (twice
--max_metadata_bytes) only once the client has acknowledged the server's SETTINGS; before that it
uses HTTP/2's default of 16 MiB, and a client is free never to acknowledge. So the service's own
per-call check is what refuses such headers: these tests send them with and without the
acknowledgement and check, frame by frame, what the server answers.

Usage: raw_http2_metadata_test.py <collide-server>
"""

import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

SERVER = ""
LIMIT = 16384  # the server's default --max_metadata_bytes
REFUSAL = b"exceed the server's limit of 16384 (--max_metadata_bytes)"
TRANSPORT_REFUSAL = b"received initial metadata size exceeds limit"

DATA, HEADERS, RST_STREAM, SETTINGS, GOAWAY, CONTINUATION = 0, 1, 3, 4, 7, 9
END_STREAM, END_HEADERS, ACK = 1, 4, 1


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(
        ">I", stream) + payload


def hpack_int(value, prefix_bits):
    """An HPACK integer (RFC 7541 section 5.1) with the given prefix, first-byte flags clear."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([value])
    out = [limit]
    value -= limit
    while value >= 128:
        out.append((value & 127) | 128)
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack_string(text):
    data = text.encode()
    return hpack_int(len(data), 7) + data  # not Huffman-coded


def header_block(path, padding):
    """:method POST, :scheme http (static table), then literals without indexing."""
    return (b"\x83\x86" + hpack_int(4, 4) + hpack_string(path) + hpack_int(1, 4) +
            hpack_string("127.0.0.1") + hpack_int(31, 4) + hpack_string("application/grpc") +
            b"\x00" + hpack_string("te") + hpack_string("trailers") + b"\x00" +
            hpack_string("x-padding") + hpack_string("p" * padding))


def call_frames(stream, padding):
    """A ListScenes call: its headers in HEADERS + CONTINUATION frames of at most 16 KiB (the
    default SETTINGS_MAX_FRAME_SIZE), then an empty request message that ends the stream."""
    block = header_block("/collide.v1.Collide/ListScenes", padding)
    chunks = [block[i:i + 16000] for i in range(0, len(block), 16000)]
    out = b""
    for i, chunk in enumerate(chunks):
        out += frame(HEADERS if i == 0 else CONTINUATION,
                     END_HEADERS if i == len(chunks) - 1 else 0, stream, chunk)
    return out + frame(DATA, END_STREAM, stream, b"\x00\x00\x00\x00\x00")


class Connection:
    """One raw HTTP/2 connection to the server; collects the frames it receives."""

    def __init__(self, port, acknowledge_settings):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buffer = b""
        self.closed = False
        self.frames = []  # (type, flags, stream, payload)
        self.sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0))
        if acknowledge_settings:
            # The server's SETTINGS come first; acknowledge them, then wait for the server's
            # acknowledgement of ours, so that its limits are in force (ordering, not time).
            self.wait_for(lambda f: f[0] == SETTINGS and not f[1] & ACK)
            self.sock.sendall(frame(SETTINGS, ACK, 0))
            self.wait_for(lambda f: f[0] == SETTINGS and f[1] & ACK)

    def send(self, data):
        self.sock.sendall(data)

    def read_frame(self):
        while len(self.buffer) < 9 or len(self.buffer) < 9 + int.from_bytes(self.buffer[:3], "big"):
            chunk = self.sock.recv(65536)
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
        length = int.from_bytes(self.buffer[:3], "big")
        kind, flags = self.buffer[3], self.buffer[4]
        stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
        payload = self.buffer[9:9 + length]
        self.buffer = self.buffer[9 + length:]
        self.frames.append((kind, flags, stream, payload))
        return self.frames[-1]

    def wait_for(self, predicate):
        """Reads frames until one matches (returned) or the connection closes (None)."""
        for f in self.frames:
            if predicate(f):
                return f
        while True:
            f = self.read_frame()
            if f is None or predicate(f):
                return f

    def stream_end(self, stream):
        """The frame that ends `stream` (HEADERS with END_STREAM, or RST_STREAM), or None."""
        return self.wait_for(lambda f: f[2] == stream and (
            (f[0] == HEADERS and f[1] & END_STREAM) or f[0] == RST_STREAM))

    def close(self):
        self.sock.close()


class RawHttp2MetadataTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        port_file = os.path.join(cls.dir.name, "port")
        cls.server = subprocess.Popen(
            [SERVER, "--address=127.0.0.1:0", f"--port_file={port_file}",
             f"--data_dir={os.path.join(cls.dir.name, 'data')}", "--log_level=warn"],
            stdout=subprocess.DEVNULL)
        give_up = time.monotonic() + 30
        while not (os.path.exists(port_file) and open(port_file).read().endswith("\n")):
            if cls.server.poll() is not None or time.monotonic() > give_up:
                raise RuntimeError("collide-server did not start")
            time.sleep(0.05)
        cls.port = int(open(port_file).read())

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(30)
        cls.dir.cleanup()

    def assertServed(self, connection, stream):
        """The call on `stream` got its response message (a DATA frame) and ended."""
        end = connection.stream_end(stream)
        self.assertIsNotNone(end, f"stream {stream}: the connection closed")
        self.assertTrue(any(f[0] == DATA and f[2] == stream for f in connection.frames),
                        f"stream {stream}: no response message")

    def assertRefused(self, connection, stream, message):
        end = connection.stream_end(stream)
        self.assertIsNotNone(end, f"stream {stream}: the connection closed unanswered")
        self.assertEqual(end[0], HEADERS, end)
        # The trailers' grpc-message, a literal (grpc-status may be an index into HPACK's
        # dynamic table once it was sent on the connection, so only the message is matched).
        self.assertIn(message, end[3])

    def test_headers_beyond_the_limit_are_refused_per_call_before_the_settings_ack(self):
        # 40 KB and 200 KB: beyond twice the limit, which would end an acknowledged connection.
        connection = Connection(self.port, acknowledge_settings=False)
        try:
            for stream, padding in ((1, 2 * LIMIT + 8000), (3, 200_000)):
                connection.send(call_frames(stream, padding))
                self.assertRefused(connection, stream, REFUSAL)
            connection.send(call_frames(5, 100))
            self.assertServed(connection, 5)
            self.assertFalse(any(f[0] == GOAWAY for f in connection.frames))
        finally:
            connection.close()

    def test_headers_within_twice_the_limit_are_refused_per_call_and_the_connection_goes_on(self):
        connection = Connection(self.port, acknowledge_settings=True)
        try:
            connection.send(call_frames(1, LIMIT + 4000))
            self.assertRefused(connection, 1, REFUSAL)
            connection.send(call_frames(3, 100))
            self.assertServed(connection, 3)
            self.assertFalse(any(f[0] == GOAWAY for f in connection.frames))
        finally:
            connection.close()

    def test_headers_beyond_twice_the_limit_end_an_acknowledged_connection(self):
        connection = Connection(self.port, acknowledge_settings=True)
        try:
            connection.send(call_frames(1, 2 * LIMIT + 8000))
            self.assertRefused(connection, 1, TRANSPORT_REFUSAL)
            # The server closes the connection: reading runs into its end.
            while connection.read_frame() is not None:
                pass
            self.assertTrue(connection.closed)
        finally:
            connection.close()
        # The server goes on.
        fresh = Connection(self.port, acknowledge_settings=True)
        try:
            fresh.send(call_frames(1, 100))
            self.assertServed(fresh, 1)
        finally:
            fresh.close()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    SERVER = sys.argv.pop(1)
    unittest.main()
