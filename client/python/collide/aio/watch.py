"""A Watch for asyncio: standing queries (fences and contact watches) on one scene, as an
asynchronous iterator."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import grpc
import grpc.aio

from collide._pb import pb
from collide.errors import CollideError
from collide.watch import WatchMessage, watch_message

if TYPE_CHECKING:
    from collide.aio.client import Client


class Watch:
    """One open Watch stream: collide.Watch for asyncio. Iterating (`async for`) yields its
    messages (WatchMessage dataclasses): first a snapshot, then one update per applied batch
    that changed something the watch sees, and a resync snapshot whenever the reader fell too far
    behind. The iteration ends by raising CollideError: NOT_FOUND when the scene is deleted,
    CANCELLED after cancel(). Use as an asynchronous context manager, or call cancel().

        async with client.watch("world", [Fence(1, Sphere(2.0))]) as watch:
            async for message in watch:
                for event in message.update.events if message.update else ():
                    ...
    """

    def __init__(self, client: "Client", request: pb.WatchRequest) -> None:
        self.scene = request.scene
        self._cancelled = False
        self._call = client.stub.Watch(request, metadata=client.metadata(request.scene))

    def __aiter__(self) -> "Watch":
        return self

    async def __anext__(self) -> WatchMessage:
        try:
            message = await self._call.read()
        except grpc.RpcError as error:
            raise CollideError.from_rpc_error(error) from None
        except asyncio.CancelledError:
            # grpc.aio reports a call cancelled here as the task's cancellation; only the
            # caller's own cancellation (of its task) stays one.
            if not self._cancelled:
                raise
            raise CollideError(grpc.StatusCode.CANCELLED, "watch: cancelled") from None
        if message is grpc.aio.EOF:
            raise StopAsyncIteration
        return watch_message(message)

    def cancel(self) -> None:
        """Ends the stream (a waiting iteration raises CollideError CANCELLED)."""
        self._cancelled = True
        self._call.cancel()

    async def __aenter__(self) -> "Watch":
        return self

    async def __aexit__(self, *exc_info) -> None:
        self.cancel()
