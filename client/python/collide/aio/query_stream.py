"""A QueryStream session for asyncio: batches of queries against one scene over one stream."""

from __future__ import annotations

import asyncio
import collections
from asyncio import Future
from typing import TYPE_CHECKING, Iterable, Optional

import grpc

from collide import _convert as convert
from collide import model as t
from collide.aio._requests import requests
from collide.errors import CollideError
from collide.query_stream import read_answer

if TYPE_CHECKING:
    from collide.aio.client import Client


class QueryStream:
    """collide.QueryStream for asyncio: sends query batches for one scene over a QueryStream
    and matches the answers (which come in order) to them. Batches may be pipelined: submit()
    returns an asyncio.Future per batch, and query() calls gathered together share the stream.

    A whole-batch rejection fails that batch with a CollideError; a rejected query has its
    QueryResult.error set and the batch's other queries are answered. When the stream breaks,
    the batches in flight fail with the stream's error and the next submit() opens a new stream.
    Use as an asynchronous context manager, or await close().
    """

    def __init__(self, client: "Client", scene: str) -> None:
        self.scene = scene
        self._client = client
        self._in_flight: "collections.deque[asyncio.Future]" = collections.deque()
        self._requests: Optional[asyncio.Queue] = None
        self._call = None
        self._reader: Optional[asyncio.Task] = None
        self._closed = False

    async def submit(self, queries: Iterable[t.Query], *,
                     min_version: int = 0) -> Future:
        """Sends one batch; returns an asyncio.Future of its QueryBatchResult, computed against
        one scene version that is at least `min_version` (read-your-writes: pass an ack's
        version)."""
        batch = convert.query_batch(self.scene, queries, min_version)
        if self._closed:
            raise CollideError(grpc.StatusCode.FAILED_PRECONDITION, "query stream: closed")
        if self._call is None:
            self._open()
        future = asyncio.get_running_loop().create_future()
        self._in_flight.append(future)
        self._requests.put_nowait(batch)
        return future

    async def query(self, queries: Iterable[t.Query], *, min_version: int = 0,
                    timeout: Optional[float] = None) -> t.QueryBatchResult:
        """Sends one batch and waits for its answer (at most `timeout` seconds; default the
        client's deadline). Raises CollideError when the batch is rejected."""
        future = await self.submit(queries, min_version=min_version)
        try:
            return await asyncio.wait_for(
                future, self._client.timeout if timeout is None else timeout)
        except asyncio.TimeoutError:
            raise CollideError(grpc.StatusCode.DEADLINE_EXCEEDED,
                               "query stream: no answer in time") from None

    async def close(self) -> None:
        """Ends the stream after the batches in flight are answered."""
        self._closed = True
        reader = self._reader
        if self._requests is not None:
            self._requests.put_nowait(None)
        if reader is not None:
            await reader

    async def __aenter__(self) -> "QueryStream":
        return self

    async def __aexit__(self, exc_type, exc, traceback) -> None:
        if exc_type is not None and self._call is not None:
            self._call.cancel()
        await self.close()

    def _open(self) -> None:
        self._requests = asyncio.Queue()
        self._call = self._client.stub.QueryStream(requests(self._requests),
                                                   metadata=self._client.metadata(self.scene))
        self._reader = asyncio.get_running_loop().create_task(self._read(self._call))

    async def _read(self, call) -> None:
        error: Optional[CollideError] = None
        try:
            async for answer in call:
                future = self._in_flight.popleft() if self._in_flight else None
                if future is None:
                    error = CollideError(grpc.StatusCode.DATA_LOSS,
                                         "query stream: an answer to no batch")
                    call.cancel()
                    break
                result = read_answer(answer)
                if future.done():  # its waiter gave up (a timeout or a cancellation)
                    continue
                if isinstance(result, CollideError):
                    future.set_exception(result)
                else:
                    future.set_result(result)
        except grpc.RpcError as rpc_error:
            error = CollideError.from_rpc_error(rpc_error)
        except asyncio.CancelledError:
            if not call.cancelled():
                raise
            error = CollideError(grpc.StatusCode.CANCELLED, "query stream: cancelled")
        failed = list(self._in_flight)
        self._in_flight.clear()
        if self._call is call:
            self._requests.put_nowait(None)
            self._call = None
        if failed and error is None:
            error = CollideError(grpc.StatusCode.UNAVAILABLE,
                                 "query stream: ended with batches unanswered")
        for future in failed:
            if not future.done():
                future.set_exception(error)
