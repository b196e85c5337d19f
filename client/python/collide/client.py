"""The collide client: one gRPC channel to a collide-server and a method per rpc."""

from __future__ import annotations

import os
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import grpc

from collide import _assets as assets
from collide import _calls as calls
from collide import _channel
from collide import export_file
from collide import model as t
from collide._channel import SCENE_HEADER, Metadata, Pem
from collide._pb import pb, pb_grpc
from collide.errors import CollideError
from collide.interest import Interest, Observer
from collide.query_stream import QueryStream
from collide.update_writer import UpdateWriter
from collide.watch import ContactWatch, Fence, Watch, watch_request

__all__ = ["SCENE_HEADER", "Client"]

# What Client.export_scene returns: the export's messages (collide.v1.SceneExportMessage).
ExportStream = Iterator["pb.SceneExportMessage"]
# What Client.import_scene takes: an export file's path, or the messages.
ImportSource = Union[str, "os.PathLike[str]", Iterable["pb.SceneExportMessage"]]


class Client:
    """A connection to one collide-server.

    Args:
        address: "host:port" of the server.
        token: sent as `authorization: Bearer <token>` on every call (None: no auth).
        timeout: the default deadline of every unary call, in seconds (each method takes a
            `timeout` that overrides it; None there means this default). Streams have no deadline.
        tls: use TLS; implied by any of the certificate arguments. Without root_certificates the
            system's roots verify the server.
        root_certificates: PEM bytes, or the path of a PEM file, of the CAs that sign the server's
            certificate.
        client_certificate, client_key: PEM bytes or paths, for servers that verify clients.
        server_name_override: the name to check the server's certificate against (tests).
        channel_options: more gRPC channel arguments, as (key, value) pairs.

    Every method raises CollideError (code and server message) when the call fails. Use as a
    context manager, or call close().
    """

    def __init__(self, address: str, *, token: Optional[str] = None, timeout: float = 10.0,
                 tls: bool = False, root_certificates: Optional[Pem] = None,
                 client_certificate: Optional[Pem] = None, client_key: Optional[Pem] = None,
                 server_name_override: Optional[str] = None,
                 channel_options: Sequence[Tuple[str, object]] = ()) -> None:
        self.address = address
        self.timeout = timeout
        options = _channel.channel_options(server_name_override, channel_options)
        tls_credentials = _channel.credentials(tls, root_certificates, client_certificate,
                                               client_key)
        if tls_credentials is not None:
            self.channel = grpc.secure_channel(address, tls_credentials, options=options)
        else:
            self.channel = grpc.insecure_channel(address, options=options)
        self._stub = pb_grpc.CollideStub(self.channel)
        self._auth: Metadata = _channel.auth_metadata(token)

    # Plumbing.

    def metadata(self, scene: Optional[str] = None) -> Metadata:
        """The metadata of a call: the token, and the scene header when the call names one."""
        return _channel.call_metadata(self._auth, scene)

    @property
    def stub(self) -> pb_grpc.CollideStub:
        """The generated stub, for calls this class does not wrap."""
        return self._stub

    def _run(self, call: calls.Call, timeout: Optional[float]):
        """Runs one unary rpc and reads its response (CollideError when it fails)."""
        try:
            response = getattr(self._stub, call.method)(
                call.request, timeout=self.timeout if timeout is None else timeout,
                metadata=self.metadata(call.scene))
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None
        return call.read(response)

    def close(self) -> None:
        """Closes the channel (streams opened from it end)."""
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # Scenes.

    def create_scene(self, scene: str, options: Optional[t.SceneOptions] = None, *,
                     timeout: Optional[float] = None) -> t.SceneInfo:
        """Creates an empty scene (ALREADY_EXISTS if the name is taken). Admin."""
        return self._run(calls.create_scene(scene, options), timeout)

    def delete_scene(self, scene: str, *, timeout: Optional[float] = None) -> None:
        """Deletes a scene and its bodies. Admin."""
        self._run(calls.delete_scene(scene), timeout)

    def list_scenes(self, *, timeout: Optional[float] = None) -> List[t.SceneInfo]:
        """Every scene the caller's token may see, sorted by name."""
        return self._run(calls.list_scenes(), timeout)

    def get_scene(self, scene: str, *, timeout: Optional[float] = None) -> t.SceneInfo:
        """One scene's settings and counters."""
        return self._run(calls.get_scene(scene), timeout)

    # Bodies.

    def upsert_bodies(self, scene: str, bodies: Iterable[t.Body], *,
                      timeout: Optional[float] = None) -> t.WriteResult:
        """Creates or replaces bodies, as one batch. Writer."""
        return self._run(calls.upsert_bodies(scene, bodies), timeout)

    def remove_bodies(self, scene: str, ids: Iterable[int], *,
                      timeout: Optional[float] = None) -> t.WriteResult:
        """Removes bodies (each must exist), as one batch. Writer."""
        return self._run(calls.remove_bodies(scene, ids), timeout)

    def get_bodies(self, scene: str, ids: Iterable[int] = (), *,
                   timeout: Optional[float] = None) -> t.GetBodiesResult:
        """Reads the bodies with these ids (all bodies, sorted by id, when ids is empty)."""
        return self._run(calls.get_bodies(scene, ids), timeout)

    # Unary queries. Each takes the query, then: filter, mode, max_hits, at_tick and
    # tick_fraction (lag compensation: answer against the bodies at the end of that tick), and
    # min_version (wait until the scene's version reaches it: read-your-writes).

    def raycast(self, scene: str, ray: t.Raycast, *, filter: Optional[t.Filter] = None,
                mode: t.Mode = t.Mode.CLOSEST, max_hits: int = 0, at_tick: Optional[int] = None,
                tick_fraction: float = 0.0, min_version: int = 0,
                timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a ray hits."""
        return self._run(calls.raycast(scene, ray, filter, mode, max_hits, at_tick,
                                       tick_fraction, min_version), timeout)

    def sphere_cast(self, scene: str, cast: t.SphereCast, *, filter: Optional[t.Filter] = None,
                    mode: t.Mode = t.Mode.CLOSEST, max_hits: int = 0,
                    at_tick: Optional[int] = None, tick_fraction: float = 0.0,
                    min_version: int = 0, timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a swept ball hits."""
        return self._run(calls.sphere_cast(scene, cast, filter, mode, max_hits, at_tick,
                                           tick_fraction, min_version), timeout)

    def overlap(self, scene: str, overlap: t.Overlap, *, filter: Optional[t.Filter] = None,
                mode: t.Mode = t.Mode.ALL, max_hits: int = 0, detail: bool = False,
                at_tick: Optional[int] = None, tick_fraction: float = 0.0, min_version: int = 0,
                timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a posed shape overlaps (with detail: depth, contact point, normal)."""
        return self._run(calls.overlap(scene, overlap, filter, mode, max_hits, detail, at_tick,
                                       tick_fraction, min_version), timeout)

    # The server.

    def server_stats(self, *, max_scenes: Optional[int] = None,
                           timeout: Optional[float] = None) -> t.ServerStats:
        """The server's counters: streams, watches, scenes, whether it can write, sync lag, its
        build, uptime and memory, and per-scene figures for at most `max_scenes` scenes (None:
        the server's default, 100; at most 1000). Admin."""
        return self._run(calls.server_stats(max_scenes), timeout)

    # Moving scenes.

    def export_scene(self, scene: str, *, max_bodies_per_chunk: int = 0,
                     timeout: Optional[float] = None) -> "ExportStream":
        """The scene at one version, as the messages of ExportScene
        (collide.v1.SceneExportMessage): one header (options, version, tick, deduplication
        marks), chunks of at most `max_bodies_per_chunk` bodies (0: the server's default, 4,096)
        and a trailer. The call starts when the iteration does, and the server sends each message
        as it is taken (memory stays bounded by one chunk); leaving the iteration early cancels
        the call. `timeout`: the whole call's deadline (None: none). Admin."""
        call = calls.export_scene(scene, max_bodies_per_chunk)
        return self._export(call, timeout)

    def _export(self, call: calls.Call, timeout: Optional[float]) -> "ExportStream":
        stream = self._stub.ExportScene(call.request, timeout=timeout,
                                        metadata=self.metadata(call.scene))
        try:
            yield from stream
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None
        finally:
            stream.cancel()

    def export_scene_to_file(self, scene: str, path: "export_file.Path", *, format: str = "pb",
                             max_bodies_per_chunk: int = 0,
                             timeout: Optional[float] = None) -> t.ExportSummary:
        """Exports the scene into the file at `path` (created or truncated), in `format` "pb"
        (length-delimited protobuf) or "jsonl" (JSON lines): the files of `collide scene export`
        (collide.export_file). Written as the messages arrive. Admin."""
        export_file.check_format(format)
        header = None
        bodies = 0
        with open(path, "wb") as f:
            writer = export_file.ExportFileWriter(f, format)
            for message in self.export_scene(scene, max_bodies_per_chunk=max_bodies_per_chunk,
                                             timeout=timeout):
                writer.write(message)
                if message.HasField("header"):
                    header = message.header
                elif message.HasField("chunk"):
                    bodies += len(message.chunk.bodies)
        return calls.export_summary(header, bodies, format)

    def import_scene(self, source: "ImportSource", scene: Optional[str] = None, *,
                     replace: bool = False, format: Optional[str] = None,
                     timeout: Optional[float] = None) -> t.SceneInfo:
        """Creates a scene from an export, all or nothing, and returns it once the server made it
        durable. `source`: an export file's path (`format` "pb", "jsonl" or None to guess it;
        read as it is sent) or an iterable of collide.v1.SceneExportMessage. `scene`: the new
        scene's name (None: the header's); `replace`: replace a scene of that name (else
        ALREADY_EXISTS). A file that does not parse raises ValueError (`message 3: ...`) and
        nothing is imported. `timeout`: the whole call's deadline (None: none). Admin."""
        requests = calls.import_scene(source, scene, replace, format)
        try:
            response = self._stub.ImportScene(iter(requests), timeout=timeout,
                                              metadata=self.metadata(scene or None))
        except grpc.RpcError as error:
            if requests.error is not None:
                raise requests.error from None
            raise CollideError.from_rpc_error(error) from None
        return calls.read_import(response)

    # Level geometry.

    def upload_mesh(self, scene: str, name: str, vertices: Any, indices: Any, *,
                    chunk_values: int = assets.DEFAULT_CHUNK_VALUES,
                    timeout: Optional[float] = None) -> t.UploadedAsset:
        """Uploads a triangle mesh as asset `name` of `scene` (UploadAsset), all or nothing,
        answered once durable. `vertices`: x, y, z per vertex; `indices`: three per triangle
        (counter-clockwise seen from the front); each any buffer (bytes, array.array, a numpy
        array of any integer or floating dtype and shape, C-contiguous: others are refused with
        ValueError, never copied) or iterable of numbers, sent as float32 and uint32.
        Bodies place it as Mesh(name). The same name and content again: already_present. The
        server's errors name the elements (`vertices[12]: must be finite`). Writer."""
        return self._upload(scene, assets.mesh_requests(scene, name, vertices, indices,
                                                        chunk_values), timeout)

    def upload_heightfield(self, scene: str, name: str, rows: int, columns: int, heights: Any,
                           *, spacing_x: float = 1.0, spacing_z: float = 1.0,
                           holes: Optional[Any] = None,
                           chunk_values: int = assets.DEFAULT_CHUNK_VALUES,
                           timeout: Optional[float] = None) -> t.UploadedAsset:
        """Uploads a heightfield as asset `name` of `scene`: rows x columns heights, row-major
        (sample (i, j) at local (j * spacing_x, height, i * spacing_z)), and optionally its hole
        bits ((rows - 1) x (columns - 1) bits, cell c at bit c % 8 of byte c / 8). As
        upload_mesh; bodies place it as Heightfield(name). Writer."""
        return self._upload(scene, assets.heightfield_requests(scene, name, rows, columns,
                                                               heights, spacing_x, spacing_z,
                                                               holes, chunk_values), timeout)

    def _upload(self, scene: str, requests: "assets.UploadRequests",
                timeout: Optional[float]) -> t.UploadedAsset:
        try:
            response = self._stub.UploadAsset(iter(requests), timeout=timeout,
                                              metadata=self.metadata(scene))
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None
        return calls.read_upload(response)

    def list_assets(self, scene: str, *, timeout: Optional[float] = None) -> List[t.AssetInfo]:
        """Every asset of `scene`, sorted by name."""
        return self._run(calls.list_assets(scene), timeout)

    def delete_asset(self, scene: str, name: str, *, timeout: Optional[float] = None) -> None:
        """Deletes an asset no body places (FAILED_PRECONDITION otherwise). Writer."""
        self._run(calls.delete_asset(scene, name), timeout)

    # Streams (one scene each).

    def update_writer(self, scene: str, **options) -> UpdateWriter:
        """Opens a resilient UpdateStream writer for `scene` (see UpdateWriter for options)."""
        return UpdateWriter(self, scene, **options)

    def query_stream(self, scene: str) -> QueryStream:
        """Opens a QueryStream session for `scene`."""
        return QueryStream(self, scene)

    def interest(self, scene: str, observers: Iterable[Observer], **options) -> Interest:
        """Opens an interest stream on `scene` with `observers` (their relevant sets, then
        deltas; observers changed on the open stream; reopened after a break: see Interest for
        options)."""
        return Interest(self, scene, observers, **options)

    def watch(self, scene: str, fences: Iterable[Fence], contacts: Iterable[ContactWatch] = (), *,
              max_queued_events: int = 0) -> Watch:
        """Opens a Watch on `scene` (standing queries: fences with swept enter/exit events and
        contact watches; see Watch). A bad request raises CollideError on the first message."""
        return Watch(self, watch_request(scene, fences, contacts, max_queued_events))
