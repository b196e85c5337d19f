"""A Watch: standing queries (fences and contact watches) on one scene, as an iterator."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, List, Optional

import grpc

from collide import _convert as convert
from collide import model as t
from collide._pb import pb
from collide.errors import CollideError

if TYPE_CHECKING:
    from collide.client import Client


@dataclass(frozen=True)
class Fence:
    """A trigger volume: a posed shape, fixed in the world or attached to a body (then `pose` is
    in the body's frame and the fence moves with it), tracking the bodies `filter` accepts
    (category and mask; excluded_ids must be empty)."""

    id: int
    shape: t.Shape
    pose: t.Pose = t.Pose((0.0, 0.0, 0.0))
    attached_to: Optional[int] = None
    filter: Optional[t.Filter] = None


@dataclass(frozen=True)
class ContactWatch:
    """Pairs of bodies, one of categories `category_a` and the other of `category_b` (None: all
    bits), that begin or stop overlapping."""

    id: int
    category_a: Optional[int] = None
    category_b: Optional[int] = None


class WatchEventKind(enum.IntEnum):
    """What a watch event reports (collide.v1.WatchEvent.Kind)."""

    UNSPECIFIED = 0
    ENTER = 1
    EXIT = 2
    CONTACT_BEGIN = 3
    CONTACT_END = 4


@dataclass(frozen=True)
class WatchEvent:
    """A body entering or leaving a fence (fence_id; other_body_id 0), or a pair of bodies
    beginning or ending contact (contact_id; body_id < other_body_id). `point` and `normal`
    (ENTER only, else None): where the body first touched the fence and the fence's outward
    normal there."""

    kind: WatchEventKind
    fence_id: int
    contact_id: int
    body_id: int
    other_body_id: int
    point: Optional[t.Vec3]
    normal: Optional[t.Vec3]


@dataclass(frozen=True)
class WatchUpdate:
    """The events of one applied batch, in order."""

    version: int
    tick: int
    events: List[WatchEvent]


@dataclass(frozen=True)
class FenceContents:
    """The bodies inside one fence."""

    fence_id: int
    body_ids: List[int]


@dataclass(frozen=True)
class ContactPair:
    """One pair of overlapping bodies of a contact watch."""

    contact_id: int
    body_id: int
    other_body_id: int


@dataclass(frozen=True)
class WatchSnapshot:
    """What every fence holds and every overlapping pair, at a version; `resync` when it replaces
    updates the reader fell too far behind to receive."""

    version: int
    tick: int
    resync: bool
    fences: List[FenceContents]
    contacts: List[ContactPair]


@dataclass(frozen=True)
class WatchMessage:
    """One message of a Watch: a snapshot or an update (the other is None)."""

    snapshot: Optional[WatchSnapshot] = None
    update: Optional[WatchUpdate] = None


def _vec3_or_none(message, name: str) -> Optional[t.Vec3]:
    if not message.HasField(name):
        return None
    return convert.vec3(getattr(message, name))


def watch_message(message: pb.WatchResponse) -> WatchMessage:
    """Reads a collide.v1.WatchResponse."""
    if message.HasField("snapshot"):
        s = message.snapshot
        return WatchMessage(snapshot=WatchSnapshot(
            s.version, s.tick, s.resync,
            [FenceContents(f.fence_id, list(f.body_ids)) for f in s.fences],
            [ContactPair(c.contact_id, c.body_id, c.other_body_id) for c in s.contacts]))
    u = message.update
    return WatchMessage(update=WatchUpdate(u.version, u.tick, [
        WatchEvent(WatchEventKind(e.kind), e.fence_id, e.contact_id, e.body_id, e.other_body_id,
                   _vec3_or_none(e, "point"), _vec3_or_none(e, "normal"))
        for e in u.events]))


def watch_request(scene: str, fences: Iterable[Fence], contacts: Iterable[ContactWatch] = (),
                  max_queued_events: int = 0) -> pb.WatchRequest:
    """The WatchRequest for `scene` with these fences and contact watches."""
    request = pb.WatchRequest(scene=scene, max_queued_events=max_queued_events)
    for fence in fences:
        message = request.fences.add(id=fence.id)
        convert.set_shape(message.shape, fence.shape)
        convert.set_pose(message.pose, fence.pose)
        convert.set_present(message, fence, "attached_to")
        if fence.filter is not None:
            convert.set_filter(message.filter, fence.filter)
    for contact in contacts:
        message = request.contacts.add(id=contact.id)
        convert.set_present(message, contact, "category_a", "category_b")
    return request


class Watch:
    """One open Watch stream. Iterating yields its messages (WatchMessage dataclasses): first a
    snapshot (`message.snapshot`: what every fence holds, every overlapping pair), then one
    `message.update` per applied batch that changed something the watch sees (version,
    tick, events in order), and a snapshot with `resync` set whenever the reader fell so far
    behind that the server replaced the updates it had queued. The iteration ends by raising
    CollideError: NOT_FOUND when the scene is deleted, CANCELLED after cancel(). Use as a
    context manager, or call cancel().

        with client.watch("world", [Fence(1, Sphere(2.0))]) as watch:
            for message in watch:
                for event in message.update.events if message.update else ():
                    ...
    """

    def __init__(self, client: "Client", request: pb.WatchRequest) -> None:
        self.scene = request.scene
        self._call = client.stub.Watch(request, metadata=client.metadata(request.scene))

    def __iter__(self) -> Iterator[WatchMessage]:
        return self

    def __next__(self) -> WatchMessage:
        try:
            message = next(self._call)
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None
        return watch_message(message)

    def cancel(self) -> None:
        """Ends the stream (a blocked iteration raises CollideError CANCELLED)."""
        self._call.cancel()

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc_info) -> None:
        self.cancel()
