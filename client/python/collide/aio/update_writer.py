"""A resilient UpdateStream writer for asyncio: resends unacknowledged batches after a
reconnect."""

from __future__ import annotations

import asyncio
import collections
from asyncio import Future
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, List, Optional

import grpc

from collide import _convert as convert
from collide import model as t
from collide.aio._requests import requests
from collide.errors import BatchRejectedError, CollideError
from collide.update_writer import (RETRIABLE_CODES, Moves, RedirectClock, is_redirect,
                                   read_ack)

if TYPE_CHECKING:
    from collide.aio.client import Client


@dataclass
class _Pending:
    """A batch sent and not yet acknowledged."""

    sequence: int
    batch: object  # collide.v1.UpdateBatch
    future: asyncio.Future


def _settle(future: asyncio.Future, error: BaseException) -> None:
    """Fails `future` with `error`, which the writer also raises from flush() or send(): marked
    retrieved, so that a Future nobody awaits is not reported as an unretrieved exception."""
    if future.done():
        return
    future.set_exception(error)
    future.exception()


class UpdateWriter:
    """collide.UpdateWriter for asyncio: sends update batches to one scene over an UpdateStream,
    exactly once.

    Every batch is stamped with the writer's client_id and the next client_sequence and kept
    until the server acknowledges it. A task reads the acks. When the stream breaks
    (UNAVAILABLE, a server restart...) the writer reconnects with exponential backoff and resends
    the unacknowledged batches in order with the same ids and sequences; the server acknowledges
    the ones it had already applied as duplicates and never applies them twice.

    A batch answered with Error.moved_to (counted in `redirected`) or UNAVAILABLE (the owner
    cannot write the scene just now; counted in `unavailable`) was not applied, nor were the
    stream's later batches: the writer resends them all on a new stream after its backoff, and
    after reconnect_timeout seconds without an applied batch fails with the last such answer,
    as collide.UpdateWriter does.

    Use as an asynchronous context manager: leaving the block normally flushes (waits for every
    ack, raising the first rejected batch's error) and closes; leaving it by an exception cancels
    the stream. Create it (Client.update_writer) in the event loop that runs it.

    The arguments are collide.UpdateWriter's.
    """

    def __init__(self, client: "Client", scene: str, *, client_id: Optional[int] = None,
                 first_sequence: int = 1, max_pending: int = 1024,
                 backoff_initial: float = 0.05, backoff_max: float = 2.0,
                 reconnect_timeout: float = 60.0) -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be >= 1")
        self.scene = scene
        self.client_id = client_id if client_id is not None else secrets.randbits(64) or 1
        self._client = client
        self._max_pending = max_pending
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._reconnect_timeout = reconnect_timeout
        self._pending: "collections.deque[_Pending]" = collections.deque()
        self._next_sequence = first_sequence
        self._rejected: List[BatchRejectedError] = []
        self._failure: Optional[CollideError] = None
        self._closed = False
        self._cancelled = False
        self._version = 0
        self._reconnects = 0
        self._redirected = 0
        self._unavailable = 0
        # Set (and replaced) whenever the pending batches or the writer's state change.
        self._changed = asyncio.Event()
        self._requests: asyncio.Queue = asyncio.Queue()
        self._call = None
        self._open()
        self._reader = asyncio.get_running_loop().create_task(self._read_acks())

    # Public API.

    async def send(self, ops: Iterable[t.UpdateOp] = (), *, moves: Optional[Moves] = None,
                   tick: Optional[int] = None,
                   timeout: Optional[float] = None) -> Future:
        """Queues one batch (ops in order, then the moves) and returns an asyncio.Future of its
        ack.

        The Future's result is an UpdateAck; a rejected batch sets a BatchRejectedError (code and
        field path), which flush() and close() raise as well. Waits while max_pending batches
        are unacknowledged (at most `timeout` seconds, then DEADLINE_EXCEEDED).
        `moves` is a PoseColumns or an (ids, poses) pair with 7 floats per id.
        """
        ids, poses = moves if moves is not None else (None, None)
        batch = convert.update_batch(self.scene, ops, ids, poses, tick)
        batch.client_id = self.client_id
        self._raise_if_unusable()
        if not await self._wait(
                lambda: len(self._pending) < self._max_pending or self._failure is not None
                or self._closed, timeout):
            raise CollideError(grpc.StatusCode.DEADLINE_EXCEEDED,
                               f"update writer: {len(self._pending)} batches unacknowledged")
        self._raise_if_unusable()
        batch.client_sequence = self._next_sequence
        self._next_sequence += 1
        future = asyncio.get_running_loop().create_future()
        self._pending.append(_Pending(batch.client_sequence, batch, future))
        self._requests.put_nowait(batch)
        return future

    async def flush(self, timeout: Optional[float] = None) -> None:
        """Waits until every batch sent is acknowledged, then raises the first error not yet
        raised: a rejected batch (BatchRejectedError) or the writer's failure (CollideError).
        DEADLINE_EXCEEDED when batches are still unacknowledged after `timeout` seconds."""
        done = await self._wait(lambda: not self._pending or self._failure is not None, timeout)
        if self._failure is not None:
            raise self._failure
        if self._rejected:
            error = self._rejected[0]
            self._rejected.clear()
            raise error
        if not done:
            raise CollideError(grpc.StatusCode.DEADLINE_EXCEEDED,
                               f"flush: {len(self._pending)} batches unacknowledged after "
                               f"{timeout} s")

    async def close(self, timeout: Optional[float] = None) -> None:
        """Flushes (see flush), then ends the stream. The stream is cancelled if flush raises."""
        if self._closed:
            return
        try:
            await self.flush(timeout)
        except BaseException:
            await self.cancel()
            raise
        self._closed = True
        self._requests.put_nowait(None)
        self._notify()
        await asyncio.wait([self._reader])

    async def cancel(self) -> None:
        """Cancels the stream now; batches still unacknowledged fail with CANCELLED."""
        self._closed = True
        self._cancelled = True
        self._requests.put_nowait(None)
        self._call.cancel()
        self._reader.cancel()
        await asyncio.wait([self._reader])
        self._fail(CollideError(grpc.StatusCode.CANCELLED, "update writer: cancelled"))

    async def __aenter__(self) -> "UpdateWriter":
        return self

    async def __aexit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            await self.close()
        else:
            await self.cancel()

    @property
    def next_sequence(self) -> int:
        """The client_sequence the next batch gets."""
        return self._next_sequence

    @property
    def pending(self) -> int:
        """Batches sent and not yet acknowledged."""
        return len(self._pending)

    @property
    def version(self) -> int:
        """The highest scene version an ack reported (for QueryBatch min_version)."""
        return self._version

    @property
    def reconnects(self) -> int:
        """How many times the stream was opened again after breaking."""
        return self._reconnects

    @property
    def redirected(self) -> int:
        """Batches answered by a server that does not write the scene (Error.moved_to), not
        applied, and sent again on a new stream."""
        return self._redirected

    @property
    def unavailable(self) -> int:
        """Batches answered UNAVAILABLE (the owner cannot write the scene just now: its lease is
        being renewed, its replicated log is not answering, the server is stopping) and resent."""
        return self._unavailable

    # Internals.

    def _notify(self) -> None:
        """Wakes every _wait (each looks at its condition again)."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def _wait(self, ready: Callable[[], bool], timeout: Optional[float]) -> bool:
        """Waits until ready() (True) or for `timeout` seconds (False; None: no limit)."""
        async def until_ready() -> None:
            while not ready():
                await self._changed.wait()

        try:
            await asyncio.wait_for(until_ready(), timeout)
        except asyncio.TimeoutError:
            return ready()
        return True

    def _raise_if_unusable(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise CollideError(grpc.StatusCode.FAILED_PRECONDITION, "update writer: closed")

    def _open(self) -> None:
        """Opens a stream and queues every unacknowledged batch on it, in order."""
        self._requests = asyncio.Queue()
        for pending in self._pending:
            self._requests.put_nowait(pending.batch)
        self._call = self._client.stub.UpdateStream(
            requests(self._requests), metadata=self._client.metadata(self.scene),
            wait_for_ready=True)

    async def _read_acks(self) -> None:
        """The reader task: acks in, reconnects on retriable failures."""
        delay = self._backoff_initial
        redirects = RedirectClock(self._reconnect_timeout)
        while True:
            call = self._call
            progressed = False
            redirect = None
            try:
                async for ack in call:
                    if self._on_ack(ack):
                        redirect = ack
                        break
                    progressed = True
                    redirects.applied()
                if redirect is None:
                    if self._closed or self._failure is not None:
                        return
                    error = CollideError(grpc.StatusCode.UNAVAILABLE,
                                         "update stream: ended by the server")
            except grpc.RpcError as rpc_error:
                error = CollideError.from_rpc_error(rpc_error)
            except CollideError as protocol_error:
                self._fail(protocol_error)
                call.cancel()
                return
            except asyncio.CancelledError:
                if self._cancelled:
                    raise
                # The call was cancelled under the writer (the channel was closed).
                error = CollideError(grpc.StatusCode.CANCELLED, "update stream: cancelled")
            if redirect is not None:
                # The rest of this stream's answers are dropped: its batches are sent again.
                call.cancel()
                failure = redirects.redirected(self.scene, redirect)
                if failure is not None:
                    self._fail(failure)
                    return
            elif error.code not in RETRIABLE_CODES:
                self._fail(error)
                return
            if self._closed and not self._pending:
                return
            if progressed:
                delay = self._backoff_initial
            if not await self._reconnect(delay):
                return
            delay = min(delay * 2, self._backoff_max)

    async def _reconnect(self, delay: float) -> bool:
        """Waits `delay`, then for the channel, and reopens the stream. False if it gave up."""
        self._requests.put_nowait(None)  # ends the broken stream's request iterator
        await asyncio.sleep(delay)
        try:
            await asyncio.wait_for(self._client.channel.channel_ready(), self._reconnect_timeout)
        except asyncio.TimeoutError:
            self._fail(CollideError(grpc.StatusCode.UNAVAILABLE,
                                    f"update writer: could not reach the server for "
                                    f"{self._reconnect_timeout} s"))
            return False
        self._reconnects += 1
        self._open()
        return True

    def _on_ack(self, ack) -> bool:
        """Takes one ack; True when it redirects (the batch stays pending)."""
        expected = self._pending[0].sequence if self._pending else None
        if is_redirect(ack, expected):
            if ack.error.moved_to:
                self._redirected += 1
            else:
                self._unavailable += 1
            return True
        outcome = read_ack(ack, expected)
        pending = self._pending.popleft()
        if isinstance(outcome, BatchRejectedError):
            self._rejected.append(outcome)
            _settle(pending.future, outcome)
        else:
            self._version = max(self._version, outcome.version)
            if not pending.future.done():
                pending.future.set_result(outcome)
        self._notify()
        return False

    def _fail(self, error: CollideError) -> None:
        """Final failure: every pending batch fails with `error`."""
        if self._failure is None and not (self._closed and not self._pending):
            self._failure = error
        failed = list(self._pending)
        self._pending.clear()
        self._requests.put_nowait(None)
        self._notify()
        for pending in failed:
            _settle(pending.future, error)
