"""Typed inputs and results of the collide API (dataclasses mirroring collide.v1 messages).

Wherever a Vec3 or a Quat is expected, a plain tuple (x, y, z) / (x, y, z, w) works too.
"""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple, Union

_FLOAT32 = struct.Struct("<f")


def _reads_as(number: float, bits: bytes) -> bool:
    """Whether `number` rounds to the float32 whose encoding is `bits`."""
    try:
        return _FLOAT32.pack(number) == bits
    except OverflowError:
        return False


def float32_text(value: float) -> str:
    """The shortest decimal that reads back as the same float32 as `value`, in Python's float
    notation (0.1 for the float32 nearest 0.1, whose exact value 0.10000000149011612 Python's
    repr would print). Protobuf's JSON mapping writes float fields the same way."""
    if not math.isfinite(value) or value == 0.0:
        return float.__repr__(float(value))
    try:
        bits = _FLOAT32.pack(value)
    except OverflowError:  # beyond float32: not a float32 value
        return float.__repr__(float(value))
    for digits in range(1, 10):
        # The nearest decimal of `digits` significant digits, and its two neighbours (next to a
        # power of two the float32 below is twice as near as the one above, so a neighbour may
        # read back where the nearest does not); the nearest of those that read back as `value`.
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        whole = int(mantissa.replace(".", ""))
        scale = int(exponent) - (digits - 1)
        best = None
        for candidate in (whole, whole - 1, whole + 1):
            number = float(f"{candidate}e{scale}")
            if _reads_as(number, bits) and (best is None or
                                             abs(number - value) < abs(best - value)):
                best = number
        if best is not None:
            return float.__repr__(best)
    return float.__repr__(float(value))


class Float32(float):
    """A float32 field as read from the server: a float holding the exact value received, which
    prints (repr, str, f-strings) as the shortest decimal of that float32: `fat_margin=0.1`, not
    `fat_margin=0.10000000149011612`. Like numpy.float32, it does not compare equal to 0.1."""

    __slots__ = ()

    def __repr__(self) -> str:
        return float32_text(self)

    __str__ = __repr__


class Mode(enum.IntEnum):
    """How many hits a query returns (collide.v1.Mode)."""

    CLOSEST = 0
    ANY = 1
    ALL = 2


class BodyKind(enum.IntEnum):
    """Whether a body is expected to move (collide.v1.BodyKind)."""

    DYNAMIC = 0
    STATIC = 1


class Durability(enum.IntEnum):
    """When update batches are acknowledged (collide.v1.Durability)."""

    DEFAULT = 0
    NONE = 1
    PERIODIC = 2
    ALWAYS = 3
    # Acknowledged once a quorum of the scene's NATS JetStream stream stored the batch (a server
    # started with --nats_url; docs/SCALING.md, Replicated scenes).
    REPLICATED = 4


@dataclass(frozen=True)
class Vec3:
    """A point or a vector."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0

    def __iter__(self):
        return iter((self.x, self.y, self.z))


@dataclass(frozen=True)
class Quat:
    """A rotation as a unit quaternion (x, y, z, w)."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    w: float = 1.0

    def __iter__(self):
        return iter((self.x, self.y, self.z, self.w))


Vec3Like = Union[Vec3, Sequence[float]]
QuatLike = Union[Quat, Sequence[float]]


@dataclass(frozen=True)
class Pose:
    """A placement: rotate by `rotation` (None: identity), then move to `position`."""

    position: Vec3Like = Vec3()
    rotation: Optional[QuatLike] = None


@dataclass(frozen=True)
class Sphere:
    """A ball of `radius` about the body's origin."""

    radius: float


@dataclass(frozen=True)
class Box:
    """A box of the given half extents, centred on the body's origin."""

    half_extents: Vec3Like


@dataclass(frozen=True)
class Capsule:
    """The points within `radius` of the segment (0, ±half_height, 0)."""

    radius: float
    half_height: float


