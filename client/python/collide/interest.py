"""An interest stream: observers whose relevant bodies the server keeps, streamed as deltas
(collide.v1 Interest), with reconnection that resubscribes and receives full sets again."""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterable, Iterator, List, Optional, Set

import grpc

from collide import _convert as convert
from collide import model as t
from collide._pb import pb
from collide.errors import CollideError

if TYPE_CHECKING:
    from collide.client import Client

# Stream failures after which the stream is reopened and its observers sent again (anything else
# is final: a bad observer, a limit, an unknown or deleted scene, a missing permission).
RETRIABLE_CODES = frozenset({
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
})


@dataclass(frozen=True)
class ViewCone:
    """The directions within `half_angle` radians of `direction` (in the observer's frame); a
    relevant body stays relevant within `leave_half_angle` (None: half_angle)."""

    direction: t.Vec3Like
    half_angle: float
    leave_half_angle: Optional[float] = None


@dataclass(frozen=True)
class Observer:
    """A point of view: fixed in the world at `pose`, or riding body `attached_to` (`pose` then
    in its frame). Bodies come in within `enter_radius` and stay within `leave_radius` (None:
    enter_radius); at most `max_relevant` of them, the nearest (0: the server's limit), seen
    through `filter` (category and mask; excluded_ids must be empty) and `cone`."""

    id: int
    enter_radius: float
    leave_radius: Optional[float] = None
    attached_to: Optional[int] = None
    pose: t.Pose = t.Pose((0.0, 0.0, 0.0))
    cone: Optional[ViewCone] = None
    filter: Optional[t.Filter] = None
    max_relevant: int = 0


@dataclass(frozen=True)
class ObserverDelta:
    """How one observer's set changed: `entered` and `left` body ids (ascending); with `full`,
    `entered` is its whole set (it was just added)."""

    observer_id: int
    full: bool
    entered: List[int]
    left: List[int]


@dataclass(frozen=True)
class InterestUpdate:
    """The deltas at one version (a batch's, or the client's changes taking effect);
    `requests_applied` counts the client's messages in effect."""

    version: int
    tick: int
    requests_applied: int
    deltas: List[ObserverDelta]


@dataclass(frozen=True)
class InterestSnapshot:
    """Every observer's set at a version (`sets`: observer id -> ascending body ids); `resync`
    when it replaces updates the reader fell too far behind to receive."""

    version: int
    tick: int
    resync: bool
    requests_applied: int
    sets: Dict[int, List[int]]


@dataclass(frozen=True)
class InterestMessage:
    """One message of an interest stream: a snapshot or an update (the other is None).
    `reconnected`: the snapshot of a stream reopened after a break (full sets again)."""

    snapshot: Optional[InterestSnapshot] = None
    update: Optional[InterestUpdate] = None
    reconnected: bool = False


def observer_message(observer: Observer, message) -> None:
    """Fills a collide.v1.Observer."""
    message.id = observer.id
    message.enter_radius = observer.enter_radius
    convert.set_present(message, observer, "attached_to", "leave_radius")
    convert.set_pose(message.pose, observer.pose)
    if observer.cone is not None:
        convert.set_vec3(message.cone.direction, observer.cone.direction)
        message.cone.half_angle = observer.cone.half_angle
        convert.set_present(message.cone, observer.cone, "leave_half_angle")
    if observer.filter is not None:
        convert.set_filter(message.filter, observer.filter)
    message.max_relevant = observer.max_relevant


def interest_request(scene: str = "", upserts: Iterable[Observer] = (),
                     removes: Iterable[int] = (), max_queued_events: int = 0) -> pb.InterestRequest:
    """One InterestRequest."""
    request = pb.InterestRequest(scene=scene, max_queued_events=max_queued_events)
    for observer in upserts:
        observer_message(observer, request.observers.add())
    request.removes.extend(removes)
    return request


def interest_message(message: pb.InterestResponse, reconnected: bool = False) -> InterestMessage:
    """Reads a collide.v1.InterestResponse."""
    if message.HasField("snapshot"):
        s = message.snapshot
        return InterestMessage(snapshot=InterestSnapshot(
            s.version, s.tick, s.resync, s.requests_applied,
            {r.observer_id: list(r.body_ids) for r in s.sets}), reconnected=reconnected)
    u = message.update
    return InterestMessage(update=InterestUpdate(u.version, u.tick, u.requests_applied, [
        ObserverDelta(d.observer_id, d.full, list(d.entered), list(d.left)) for d in u.deltas]))


