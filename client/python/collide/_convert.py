"""Conversions between the dataclasses of collide.model and the collide.v1 messages."""

from __future__ import annotations

import dataclasses
import typing
from typing import Iterable, List, Optional, Sequence

from google.protobuf.descriptor import FieldDescriptor

from collide import model as t
from collide._pb import pb
from collide.errors import CollideError


def set_present(message, value, *fields: str) -> None:
    """Copies each of `fields` from `value` to `message` where it is not None (None: the
    field stays unset, so the server's default applies)."""
    for field in fields:
        present = getattr(value, field)
        if present is not None:
            setattr(message, field, present)


def set_vec3(message, value: t.Vec3Like) -> None:
    """Fills a collide.v1.Vec3 from a Vec3 or an (x, y, z) sequence."""
    x, y, z = value
    message.x = x
    message.y = y
    message.z = z


def set_quat(message, value: t.QuatLike) -> None:
    """Fills a collide.v1.Quat from a Quat or an (x, y, z, w) sequence."""
    x, y, z, w = value
    message.x = x
    message.y = y
    message.z = z
    message.w = w


def set_pose(message, pose: t.Pose) -> None:
    """Fills a collide.v1.Pose; an absent rotation stays absent (identity)."""
    set_vec3(message.position, pose.position)
    if pose.rotation is not None:
        set_quat(message.rotation, pose.rotation)


def set_shape(message, shape: t.Shape) -> None:
    """Fills a collide.v1.Shape."""
    if isinstance(shape, t.Sphere):
        message.sphere.SetInParent()
        message.sphere.radius = shape.radius
    elif isinstance(shape, t.Box):
        message.box.SetInParent()
        set_vec3(message.box.half_extents, shape.half_extents)
    elif isinstance(shape, t.Capsule):
        message.capsule.SetInParent()
        message.capsule.radius = shape.radius
        message.capsule.half_height = shape.half_height
    elif isinstance(shape, (t.Mesh, t.Heightfield)):
        instance = message.mesh if isinstance(shape, t.Mesh) else message.heightfield
        instance.SetInParent()
        instance.asset = shape.asset
        if shape.scale is not None:
            instance.scale = shape.scale
    else:
        raise TypeError(f"not a shape: {shape!r}")


def set_body(message, body: t.Body) -> None:
    """Fills a collide.v1.Body."""
    message.id = body.id
    set_shape(message.shape, body.shape)
    set_pose(message.pose, body.pose)
    set_present(message, body, "category", "mask")
    message.user_data = body.user_data
    message.kind = int(body.kind)


def set_filter(message, value: Optional[t.Filter]) -> None:
    """Fills a collide.v1.Filter (None: no filter)."""
    if value is None:
        return
    set_present(message, value, "category", "mask")
    message.excluded_ids.extend(value.excluded_ids)


def set_options(message, options: Optional[t.SceneOptions]) -> None:
    """Fills a collide.v1.SceneOptions (None: the defaults)."""
    if options is None:
        return
    set_present(message, options, "fat_margin", "max_bodies", "history_ticks")
    message.durability = int(options.durability)


def set_op(message, op: t.UpdateOp) -> None:
    """Fills a collide.v1.UpdateOp."""
    if isinstance(op, t.SetPose):
        message.set_pose.SetInParent()
        message.set_pose.id = op.id
        set_pose(message.set_pose.pose, op.pose)
    elif isinstance(op, t.Upsert):
        message.upsert.SetInParent()
        set_body(message.upsert, op.body)
    elif isinstance(op, t.Remove):
        message.remove = op.id
    elif isinstance(op, t.SetFilter):
        message.set_filter.SetInParent()
        message.set_filter.id = op.id
        message.set_filter.category = op.category
        message.set_filter.mask = op.mask
    else:
        raise TypeError(f"not an update op: {op!r}")