@dataclass(frozen=True)
class Mesh:
    """An instance of the scene's mesh asset `asset` (Client.upload_mesh): its triangles, two-sided,
    local point p at position + rotation * (scale * p). `scale` None: 1 (0.001 to 1000)."""

    asset: str
    scale: Optional[float] = None


@dataclass(frozen=True)
class Heightfield:
    """An instance of the scene's heightfield asset `asset` (Client.upload_heightfield), as Mesh."""

    asset: str
    scale: Optional[float] = None


Shape = Union[Sphere, Box, Capsule, Mesh, Heightfield]


@dataclass(frozen=True)
class AssetInfo:
    """An asset of a scene (collide.v1.AssetInfo): its kind ("mesh" or "heightfield"), its
    triangles, the SHA-256 of its content, its bounds in its own frame, its bytes as uploaded,
    the memory the server holds for it and the bodies that place it now."""

    name: str
    kind: str
    triangle_count: int
    sha256: str
    bounds_min: Vec3
    bounds_max: Vec3
    source_bytes: int
    memory_bytes: int
    body_count: int


@dataclass(frozen=True)
class UploadedAsset:
    """An upload's answer: the asset, and whether the scene already held this name with this
    content (then nothing was written)."""

    asset: AssetInfo
    already_present: bool


@dataclass(frozen=True)
class Aabb:
    """An axis-aligned box in world coordinates."""

    min: Vec3Like
    max: Vec3Like


@dataclass
class Body:
    """A body: a shape placed in a scene, with filter bits and opaque data.

    category and mask None mean the server's defaults (1 and all bits).
    """

    id: int
    shape: Shape
    pose: Pose = Pose()
    category: Optional[int] = None
    mask: Optional[int] = None
    user_data: int = 0
    kind: BodyKind = BodyKind.DYNAMIC


@dataclass(frozen=True)
class SceneOptions:
    """A scene's settings, fixed at creation; None takes the server's default."""

    fat_margin: Optional[float] = None
    max_bodies: Optional[int] = None
    durability: Durability = Durability.DEFAULT
    history_ticks: Optional[int] = None


@dataclass(frozen=True)
class SceneStats:
    """Counters of a scene at one version."""

    version: int
    body_count: int
    static_body_count: int
    tree_height: int
    memory_bytes: int
    tick: int
    oldest_tick: int


@dataclass(frozen=True)
class SceneInfo:
    """A scene's name, settings and counters."""

    name: str
    options: SceneOptions
    stats: SceneStats
    # Where the scene is moving (`collide scene move`); empty when it is not. While set, writes
    # to it fail with FAILED_PRECONDITION and CollideError.moved_to naming this address.
    moved_to: str = ""
    # A replicated scene: its owner and the answering server's lag; None for another scene.
    replication: Optional["SceneReplication"] = None


@dataclass(frozen=True)
class WriteResult:
    """The outcome of a unary write: the scene version that holds it, and whether it is durable."""

    version: int
    durable: bool


@dataclass(frozen=True)
class GetBodiesResult:
    """Bodies read at one scene version, and the ids asked for that do not exist."""

    version: int
    bodies: List[Body]
    missing_ids: List[int]


# Update operations (one UpdateOp each).


@dataclass(frozen=True)
class Upsert:
    """Creates the body, or replaces every property of the existing body with its id."""

    body: Body


@dataclass(frozen=True)
class SetPose:
    """Moves an existing body."""

    id: int
    pose: Pose


@dataclass(frozen=True)
class SetFilter:
    """Replaces an existing body's filter bits."""

    id: int
    category: int
    mask: int


@dataclass(frozen=True)
class Remove:
    """Removes an existing body."""

    id: int


UpdateOp = Union[Upsert, SetPose, SetFilter, Remove]


@dataclass(frozen=True)
class PoseColumns:
    """Many moves in column form (the hot path): body ids[i] moves to position
    poses[7i:7i+3] with rotation poses[7i+3:7i+7] as (x, y, z, w)."""

    ids: Sequence[int]
    poses: Sequence[float]

    def __iter__(self):
        return iter((self.ids, self.poses))


