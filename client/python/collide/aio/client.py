"""The asyncio collide client: the blocking Client's surface on grpc.aio, every rpc a
coroutine."""

from __future__ import annotations

import asyncio
import os
from typing import (Any, AsyncIterable, AsyncIterator, Iterable, List, Optional, Sequence, Tuple,
                    Union)

import grpc
import grpc.aio

from collide import _assets as assets
from collide import _calls as calls
from collide import _channel
from collide import export_file
from collide import model as t
from collide._channel import Metadata, Pem
from collide._pb import pb, pb_grpc
from collide.aio.interest import Interest
from collide.aio.query_stream import QueryStream
from collide.aio.update_writer import UpdateWriter
from collide.aio.watch import Watch
from collide.errors import CollideError
from collide.interest import Observer
from collide.watch import ContactWatch, Fence, watch_request

__all__ = ["Client"]

# What Client.export_scene returns: the export's messages (collide.v1.SceneExportMessage), as
# an asynchronous iterator.
ExportStream = AsyncIterator["pb.SceneExportMessage"]
# What Client.import_scene takes: an export file's path, or the messages (an iterable or an
# asynchronous iterable).
ImportSource = Union[str, "os.PathLike[str]", Iterable["pb.SceneExportMessage"],
                     AsyncIterable["pb.SceneExportMessage"]]