def query_batch(scene: str, queries: Iterable[t.Query], min_version: int):
    """Builds a collide.v1.QueryBatch."""
    batch = pb.QueryBatch(scene=scene, min_version=min_version)
    for query in queries:
        set_query(batch.queries.add(), query)
    return batch


def update_batch(scene: str, ops: Iterable[t.UpdateOp], moves_ids: Optional[Sequence[int]],
                 moves_poses: Optional[Sequence[float]], tick: Optional[int]):
    """Builds a collide.v1.UpdateBatch (without client id and sequence)."""
    batch = pb.UpdateBatch(scene=scene)
    for op in ops:
        set_op(batch.ops.add(), op)
    if moves_ids is not None:
        batch.moves.ids.extend(moves_ids)
    if moves_poses is not None:
        batch.moves.poses.extend(moves_poses)
    if tick is not None:
        batch.tick = tick
    return batch


def set_query_kind(message, kind: t.QueryKind) -> None:
    """Fills the `kind` oneof of a collide.v1.Query."""
    if isinstance(kind, t.Raycast):
        message.raycast.SetInParent()
        set_ray(message.raycast, kind)
    elif isinstance(kind, t.SphereCast):
        message.sphere_cast.SetInParent()
        set_cast(message.sphere_cast, kind)
    elif isinstance(kind, t.Overlap):
        message.overlap.SetInParent()
        set_overlap(message.overlap, kind)
    elif isinstance(kind, t.PointQuery):
        message.point.SetInParent()
        set_vec3(message.point.point, kind.point)
        message.point.radius = kind.radius
    elif isinstance(kind, t.AabbQuery):
        message.aabb.SetInParent()
        set_vec3(message.aabb.region.min, kind.region.min)
        set_vec3(message.aabb.region.max, kind.region.max)
    else:
        raise TypeError(f"not a query: {kind!r}")


def set_ray(message, ray: t.Raycast) -> None:
    """Fills a collide.v1.Raycast."""
    set_vec3(message.origin, ray.origin)
    set_vec3(message.direction, ray.direction)
    message.max_distance = ray.max_distance


def set_overlap(message, overlap: t.Overlap) -> None:
    """Fills a collide.v1.Overlap (a posed shape)."""
    set_shape(message.shape, overlap.shape)
    set_pose(message.pose, overlap.pose)


def set_cast(message, cast: t.SphereCast) -> None:
    """Fills a collide.v1.SphereCast."""
    set_vec3(message.origin, cast.origin)
    set_vec3(message.direction, cast.direction)
    message.max_distance = cast.max_distance
    message.radius = cast.radius


def set_query(message, query: t.Query) -> None:
    """Fills a collide.v1.Query."""
    message.request_id = query.request_id
    set_query_kind(message, query.kind)
    set_filter(message.filter, query.filter)
    message.mode = int(query.mode)
    message.max_hits = query.max_hits
    message.detail = query.detail
    set_present(message, query, "at_tick")
    message.tick_fraction = query.tick_fraction


# Every float32 field read from a message is a Float32: the exact value, printed as its shortest
# float32 decimal (0.1, not 0.10000000149011612).
f32 = t.Float32


def vec3(message) -> t.Vec3:
    """Reads a collide.v1.Vec3."""
    return t.Vec3(f32(message.x), f32(message.y), f32(message.z))


def pose(message) -> t.Pose:
    """Reads a collide.v1.Pose (absent rotation: None)."""
    rotation = None
    if message.HasField("rotation"):
        r = message.rotation
        rotation = t.Quat(f32(r.x), f32(r.y), f32(r.z), f32(r.w))
    return t.Pose(vec3(message.position), rotation)


def shape(message) -> t.Shape:
    """Reads a collide.v1.Shape."""
    which = message.WhichOneof("shape")
    if which == "sphere":
        return t.Sphere(f32(message.sphere.radius))
    if which == "box":
        return t.Box(vec3(message.box.half_extents))
    if which == "capsule":
        return t.Capsule(f32(message.capsule.radius), f32(message.capsule.half_height))
    if which in ("mesh", "heightfield"):
        instance = getattr(message, which)
        scale = f32(instance.scale) if instance.HasField("scale") else None
        return (t.Mesh if which == "mesh" else t.Heightfield)(instance.asset, scale)
    raise ValueError("shape without a kind")


