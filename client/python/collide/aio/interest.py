"""An interest stream for asyncio: collide.Interest as an asynchronous iterator, with reconnection
that resubscribes and receives full sets again."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Dict, Iterable, Optional, Set

import grpc
import grpc.aio

from collide.errors import CollideError
from collide.interest import (RETRIABLE_CODES, InterestMessage, InterestSets, Observer,
                              interest_message, interest_request)

if TYPE_CHECKING:
    from collide.aio.client import Client


class Interest:
    """One interest stream: collide.Interest for asyncio. `async for` yields its messages
    (InterestMessage): first a snapshot of every observer's set, then one update per applied
    batch that changed a set and one per upsert() / remove() taking effect; `sets` holds every
    declared observer's set. After a retriable break the stream reopens with backoff, sends every
    declared observer again, and yields that stream's snapshot (`reconnected` set). The iteration
    ends by raising CollideError (NOT_FOUND when the scene is deleted, INVALID_ARGUMENT for a bad
    observer, CANCELLED after cancel()). Use as an asynchronous context manager.

        async with client.interest("world", [Observer(1, 30.0, 35.0, attached_to=7)]) as interest:
            async for message in interest:
                print(interest.sets[1])
    """

    def __init__(self, client: "Client", scene: str, observers: Iterable[Observer], *,
                 max_queued_events: int = 0, reconnect: bool = True,
                 backoff_initial: float = 0.02, backoff_max: float = 1.0,
                 reconnect_timeout: float = 30.0) -> None:
        self.scene = scene
        self._client = client
        self._max_queued_events = max_queued_events
        self._reconnect = reconnect
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._reconnect_timeout = reconnect_timeout
        self._state = InterestSets(observers)
        self._cancelled = False
        self._reconnects = 0
        self._just_reconnected = False
        self._call = None
        self._first_sent = False

    async def _open(self) -> None:
        self._call = self._client.stub.Interest(metadata=self._client.metadata(self.scene))
        self._first_sent = False
        await self._send(interest_request(self.scene, self._state.declared.values(),
                                          max_queued_events=self._max_queued_events))

    async def _send(self, request) -> None:
        try:
            await self._call.write(request)
            self._first_sent = True
        except (grpc.RpcError, asyncio.InvalidStateError):
            pass  # the break shows in the next read, and a reopened stream sends it all

    @property
    def sets(self) -> Dict[int, Set[int]]:
        """Every declared observer's set as of the last message read."""
        return self._state.sets

    @property
    def reconnects(self) -> int:
        """How many times the stream was reopened."""
        return self._reconnects

    async def upsert(self, observers: Iterable[Observer]) -> None:
        """Adds or changes observers (one message; kept for a reopened stream)."""
        observers = self._state.upsert(observers)
        if self._call is not None:
            await self._send(interest_request(upserts=observers))

    async def remove(self, ids: Iterable[int]) -> None:
        """Removes observers (one message); their sets are dropped at once."""
        ids = self._state.remove(ids)
        if self._call is not None:
            await self._send(interest_request(removes=ids))

    def __aiter__(self) -> "Interest":
        return self

    async def __anext__(self) -> InterestMessage:
        if self._call is None:
            await self._open()
        broken_since: Optional[float] = None
        delay = self._backoff_initial
        while True:
            error: Optional[CollideError] = None
            try:
                message = await self._call.read()
            except grpc.RpcError as rpc_error:
                error = CollideError.from_rpc_error(rpc_error)
            except asyncio.CancelledError:
                if not self._cancelled:
                    raise
                raise CollideError(grpc.StatusCode.CANCELLED, "interest: cancelled") from None
            else:
                if message is grpc.aio.EOF:
                    code = await self._call.code()
                    error = CollideError(code or grpc.StatusCode.UNAVAILABLE,
                                         await self._call.details() or "interest: ended")
                else:
                    result = interest_message(message, reconnected=self._just_reconnected)
                    self._just_reconnected = False
                    self._state.take(result)
                    return result
            if self._cancelled:
                raise CollideError(grpc.StatusCode.CANCELLED, "interest: cancelled")
            if not self._reconnect or error.code not in RETRIABLE_CODES:
                raise error
            now = time.monotonic()
            broken_since = now if broken_since is None else broken_since
            if now - broken_since > self._reconnect_timeout:
                raise CollideError(grpc.StatusCode.UNAVAILABLE,
                                   f"interest: could not reopen the stream for "
                                   f"{self._reconnect_timeout} s (last: {error})")
            await asyncio.sleep(delay)
            delay = min(self._backoff_max, delay * 2)
            await self._open()
            self._reconnects += 1
            self._just_reconnected = True

    def cancel(self) -> None:
        """Ends the stream (a waiting iteration raises CollideError CANCELLED)."""
        self._cancelled = True
        if self._call is not None:
            self._call.cancel()

    async def __aenter__(self) -> "Interest":
        if self._call is None:
            await self._open()
        return self

    async def __aexit__(self, *exc_info) -> None:
        self.cancel()
