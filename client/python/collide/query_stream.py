"""A QueryStream session: batches of queries against one scene over one stream."""

from __future__ import annotations

import collections
import queue
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Iterable, Optional, Union

import grpc

from collide import _convert as convert
from collide import model as t
from collide.errors import CollideError
from collide.update_writer import _requests

if TYPE_CHECKING:
    from collide.client import Client


def read_answer(answer) -> Union[t.QueryBatchResult, CollideError]:
    """Reads a collide.v1.QueryBatchResult: the batch's result, or its rejection."""
    if answer.HasField("error"):
        return CollideError.from_proto(answer.error)
    return convert.query_batch_result(answer)


class QueryStream:
    """Sends query batches for one scene over a QueryStream and matches the answers (which come
    in order) to them. Batches may be pipelined: submit() returns a Future per batch.

    A whole-batch rejection (unknown scene, too many queries, min_version not reached in time)
    fails that batch's Future with a CollideError; a rejected query has its QueryResult.error set
    and the batch's other queries are answered. When the stream breaks, the batches in flight
    fail with the stream's error and the next submit() opens a new stream (queries are safe to
    send again). Use as a context manager, or call close().
    """

    def __init__(self, client: "Client", scene: str) -> None:
        self.scene = scene
        self._client = client
        self._lock = threading.Lock()
        self._in_flight: "collections.deque[Future]" = collections.deque()
        self._requests: Optional[queue.SimpleQueue] = None
        self._call = None
        self._reader: Optional[threading.Thread] = None
        self._closed = False

    def submit(self, queries: Iterable[t.Query], *, min_version: int = 0) -> Future:
        """Sends one batch; returns a Future of its QueryBatchResult, computed against one scene
        version that is at least `min_version` (read-your-writes: pass an ack's version)."""
        batch = convert.query_batch(self.scene, queries, min_version)
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise CollideError(grpc.StatusCode.FAILED_PRECONDITION, "query stream: closed")
            if self._call is None:
                self._open_locked()
            self._in_flight.append(future)
            self._requests.put(batch)
        return future

    def query(self, queries: Iterable[t.Query], *, min_version: int = 0,
              timeout: Optional[float] = None) -> t.QueryBatchResult:
        """Sends one batch and waits for its answer (at most `timeout` seconds; default the
        client's deadline). Raises CollideError when the batch is rejected."""
        future = self.submit(queries, min_version=min_version)
        try:
            return future.result(self._client.timeout if timeout is None else timeout)
        except TimeoutError:
            raise CollideError(grpc.StatusCode.DEADLINE_EXCEEDED,
                               "query stream: no answer in time") from None

    def close(self) -> None:
        """Ends the stream after the batches in flight are answered."""
        with self._lock:
            self._closed = True
            reader = self._reader
            if self._requests is not None:
                self._requests.put(None)
        if reader is not None:
            reader.join()

    def __enter__(self) -> "QueryStream":
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is not None:
            with self._lock:
                call = self._call
            if call is not None:
                call.cancel()
        self.close()

    def _open_locked(self) -> None:
        self._requests = queue.SimpleQueue()
        self._call = self._client.stub.QueryStream(
            _requests(self._requests), metadata=self._client.metadata(self.scene))
        self._reader = threading.Thread(target=self._read, args=(self._call,),
                                        name="collide-query-results", daemon=True)
        self._reader.start()

    def _read(self, call) -> None:
        error: Optional[CollideError] = None
        try:
            for answer in call:
                with self._lock:
                    future = self._in_flight.popleft() if self._in_flight else None
                if future is None:
                    error = CollideError(grpc.StatusCode.DATA_LOSS,
                                         "query stream: an answer to no batch")
                    call.cancel()
                    break
                result = read_answer(answer)
                if isinstance(result, CollideError):
                    future.set_exception(result)
                else:
                    future.set_result(result)
        except grpc.RpcError as rpc_error:
            error = CollideError.from_rpc_error(rpc_error)
        with self._lock:
            failed = list(self._in_flight)
            self._in_flight.clear()
            if self._call is call:
                self._requests.put(None)
                self._call = None
        if failed and error is None:
            error = CollideError(grpc.StatusCode.UNAVAILABLE,
                                 "query stream: ended with batches unanswered")
        for future in failed:
            future.set_exception(error)
