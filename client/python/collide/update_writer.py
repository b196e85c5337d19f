"""A resilient UpdateStream writer: resends unacknowledged batches after a reconnect."""

from __future__ import annotations

import collections
import queue
import secrets
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, List, Optional, Union

import grpc

from collide import _convert as convert
from collide import model as t
from collide.errors import BatchRejectedError, CollideError, status_code_from_int

if TYPE_CHECKING:
    from collide.client import Client

# Stream failures after which the writer reconnects and resends (anything else is final).
RETRIABLE_CODES = frozenset({
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
})

Moves = Union[t.PoseColumns, tuple]


@dataclass
class _Pending:
    """A batch sent and not yet acknowledged."""

    sequence: int
    batch: object  # collide.v1.UpdateBatch
    future: Future


def read_ack(ack, expected: Optional[int]) -> Union[t.UpdateAck, BatchRejectedError]:
    """Reads a collide.v1.UpdateAck answering the batch of sequence `expected` (None: no batch
    is unacknowledged): the UpdateAck, or the batch's rejection. Raises CollideError DATA_LOSS
    when the ack answers another batch."""
    if expected is None:
        raise CollideError(grpc.StatusCode.DATA_LOSS,
                           f"update stream: ack for sequence {ack.client_sequence}, "
                           "no batch unacknowledged")
    if ack.client_sequence != expected:
        raise CollideError(grpc.StatusCode.DATA_LOSS,
                           f"update stream: ack for sequence {ack.client_sequence}, "
                           f"expected {expected}")
    if ack.HasField("error"):
        return BatchRejectedError(CollideError.from_proto(ack.error).code, ack.error.message,
                                  expected, ack.error.moved_to)
    return convert.update_ack(ack)


def is_redirect(ack, expected: Optional[int]) -> bool:
    """Whether `ack` answers the batch of sequence `expected` with the address of the server
    that writes the scene (Error.moved_to: a follower of a replicated scene, a scene moving
    away) or with UNAVAILABLE (the owner cannot write the scene just now: its lease is being
    renewed, its replicated log is not answering, the server is stopping). Nothing of the batch
    was applied, nor of any batch behind it on the same stream: the writer sends them again on a
    new stream."""
    return (expected is not None and ack.client_sequence == expected
            and ack.HasField("error")
            and (bool(ack.error.moved_to)
                 or status_code_from_int(ack.error.code) == grpc.StatusCode.UNAVAILABLE))


def redirect_error(scene: str, ack, waited: float) -> CollideError:
    """The writer's failure after batches were answered with Error.moved_to or UNAVAILABLE for
    `waited` seconds: the last answer, with its moved_to if any."""
    return CollideError(CollideError.from_proto(ack.error).code,
                        f"update writer: gave up after {waited:.1f} s of batches to scene "
                        f"{scene!r} refused unapplied by servers that could not write it: "
                        f"{ack.error.message}", ack.error.moved_to)