class Client:
    """A connection to one collide-server, for asyncio: the methods, arguments, results and
    errors of collide.Client, with every rpc a coroutine.

        async with collide.aio.Client("127.0.0.1:50051") as client:
            await client.create_scene("world")
            hits = (await client.raycast("world", Raycast((0, 0, 0), (1, 0, 0), 10))).hits

    The arguments are collide.Client's. Construct it, and use it, in one event loop (that of
    grpc.aio). The stream openers (update_writer, query_stream, watch) are plain methods returning
    asynchronous context managers; everything else is awaited. Use as an asynchronous context
    manager, or await close().
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
            self.channel = grpc.aio.secure_channel(address, tls_credentials, options=options)
        else:
            self.channel = grpc.aio.insecure_channel(address, options=options)
        self._stub = pb_grpc.CollideStub(self.channel)
        self._auth: Metadata = _channel.auth_metadata(token)

    # Plumbing.

    def metadata(self, scene: Optional[str] = None) -> Metadata:
        """The metadata of a call: the token, and the scene header when the call names one."""
        return _channel.call_metadata(self._auth, scene)

    @property
    def stub(self) -> pb_grpc.CollideStub:
        """The generated stub (on the grpc.aio channel), for calls this class does not wrap."""
        return self._stub

    async def _run(self, call: calls.Call, timeout: Optional[float]):
        """Runs one unary rpc and reads its response (CollideError when it fails)."""
        try:
            response = await getattr(self._stub, call.method)(
                call.request, timeout=self.timeout if timeout is None else timeout,
                metadata=self.metadata(call.scene))
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None
        return call.read(response)

    async def close(self) -> None:
        """Closes the channel (streams opened from it end)."""
        await self.channel.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    # Scenes.

    async def create_scene(self, scene: str, options: Optional[t.SceneOptions] = None, *,
                           timeout: Optional[float] = None) -> t.SceneInfo:
        """Creates an empty scene (ALREADY_EXISTS if the name is taken). Admin."""
        return await self._run(calls.create_scene(scene, options), timeout)

    async def delete_scene(self, scene: str, *, timeout: Optional[float] = None) -> None:
        """Deletes a scene and its bodies. Admin."""
        await self._run(calls.delete_scene(scene), timeout)

    async def list_scenes(self, *, timeout: Optional[float] = None) -> List[t.SceneInfo]:
        """Every scene the caller's token may see, sorted by name."""
        return await self._run(calls.list_scenes(), timeout)

    async def get_scene(self, scene: str, *, timeout: Optional[float] = None) -> t.SceneInfo:
        """One scene's settings and counters."""
        return await self._run(calls.get_scene(scene), timeout)

    # Bodies.

    async def upsert_bodies(self, scene: str, bodies: Iterable[t.Body], *,
                            timeout: Optional[float] = None) -> t.WriteResult:
        """Creates or replaces bodies, as one batch. Writer."""
        return await self._run(calls.upsert_bodies(scene, bodies), timeout)

    async def remove_bodies(self, scene: str, ids: Iterable[int], *,
                            timeout: Optional[float] = None) -> t.WriteResult:
        """Removes bodies (each must exist), as one batch. Writer."""
        return await self._run(calls.remove_bodies(scene, ids), timeout)

    async def get_bodies(self, scene: str, ids: Iterable[int] = (), *,
                         timeout: Optional[float] = None) -> t.GetBodiesResult:
        """Reads the bodies with these ids (all bodies, sorted by id, when ids is empty)."""
        return await self._run(calls.get_bodies(scene, ids), timeout)

    # Unary queries: as collide.Client's.

    async def raycast(self, scene: str, ray: t.Raycast, *, filter: Optional[t.Filter] = None,
                      mode: t.Mode = t.Mode.CLOSEST, max_hits: int = 0,
                      at_tick: Optional[int] = None, tick_fraction: float = 0.0,
                      min_version: int = 0, timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a ray hits."""
        return await self._run(calls.raycast(scene, ray, filter, mode, max_hits, at_tick,
                                             tick_fraction, min_version), timeout)

    async def sphere_cast(self, scene: str, cast: t.SphereCast, *,
                          filter: Optional[t.Filter] = None, mode: t.Mode = t.Mode.CLOSEST,
                          max_hits: int = 0, at_tick: Optional[int] = None,
                          tick_fraction: float = 0.0, min_version: int = 0,
                          timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a swept ball hits."""
        return await self._run(calls.sphere_cast(scene, cast, filter, mode, max_hits, at_tick,
                                                 tick_fraction, min_version), timeout)

    async def overlap(self, scene: str, overlap: t.Overlap, *, filter: Optional[t.Filter] = None,
                      mode: t.Mode = t.Mode.ALL, max_hits: int = 0, detail: bool = False,
                      at_tick: Optional[int] = None, tick_fraction: float = 0.0,
                      min_version: int = 0, timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a posed shape overlaps (with detail: depth, contact point, normal)."""
        return await self._run(calls.overlap(scene, overlap, filter, mode, max_hits, detail,
                                             at_tick, tick_fraction, min_version), timeout)

    # The server.

    async def server_stats(self, *, max_scenes: Optional[int] = None,
                           timeout: Optional[float] = None) -> t.ServerStats:
        """The server's counters: streams, watches, scenes, whether it can write, sync lag, its
        build, uptime and memory, and per-scene figures for at most `max_scenes` scenes (None:
        the server's default, 100; at most 1000). Admin."""
        return await self._run(calls.server_stats(max_scenes), timeout)

    # Moving scenes: as collide.Client's.

    def export_scene(self, scene: str, *, max_bodies_per_chunk: int = 0,
                     timeout: Optional[float] = None) -> "ExportStream":
        """The scene at one version, as the messages of ExportScene, in an asynchronous iterator
        (`async for message in client.export_scene(...)`); see collide.Client.export_scene.
        Admin."""
        call = calls.export_scene(scene, max_bodies_per_chunk)
        return self._export(call, timeout)

    async def _export(self, call: calls.Call, timeout: Optional[float]) -> "ExportStream":
        stream = self._stub.ExportScene(call.request, timeout=timeout,
                                        metadata=self.metadata(call.scene))
        try:
            async for message in stream:
                yield message
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None
        finally:
            stream.cancel()

    async def export_scene_to_file(self, scene: str, path: "export_file.Path", *,
                                   format: str = "pb", max_bodies_per_chunk: int = 0,
                                   timeout: Optional[float] = None) -> t.ExportSummary:
        """Exports the scene into the file at `path`; see collide.Client.export_scene_to_file.
        Admin."""
        export_file.check_format(format)
        header = None
        bodies = 0
        with open(path, "wb") as f:
            writer = export_file.ExportFileWriter(f, format)
            async for message in self.export_scene(scene,
                                                   max_bodies_per_chunk=max_bodies_per_chunk,
                                                   timeout=timeout):
                writer.write(message)
                if message.HasField("header"):
                    header = message.header
                elif message.HasField("chunk"):
                    bodies += len(message.chunk.bodies)
        return calls.export_summary(header, bodies, format)

    async def import_scene(self, source: "ImportSource", scene: Optional[str] = None, *,
                           replace: bool = False, format: Optional[str] = None,
                           timeout: Optional[float] = None) -> t.SceneInfo:
        """Creates a scene from an export, all or nothing; see collide.Client.import_scene
        (`source` may also be an asynchronous iterable of messages). Admin."""
        requests = calls.import_scene(source, scene, replace, format)
        try:
            response = await self._stub.ImportScene(requests.__aiter__(), timeout=timeout,
                                                    metadata=self.metadata(scene or None))
        except (grpc.RpcError, asyncio.CancelledError) as error:
            # A request iterator that raised cancels the call: its error is the one to report.
            if requests.error is not None:
                raise requests.error from None
            if isinstance(error, asyncio.CancelledError):
                raise
            raise CollideError.from_rpc_error(error) from None
        return calls.read_import(response)

    # Level geometry.

    async def upload_mesh(self, scene: str, name: str, vertices: Any, indices: Any, *,
                          chunk_values: int = assets.DEFAULT_CHUNK_VALUES,
                          timeout: Optional[float] = None) -> t.UploadedAsset:
        """Uploads a triangle mesh; see collide.Client.upload_mesh. Writer."""
        return await self._upload(scene, assets.mesh_requests(scene, name, vertices, indices,
                                                              chunk_values), timeout)

    async def upload_heightfield(self, scene: str, name: str, rows: int, columns: int,
                                 heights: Any, *, spacing_x: float = 1.0, spacing_z: float = 1.0,
                                 holes: Optional[Any] = None,
                                 chunk_values: int = assets.DEFAULT_CHUNK_VALUES,
                                 timeout: Optional[float] = None) -> t.UploadedAsset:
        """Uploads a heightfield; see collide.Client.upload_heightfield. Writer."""
        return await self._upload(scene, assets.heightfield_requests(
            scene, name, rows, columns, heights, spacing_x, spacing_z, holes, chunk_values),
            timeout)

    async def _upload(self, scene: str, requests: "assets.UploadRequests",
                      timeout: Optional[float]) -> t.UploadedAsset:
        try:
            response = await self._stub.UploadAsset(requests.__aiter__(), timeout=timeout,
                                                    metadata=self.metadata(scene))
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None
        return calls.read_upload(response)

    async def list_assets(self, scene: str, *,
                          timeout: Optional[float] = None) -> List[t.AssetInfo]:
        """Every asset of `scene`, sorted by name."""
        return await self._run(calls.list_assets(scene), timeout)

    async def delete_asset(self, scene: str, name: str, *,
                           timeout: Optional[float] = None) -> None:
        """Deletes an asset no body places (FAILED_PRECONDITION otherwise). Writer."""
        await self._run(calls.delete_asset(scene, name), timeout)

    # Streams (one scene each); call these in the event loop that runs them.

    def update_writer(self, scene: str, **options) -> UpdateWriter:
        """Opens a resilient UpdateStream writer for `scene` (see UpdateWriter for options)."""
        return UpdateWriter(self, scene, **options)

    def query_stream(self, scene: str) -> QueryStream:
        """Opens a QueryStream session for `scene`."""
        return QueryStream(self, scene)

    def interest(self, scene: str, observers: Iterable[Observer], **options) -> Interest:
        """Opens an interest stream on `scene` with `observers` (collide.aio.Interest; options as
        collide.Interest's)."""
        return Interest(self, scene, observers, **options)

    def watch(self, scene: str, fences: Iterable[Fence], contacts: Iterable[ContactWatch] = (), *,
              max_queued_events: int = 0) -> Watch:
        """Opens a Watch on `scene` (standing queries: fences with swept enter/exit events and
        contact watches; see Watch). A bad request raises CollideError on the first message."""
        return Watch(self, watch_request(scene, fences, contacts, max_queued_events))
