"""Errors raised by the collide client."""

from __future__ import annotations

from typing import Optional

import grpc

_CODES_BY_VALUE = {code.value[0]: code for code in grpc.StatusCode}


def status_code_from_int(value: int) -> grpc.StatusCode:
    """Returns the grpc.StatusCode with the numeric value `value` (UNKNOWN if none has it)."""
    return _CODES_BY_VALUE.get(value, grpc.StatusCode.UNKNOWN)


class CollideError(Exception):
    """A call, a stream batch or a query the server (or the transport) rejected.

    Attributes:
        code: the gRPC status code (grpc.StatusCode).
        message: the server's message, "<field path>: <reason>" for bad input
            (for example "bodies[2].shape.sphere.radius: must be finite and >= 0").
        moved_to: when a write was refused because its scene moved to another server
            (FAILED_PRECONDITION), that server's address; empty otherwise.
    """

    def __init__(self, code: grpc.StatusCode, message: str, moved_to: str = "") -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.moved_to = moved_to

    @property
    def field_path(self) -> Optional[str]:
        """The field path the message starts with ("ops[2].remove"), or None without one."""
        head, sep, _ = self.message.partition(": ")
        if not sep or not head or " " in head:
            return None
        return head

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "CollideError":
        """Converts an error raised by a gRPC call."""
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        details = error.details() if hasattr(error, "details") else str(error)
        return cls(code or grpc.StatusCode.UNKNOWN, details or "", _moved_to(error))

    @classmethod
    def from_proto(cls, error) -> "CollideError":
        """Converts a collide.v1.Error found inside a stream's answer."""
        return cls(status_code_from_int(error.code), error.message, error.moved_to)


_MOVED_TO_KEY = "x-collide-moved-to"


def _moved_to(error) -> str:
    """The `x-collide-moved-to` trailer of a failed call, empty without one."""
    trailing = getattr(error, "trailing_metadata", None)
    if trailing is None:
        return ""
    try:
        metadata = trailing()
    except Exception:  # A transport error may carry no metadata at all.
        return ""
    for key, value in metadata or ():
        if key == _MOVED_TO_KEY:
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return ""


class BatchRejectedError(CollideError):
    """An update batch the server rejected (nothing of it was applied).

    Attributes:
        sequence: the batch's client_sequence.
    """

    def __init__(self, code: grpc.StatusCode, message: str, sequence: int,
                 moved_to: str = "") -> None:
        super().__init__(code, message, moved_to)
        self.sequence = sequence
        self.args = (f"batch {sequence}: {code.name}: {message}",)
