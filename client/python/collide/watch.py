"""A Watch: standing queries (fences and contact watches) on one scene, as an iterator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Optional

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
    """One open Watch stream. Iterating yields its messages (collide.v1 WatchResponse protobufs):
    first a snapshot (`message.snapshot`: what every fence holds, every overlapping pair), then
    one `message.update` per applied batch that changed something the watch sees (version,
    tick, events in order), and a snapshot with `resync` set whenever the reader fell so far
    behind that the server replaced the updates it had queued. The iteration ends by raising
    CollideError: NOT_FOUND when the scene is deleted, CANCELLED after cancel(). Use as a
    context manager, or call cancel().

        with client.watch("world", [Fence(1, Sphere(2.0))]) as watch:
            for message in watch:
                for event in message.update.events:
                    ...
    """

    def __init__(self, client: "Client", request: pb.WatchRequest) -> None:
        self.scene = request.scene
        self._call = client.stub.Watch(request, metadata=client.metadata(request.scene))

    def __iter__(self) -> Iterator[pb.WatchResponse]:
        return self

    def __next__(self) -> pb.WatchResponse:
        try:
            return next(self._call)
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None

    def cancel(self) -> None:
        """Ends the stream (a blocked iteration raises CollideError CANCELLED)."""
        self._call.cancel()

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc_info) -> None:
        self.cancel()