@dataclass(frozen=True)
class UpdateAck:
    """The server's answer to one applied update batch."""

    client_sequence: int
    version: int
    durable: bool
    duplicate: bool


# Queries.


@dataclass(frozen=True)
class Filter:
    """Which bodies a query may hit; None means all bits."""

    category: Optional[int] = None
    mask: Optional[int] = None
    excluded_ids: Tuple[int, ...] = ()


@dataclass(frozen=True)
class Raycast:
    """A ray from `origin` along `direction` (normalised by the server), up to max_distance."""

    origin: Vec3Like
    direction: Vec3Like
    max_distance: float


@dataclass(frozen=True)
class SphereCast:
    """A ball of `radius` swept from `origin` along `direction`, up to max_distance."""

    origin: Vec3Like
    direction: Vec3Like
    max_distance: float
    radius: float


@dataclass(frozen=True)
class Overlap:
    """The bodies a posed shape overlaps."""

    shape: Shape
    pose: Pose = Pose()


@dataclass(frozen=True)
class PointQuery:
    """The bodies within `radius` of `point`, by distance."""

    point: Vec3Like
    radius: float = 0.0


@dataclass(frozen=True)
class AabbQuery:
    """The bodies whose world bounds overlap `region`."""

    region: Aabb


QueryKind = Union[Raycast, SphereCast, Overlap, PointQuery, AabbQuery]


@dataclass(frozen=True)
class Query:
    """One query of a query-stream batch.

    at_tick answers against the bodies as they were at the end of that tick (lag compensation);
    tick_fraction in [0, 1) interpolates towards the end of at_tick + 1.
    """

    kind: QueryKind
    filter: Optional[Filter] = None
    mode: Mode = Mode.CLOSEST
    max_hits: int = 0
    detail: bool = False
    at_tick: Optional[int] = None
    tick_fraction: float = 0.0
    request_id: int = 0


@dataclass(frozen=True)
class Hit:
    """One body hit by a query."""

    body_id: int
    distance: float
    point: Vec3
    normal: Vec3
    depth: float
    start_overlapping: bool
    # A hit on a mesh or heightfield body: the triangle's index in its asset (None otherwise),
    # and whether a ray met the triangle's back (level geometry is two-sided).
    triangle: Optional[int] = None
    back_face: bool = False


@dataclass(frozen=True)
class QueryResponse:
    """The answer to a unary query: the scene version read, the hits in (distance, id) order."""

    version: int
    hits: List[Hit]
    truncated: bool


@dataclass
class QueryResult:
    """The answer to one query of a batch; `error` (a CollideError) when it was rejected."""

    request_id: int
    hits: List[Hit]
    truncated: bool
    error: Optional[Exception] = None


@dataclass
class QueryBatchResult:
    """The answers to one query batch, all computed against scene version `version`."""

    version: int
    results: List[QueryResult] = field(default_factory=list)


# The server.


@dataclass(frozen=True)
class SceneReplication:
    """A replicated scene as the answering server holds it (collide.v1.SceneReplication;
    docs/SCALING.md, Replicated scenes)."""

    # The owner's address (where writes go; empty while none is known), and whether the
    # answering server is the owner.
    owner: str
    owned: bool
    # The owner's epoch: one more at each change of owner.
    epoch: int
    # The replicated log's sequence stored (owner) or applied (follower) at the answering server.
    applied_sequence: int
    # Log messages not applied there yet, and for how long (milliseconds).
    lag_sequences: int
    lag_ms: int
    # "owner", "resolving", "following", "checking", "rebuilding" or "taking over".
    state: str