class RedirectClock:
    """Since when a writer's batches are answered with Error.moved_to or UNAVAILABLE and none
    applied: the writer gives up with the last such answer once that lasted `timeout` seconds."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._since: Optional[float] = None

    def applied(self) -> None:
        """A batch applied: the redirections are over."""
        self._since = None

    def redirected(self, scene: str, ack) -> Optional[CollideError]:
        """A batch answered with Error.moved_to or UNAVAILABLE (`ack`): the writer's failure
        when such answers have lasted the timeout, else None (send again)."""
        now = time.monotonic()
        if self._since is None:
            self._since = now
        elif now - self._since >= self._timeout:
            return redirect_error(scene, ack, now - self._since)
        return None


def _requests(source: "queue.SimpleQueue") -> Iterator:
    """The request iterator of one stream: batches from `source` until None."""
    while True:
        batch = source.get()
        if batch is None:
            return
        yield batch


class UpdateWriter:
    """Sends update batches to one scene over an UpdateStream, exactly once.

    Every batch is stamped with the writer's client_id and the next client_sequence and kept
    until the server acknowledges it. A background thread reads the acks. When the stream breaks
    (UNAVAILABLE, a server restart...) the writer reconnects with exponential backoff and resends
    the unacknowledged batches in order with the same ids and sequences; the server acknowledges
    the ones it had already applied as duplicates and never applies them twice.

    A batch answered with Error.moved_to (a follower of a replicated scene, or a scene moving
    away, names the server that writes it) or with UNAVAILABLE (the owner cannot write the scene
    just now: its lease is being renewed, its replicated log is not answering, the server is
    stopping) was not applied: it is not a rejection, and the server answers the stream's later
    batches the same way. The writer ends the stream and sends them all again on a new one after
    its backoff (a router in front of the servers sends them to the owner), counting the batch
    in `redirected` (moved_to) or `unavailable`; after reconnect_timeout seconds without an
    applied batch it fails with the last such answer (a CollideError with its code, whose
    moved_to names the server to write to when there is one).

    Use as a context manager: leaving the block normally flushes (waits for every ack, raising
    the first rejected batch's error) and closes; leaving it by an exception cancels the stream.

    Args:
        client: the Client whose channel carries the stream.
        scene: the scene every batch updates (also sent as the x-collide-scene header).
        client_id: the writer's id for deduplication (default: a random non-zero 64-bit id).
            Reuse an id only with sequences above those already used with it.
        first_sequence: the first batch's client_sequence (default 1).
        max_pending: at most this many batches unacknowledged; send() blocks beyond it.
        backoff_initial, backoff_max: the reconnect delays in seconds (doubling).
        reconnect_timeout: give up (failing every pending batch with UNAVAILABLE) after this many
            seconds without reaching the server, or with the last answer after this many seconds
            of batches answered with Error.moved_to or UNAVAILABLE.
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
        self._cond = threading.Condition()
        self._pending: "collections.deque[_Pending]" = collections.deque()
        self._next_sequence = first_sequence
        self._rejected: List[BatchRejectedError] = []
        self._failure: Optional[CollideError] = None
        self._closed = False
        self._cancelled = threading.Event()
        self._version = 0
        self._reconnects = 0
        self._redirected = 0
        self._unavailable = 0
        self._requests: "queue.SimpleQueue" = queue.SimpleQueue()
        self._call = None
        with self._cond:
            self._open_locked()
        self._reader = threading.Thread(target=self._read_acks, name="collide-update-acks",
                                        daemon=True)
        self._reader.start()

    # Public API.

    def send(self, ops: Iterable[t.UpdateOp] = (), *, moves: Optional[Moves] = None,
             tick: Optional[int] = None, timeout: Optional[float] = None) -> Future:
        """Queues one batch (ops in order, then the moves) and returns a Future of its ack.

        The Future's result is an UpdateAck; a rejected batch sets a BatchRejectedError (code and
        field path), which flush() and close() raise as well. Blocks while max_pending batches
        are unacknowledged (at most `timeout` seconds, then DEADLINE_EXCEEDED).
        `moves` is a PoseColumns or an (ids, poses) pair with 7 floats per id.
        """
        ids, poses = moves if moves is not None else (None, None)
        batch = convert.update_batch(self.scene, ops, ids, poses, tick)
        batch.client_id = self.client_id
        future: Future = Future()
        with self._cond:
            self._raise_if_unusable_locked()
            if not self._cond.wait_for(
                    lambda: len(self._pending) < self._max_pending or self._failure is not None
                    or self._closed, timeout):
                raise CollideError(grpc.StatusCode.DEADLINE_EXCEEDED,
                                   f"update writer: {len(self._pending)} batches unacknowledged")
            self._raise_if_unusable_locked()
            batch.client_sequence = self._next_sequence
            self._next_sequence += 1
            self._pending.append(_Pending(batch.client_sequence, batch, future))
            self._requests.put(batch)
        return future

    def flush(self, timeout: Optional[float] = None) -> None:
        """Waits until every batch sent is acknowledged, then raises the first error not yet
        raised: a rejected batch (BatchRejectedError) or the writer's failure (CollideError).
        DEADLINE_EXCEEDED when batches are still unacknowledged after `timeout` seconds."""
        with self._cond:
            done = self._cond.wait_for(lambda: not self._pending or self._failure is not None,
                                       timeout)
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

    def close(self, timeout: Optional[float] = None) -> None:
        """Flushes (see flush), then ends the stream. The stream is cancelled if flush raises."""
        if self._closed:
            return
        try:
            self.flush(timeout)
        except BaseException:
            self.cancel()
            raise
        with self._cond:
            self._closed = True
            self._requests.put(None)
            self._cond.notify_all()
        self._reader.join()

    def cancel(self) -> None:
        """Cancels the stream now; batches still unacknowledged fail with CANCELLED."""
        with self._cond:
            self._closed = True
            self._cancelled.set()
            self._requests.put(None)
            call = self._call
            self._cond.notify_all()
        call.cancel()
        self._reader.join()

    def __enter__(self) -> "UpdateWriter":
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            self.close()
        else:
            self.cancel()

    @property
    def next_sequence(self) -> int:
        """The client_sequence the next batch gets."""
        with self._cond:
            return self._next_sequence

    @property
    def pending(self) -> int:
        """Batches sent and not yet acknowledged."""
        with self._cond:
            return len(self._pending)

    @property
    def version(self) -> int:
        """The highest scene version an ack reported (for QueryBatch min_version)."""
        with self._cond:
            return self._version

    @property
    def reconnects(self) -> int:
        """How many times the stream was opened again after breaking."""
        with self._cond:
            return self._reconnects

    @property
    def redirected(self) -> int:
        """Batches answered by a server that does not write the scene (Error.moved_to), not
        applied, and sent again on a new stream."""
        with self._cond:
            return self._redirected

    @property
    def unavailable(self) -> int:
        """Batches answered UNAVAILABLE (the owner cannot write the scene just now: its lease is
        being renewed, its replicated log is not answering, the server is stopping) and resent."""
        with self._cond:
            return self._unavailable

    # Internals.

    def _raise_if_unusable_locked(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise CollideError(grpc.StatusCode.FAILED_PRECONDITION, "update writer: closed")

    def _open_locked(self) -> None:
        """Opens a stream and queues every unacknowledged batch on it, in order."""
        self._requests = queue.SimpleQueue()
        for pending in self._pending:
            self._requests.put(pending.batch)
        self._call = self._client.stub.UpdateStream(
            _requests(self._requests), metadata=self._client.metadata(self.scene),
            wait_for_ready=True)

    def _read_acks(self) -> None:
        """The reader thread: acks in, reconnects on retriable failures."""
        delay = self._backoff_initial
        redirects = RedirectClock(self._reconnect_timeout)
        while True:
            with self._cond:
                call = self._call
            progressed = False
            redirect = None
            try:
                for ack in call:
                    if self._on_ack(ack):
                        redirect = ack
                        break
                    progressed = True
                    redirects.applied()
                if redirect is None:
                    with self._cond:
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
            if self._cancelled.is_set():
                self._fail(CollideError(grpc.StatusCode.CANCELLED, "update writer: cancelled"))
                return
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
            if progressed:
                delay = self._backoff_initial
            # After a moved_to answer the channel works: no wait for it (after UNAVAILABLE the
            # server may be stopping).
            moved = redirect is not None and bool(redirect.error.moved_to)
            if not self._reconnect(delay, wait_for_channel=not moved):
                return
            delay = min(delay * 2, self._backoff_max)

    def _reconnect(self, delay: float, wait_for_channel: bool = True) -> bool:
        """Waits `delay`, then for the channel, and reopens the stream. False if it gave up."""
        self._requests.put(None)  # ends the broken stream's request iterator
        if self._cancelled.wait(delay):
            self._fail(CollideError(grpc.StatusCode.CANCELLED, "update writer: cancelled"))
            return False
        if wait_for_channel and not self._wait_for_channel():
            return False
        with self._cond:
            if self._cancelled.is_set():
                return False
            self._reconnects += 1
            self._open_locked()
        return True

    def _wait_for_channel(self) -> bool:
        """Waits until the channel is ready; False (the writer failed) if it gave up."""
        give_up = time.monotonic() + self._reconnect_timeout
        ready = grpc.channel_ready_future(self._client.channel)
        try:
            while True:
                try:
                    ready.result(timeout=0.25)
                    break
                except grpc.FutureTimeoutError:
                    if self._cancelled.is_set():
                        self._fail(CollideError(grpc.StatusCode.CANCELLED,
                                                "update writer: cancelled"))
                        return False
                    if time.monotonic() >= give_up:
                        self._fail(CollideError(
                            grpc.StatusCode.UNAVAILABLE,
                            f"update writer: could not reach the server for "
                            f"{self._reconnect_timeout} s"))
                        return False
        finally:
            ready.cancel()
        return True

    def _on_ack(self, ack) -> bool:
        """Takes one ack; True when it redirects (the batch stays pending)."""
        with self._cond:
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
            else:
                self._version = max(self._version, outcome.version)
            self._cond.notify_all()
        if isinstance(outcome, BatchRejectedError):
            pending.future.set_exception(outcome)
        else:
            pending.future.set_result(outcome)
        return False

    def _fail(self, error: CollideError) -> None:
        """Final failure: every pending batch fails with `error`."""
        with self._cond:
            if self._failure is None and not (self._closed and not self._pending):
                self._failure = error
            failed = list(self._pending)
            self._pending.clear()
            self._requests.put(None)
            self._cond.notify_all()
        for pending in failed:
            pending.future.set_exception(error)