class InterestSets:
    """The observers a client declared and their sets as the messages say (shared by the blocking
    and asyncio streams)."""

    def __init__(self, observers: Iterable[Observer]) -> None:
        self.declared: Dict[int, Observer] = {o.id: o for o in observers}
        self.sets: Dict[int, Set[int]] = {}

    def upsert(self, observers: Iterable[Observer]) -> List[Observer]:
        observers = list(observers)
        for o in observers:
            self.declared[o.id] = o
        return observers

    def remove(self, ids: Iterable[int]) -> List[int]:
        ids = list(ids)
        for i in ids:
            self.declared.pop(i, None)
            self.sets.pop(i, None)
        return ids

    def take(self, message: InterestMessage) -> None:
        if message.snapshot is not None:
            self.sets = {i: set(ids) for i, ids in message.snapshot.sets.items()
                         if i in self.declared}
            return
        for d in message.update.deltas:
            if d.observer_id not in self.declared:
                continue  # removed meanwhile
            current = set() if d.full else self.sets.get(d.observer_id, set())
            current.difference_update(d.left)
            current.update(d.entered)
            self.sets[d.observer_id] = current


class Interest:
    """One interest stream on one scene. Iterating yields its messages (InterestMessage): first a
    snapshot of every observer's set, then one update per applied batch that changed a set, and
    one per upsert() / remove() taking effect. `sets` holds every declared observer's set as the
    messages say. After a retriable break (the server restarted or went away) the stream reopens
    with backoff, sends every declared observer again, and the next message is that stream's
    snapshot (`reconnected` set). The iteration ends by raising CollideError: NOT_FOUND when the
    scene is deleted, INVALID_ARGUMENT for a bad observer (`messages[1].observers[0]...`),
    CANCELLED after cancel(), UNAVAILABLE after reconnect_timeout seconds without a stream.

        with client.interest("world", [Observer(1, 30.0, 35.0, attached_to=7)]) as interest:
            for message in interest:
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
        self._lock = threading.Lock()
        self._cancelled = False
        self._reconnects = 0
        self._just_reconnected = False
        self._open()

    def _open(self) -> None:
        with self._lock:
            self._requests: "queue.Queue[Optional[pb.InterestRequest]]" = queue.Queue()
            self._requests.put(interest_request(self.scene, self._state.declared.values(),
                                                max_queued_events=self._max_queued_events))
            requests = self._requests

            def iterate() -> Iterator[pb.InterestRequest]:
                while True:
                    request = requests.get()
                    if request is None:
                        return
                    yield request

            self._call = self._client.stub.Interest(iterate(),
                                                    metadata=self._client.metadata(self.scene))

    @property
    def sets(self) -> Dict[int, Set[int]]:
        """Every declared observer's set as of the last message read."""
        return self._state.sets

    @property
    def reconnects(self) -> int:
        """How many times the stream was reopened."""
        return self._reconnects

    def upsert(self, observers: Iterable[Observer]) -> None:
        """Adds or changes observers (one message; kept for a reopened stream)."""
        with self._lock:
            self._requests.put(interest_request(upserts=self._state.upsert(observers)))

    def remove(self, ids: Iterable[int]) -> None:
        """Removes observers (one message); their sets are dropped at once."""
        with self._lock:
            self._requests.put(interest_request(removes=self._state.remove(ids)))

    def __iter__(self) -> Iterator[InterestMessage]:
        return self

    def __next__(self) -> InterestMessage:
        broken_since: Optional[float] = None
        delay = self._backoff_initial
        while True:
            try:
                message = next(self._call)
            except StopIteration:
                error: Optional[CollideError] = CollideError(
                    grpc.StatusCode.UNAVAILABLE, "interest: the stream ended")
            except grpc.RpcError as rpc_error:
                error = CollideError.from_rpc_error(rpc_error)
            else:
                with self._lock:
                    result = interest_message(message, reconnected=self._just_reconnected)
                    self._just_reconnected = False
                    self._state.take(result)
                return result
            if self._cancelled:
                raise CollideError(grpc.StatusCode.CANCELLED, "interest: cancelled")
            if not self._reconnect or error.code not in RETRIABLE_CODES:
                self._requests.put(None)  # ends the request iterator of the ended call
                raise error
            now = time.monotonic()
            broken_since = now if broken_since is None else broken_since
            if now - broken_since > self._reconnect_timeout:
                self._requests.put(None)
                raise CollideError(grpc.StatusCode.UNAVAILABLE,
                                   f"interest: could not reopen the stream for "
                                   f"{self._reconnect_timeout} s (last: {error})")
            time.sleep(delay)
            delay = min(self._backoff_max, delay * 2)
            self._requests.put(None)  # ends the old stream's request iterator
            self._open()
            self._reconnects += 1
            self._just_reconnected = True

    def cancel(self) -> None:
        """Ends the stream (a blocked iteration raises CollideError CANCELLED)."""
        self._cancelled = True
        self._requests.put(None)
        self._call.cancel()

    def __enter__(self) -> "Interest":
        return self

    def __exit__(self, *exc_info) -> None:
        self.cancel()