@dataclass(frozen=True)
class ReplicationStats:
    """The answering server's part in replicated scenes (collide.v1.ReplicationStats)."""

    # Started with --nats_url, and connected to a NATS node now.
    enabled: bool
    connected: bool
    # Its address in owner records (--advertise_address).
    address: str
    # Replicated scenes it owns and follows.
    owned_scenes: int
    followed_scenes: int
    # Since it started: takeovers, scenes taken from it, copies rebuilt from the replicated log.
    takeovers: int
    depositions: int
    rebuilds: int
    # Since it started: records stored as owner, applied as follower; snapshots copied.
    records_published: int
    records_applied: int
    snapshots_published: int


@dataclass(frozen=True)
class ServerSceneStats:
    """One scene's figures in ServerStats.scene_stats (collide.v1.ServerSceneStats)."""

    name: str
    # Live bodies, and how many of them are static.
    body_count: int
    static_body_count: int
    # The scene's version and current tick.
    version: int
    tick: int
    # Bytes held in memory, how many of them the tick history holds, and bytes of log records
    # written since the scene's last snapshot (what a restart replays for it).
    memory_bytes: int
    history_bytes: int
    log_bytes: int
    # Level geometry: the scene's assets, their triangles, their bytes as uploaded and the memory
    # they take (content and built form).
    asset_count: int
    asset_triangles: int
    asset_bytes: int
    asset_memory_bytes: int
    # A replicated scene: its owner and this server's lag (all defaults for another scene).
    replication: SceneReplication


@dataclass(frozen=True)
class ServerStats:
    """The server's counters (collide.v1.GetServerStatsResponse; docs/SERVER.md names them)."""

    # Streams open now, per kind.
    update_streams: int
    query_streams: int
    # Streams opened since the server started, refused at the stream limits, and ended because
    # their client read no answer for --stream_stall_timeout_ms.
    streams_opened: int
    streams_refused: int
    streams_stalled: int
    # Bytes of stream answers handed to gRPC and not yet written to the network.
    outbound_bytes: int
    # Scenes held.
    scenes: int
    # False once the data directory could not be written; write_error says why.
    writable: bool
    write_error: str
    # Watch streams open now, the fences plus contact watches they registered, the entries their
    # state holds, the bytes of updates queued for them and of batches waiting to be evaluated.
    watch_streams: int
    watch_fences: int
    watch_contents: int
    watch_queued_bytes: int
    watch_backlog_bytes: int
    # Resync snapshots sent, and watches ended at --max_watch_contents, since the server started.
    watch_resyncs: int
    watch_exhausted: int
    # How long written records waited for their fsync, in microseconds: at the latest fsync, and
    # the longest since the server started.
    sync_lag_us: int
    max_sync_lag_us: int
    # The server's version, commit (empty when not built from git) and build type.
    server_version: str
    server_commit: str
    build_type: str
    # When the server started (seconds since the Unix epoch), and how long ago.
    start_time_unix_seconds: int
    uptime_seconds: int
    # The server process's resident memory (VmRSS).
    resident_memory_bytes: int
    # Per-scene figures of the scenes the caller may see, by name, at most max_scenes of them;
    # scenes_omitted counts the rest.
    scene_stats: List[ServerSceneStats]
    scenes_omitted: int
    # ExportScene and ImportScene streams open now (imports are capped by
    # --max_concurrent_imports).
    export_streams: int
    import_streams: int
    # Interest streams open now, and the observers they hold (at most --max_interest_observers).
    interest_streams: int
    interest_observers: int
    # Level geometry of every scene: distinct asset contents held (a content several scenes hold
    # counted once), their triangles, their bytes as uploaded (against --max_asset_bytes) and
    # their memory.
    assets: int
    asset_triangles: int
    asset_bytes: int
    asset_memory_bytes: int
    # UploadAsset streams open now.
    upload_streams: int
    # Replicated scenes (--nats_url): this server's part (enabled false without).
    replication: ReplicationStats
    # The answering server's address (which server a call through a router reached).
    server_address: str


@dataclass(frozen=True)
class ExportSummary:
    """What Client.export_scene_to_file wrote: the scene's name, the version and tick of the
    exported state, its bodies, and the file's format ("pb" or "jsonl")."""

    scene: str
    version: int
    tick: int
    body_count: int
    format: str