def asset_info(message) -> t.AssetInfo:
    """Reads a collide.v1.AssetInfo."""
    kind = "heightfield" if message.kind == pb.ASSET_KIND_HEIGHTFIELD else "mesh"
    return t.AssetInfo(message.name, kind, message.triangle_count, message.sha256,
                       vec3(message.bounds.min), vec3(message.bounds.max), message.source_bytes,
                       message.memory_bytes, message.body_count)


def body(message) -> t.Body:
    """Reads a collide.v1.Body."""
    return t.Body(id=message.id, shape=shape(message.shape), pose=pose(message.pose),
                  category=message.category if message.HasField("category") else None,
                  mask=message.mask if message.HasField("mask") else None,
                  user_data=message.user_data, kind=t.BodyKind(message.kind))


def scene_info(message) -> t.SceneInfo:
    """Reads a collide.v1.SceneInfo."""
    o = message.options
    s = message.stats
    options = t.SceneOptions(
        fat_margin=f32(o.fat_margin) if o.HasField("fat_margin") else None,
        max_bodies=o.max_bodies if o.HasField("max_bodies") else None,
        durability=t.Durability(o.durability),
        history_ticks=o.history_ticks if o.HasField("history_ticks") else None)
    stats = t.SceneStats(s.version, s.body_count, s.static_body_count, s.tree_height,
                         s.memory_bytes, s.tick, s.oldest_tick)
    replication = (read_dataclass(t.SceneReplication, message.replication)
                   if message.HasField("replication") else None)
    return t.SceneInfo(message.name, options, stats, message.moved_to, replication)


def hits(messages) -> List[t.Hit]:
    """Reads repeated collide.v1.Hit."""
    return [t.Hit(h.body_id, f32(h.distance),
                  t.Vec3(f32(h.point.x), f32(h.point.y), f32(h.point.z)),
                  t.Vec3(f32(h.normal.x), f32(h.normal.y), f32(h.normal.z)), f32(h.depth),
                  h.start_overlapping, h.triangle if h.HasField("triangle") else None,
                  h.back_face)
            for h in messages]


def query_batch_result(message) -> t.QueryBatchResult:
    """Reads a collide.v1.QueryBatchResult whose batch was accepted."""
    results = []
    for r in message.results:
        error = CollideError.from_proto(r.error) if r.HasField("error") else None
        results.append(t.QueryResult(r.request_id, hits(r.hits), r.truncated, error))
    return t.QueryBatchResult(message.version, results)


def update_ack(message) -> t.UpdateAck:
    """Reads a collide.v1.UpdateAck without an error."""
    return t.UpdateAck(message.client_sequence, message.version, message.durable,
                       message.duplicate)


def read_dataclass(cls, message):
    """Reads a message into the dataclass `cls` whose fields are named as the message's: a field
    typed as a dataclass reads the nested message, a List[...] field the repeated field (of
    dataclasses or of scalars), any other field the scalar."""
    hints = typing.get_type_hints(cls)
    values = {}
    for field in dataclasses.fields(cls):
        kind = hints[field.name]
        value = getattr(message, field.name)
        if dataclasses.is_dataclass(kind):
            value = read_dataclass(kind, value)
        elif typing.get_origin(kind) is list:
            (item,) = typing.get_args(kind)
            value = [read_dataclass(item, v) if dataclasses.is_dataclass(item) else v
                     for v in value]
        elif message.DESCRIPTOR.fields_by_name[field.name].type == FieldDescriptor.TYPE_FLOAT:
            value = f32(value)
        values[field.name] = value
    return cls(**values)


def server_stats(message) -> t.ServerStats:
    """Reads a collide.v1.GetServerStatsResponse."""
    return read_dataclass(t.ServerStats, message)
