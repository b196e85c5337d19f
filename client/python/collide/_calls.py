"""The unary rpcs as data: each function builds one rpc's request and says how to read its
response. The blocking Client (collide.client) and the asyncio Client (collide.aio.client) run
these; neither builds a request or reads a response itself. The scene transfer streams
(ExportScene, ImportScene) are built here too: export_scene and ImportRequests."""

from __future__ import annotations

from dataclasses import dataclass
import os
from typing import Any, Callable, Iterable, Iterator, Optional

from collide import _convert as convert
from collide import export_file
from collide import model as t
from collide._pb import pb


@dataclass(frozen=True)
class Call:
    """One unary rpc: the stub's method name, the request, the scene it names (sent as the scene
    header; None: none) and the function reading its response into the method's result."""

    method: str
    request: Any
    scene: Optional[str]
    read: Callable[[Any], Any]


def create_scene(scene: str, options: Optional[t.SceneOptions]) -> Call:
    request = pb.CreateSceneRequest(scene=scene)
    convert.set_options(request.options, options)
    return Call("CreateScene", request, scene, lambda r: convert.scene_info(r.scene))


def delete_scene(scene: str) -> Call:
    return Call("DeleteScene", pb.DeleteSceneRequest(scene=scene), scene, lambda r: None)


def list_scenes() -> Call:
    return Call("ListScenes", pb.ListScenesRequest(), None,
                lambda r: [convert.scene_info(s) for s in r.scenes])


def get_scene(scene: str) -> Call:
    return Call("GetScene", pb.GetSceneRequest(scene=scene), scene,
                lambda r: convert.scene_info(r.scene))


def _write_result(response) -> t.WriteResult:
    return t.WriteResult(response.version, response.durable)


def upsert_bodies(scene: str, bodies: Iterable[t.Body]) -> Call:
    request = pb.UpsertBodiesRequest(scene=scene)
    for body in bodies:
        convert.set_body(request.bodies.add(), body)
    return Call("UpsertBodies", request, scene, _write_result)


def remove_bodies(scene: str, ids: Iterable[int]) -> Call:
    return Call("RemoveBodies", pb.RemoveBodiesRequest(scene=scene, ids=list(ids)), scene,
                _write_result)


def get_bodies(scene: str, ids: Iterable[int]) -> Call:
    def read(response) -> t.GetBodiesResult:
        return t.GetBodiesResult(response.version, [convert.body(b) for b in response.bodies],
                                 list(response.missing_ids))

    return Call("GetBodies", pb.GetBodiesRequest(scene=scene, ids=list(ids)), scene, read)


def _query_response(response) -> t.QueryResponse:
    return t.QueryResponse(response.version, convert.hits(response.hits), response.truncated)


def _query(method: str, request, scene: str, filter: Optional[t.Filter], mode: t.Mode,
           max_hits: int, at_tick: Optional[int], tick_fraction: float,
           min_version: int) -> Call:
    """A unary query: fills the fields every query request has."""
    convert.set_filter(request.filter, filter)
    request.mode = int(mode)
    request.max_hits = max_hits
    if at_tick is not None:
        request.at_tick = at_tick
    request.tick_fraction = tick_fraction
    request.min_version = min_version
    return Call(method, request, scene, _query_response)


def raycast(scene: str, ray: t.Raycast, filter: Optional[t.Filter], mode: t.Mode, max_hits: int,
            at_tick: Optional[int], tick_fraction: float, min_version: int) -> Call:
    request = pb.RaycastRequest(scene=scene)
    convert.set_ray(request.ray, ray)
    return _query("Raycast", request, scene, filter, mode, max_hits, at_tick, tick_fraction,
                  min_version)


def sphere_cast(scene: str, cast: t.SphereCast, filter: Optional[t.Filter], mode: t.Mode,
                max_hits: int, at_tick: Optional[int], tick_fraction: float,
                min_version: int) -> Call:
    request = pb.SphereCastRequest(scene=scene)
    convert.set_cast(request.cast, cast)
    return _query("SphereCast", request, scene, filter, mode, max_hits, at_tick, tick_fraction,
                  min_version)


