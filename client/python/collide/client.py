"""The collide client: one gRPC channel to a collide-server and a method per rpc."""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple, Union

import grpc

from collide import _convert as convert
from collide import model as t
from collide._pb import pb, pb_grpc
from collide.errors import CollideError
from collide.query_stream import QueryStream
from collide.update_writer import UpdateWriter
from collide.watch import ContactWatch, Fence, Watch, watch_request

Pem = Union[bytes, str]
Metadata = Tuple[Tuple[str, str], ...]

# The gRPC metadata key naming the scene of a call (lets a router shard by scene).
SCENE_HEADER = "x-collide-scene"

_DEFAULT_CHANNEL_OPTIONS = (
    # Replies such as GetBodies of a large scene may exceed gRPC's 4 MB default.
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
    # Reconnect quickly after a server restart (the update writer waits for it). Not
    # grpc.min_reconnect_backoff_ms: despite its name it is how long one connection attempt may
    # take (default 20 s), and at 100 ms a server slow to answer the HTTP/2 handshake on a loaded
    # machine made the first call fail with UNAVAILABLE ("tcp handshaker shutdown").
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
)


def _read_pem(value: Optional[Pem]) -> Optional[bytes]:
    """PEM bytes as given, or the contents of the file a str names."""
    if value is None or isinstance(value, bytes):
        return value
    with open(value, "rb") as f:
        return f.read()


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
        options = list(_DEFAULT_CHANNEL_OPTIONS) + list(channel_options)
        if server_name_override:
            options.append(("grpc.ssl_target_name_override", server_name_override))
        if tls or root_certificates or client_certificate or client_key:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read_pem(root_certificates),
                private_key=_read_pem(client_key),
                certificate_chain=_read_pem(client_certificate))
            self.channel = grpc.secure_channel(address, credentials, options=options)
        else:
            self.channel = grpc.insecure_channel(address, options=options)
        self._stub = pb_grpc.CollideStub(self.channel)
        self._auth: Metadata = (("authorization", f"Bearer {token}"),) if token else ()

    # Plumbing.

    def metadata(self, scene: Optional[str] = None) -> Metadata:
        """The metadata of a call: the token, and the scene header when the call names one."""
        if scene is None:
            return self._auth
        return self._auth + ((SCENE_HEADER, scene),)

    @property
    def stub(self) -> pb_grpc.CollideStub:
        """The generated stub, for calls this class does not wrap."""
        return self._stub

    def _call(self, method, request, scene: Optional[str], timeout: Optional[float]):
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout,
                          metadata=self.metadata(scene))
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None

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
        request = pb.CreateSceneRequest(scene=scene)
        convert.set_options(request.options, options)
        response = self._call(self._stub.CreateScene, request, scene, timeout)
        return convert.scene_info(response.scene)

    def delete_scene(self, scene: str, *, timeout: Optional[float] = None) -> None:
        """Deletes a scene and its bodies. Admin."""
        self._call(self._stub.DeleteScene, pb.DeleteSceneRequest(scene=scene), scene, timeout)

    def list_scenes(self, *, timeout: Optional[float] = None) -> List[t.SceneInfo]:
        """Every scene the caller's token may see, sorted by name."""
        response = self._call(self._stub.ListScenes, pb.ListScenesRequest(), None, timeout)
        return [convert.scene_info(s) for s in response.scenes]

    def get_scene(self, scene: str, *, timeout: Optional[float] = None) -> t.SceneInfo:
        """One scene's settings and counters."""
        response = self._call(self._stub.GetScene, pb.GetSceneRequest(scene=scene), scene, timeout)
        return convert.scene_info(response.scene)

    # Bodies.

    def upsert_bodies(self, scene: str, bodies: Iterable[t.Body], *,
                      timeout: Optional[float] = None) -> t.WriteResult:
        """Creates or replaces bodies, as one batch. Writer."""
        request = pb.UpsertBodiesRequest(scene=scene)
        for body in bodies:
            convert.set_body(request.bodies.add(), body)
        response = self._call(self._stub.UpsertBodies, request, scene, timeout)
        return t.WriteResult(response.version, response.durable)

    def remove_bodies(self, scene: str, ids: Iterable[int], *,
                      timeout: Optional[float] = None) -> t.WriteResult:
        """Removes bodies (each must exist), as one batch. Writer."""
        request = pb.RemoveBodiesRequest(scene=scene, ids=list(ids))
        response = self._call(self._stub.RemoveBodies, request, scene, timeout)
        return t.WriteResult(response.version, response.durable)

    def get_bodies(self, scene: str, ids: Iterable[int] = (), *,
                   timeout: Optional[float] = None) -> t.GetBodiesResult:
        """Reads the bodies with these ids (all bodies, sorted by id, when ids is empty)."""
        request = pb.GetBodiesRequest(scene=scene, ids=list(ids))
        response = self._call(self._stub.GetBodies, request, scene, timeout)
        return t.GetBodiesResult(response.version, [convert.body(b) for b in response.bodies],
                                 list(response.missing_ids))

    # Unary queries. Each takes the query, then: filter, mode, max_hits, at_tick and
    # tick_fraction (lag compensation: answer against the bodies at the end of that tick), and
    # min_version (wait until the scene's version reaches it: read-your-writes).

    @staticmethod
    def _set_common(request, filter: Optional[t.Filter], mode: t.Mode, max_hits: int,
                    at_tick: Optional[int], tick_fraction: float, min_version: int) -> None:
        convert.set_filter(request.filter, filter)
        request.mode = int(mode)
        request.max_hits = max_hits
        if at_tick is not None:
            request.at_tick = at_tick
        request.tick_fraction = tick_fraction
        request.min_version = min_version

    def _query(self, method, request, scene: str, timeout: Optional[float]) -> t.QueryResponse:
        response = self._call(method, request, scene, timeout)
        return t.QueryResponse(response.version, convert.hits(response.hits), response.truncated)

    def raycast(self, scene: str, ray: t.Raycast, *, filter: Optional[t.Filter] = None,
                mode: t.Mode = t.Mode.CLOSEST, max_hits: int = 0, at_tick: Optional[int] = None,
                tick_fraction: float = 0.0, min_version: int = 0,
                timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a ray hits."""
        request = pb.RaycastRequest(scene=scene)
        convert.set_ray(request.ray, ray)
        self._set_common(request, filter, mode, max_hits, at_tick, tick_fraction, min_version)
        return self._query(self._stub.Raycast, request, scene, timeout)

    def sphere_cast(self, scene: str, cast: t.SphereCast, *, filter: Optional[t.Filter] = None,
                    mode: t.Mode = t.Mode.CLOSEST, max_hits: int = 0,
                    at_tick: Optional[int] = None, tick_fraction: float = 0.0,
                    min_version: int = 0, timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a swept ball hits."""
        request = pb.SphereCastRequest(scene=scene)
        convert.set_cast(request.cast, cast)
        self._set_common(request, filter, mode, max_hits, at_tick, tick_fraction, min_version)
        return self._query(self._stub.SphereCast, request, scene, timeout)

    def overlap(self, scene: str, overlap: t.Overlap, *, filter: Optional[t.Filter] = None,
                mode: t.Mode = t.Mode.ALL, max_hits: int = 0, detail: bool = False,
                at_tick: Optional[int] = None, tick_fraction: float = 0.0, min_version: int = 0,
                timeout: Optional[float] = None) -> t.QueryResponse:
        """The bodies a posed shape overlaps (with detail: depth, contact point, normal)."""
        request = pb.OverlapRequest(scene=scene, detail=detail)
        convert.set_overlap(request.overlap, overlap)
        self._set_common(request, filter, mode, max_hits, at_tick, tick_fraction, min_version)
        return self._query(self._stub.Overlap, request, scene, timeout)

    # Streams (one scene each).

    def update_writer(self, scene: str, **options) -> UpdateWriter:
        """Opens a resilient UpdateStream writer for `scene` (see UpdateWriter for options)."""
        return UpdateWriter(self, scene, **options)

    def query_stream(self, scene: str) -> QueryStream:
        """Opens a QueryStream session for `scene`."""
        return QueryStream(self, scene)

    def watch(self, scene: str, fences: Iterable[Fence], contacts: Iterable[ContactWatch] = (), *,
              max_queued_events: int = 0) -> Watch:
        """Opens a Watch on `scene` (standing queries: fences with swept enter/exit events and
        contact watches; see Watch). A bad request raises CollideError on the first message."""
        return Watch(self, watch_request(scene, fences, contacts, max_queued_events))