def overlap(scene: str, overlap: t.Overlap, filter: Optional[t.Filter], mode: t.Mode,
            max_hits: int, detail: bool, at_tick: Optional[int], tick_fraction: float,
            min_version: int) -> Call:
    request = pb.OverlapRequest(scene=scene, detail=detail)
    convert.set_overlap(request.overlap, overlap)
    return _query("Overlap", request, scene, filter, mode, max_hits, at_tick, tick_fraction,
                  min_version)


def server_stats(max_scenes: Optional[int]) -> Call:
    request = pb.GetServerStatsRequest()
    if max_scenes is not None:
        if isinstance(max_scenes, bool) or not isinstance(max_scenes, int) \
                or not 0 <= max_scenes <= 0xFFFFFFFF:
            raise ValueError(f"max_scenes: an integer in [0, 2^32 - 1], got {max_scenes!r}")
        request.max_scenes = max_scenes
    return Call("GetServerStats", request, None, convert.server_stats)


def list_assets(scene: str) -> Call:
    return Call("ListAssets", pb.ListAssetsRequest(scene=scene), scene,
                lambda r: [convert.asset_info(a) for a in r.assets])


def delete_asset(scene: str, name: str) -> Call:
    return Call("DeleteAsset", pb.DeleteAssetRequest(scene=scene, name=name), scene,
                lambda r: None)


def read_upload(response) -> t.UploadedAsset:
    return t.UploadedAsset(convert.asset_info(response.asset), response.already_present)


def _u32(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"{name}: an integer in [0, 2^32 - 1], got {value!r}")
    return value


def export_scene(scene: str, max_bodies_per_chunk: int) -> Call:
    """ExportScene (server streaming): the callers iterate the stream's messages themselves
    (`read` is the identity)."""
    request = pb.ExportSceneRequest(
        scene=scene, max_bodies_per_chunk=_u32("max_bodies_per_chunk", max_bodies_per_chunk))
    return Call("ExportScene", request, scene, lambda message: message)


def export_summary(header: Optional[Any], body_count: int, format: str) -> t.ExportSummary:
    """What an export to a file wrote (ValueError when the stream had no header)."""
    if header is None:
        raise ValueError("the export stream had no header")
    return t.ExportSummary(header.scene, header.version, header.tick, body_count, format)


def is_path(source) -> bool:
    return isinstance(source, (str, os.PathLike))


class ImportRequests:
    """The requests of one ImportScene call, from export messages: the first names the target
    scene and whether to replace it. An error while taking the messages (a file that does not
    parse, an item that is not a SceneExportMessage) ends the requests and is kept in `error`,
    for the caller to raise in place of the call's cancellation."""

    def __init__(self, messages: Iterable, scene: Optional[str], replace: bool) -> None:
        if scene is not None and not isinstance(scene, str):
            raise TypeError(f"scene: a str or None, got {scene!r}")
        self._messages = messages
        self._scene = scene
        self._replace = bool(replace)
        self.error: Optional[BaseException] = None

    def _request(self, message, first: bool):
        if not isinstance(message, pb.SceneExportMessage):
            raise TypeError(f"messages: collide.v1.SceneExportMessage expected, got "
                            f"{type(message).__name__}")
        request = pb.ImportSceneRequest()
        request.message.CopyFrom(message)
        if first:
            if self._scene:
                request.scene = self._scene
            request.replace = self._replace
        return request

    def __iter__(self) -> Iterator:
        first = True
        try:
            for message in self._messages:
                yield self._request(message, first)
                first = False
        except Exception as error:  # kept for the caller; the call is cancelled
            self.error = error
            raise

    async def __aiter__(self):
        first = True
        try:
            if hasattr(self._messages, "__aiter__"):
                async for message in self._messages:
                    yield self._request(message, first)
                    first = False
            else:
                for message in self._messages:
                    yield self._request(message, first)
                    first = False
        except Exception as error:
            self.error = error
            raise


def import_scene(source, scene: Optional[str], replace: bool,
                 format: Optional[str]) -> "ImportRequests":
    """The requests of an import from `source`: an export file's path (read as sent) or an
    iterable of SceneExportMessages."""
    messages = export_file.read_export_file(source, format) if is_path(source) else source
    return ImportRequests(messages, scene, replace)


def read_import(response) -> t.SceneInfo:
    return convert.scene_info(response.scene)
